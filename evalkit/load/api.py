"""``evalkit.load``: find jobs and rollouts under paths and build the frames.

Never raises because of file content: every problem is a row of ``runs.load_errors``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any

import orjson
import polars as pl

from evalkit.load import cache as _cache
from evalkit.load._columns import conform
from evalkit.load.discover import discover
from evalkit.load.errors import LoadError
from evalkit.load.jobs.columns import COLUMNS as JOB_COLUMNS
from evalkit.load.jobs.extract import extract_job
from evalkit.load.runs import Runs
from evalkit.load.timeparse import choose_offset, format_offset, local_zone, resolve_policy, zone_offset_now, parse_aware, parse_naive, to_utc
from evalkit.load.trials.columns import COLUMNS as TRIAL_COLUMNS
from evalkit.load.trials.derive import add_run_and_attempt, default_run_label, derive
from evalkit.load.trials.extract import RAW_SCHEMA
from evalkit.load.trials.table import extract_all, plan_job, save_plans

PathsLike = str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | Mapping[str, Any]
RunSpec = None | str | Mapping[str, str] | Callable[[dict], str]


def load(
    paths: PathsLike = "runs",
    *,
    cache: bool = True,
    progress: bool = True,
    run: RunSpec = None,
    naive_tz: str = "auto",
    outcome_rule: str = "goose",
    trajectories: bool = False,
    running_window_s: float = 900.0,
    workers: int | None = None,
) -> Runs:
    """Load Harbor job folders (every format 0.1 - 0.26, mixed) and go-code rollouts.

    Args:
        paths: a runs folder (many jobs), a job folder, a trial folder, a rollout folder,
            a list of these, or a mapping ``{run label: path or [paths]}``.
        cache: reuse / update the per-job Parquet cache (``load/cache.py``).
        progress: show a tqdm progress bar on long loads.
        run: how trials are grouped into runs. None: by the mapping label if ``paths`` is a
            mapping, else ``agent__model__dataset``. ``"job"``: one run per job folder.
            A mapping ``{job_name: label}`` or a callable ``(job config dict) -> label``.
        naive_tz: policy for timestamps written without a zone (``load/timeparse.py``).
        outcome_rule: ``"goose"`` (default, reward beats exception) or ``"strict"``
            (``load/outcomes.py``).
        trajectories: parse trajectories now (otherwise on first ``runs.steps`` access).
        running_window_s: a job without ``finished_at`` whose files changed within this
            many seconds is 'running', else 'interrupted'.
        workers: threads for reading files (default: 4 x CPUs, at most 16).
    """
    policy = resolve_policy(naive_tz)
    found = discover(paths)
    errors: list[LoadError] = list(found.errors)
    now = time.time()

    # --- jobs: own files -------------------------------------------------------------
    job_recs: list[dict[str, Any]] = []
    for ref in found.jobs:
        job_id = _cache.path_key(ref.job_dir)
        rec, errs = extract_job(ref.job_dir, job_id)
        errors.extend(errs)
        rec.update(job_id=job_id, job_dir=ref.job_dir, job_name=os.path.basename(ref.job_dir), _label=ref.label, _ref=ref)
        job_recs.append(rec)

    # --- trials: plan (cache) + extract in one pool -------------------------------------
    plans = []
    for rec in job_recs:
        ref = rec["_ref"]
        complete = bool(rec["ts_finished"])
        plans.append(plan_job(ref.job_dir, rec["job_id"], ref.trials, use_cache=cache and ref.only is None, job_complete=complete))
    extract_all(plans, progress=progress, workers=workers)
    save_plans([p for p, r in zip(plans, job_recs, strict=True) if r["_ref"].only is None], use_cache=cache)

    raw_parts = []
    for p, rec in zip(plans, job_recs, strict=True):
        errors.extend(p.errors)
        if p.frame is None or p.frame.height == 0:
            continue
        f = p.frame
        if rec["_ref"].only is not None:
            f = f.filter(pl.col("trial_dir").is_in(sorted(rec["_ref"].only)))
        raw_parts.append(
            f.with_columns(
                pl.lit(rec["job_id"]).alias("job_id"),
                pl.lit(rec["job_name"]).alias("job_name"),
                pl.lit(rec["_label"], pl.String).alias("__label"),
                pl.lit(rec["dataset"], pl.String).alias("__dataset"),
            )
        )
    raw = pl.concat(raw_parts, how="vertical_relaxed") if raw_parts else pl.DataFrame(schema={**RAW_SCHEMA, "trial_id": pl.String, "_sig": pl.String, "job_id": pl.String, "job_name": pl.String, "__label": pl.String, "__dataset": pl.String})

    # --- naive timestamp zone per job ---------------------------------------------------
    zone_by_job, zone_note = _job_zones(raw, job_recs, policy)
    zones = sorted(set(zone_by_job.values()))
    raw = raw.with_columns(pl.col("job_id").replace_strict(zone_by_job, default="UTC", return_dtype=pl.String).alias("__zone"))
    trials = derive(raw, zones, outcome_rule)

    # --- run labels and attempts ---------------------------------------------------------
    trials = _apply_run_labels(trials, job_recs, run)
    trials = add_run_and_attempt(trials, default_run_label())

    # --- rollouts ------------------------------------------------------------------------
    pre_steps, pre_calls, rec_findings = [], [], []
    roll_jobs = []
    if found.rollouts:
        from evalkit.load.rollouts import read_rollouts

        for path, label in found.rollouts:
            try:
                rf = read_rollouts(path, progress=progress)
            except Exception as e:  # reader bug: keep the rest of the load
                errors.append(LoadError(path, "rollout", "read_failed", f"{type(e).__name__}: {e}"))
                continue
            errors.extend(rf.errors)
            rt = conform(rf.trials, TRIAL_COLUMNS)
            rt = rt.with_columns(pl.coalesce(pl.lit(label, pl.String), pl.col("run"), default_run_label_rollout()).alias("run"))
            rt = _number_attempts(rt)
            trials = pl.concat([trials, rt], how="vertical_relaxed")
            roll_jobs.append(conform(rf.jobs, JOB_COLUMNS).with_columns(pl.lit(label, pl.String).alias("run")))
            pre_steps.append(rf.steps)
            pre_calls.append(rf.tool_calls)
            rec_findings.append(rf.findings)

    jobs = _jobs_frame(job_recs, trials, zone_note, policy, now, running_window_s)
    if roll_jobs:
        jobs = pl.concat([jobs, *roll_jobs], how="vertical_relaxed")

    builder = None
    try:
        from evalkit.load.steps.table import build_trajectories

        builder = partial(build_trajectories, cache=cache, progress=progress, workers=workers)
    except ImportError:
        pass
    runs = Runs(
        jobs=jobs,
        _trials=trials,
        _load_errors=errors,
        options={"paths": paths, "naive_tz": naive_tz, "outcome_rule": outcome_rule, "cache": cache},
        _pre_steps=pl.concat(pre_steps, how="diagonal_relaxed") if pre_steps else None,
        _pre_tool_calls=pl.concat(pre_calls, how="diagonal_relaxed") if pre_calls else None,
        _recorded_findings=pl.concat(rec_findings, how="diagonal_relaxed") if rec_findings else None,
        _trajectory_builder=builder,
    )
    if trajectories:
        _ = runs.steps
    return runs


def default_run_label_rollout() -> pl.Expr:
    return pl.concat_str([pl.lit("go-code"), pl.col("model_name").fill_null("no-model")], separator="__")


def _number_attempts(df: pl.DataFrame) -> pl.DataFrame:
    return df.with_columns(
        (pl.col("started_at").rank("ordinal").over(["run", "task_name"])).cast(pl.Int32).alias("attempt")
    )


def _job_zones(raw: pl.DataFrame, job_recs: list[dict], policy: str) -> tuple[dict[str, str], dict[str, str]]:
    """Zone used for each job's naive timestamps, and a note saying how it was chosen."""
    zone_by_job: dict[str, str] = {}
    note: dict[str, str] = {}
    if policy != "auto":
        for rec in job_recs:
            zone_by_job[rec["job_id"]] = policy
            note[rec["job_id"]] = f"{policy} (given)"
        return zone_by_job, note
    local = local_zone()
    local_off = zone_offset_now(local)
    bounds = _offset_bounds(raw)
    for rec in job_recs:
        jid = rec["job_id"]
        b = bounds.get(jid, {})
        js = _naive_epoch(rec.get("ts_started"))
        je = _naive_epoch(rec.get("ts_finished")) or _naive_epoch(rec.get("ts_updated"))
        lo_cands = [v for v in (b.get("exc_lo"),) if v is not None]
        hi_cands = [v for v in (b.get("exc_hi"),) if v is not None]
        anchor = None
        if js is not None and b.get("min_start") is not None:
            anchor = js - b["min_start"]
            lo_cands.append(anchor - 5)
        if je is not None and b.get("max_end") is not None:
            hi_cands.append(je - b["max_end"] + 5)
        lo = max(lo_cands) if lo_cands else None
        hi = min(hi_cands) if hi_cands else None
        off = choose_offset(lo, hi, anchor, local_off)
        if off is None:
            zone_by_job[jid] = local
            note[jid] = f"{local} (local; could not infer)" if (js is not None or b) else f"{local} (local)"
        else:
            z = "UTC" if off == 0 else format_offset(off)
            zone_by_job[jid] = z
            note[jid] = f"{z} (inferred)"
    return zone_by_job, note


