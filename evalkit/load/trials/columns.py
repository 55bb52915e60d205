"""The trials frame: one row per trial folder (Harbor) or rollout run (go-code).

Every column of ``runs.trials`` is declared here and nowhere else. Values are extracted in
``trials/extract.py`` (Harbor) and ``gocode/`` (go-code rollouts); outcome and error_kind rules live
in ``load/outcomes.py``.
"""

from __future__ import annotations

import polars as pl

from evalkit.load._columns import UTC_DATETIME, Column
from evalkit.load.trials.analysis import CHECK_ITEM

REWARD_ITEM = pl.Struct({"name": pl.String, "value": pl.Float64})

COLUMNS: tuple[Column, ...] = (
    # identity and grouping
    Column(
        "job_id",
        pl.String,
        "Stable id of the job folder (hash of its resolved path; rollouts: the rollout folder).",
        True,
    ),
    Column("job_name", pl.String, "Job folder name (Harbor job_name as found on disk).", True),
    Column(
        "run",
        pl.String,
        "Run label grouping jobs that belong together (default: agent + model + dataset; overridable in load(run=...)).",
        True,
    ),
    Column(
        "trial_id",
        pl.String,
        "Stable id of the trial folder (hash of its resolved path); for rollouts the run id. Join key.",
        True,
    ),
    Column(
        "trial_name",
        pl.String,
        "Harbor trial_name (folder name: task name cut to 32 chars + '__' + 7-char id).",
        True,
    ),
    Column("trial_dir", pl.String, "Absolute path of the trial folder (or rollout file)."),
    Column(
        "result_id",
        pl.String,
        "Harbor's TrialResult.id UUID as recorded (copies of a folder share it).",
    ),
    Column("source_format", pl.String, "Where the row came from: 'harbor' or 'go-code'."),
    Column(
        "task_name",
        pl.String,
        "Task name as result.json records it; a trial without result.json takes the name a finished trial of the same task_ref recorded, else its config.json's task (never the truncated folder name).",
        True,
    ),
    Column(
        "task_source",
        pl.String,
        "Dataset the task came from (TrialResult.source; null for ad-hoc -p runs).",
    ),
    Column(
        "task_ref",
        pl.String,
        "Task id as text: local path, git_url@commit:path, or org/name@ref (the three Harbor task-id shapes).",
    ),
    Column("task_ref_kind", pl.String, "Which task-id shape: 'local', 'git', 'package', or null."),
    Column(
        "task_checksum",
        pl.String,
        "sha256 of the task folder as recorded by Harbor (task changed => not comparable).",
    ),
    Column(
        "attempt",
        pl.Int32,
        "1-based attempt number of this task within its run (ordered by started_at, then trial_name).",
        True,
    ),
    # agent / model
    Column(
        "agent_name",
        pl.String,
        "Agent name (agent_info.name, else config agent name / import path).",
        True,
    ),
    Column("agent_version", pl.String, "Agent version as recorded (first line only)."),
    Column(
        "agent_import_path", pl.String, "Custom agent import path from the trial config, if any."
    ),
    Column(
        "model_name",
        pl.String,
        "Model as provider/name when the provider is known, else the recorded name.",
        True,
    ),
    Column("model_provider", pl.String, "Model provider (null when unknown)."),
    # rewards and outcome
    Column(
        "reward",
        pl.Float64,
        "Primary reward: the 'reward' key, else the first numeric key; null when no reward.",
        True,
    ),
    Column(
        "rewards",
        pl.List(REWARD_ITEM),
        "Every numeric reward key as {name, value} (multi-key rewards kept whole).",
    ),
    Column(
        "reward_source",
        pl.String,
        "Where the reward came from: 'result' (verifier_result), 'reward.json', 'reward.txt', or null.",
    ),
    Column(
        "reward_valid",
        pl.Boolean,
        "Harbor 0.26's reward_valid (recorded, else recomputed from rewards and the error policy).",
    ),
    Column(
        "outcome",
        pl.String,
        "pass / partial / fail / timeout / error / no-reward / incomplete (rule: load/outcomes.py).",
        True,
    ),
    Column(
        "error_kind",
        pl.String,
        "none / agent / infra / provider / verifier / config / cancelled / unknown (Harbor 0.26 error-policy classes).",
        True,
    ),
    Column(
        "exception_type",
        pl.String,
        "Type name of the first recorded exception (without result.json: the last exception of exception.txt, else of a traceback ending trial.log); null when none.",
        True,
    ),
    Column(
        "exception_message", pl.String, "Its message (may be empty, e.g. CancelledError).", True
    ),
    Column(
        "exception_at",
        UTC_DATETIME,
        "When the exception occurred (UTC; naive values per the naive_tz policy).",
    ),
    # timing
    Column(
        "started_at", UTC_DATETIME, "Trial start (UTC; naive values per the naive_tz policy).", True
    ),
    Column("finished_at", UTC_DATETIME, "Trial end (UTC).", True),
    Column(
        "duration_s",
        pl.Float64,
        "finished_at - started_at in seconds (includes setup and verifier).",
        True,
    ),
    Column("env_setup_s", pl.Float64, "Environment setup phase duration in seconds."),
    Column("agent_setup_s", pl.Float64, "Agent setup phase duration in seconds."),
    Column("agent_s", pl.Float64, "Agent execution phase duration in seconds."),
    Column("verifier_s", pl.Float64, "Verifier phase duration in seconds."),
    Column(
        "naive_timestamps",
        pl.Boolean,
        "True when any of this trial's timestamps was written without a timezone.",
    ),
    Column(
        "timestamp_out_of_window",
        pl.Boolean,
        "True when a phase or exception time lies outside [started_at, finished_at] by more than 60 s (a naive time read in the wrong zone, or a bad clock); null without both ends.",
    ),
    # tokens / cost (exactly as recorded)
    Column(
        "n_input_tokens",
        pl.Int64,
        "Input tokens as recorded (Harbor: includes cached tokens).",
        True,
    ),
    Column("n_cache_tokens", pl.Int64, "Cached input tokens as recorded.", True),
    Column("n_output_tokens", pl.Int64, "Output tokens as recorded.", True),
    Column(
        "tokens_not_recorded",
        pl.Boolean,
        "True when input and output tokens are both 0 on a trial whose agent ran (it has a trajectory; once trajectories are read: agent steps) and its trajectory's final_metrics record no prompt or completion total: the agent did not record its tokens (the 0s are kept, but are not a measurement).",
    ),
    Column("cost_usd", pl.Float64, "Cost in USD; null when unknown (never 0 for unknown).", True),
    Column(
        "cost_status",
        pl.String,
        "'recorded', 'unknown', or (rollouts) the recorder's cost status, e.g. 'unpriced'.",
    ),
    # trajectory summary (filled when trajectories are parsed; see steps/)
    Column(
        "n_steps",
        pl.Int64,
        "Agent steps of the main trajectory (copied-context, subagent and sidechain steps excluded); null without a trajectory. Filled when trajectories are parsed (first runs.steps / runs.tool_calls access, or load(trajectories=True)): null before, filled in every runs.trials read after.",
        True,
    ),
    Column(
        "n_tool_calls",
        pl.Int64,
        "Tool calls of those steps; null without a trajectory. Filled lazily like n_steps.",
    ),
    Column(
        "n_turns",
        pl.Int64,
        "Agent turns: n_steps, else distinct assistant message ids in a stream-json log (goose rule).",
    ),
    Column(
        "metrics_mismatch",
        pl.String,
        "Null when ATIF final_metrics agree with result.json tokens/cost, else which fields disagree.",
    ),
    # evidence
    Column("has_trajectory", pl.Boolean, "agent/trajectory.json (or a native trajectory) exists."),
    Column(
        "has_reward_file",
        pl.Boolean,
        "verifier/reward.json or reward.txt exists (or rewards recorded in result.json).",
    ),
    Column("has_verifier_output", pl.Boolean, "verifier/test-stdout.txt (or ctrf.json) exists."),
    Column("has_artifacts_manifest", pl.Boolean, "artifacts/manifest.json exists."),
    Column("evidence_complete", pl.Boolean, "All four evidence columns are true.", True),
    # provenance
    Column("result_present", pl.Boolean, "The trial folder had a readable result.json."),
    Column(
        "harbor_schema", pl.String, "Format hints detected for this trial (e.g. 'v1', 'legacy-ts')."
    ),
    Column(
        "regrade_of",
        pl.String,
        "For a `harbor job regrade` / `harbor trial regrade` trial: the source trial it re-verified, as its config's source_trial records it (the source's result_id, else its folder path); null for a trial that ran its agent. Pairs with the source's reward in stats.regrade_pairs.",
    ),
    # harbor analyze (trials/analysis.py)
    Column(
        "analysis_checks",
        pl.List(CHECK_ITEM),
        "`harbor analyze` rubric checks from the trial's analysis.json, each {name, verdict (pass / fail / not_applicable), explanation}; null when the trial was not analysed (not 'passed').",
    ),
    Column(
        "analysis_failed",
        pl.String,
        "Names of the analysis checks whose verdict is 'fail', comma-joined ('' when none failed); null when not analysed.",
    ),
    Column(
        "analysis_summary",
        pl.String,
        "The analysis.json summary of the trial (null when not analysed).",
    ),
)
