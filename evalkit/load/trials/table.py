"""Build the trials frame for Harbor jobs: cache check, parallel extraction, bulk derivation.

Per job, the raw records of ``trials/extract.py`` are cached (``load/cache.py``) with a
signature per trial (size + mtime of the trial folder, result.json, verifier/ and agent/).
On reload:

* a job whose folder, result.json and config.json are unchanged and that was complete
  when cached is reused whole, without touching its trial folders (fast path);
* otherwise only trials whose signature changed, and new trial folders, are re-extracted
  (a running job reloads incrementally).

Everything derived (UTC timestamps, durations, error_kind, outcome, reward_valid,
evidence_complete, run label, attempt) is computed afterwards over the whole frame with
Polars expressions, because it depends on load options, not on the files alone.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import polars as pl

from evalkit.load import cache as _cache
from evalkit.load.errors import COLUMNS as ERROR_COLUMNS
from evalkit.load.errors import LoadError
from evalkit.load.trials.extract import RAW_SCHEMA, extract_trial

#: Bump when extract.py changes what it produces (invalidates cached raw records).
EXTRACT_VERSION = "trials-3"
_ERR_SCHEMA = {c.name: c.dtype for c in ERROR_COLUMNS}


def trial_sig(trial_dir: str) -> str:
    """Signature of a trial's inputs: folder, result.json, verifier/ and agent/ size+mtime."""
    j = os.path.join
    return "|".join(
        _cache.file_sig(p)
        for p in (
            trial_dir,
            j(trial_dir, "result.json"),
            j(trial_dir, "verifier"),
            j(trial_dir, "agent"),
        )
    )


def job_sig(job_dir: str) -> str:
    j = os.path.join
    return "|".join(
        _cache.file_sig(p) for p in (job_dir, j(job_dir, "result.json"), j(job_dir, "config.json"))
    )


@dataclass
class JobTrials:
    """Raw trial records of one job (plus what is still to extract)."""

    job_dir: str
    job_id: str
    frame: pl.DataFrame | None = None  # raw records + trial_id + _sig
    errors: list[LoadError] = field(default_factory=list)
    todo: list[tuple[str, str, str]] = field(default_factory=list)  # (trial_dir, trial_id, sig)
    complete: bool = False
    job_sig: str = ""
    from_cache: bool = False


_REWARDS_IDX = list(RAW_SCHEMA).index("rewards")


def _rewards_column(col: tuple) -> pl.Series:
    """The list-of-struct rewards column built from flat arrays (per-row dicts are slow)."""
    idx, names, values = [], [], []
    for i, items in enumerate(col):
        for it in items or ():
            idx.append(i)
            names.append(it["name"])
            values.append(it["value"])
    flat = pl.DataFrame(
        {
            "i": pl.Series(idx, dtype=pl.Int64),
            "name": pl.Series(names, dtype=pl.String),
            "value": pl.Series(values, dtype=pl.Float64),
        }
    )
    agg = flat.group_by("i", maintain_order=True).agg(pl.struct("name", "value").alias("rewards"))
    full = pl.DataFrame({"i": pl.int_range(len(col), eager=True, dtype=pl.Int64)}).join(
        agg, on="i", how="left"
    )
    return (
        full["rewards"]
        .fill_null(pl.lit([], dtype=RAW_SCHEMA["rewards"]))
        .cast(RAW_SCHEMA["rewards"])
    )


def _raw_frame(rows: list[tuple], ids: list[str], sigs: list[str]) -> pl.DataFrame:
    cols = list(zip(*rows, strict=True)) if rows else [() for _ in RAW_SCHEMA]
    series = {}
    for j, ((k, t), v) in enumerate(zip(RAW_SCHEMA.items(), cols, strict=True)):
        series[k] = _rewards_column(v) if j == _REWARDS_IDX else pl.Series(k, list(v), dtype=t)
    df = pl.DataFrame(series)
    return df.with_columns(
        pl.Series("trial_id", ids, pl.String), pl.Series("_sig", sigs, pl.String)
    )


def _errors_frame(errors: Iterable[LoadError]) -> pl.DataFrame:
    errs = list(errors)
    return pl.DataFrame({k: [getattr(e, k) for e in errs] for k in _ERR_SCHEMA}, schema=_ERR_SCHEMA)


def _errors_from_frame(df: pl.DataFrame) -> list[LoadError]:
    return [LoadError(**r) for r in df.iter_rows(named=True)]


