"""Build the jobs frame from the job records and the finished trials frame."""

from __future__ import annotations

import contextlib
import os

import polars as pl

from evalkit.load._columns import conform, empty
from evalkit.load.errors import LoadError
from evalkit.load.jobs.columns import COLUMNS as JOB_COLUMNS
from evalkit.load.shared.timeparse import to_utc
from evalkit.load.trials.analysis import CHECK_ITEM

ANALYSIS = pl.List(CHECK_ITEM)


def run_names() -> pl.Expr:
    """A job's runs, aggregated over its trials: their labels, sorted, joined by ', ' (null
    when none of its trials has one)."""
    names = pl.col("run").drop_nulls().unique().sort()
    return pl.when(names.len() > 0).then(names.str.join(", "))


#: Columns of the job rows read as strings whatever their values (all null included).
_STRING_COLUMNS = (
    "job_id", "job_name", "job_dir", "harbor_job_id", "ts_started", "ts_updated",
    "ts_finished", "naive_tz", "__zone", "agent_name", "model_name", "dataset",
    "environment_type", "harbor_version", "format", "config_json", "analysis_summary",
    "state", "__launch_state", "__ts_lock", "__ts_named",
)  # fmt: skip


def jobs_frame(
    job_recs: list[dict],
    trials: pl.DataFrame,
    zone_note: dict[str, str],
    policy: str,
    now: float,
    window: float,
) -> pl.DataFrame:
    """One row per job record: its own fields, times in UTC, trial counts and state."""
    if not job_recs:
        return empty(JOB_COLUMNS)
    counts = _trial_counts(trials)
    overrides = {**dict.fromkeys(_STRING_COLUMNS, pl.String), "analysis_checks": ANALYSIS}
    rows = [_job_row(rec, zone_note) for rec in job_recs]
    df = pl.DataFrame(rows, infer_schema_length=None, schema_overrides=overrides)
    df = (
        _with_utc_times(df)
        .join(counts, on="job_id", how="left")
        .with_columns(
            pl.col("n_trials_found").fill_null(0), pl.col("n_trials_with_result").fill_null(0)
        )
    )
    df = df.with_columns(_state_expr(now, window))
    return conform(df, JOB_COLUMNS, extra=False)


def _trial_counts(trials: pl.DataFrame) -> pl.DataFrame:
    """Per job_id: the newest trial time, the trials found and with a result, the runs."""
    used = trials.select("job_id", "finished_at", "started_at", "outcome", "run")
    return used.group_by("job_id").agg(
        pl.max_horizontal(pl.col("finished_at").max(), pl.col("started_at").max()).alias(
            "__last_trial"
        ),
        pl.len().alias("n_trials_found"),
        pl.col("outcome").ne("incomplete").sum().alias("n_trials_with_result"),
        run_names().alias("run"),
    )


def _job_row(rec: dict, zone_note: dict[str, str]) -> dict:
    """The row of one job record (timestamps still naive strings, read in ``__zone``)."""
    return {
        "job_id": rec["job_id"],
        "job_name": rec["job_name"],
        "job_dir": rec["job_dir"],
        "harbor_job_id": rec["harbor_job_id"],
        "source_format": "harbor",
        "ts_started": rec["ts_started"],
        "ts_updated": rec["ts_updated"],
        "ts_finished": rec["ts_finished"],
        "naive_tz": zone_note.get(rec["job_id"]),
        "__zone": (zone_note.get(rec["job_id"]) or "UTC").split(" ")[0],
        "n_trials_declared": rec["n_trials_declared"],
        "stats_completed": rec["stats_completed"],
        "stats_errored": rec["stats_errored"],
        "agent_name": rec["agent_name"],
        "model_name": rec["model_name"],
        "dataset": rec["dataset"],
        "n_attempts": rec["n_attempts"],
        "n_concurrent": rec["n_concurrent"],
        "timeout_multiplier": rec["timeout_multiplier"],
        "environment_type": rec["environment_type"],
        "harbor_version": rec["harbor_version"],
        "format": rec["format"],
        "config_json": rec["config_json"],
        "analysis_summary": rec["analysis_summary"],
        "analysis_checks": rec["analysis_checks"],
        "__mtime": _latest_mtime(rec["job_dir"], rec["_ref"].trials),
        "__ts_lock": rec.get("ts_lock"),
        "__ts_named": rec.get("ts_named"),
        "__result_present": rec["result_present"],
        "__launch_state": rec.get("launch_state"),
    }


