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
from evalkit.load.jobs.table import jobs_frame
from evalkit.load.runs import Runs
from evalkit.load.timeparse import (
    resolve_policy,
)
from evalkit.load.trials.assemble import assemble, derive_key, load_key
from evalkit.load.trials.columns import COLUMNS as TRIAL_COLUMNS
from evalkit.load.trials.derive import add_run_and_attempt, default_run_label
from evalkit.load.trials.table import extract_all, plan_job, rows

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
            A mapping ``{job folder name: label}`` or a callable ``(job config dict) -> label``
            (the dict also has ``_job_folder`` and ``_job_dir``).
        naive_tz: policy for timestamps written without a zone (``load/timeparse.py``).
        outcome_rule: ``"goose"`` (default, reward beats exception) or ``"strict"``
            (``load/outcomes.py``).
        trajectories: parse trajectories now (otherwise on first ``runs.steps`` access).
        running_window_s: a job without ``finished_at`` whose files changed within this
            many seconds is 'running', else 'interrupted'.
        workers: None / 1: read trial folders serially (fastest on local disks, see
            docs/performance.md); N > 1: a thread pool of N (slow network storage).
    """
    policy = resolve_policy(naive_tz)
    found = discover(paths, memo=cache)
    errors: list[LoadError] = list(found.errors)
    now = time.time()

    # --- jobs: own files -------------------------------------------------------------
    job_recs: list[dict[str, Any]] = []
    for ref in found.jobs:
        job_id = _cache.path_key(ref.job_dir)
        rec, errs = extract_job(ref.job_dir, job_id)
        errors.extend(errs)
        rec.update(
            job_id=job_id,
            job_dir=ref.job_dir,
            job_name=os.path.basename(ref.job_dir),
            _label=ref.label,
            _ref=ref,
        )
        job_recs.append(rec)

    # --- trials: plan (cache) + extract what the cache does not hold ----------------------
    plans = []
    for rec in job_recs:
        ref = rec["_ref"]
        complete = bool(rec["ts_finished"])
        plans.append(
            plan_job(
                ref.job_dir,
                rec["job_id"],
                ref.trials,
                use_cache=cache and ref.only is None,
                job_complete=complete,
            )
        )
    # a whole-load result stored by an earlier load of the same cached jobs and options
    # (not when a trial must be extracted now: the stored result predates its change)
    fresh = cache and not any(p.todo for p in plans)
    lkey = load_key(plans, job_recs, derive_key(policy, outcome_rule), run) if fresh else None
    hit = _cache.read_load(lkey) if lkey else None
    if hit is None:
        for i, p in enumerate(plans):  # rows of fast-path jobs, now (or extract if gone)
            if p.from_cache and rows(p) is None:
                ref = job_recs[i]["_ref"]
                plans[i] = plan_job(
                    ref.job_dir, p.job_id, ref.trials, use_cache=False, job_complete=p.complete
                )
        extract_all(plans, progress=progress, workers=workers, sigs=cache)
    for p in plans:
        errors.extend(p.errors)

    if hit is not None:
        trials, zone_note = hit[0], hit[1]["zone_note"]
    else:
        # --- derived rows per job (cached with the options they depend on) -------------
        trials, zone_note = assemble(plans, job_recs, policy, outcome_rule, use_cache=cache)
        # --- run labels and attempts -----------------------------------------------------
        trials = _apply_run_labels(trials, job_recs, run)
        trials = add_run_and_attempt(trials, default_run_label())
        lkey = load_key(plans, job_recs, derive_key(policy, outcome_rule), run) if cache else None
        if lkey:
            _cache.write_load(lkey, trials, {"zone_note": zone_note})

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
            rt = rt.with_columns(
                pl.coalesce(
                    pl.lit(label, pl.String), pl.col("run"), default_run_label_rollout()
                ).alias("run")
            )
            rt = _number_attempts(rt)
            trials = pl.concat([trials, rt], how="vertical_relaxed")
            roll_jobs.append(
                conform(rf.jobs, JOB_COLUMNS).with_columns(pl.lit(label, pl.String).alias("run"))
            )
            pre_steps.append(rf.steps)
            pre_calls.append(rf.tool_calls)
            rec_findings.append(rf.findings)

    jobs = jobs_frame(job_recs, trials, zone_note, policy, now, running_window_s)
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
        options={
            "paths": paths,
            "naive_tz": naive_tz,
            "outcome_rule": outcome_rule,
            "cache": cache,
        },
        _pre_steps=pl.concat(pre_steps, how="diagonal_relaxed") if pre_steps else None,
        _pre_tool_calls=pl.concat(pre_calls, how="diagonal_relaxed") if pre_calls else None,
        _recorded_findings=pl.concat(rec_findings, how="diagonal_relaxed")
        if rec_findings
        else None,
        _trajectory_builder=builder,
    )
    if trajectories:
        _ = runs.steps
    return runs


def default_run_label_rollout() -> pl.Expr:
    return pl.concat_str(
        [pl.lit("go-code"), pl.col("model_name").fill_null("no-model")], separator="__"
    )


def _number_attempts(df: pl.DataFrame) -> pl.DataFrame:
    return df.with_columns(
        (pl.col("started_at").rank("ordinal").over(["run", "task_name"]))
        .cast(pl.Int32)
        .alias("attempt")
    )


def _apply_run_labels(trials: pl.DataFrame, job_recs: list[dict], run: RunSpec) -> pl.DataFrame:
    """Fill the per-trial user label (``__label``) from the ``run`` option."""
    if run is None or run == "default":
        return trials
    if run == "job":
        return trials.with_columns(
            pl.coalesce(pl.col("__label"), pl.col("job_name")).alias("__label")
        )
    if isinstance(run, Mapping):
        m = {str(k): str(v) for k, v in run.items()}
        return trials.with_columns(
            pl.coalesce(
                pl.col("__label"),
                pl.col("job_name").replace_strict(m, default=None, return_dtype=pl.String),
            ).alias("__label")
        )
    if callable(run):
        labels: dict[str, str] = {}
        for rec in job_recs:
            cfg = orjson.loads(rec["config_json"]) if rec.get("config_json") else {}
            cfg["_job_folder"], cfg["_job_dir"] = rec["job_name"], rec["job_dir"]
            try:
                lab = run(cfg)
            except Exception as e:
                raise ValueError(f"run= callable failed on job {rec['job_name']!r}: {e}") from e
            if lab is not None:
                labels[rec["job_id"]] = str(lab)
        return trials.with_columns(
            pl.coalesce(
                pl.col("__label"),
                pl.col("job_id").replace_strict(labels, default=None, return_dtype=pl.String),
            ).alias("__label")
        )
    raise TypeError("run= must be None, 'job', a mapping {job_name: label} or a callable")
