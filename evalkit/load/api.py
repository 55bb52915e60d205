"""``evalkit.load``: find jobs and rollouts under paths and build the frames.

Never raises because of file content: every problem is a row of ``runs.load_errors``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import orjson
import polars as pl

from evalkit.load._columns import conform
from evalkit.load.discover import JobRef, discover
from evalkit.load.errors import LoadError
from evalkit.load.gocode import read_rollouts
from evalkit.load.jobs.columns import COLUMNS as JOB_COLUMNS
from evalkit.load.jobs.extract import extract_job
from evalkit.load.jobs.table import jobs_frame, missing_results
from evalkit.load.runs import Runs
from evalkit.load.shared import cache as _cache
from evalkit.load.shared.timeparse import (
    resolve_policy,
)
from evalkit.load.steps.table import build_trajectories
from evalkit.load.trials.assemble import assemble, derive_key, load_key
from evalkit.load.trials.columns import COLUMNS as TRIAL_COLUMNS
from evalkit.load.trials.derive import add_run_and_attempt, default_run_label
from evalkit.load.trials.table import JobTrials, extract_all, plan_job, rows

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
        cache: reuse / update the per-job Parquet cache (``load/shared/cache.py``).
        progress: show a tqdm progress bar on long loads.
        run: how trials are grouped into runs. None: by the mapping label if ``paths`` is a
            mapping, else ``agent__model__dataset``. ``"job"``: one run per job folder.
            A mapping ``{job folder name: label}`` or a callable ``(job config dict) -> label``
            (the dict also has ``_job_folder`` and ``_job_dir``).
        naive_tz: policy for timestamps written without a zone (``load/shared/timeparse.py``).
        outcome_rule: ``"goose"`` (default, reward beats exception) or ``"strict"``
            (``load/outcomes.py``).
        trajectories: parse trajectories now (otherwise on first ``runs.steps`` access).
        running_window_s: a job without ``finished_at`` whose files changed within this
            many seconds is 'running', else 'interrupted'.
        workers: None / 1: read trial folders serially (fastest on local disks, see
            docs/performance.md); N > 1: a thread pool of N (slow network storage).
    """
    policy = resolve_policy(naive_tz)
    found = discover(paths, cache=cache)
    errors: list[LoadError] = list(found.errors)
    now = time.time()
    job_recs = _job_records(found.jobs, errors)
    trials, zone_note = _harbor_trials(
        job_recs, errors, policy, outcome_rule, run, cache=cache, progress=progress, workers=workers
    )
    rollouts = _read_rollouts(found.rollouts, errors, progress)
    trials = pl.concat([trials, *rollouts.trials], how="vertical_relaxed")
    jobs = jobs_frame(job_recs, trials, zone_note, policy, now, running_window_s)
    errors.extend(missing_results(jobs, trials))
    jobs = pl.concat([jobs, *rollouts.jobs], how="vertical_relaxed")
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
        _pre_steps=_concat(rollouts.steps),
        _pre_tool_calls=_concat(rollouts.tool_calls),
        _recorded_findings=_concat(rollouts.findings),
        _trajectory_builder=partial(
            _build_trajectories, jobs=jobs, cache=cache, progress=progress, workers=workers
        ),
    )
    if trajectories:
        _ = runs.steps
    return runs


def _job_records(refs: list[JobRef], errors: list[LoadError]) -> list[dict[str, Any]]:
    """One record per job folder from its own files (config.json, result.json)."""
    job_recs: list[dict[str, Any]] = []
    for ref in refs:
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
    return job_recs


def job_plans(job_recs: list[dict[str, Any]], *, cache: bool) -> list[JobTrials]:
    """Per job record, which of its trials come from the cache and which are read now (a
    load of some trials of a job, ``only``, never uses the cache)."""
    return [
        plan_job(
            rec["_ref"].job_dir,
            rec["job_id"],
            rec["_ref"].trials,
            cache=cache and rec["_ref"].only is None,
            job_complete=bool(rec["ts_finished"]),
        )
        for rec in job_recs
    ]


