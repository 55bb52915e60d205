"""The jobs frame: one row per job folder found (or rollout folder).

Every column of ``runs.jobs`` is declared here. Values come from ``jobs/extract.py``.
"""

from __future__ import annotations

import polars as pl

from evalkit.load._columns import UTC_DATETIME, Column
from evalkit.load.trials.analysis import CHECK_ITEM

COLUMNS: tuple[Column, ...] = (
    Column(
        "job_id",
        pl.String,
        "Stable id of the job folder (hash of its resolved path). Join key.",
        True,
    ),
    Column("job_name", pl.String, "Job folder name.", True),
    Column("job_dir", pl.String, "Absolute path of the job folder.", True),
    Column("harbor_job_id", pl.String, "JobResult.id UUID as recorded (copies share it)."),
    Column("run", pl.String, "Run label (see trials.run)."),
    Column("source_format", pl.String, "'harbor' or 'go-code'."),
    Column(
        "state",
        pl.String,
        "complete / running / interrupted / unknown (rule in jobs/extract.py).",
        True,
    ),
    Column(
        "started_at",
        UTC_DATETIME,
        "Job start (UTC; Harbor writes job times naive, see naive_tz).",
        True,
    ),
    Column("updated_at", UTC_DATETIME, "Last job result.json update (0.6.2+)."),
    Column("finished_at", UTC_DATETIME, "Job end (null while running / interrupted).", True),
    Column(
        "naive_tz",
        pl.String,
        "How naive job timestamps were read: the zone / offset applied and whether it was inferred.",
    ),
    Column(
        "n_trials_declared",
        pl.Int64,
        "n_total_trials from the job result.json (may describe trials not on disk).",
        True,
    ),
    Column("n_trials_found", pl.Int64, "Trial folders found on disk.", True),
    Column("n_trials_with_result", pl.Int64, "Trial folders with a readable result.json."),
    Column(
        "stats_completed",
        pl.Int64,
        "Recorded completed trials (legacy stats.n_trials or n_completed_trials).",
    ),
    Column(
        "stats_errored",
        pl.Int64,
        "Recorded errored trials (legacy stats.n_errors or n_errored_trials).",
    ),
    Column("agent_name", pl.String, "Agent(s) of the job config (comma-joined when several)."),
    Column("model_name", pl.String, "Model(s) of the job config (comma-joined when several)."),
    Column(
        "dataset",
        pl.String,
        "Dataset(s) of the job config: name@version, or the local path's folder name.",
    ),
    Column("n_attempts", pl.Int64, "Configured attempts per task."),
    Column("n_concurrent", pl.Int64, "Configured concurrency (orchestrator block or top level)."),
    Column("timeout_multiplier", pl.Float64, "Configured global timeout multiplier."),
    Column("environment_type", pl.String, "Configured environment type (docker, daytona, ...)."),
    Column(
        "harbor_version",
        pl.String,
        "Harbor version from lock.json when present (can be stale for editable installs).",
    ),
    Column(
        "format",
        pl.String,
        "Detected job result format: 'legacy-stats' (<=0.6.1), 'counters' (0.6.2+), 'v1' (0.26), or 'missing'.",
    ),
    Column(
        "config_json",
        pl.String,
        "The job config.json as JSON text (secrets redacted); used by config_diff.",
    ),
    Column(
        "analysis_summary",
        pl.String,
        "The judge's summary over the job from the job folder's analysis.json (`harbor analyze <job>`); null when the job was not analysed.",
    ),
    Column(
        "analysis_checks",
        pl.List(CHECK_ITEM),
        "Job-level rubric checks of that analysis.json (name, verdict pass / fail / not_applicable, explanation); null when not analysed.",
    ),
)