def _with_utc_times(df: pl.DataFrame) -> pl.DataFrame:
    """The job's naive timestamps as UTC datetimes, each read in the job's ``__zone``."""
    zones = sorted(set(df["__zone"].to_list()))
    return df.with_columns(
        to_utc(pl.col("ts_started"), pl.col("__zone"), zones).alias("started_at"),
        to_utc(pl.col("ts_updated"), pl.col("__zone"), zones).alias("updated_at"),
        to_utc(pl.col("ts_finished"), pl.col("__zone"), zones).alias("finished_at"),
        to_utc(pl.col("__ts_lock"), pl.col("__zone"), zones).alias("__lock_at"),
        to_utc(pl.col("__ts_named"), pl.col("__zone"), zones).alias("__named_at"),
    )


def _latest_mtime(job_dir: str, trial_dirs: list[str]) -> float:
    best = 0.0
    for p in [job_dir, os.path.join(job_dir, "result.json"), *trial_dirs[-64:]]:
        with contextlib.suppress(OSError):
            best = max(best, os.stat(p).st_mtime)
    return best


def _state_expr(now: float, window: float) -> pl.Expr:
    """Job state (rule in jobs/extract.py): complete / running / interrupted / unknown.

    'running' needs both recent file activity (mtime within ``window``) and recent content
    (the newest job / lock / trial timestamp, or the start in a default job folder name,
    within 24 h): a job folder copied today from an old run is not running, nor is one
    whose files and name hold no time at all.
    """
    from datetime import UTC, datetime

    now_dt = datetime.fromtimestamp(now, UTC)
    last = pl.max_horizontal("started_at", "updated_at", "__last_trial", "__lock_at", "__named_at")
    recent_files = (pl.lit(now) - pl.col("__mtime")) <= window
    recent_content = ((pl.lit(now_dt) - last).dt.total_seconds() <= max(window, 86400)).fill_null(
        False
    )
    return (
        pl.when(pl.col("finished_at").is_not_null())
        .then(pl.lit("complete"))
        .when(pl.col("__launch_state") == "interrupted")
        .then(pl.lit("interrupted"))
        .when(recent_files & recent_content)
        .then(pl.lit("running"))
        .when(pl.col("__result_present"))
        .then(pl.lit("interrupted"))
        .otherwise(pl.lit("unknown"))
        .alias("state")
    )


_JOB_STATE_PHRASE = {
    "complete": "a finished job",
    "interrupted": "an interrupted job",
    "unknown": "a job that is not running (its state is unknown)",
}


def missing_results(jobs: pl.DataFrame, trials: pl.DataFrame) -> list[LoadError]:
    """A 'missing_result' load error per Harbor trial folder without a readable result.json
    in a job that is not running (the trial row stays, as ``incomplete``): such a trial
    will not finish by itself. In a running job a missing result.json is the normal state
    of a trial in progress and is no error."""
    settled = jobs.filter(pl.col("state") != "running").select("job_id", "state")
    gone = trials.filter(pl.col("result_present").eq(False)).join(settled, on="job_id")
    rows = gone.select("job_id", "trial_id", "trial_dir", "state").iter_rows(named=True)
    # a result.json that exists but cannot be read has its own error already
    return [
        LoadError(
            os.path.join(r["trial_dir"], "result.json"),
            "trial",
            "missing_result",
            f"no result.json in {_JOB_STATE_PHRASE.get(r['state'], 'a job that is not running')}: "
            "the trial did not finish (kept as an incomplete row)",
            job_id=r["job_id"],
            trial_id=r["trial_id"],
        )
        for r in rows
        if os.path.isdir(r["trial_dir"])
        and not os.path.lexists(os.path.join(r["trial_dir"], "result.json"))
    ]