def _harbor_trials(
    job_recs: list[dict[str, Any]],
    errors: list[LoadError],
    policy: str,
    outcome_rule: str,
    run: RunSpec,
    *,
    cache: bool,
    progress: bool,
    workers: int | None,
) -> tuple[pl.DataFrame, dict[str, str]]:
    """The trials frame of the Harbor jobs and each job's naive-timestamp zone note: from
    the whole-load cache entry of the same jobs and options, else per job from the cached
    rows plus the trials extracted now."""
    plans = job_plans(job_recs, cache=cache)
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
                    ref.job_dir, p.job_id, ref.trials, cache=False, job_complete=p.complete
                )
        extract_all(plans, progress=progress, workers=workers, cache=cache)
    for p in plans:
        errors.extend(p.errors)
    if hit is not None:
        return hit[0], hit[1]["zone_note"]
    trials, zone_note = assemble(plans, job_recs, policy, outcome_rule, cache=cache)
    trials = _apply_run_labels(trials, job_recs, run)
    trials = add_run_and_attempt(trials, default_run_label())
    lkey = load_key(plans, job_recs, derive_key(policy, outcome_rule), run) if cache else None
    if lkey:
        _cache.write_load(lkey, trials, {"zone_note": zone_note})
    return trials, zone_note


@dataclass
class _RolloutFrames:
    """The frames of every rollout folder of a load, one list entry per folder."""

    trials: list[pl.DataFrame] = field(default_factory=list)
    jobs: list[pl.DataFrame] = field(default_factory=list)
    steps: list[pl.DataFrame] = field(default_factory=list)
    tool_calls: list[pl.DataFrame] = field(default_factory=list)
    findings: list[pl.DataFrame] = field(default_factory=list)


def _read_rollouts(
    folders: list[tuple[str, str | None]], errors: list[LoadError], progress: bool
) -> _RolloutFrames:
    """Read each go-code rollout folder; a reader failure is a load error, not a crash."""
    out = _RolloutFrames()
    for path, label in folders:
        try:
            rf = read_rollouts(path, progress=progress)
        except Exception as e:  # reader bug: keep the rest of the load
            errors.append(LoadError(path, "rollout", "read_failed", f"{type(e).__name__}: {e}"))
            continue
        errors.extend(rf.errors)
        rt = conform(rf.trials, TRIAL_COLUMNS).with_columns(
            pl.coalesce(pl.lit(label, pl.String), pl.col("run"), default_run_label_rollout()).alias(
                "run"
            )
        )
        out.trials.append(_number_attempts(rt))
        out.jobs.append(
            conform(rf.jobs, JOB_COLUMNS).with_columns(pl.lit(label, pl.String).alias("run"))
        )
        out.steps.append(rf.steps)
        out.tool_calls.append(rf.tool_calls)
        out.findings.append(rf.findings)
    return out


def _concat(frames: list[pl.DataFrame]) -> pl.DataFrame | None:
    return pl.concat(frames, how="diagonal_relaxed") if frames else None


def _build_trajectories(trials: pl.DataFrame, *, jobs: pl.DataFrame, **options: Any) -> Any:
    """build_trajectories over ``trials`` with each trial's job folder (the per-job cache)
    and the finished jobs (``finished_at`` known: their unchanged caches are reused whole)."""
    dirs = jobs.select("job_id", "job_dir", "finished_at").unique("job_id", keep="first")
    finished = dirs.filter(pl.col("finished_at").is_not_null())["job_dir"].to_list()
    if "job_dir" not in trials.columns:
        trials = trials.join(
            dirs.select("job_id", "job_dir"), on="job_id", how="left", maintain_order="left"
        )
    return build_trajectories(trials, finished_jobs=frozenset(finished), **options)


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