def plan_job(
    job_dir: str, job_id: str, trial_dirs: list[str], *, use_cache: bool, job_complete: bool
) -> JobTrials:
    """Decide, per trial, whether its cached record is valid or it must be extracted."""
    jt = JobTrials(job_dir, job_id, complete=job_complete, job_sig=job_sig(job_dir))
    ids = {d: _cache.path_key(d, resolved=True) for d in trial_dirs}
    cached = _cache.read_table(job_dir, "trials", EXTRACT_VERSION) if use_cache else None
    cached_errs = _cache.read_table(job_dir, "trial_errors", EXTRACT_VERSION) if cached else None
    if cached is not None and cached_errs is not None:
        frame, meta = cached
        errs = cached_errs[0]
        if meta.get("job_sig") == jt.job_sig and meta.get("complete") and job_complete:
            jt.frame, jt.errors, jt.from_cache = frame, _errors_from_frame(errs), True
            return jt
        sigs = {d: trial_sig(d) for d in trial_dirs}
        keep = frame.filter(
            pl.col("trial_dir").is_in(list(trial_dirs))
            & (
                pl.col("_sig")
                == pl.col("trial_dir").replace_strict(sigs, default=None, return_dtype=pl.String)
            )
        )
        kept = set(keep["trial_dir"].to_list())
        jt.frame = keep
        kept_ids = {ids[d] for d in kept}
        jt.errors = _errors_from_frame(errs.filter(pl.col("trial_id").is_in(list(kept_ids))))
        jt.todo = [(d, ids[d], sigs[d]) for d in trial_dirs if d not in kept]
        return jt
    jt.todo = [(d, ids[d], "") for d in trial_dirs]  # signatures computed by the workers
    return jt


def extract_all(
    plans: list[JobTrials], *, progress: bool, workers: int | None = None, sigs: bool = True
) -> None:
    """Extract every planned trial, in place.

    Serial by default: file reads are quick syscalls on local disks and JSON parsing and
    extraction hold the GIL, so threads only add lock hand-offs (measured slower, see
    docs/performance.md). ``workers=N`` (N > 1) keeps a thread pool for slow network storage.
    The cyclic garbage collector is paused while records pile up (they hold no cycles).
    """
    work = [(pi, k) for pi, p in enumerate(plans) for k in range(len(p.todo))]
    if not work:
        return

    def run_one(pi: int, k: int) -> tuple[tuple, list[LoadError], str]:
        d, tid, sig = plans[pi].todo[k]
        try:
            rec, errs, s = extract_trial(d, tid)
            if sigs and not sig:  # else already taken by plan_job, or not needed
                sig = s
        except Exception as e:  # a reader bug must not kill the whole load
            rec = tuple([d] + [None] * (len(RAW_SCHEMA) - 1))
            errs = [
                LoadError(d, "trial", "extract_failed", f"{type(e).__name__}: {e}", trial_id=tid)
            ]
        return rec, errs, sig

    bar = None
    if progress and len(work) >= 200:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(work), desc="trials", unit="trial", leave=False)

    def run_chunk(chunk: list[tuple[int, int]]) -> list[tuple[tuple, list[LoadError], str]]:
        out = [run_one(pi, k) for pi, k in chunk]
        if bar is not None:
            bar.update(len(chunk))
        return out

    size = 256
    chunks = [work[i : i + size] for i in range(0, len(work), size)]
    gc_was = gc.isenabled()
    gc.disable()
    try:
        if len(chunks) == 1 or workers is None or workers <= 1:
            results = [r for c in chunks for r in run_chunk(c)]
        else:
            with ThreadPoolExecutor(max_workers=workers) as ex:
                results = [r for part in ex.map(run_chunk, chunks) for r in part]
    finally:
        if gc_was:
            gc.enable()
    if bar is not None:
        bar.close()
    i = 0
    for p in plans:
        n = len(p.todo)
        chunk = results[i : i + n]
        i += n
        for r in chunk:  # job_id as the cache stores it (a warm load must give the same rows)
            for e in r[1]:
                p.errors.append(
                    LoadError(
                        e.path, e.level, e.error_type, e.message, p.job_id, e.trial_id or None
                    )
                )
        new = _raw_frame([r[0] for r in chunk], [t[1] for t in p.todo], [r[2] for r in chunk])
        p.frame = (
            new
            if p.frame is None or p.frame.height == 0
            else pl.concat([p.frame, new], how="vertical_relaxed")
        )


def save_plans(plans: list[JobTrials], *, use_cache: bool) -> None:
    """Write back the cache of every job that was (re-)extracted."""
    if not use_cache:
        return
    for p in plans:
        if p.from_cache or p.frame is None:
            continue
        errs = [
            LoadError(e.path, e.level, e.error_type, e.message, p.job_id, e.trial_id)
            for e in p.errors
        ]
        meta = {"job_sig": p.job_sig, "complete": p.complete}
        _cache.write_table(p.job_dir, "trial_errors", EXTRACT_VERSION, _errors_frame(errs), meta)
        _cache.write_table(p.job_dir, "trials", EXTRACT_VERSION, p.frame, meta)


RunLabeler = Callable[[pl.DataFrame], pl.Expr]