def _naive_epoch(s: str | None) -> float | None:
    """Seconds since epoch of a naive ISO string read as UTC (None if absent/aware/bad)."""
    if not s:
        return None
    from datetime import UTC, datetime

    try:
        d = datetime.fromisoformat(s.strip().replace(" ", "T"))
    except ValueError:
        return None
    if d.tzinfo is not None:
        return None
    return d.replace(tzinfo=UTC).timestamp()


def _offset_bounds(raw: pl.DataFrame) -> dict[str, dict[str, float | None]]:
    """Per job: earliest aware trial start, latest aware end, and exception-time bounds."""
    if raw.height == 0:
        return {}
    epoch = lambda e: e.dt.epoch("us") / 1e6  # noqa: E731
    start = parse_aware(pl.col("ts_started"))
    end = parse_aware(pl.col("ts_finished"))
    exc_naive = parse_naive(pl.col("ts_exception")).dt.replace_time_zone("UTC")
    g = raw.group_by("job_id").agg(
        epoch(start).min().alias("min_start"),
        epoch(end).max().alias("max_end"),
        (epoch(exc_naive) - epoch(end) - 5).max().alias("exc_lo"),
        (epoch(exc_naive) - epoch(start) + 5).min().alias("exc_hi"),
    )
    return {r["job_id"]: r for r in g.iter_rows(named=True)}


