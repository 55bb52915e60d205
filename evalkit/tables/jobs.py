"""One row per job: what goose's ``list`` shows, plus attempts, error kinds and honest cost."""

from __future__ import annotations

import polars as pl

from evalkit.load.trials.derive import known_sum, measured_tokens

OUTCOME_COUNTS = ("pass", "partial", "fail", "timeout", "error", "no-reward", "incomplete")


def jobs_table(jobs: pl.DataFrame, trials: pl.DataFrame) -> pl.DataFrame:
    """Per job: state, agent, model, trial counts per outcome, pass rate, compute, tokens, cost.

    Columns: job_name, state, run, agent_name, model_name, started_at, n_trials
    (found on disk), n_declared, tasks, attempts_max (most trials of one task in this job), pass / partial / fail / timeout / error /
    no-reward / incomplete counts, pass_rate (passes over trials with a result; null when
    none), mean_reward (over trials with a result, null reward = 0), compute_s (sum of trial
    durations: parallelism unrolled), n_input_tokens / n_cache_tokens / n_output_tokens
    (sums of recorded values; null when none recorded), cost_usd (sum; null when no trial
    has a cost), cost_known (trials with a recorded cost), error_kinds ("kind:n, ...").
    """
    per = _trial_figures_per_job(trials)
    kinds = _error_kinds_per_job(trials)
    out = (
        jobs.select(
            "job_id",
            "job_name",
            "state",
            "run",
            "agent_name",
            "model_name",
            "started_at",
            pl.col("n_trials_declared").alias("n_declared"),
        )
        .join(per, on="job_id", how="left")
        .join(kinds, on="job_id", how="left")
        .with_columns(
            pl.col("n_trials").fill_null(0),
            *[pl.col(o).fill_null(0) for o in OUTCOME_COUNTS],
            pl.col("error_kinds").fill_null(""),
        )
        .sort("started_at", "job_name", nulls_last=True)
    )
    return out.drop("job_id")


def _trial_figures_per_job(trials: pl.DataFrame) -> pl.DataFrame:
    """Per job_id: trial and task counts, outcome counts, pass rate, mean reward, compute,
    tokens, steps and cost (see :func:`jobs_table`)."""
    done = pl.col("outcome") != "incomplete"
    return trials.group_by("job_id").agg(
        pl.len().alias("n_trials"),
        pl.col("task_name").n_unique().alias("tasks"),
        pl.col("task_name").value_counts().struct.field("count").max().alias("attempts_max"),
        *[(pl.col("outcome") == o).sum().alias(o) for o in OUTCOME_COUNTS],
        pl.when(done.sum() > 0)
        .then((pl.col("outcome") == "pass").sum() / done.sum())
        .alias("pass_rate"),
        pl.col("reward").fill_null(0.0).filter(done).mean().alias("mean_reward"),
        pl.col("duration_s").sum().alias("compute_s"),
        known_sum(measured_tokens("n_input_tokens")).alias("n_input_tokens"),
        known_sum(measured_tokens("n_cache_tokens")).alias("n_cache_tokens"),
        known_sum(measured_tokens("n_output_tokens")).alias("n_output_tokens"),
        known_sum("n_steps").alias("n_steps"),
        known_sum("cost_usd").alias("cost_usd"),
        pl.col("cost_usd").is_not_null().sum().alias("cost_known"),
    )


def _error_kinds_per_job(trials: pl.DataFrame) -> pl.DataFrame:
    """Per job_id with errors: "kind:n, ..." in kind order."""
    return (
        trials.filter(pl.col("error_kind") != "none")
        .group_by("job_id", "error_kind")
        .len()
        .sort("error_kind")
        .group_by("job_id")
        .agg(
            pl.concat_str([pl.col("error_kind"), pl.col("len").cast(pl.String)], separator=":")
            .str.join(", ")
            .alias("error_kinds")
        )
    )