def _apply_run_labels(trials: pl.DataFrame, job_recs: list[dict], run: RunSpec) -> pl.DataFrame:
    """Fill the per-trial user label (``__label``) from the ``run`` option."""
    if run is None or run == "default":
        return trials
    if run == "job":
        return trials.with_columns(pl.coalesce(pl.col("__label"), pl.col("job_name")).alias("__label"))
    if isinstance(run, Mapping):
        m = {str(k): str(v) for k, v in run.items()}
        return trials.with_columns(
            pl.coalesce(pl.col("__label"), pl.col("job_name").replace_strict(m, default=None, return_dtype=pl.String)).alias("__label")
        )
    if callable(run):
        labels: dict[str, str] = {}
        for rec in job_recs:
            cfg = orjson.loads(rec["config_json"]) if rec.get("config_json") else {}
            cfg.setdefault("job_name", rec["job_name"])
            try:
                lab = run(cfg)
            except Exception as e:
                raise ValueError(f"run= callable failed on job {rec['job_name']!r}: {e}") from e
            if lab is not None:
                labels[rec["job_id"]] = str(lab)
        return trials.with_columns(
            pl.coalesce(pl.col("__label"), pl.col("job_id").replace_strict(labels, default=None, return_dtype=pl.String)).alias("__label")
        )
    raise TypeError("run= must be None, 'job', a mapping {job_name: label} or a callable")


def _jobs_frame(job_recs: list[dict], trials: pl.DataFrame, zone_note: dict[str, str], policy: str, now: float, window: float) -> pl.DataFrame:
    if not job_recs:
        return Runs.empty_jobs()
    counts = trials.group_by("job_id").agg(
        pl.max_horizontal(pl.col("finished_at").max(), pl.col("started_at").max()).alias("__last_trial"),
        pl.len().alias("n_trials_found"),
        pl.col("outcome").ne("incomplete").sum().alias("n_trials_with_result"),
        pl.col("run").unique().sort().str.join(", ").alias("run"),
    )
    rows = []
    for rec in job_recs:
        rows.append({
            "job_id": rec["job_id"], "job_name": rec["job_name"], "job_dir": rec["job_dir"],
            "harbor_job_id": rec["harbor_job_id"], "source_format": "harbor",
            "ts_started": rec["ts_started"], "ts_updated": rec["ts_updated"], "ts_finished": rec["ts_finished"],
            "naive_tz": zone_note.get(rec["job_id"]), "__zone": (zone_note.get(rec["job_id"]) or "UTC").split(" ")[0],
            "n_trials_declared": rec["n_trials_declared"], "stats_completed": rec["stats_completed"],
            "stats_errored": rec["stats_errored"], "agent_name": rec["agent_name"], "model_name": rec["model_name"],
            "dataset": rec["dataset"], "n_attempts": rec["n_attempts"], "n_concurrent": rec["n_concurrent"],
            "timeout_multiplier": rec["timeout_multiplier"], "environment_type": rec["environment_type"],
            "harbor_version": rec["harbor_version"], "format": rec["format"], "config_json": rec["config_json"],
            "__mtime": _latest_mtime(rec["job_dir"], rec["_ref"].trials),
            "__result_present": rec["result_present"],
        })
    str_cols = ("job_id", "job_name", "job_dir", "harbor_job_id", "ts_started", "ts_updated", "ts_finished", "naive_tz", "__zone", "agent_name", "model_name", "dataset", "environment_type", "harbor_version", "format", "config_json", "state")
    df = pl.DataFrame(rows, infer_schema_length=None, schema_overrides=dict.fromkeys(str_cols, pl.String))
    zones = sorted(set(df["__zone"].to_list()))
    df = df.with_columns(
        to_utc(pl.col("ts_started"), pl.col("__zone"), zones).alias("started_at"),
        to_utc(pl.col("ts_updated"), pl.col("__zone"), zones).alias("updated_at"),
        to_utc(pl.col("ts_finished"), pl.col("__zone"), zones).alias("finished_at"),
    ).join(counts, on="job_id", how="left").with_columns(
        pl.col("n_trials_found").fill_null(0), pl.col("n_trials_with_result").fill_null(0)
    )
    df = df.with_columns(_state_expr(now, window))
    return conform(df, JOB_COLUMNS, extra=False)


def _latest_mtime(job_dir: str, trial_dirs: list[str]) -> float:
    best = 0.0
    for p in [job_dir, os.path.join(job_dir, "result.json"), *trial_dirs[-64:]]:
        try:
            best = max(best, os.stat(p).st_mtime)
        except OSError:
            pass
    return best


def _state_expr(now: float, window: float) -> pl.Expr:
    """Job state (rule in jobs/extract.py): complete / running / interrupted / unknown.

    'running' needs both recent file activity (mtime within ``window``) and recent content
    (the newest job / trial timestamp within 24 h, when there is one): a job folder copied
    today from an old run is not running.
    """
    from datetime import UTC, datetime

    now_dt = datetime.fromtimestamp(now, UTC)
    last = pl.max_horizontal("started_at", "updated_at", "__last_trial")
    recent_files = (pl.lit(now) - pl.col("__mtime")) <= window
    recent_content = last.is_null() | ((pl.lit(now_dt) - last).dt.total_seconds() <= max(window, 86400))
    return (
        pl.when(pl.col("finished_at").is_not_null())
        .then(pl.lit("complete"))
        .when(recent_files & recent_content)
        .then(pl.lit("running"))
        .when(pl.col("__result_present"))
        .then(pl.lit("interrupted"))
        .otherwise(pl.lit("unknown"))
        .alias("state")
    )
