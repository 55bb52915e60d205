"""Trial records of Harbor jobs: cache check, extraction, and the per-job cache.

Per job, the trials frame rows (raw records of ``trials/extract.py`` plus the columns
``trials/assemble.py`` derives from them, which are a superset of the raw ones) are cached
(``load/shared/cache.py``) with a signature per trial (size, mtime and inode change time of the
trial folder, result.json, analysis.json, verifier/ and agent/) and, in the table's meta, the derivation
key (load options and rule sources) they were derived with. On reload:

* a job whose folder, result.json and config.json are unchanged and that was complete when
  cached is reused whole without reading its trial folders (fast path) when each trial's
  folder, result.json and analysis.json are unchanged (``finished_sig``: what changes after
  a trial has finished, by a regrade in place or ``harbor analyze``; compared as one
  digest); with the same derivation key even the derived columns are reused;
* otherwise only trials whose signature changed, and new trial folders, are extracted
  (a running job reloads incrementally); rows of unchanged trials are kept.
"""

from __future__ import annotations

import gc
import hashlib
import os
import uuid
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import orjson
import polars as pl

from evalkit.load.errors import LoadError
from evalkit.load.shared import cache as _cache
from evalkit.load.shared.io import held_cap
from evalkit.load.trials.extract import RAW_SCHEMA, extract_trial

#: Bump when extract.py changes what it produces (invalidates cached records).
EXTRACT_VERSION = "trials-9"


def trial_sig(trial_dir: str) -> str:
    """Signature of a trial's inputs: ``stat_sig`` of the folder, result.json,
    analysis.json, verifier/ and agent/ ('-' for a missing one)."""
    return _signed(trial_dir, _SIGNED)


#: What ``trial_sig`` signs, in order ('' is the trial folder itself).
_SIGNED = ("", "result.json", "analysis.json", "verifier", "agent")
#: The leading parts of ``trial_sig`` a finished job's trials are checked by: the folder
#: (a file added, e.g. ``harbor analyze``'s first analysis.json), result.json (a regrade in
#: place) and analysis.json (``harbor analyze`` again). verifier/ and agent/ are written
#: only while the trial runs.
FINISHED_PARTS = 3


def finished_sig(trial_dir: str, analysed: bool) -> str:
    """The first FINISHED_PARTS parts of ``trial_sig``, taken alone: analysis.json is looked
    up only for a trial that had one (a new one changes the folder's signature)."""
    head = _signed(trial_dir, _SIGNED[:2])
    return f"{head}|{_signed(trial_dir, _SIGNED[2:3]) if analysed else '-'}"


def _signed(trial_dir: str, names: tuple[str, ...]) -> str:
    """``stat_sig`` of each of ``names`` in the trial folder ('' is the folder itself, '-'
    for a missing one), joined by '|'. Runs for every trial of every load: kept lean."""
    base = trial_dir + "/" if trial_dir and not trial_dir.endswith("/") else trial_dir
    out = []
    for name in names:
        try:
            st = os.stat(base + name if name else trial_dir)
        except OSError:
            out.append("-")
            continue
        out.append(_cache.stat_sig(st))
    return "|".join(out)


def finished_part(sig: str) -> str:
    """``finished_sig`` out of a whole ``trial_sig``."""
    return "|".join(sig.split("|", FINISHED_PARTS)[:FINISHED_PARTS])


def _analysed(sig: str) -> bool:
    """The trial of this ``trial_sig`` had an analysis.json."""
    parts = sig.split("|", FINISHED_PARTS)
    return len(parts) >= FINISHED_PARTS and parts[FINISHED_PARTS - 1] != "-"


def trials_digest(sigs: Mapping[str, str]) -> str:
    """One digest of every trial's signature (``trial_sig``), keyed by trial folder."""
    raw = orjson.dumps(sorted(sigs.items()))
    return hashlib.blake2b(raw, digest_size=12).hexdigest()


def job_sig(job_dir: str) -> str:
    j = os.path.join
    return "|".join(
        _cache.file_sig(p) for p in (job_dir, j(job_dir, "result.json"), j(job_dir, "config.json"))
    )


@dataclass
class JobTrials:
    """Trial rows of one job: kept from the cache, extracted now, still to extract."""

    job_dir: str
    job_id: str
    frame: pl.DataFrame | None = None  # cached rows kept (raw + derived + trial_id + _sig)
    new: pl.DataFrame | None = None  # raw records extracted now (+ trial_id + _sig)
    meta: dict = field(default_factory=dict)  # meta of the cached table (derive key, zone)
    errors: list[LoadError] = field(default_factory=list)
    todo: list[tuple[str, str, str]] = field(default_factory=list)  # (trial_dir, trial_id, sig)
    complete: bool = False
    job_sig: str = ""
    from_cache: bool = False  # the whole job came from the cache (fast path)


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
        series[k] = _rewards_column(v) if j == _REWARDS_IDX else pl.Series(k, v, dtype=t)
    df = pl.DataFrame(series)
    return df.with_columns(
        pl.Series("trial_id", ids, pl.String), pl.Series("_sig", sigs, pl.String)
    )


def _errors_to_meta(errors: Iterable[LoadError]) -> list[list]:
    return [[e.path, e.level, e.error_type, e.message, e.job_id, e.trial_id] for e in errors]


def _errors_from_meta(rows: list) -> list[LoadError]:
    return [LoadError(*r) for r in rows]


def plan_job(
    job_dir: str, job_id: str, trial_dirs: list[str], *, cache: bool, job_complete: bool
) -> JobTrials:
    """Decide, per trial, whether its cached row is valid or it must be extracted.

    On the fast path the rows are not read yet (``rows()``): a whole-load result may make
    them unnecessary (``load/api.py``).
    """
    jt = JobTrials(job_dir, job_id, complete=job_complete, job_sig=job_sig(job_dir))
    meta = _cache.read_meta(job_dir, "trials", EXTRACT_VERSION) if cache else None
    frame = None
    if meta is not None:
        jt.meta = meta
        if meta.get("job_sig") == jt.job_sig and meta.get("complete") and job_complete:
            # a finished job's folder does not change when a trial's file is edited in
            # place: each trial's finished_sig is checked, in one digest
            analysed = set(meta.get("analysed") or ())
            finished = {d: finished_sig(d, d in analysed) for d in trial_dirs}
            if meta.get("finished_digest") == trials_digest(finished):
                jt.errors, jt.from_cache = _errors_from_meta(meta.get("errors") or []), True
                return jt
        frame = _matching_rows(job_dir, meta)
    if meta is not None and frame is not None:
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
        kept_ids = set(keep["trial_id"].to_list())
        jt.errors = [
            e for e in _errors_from_meta(meta.get("errors") or []) if e.trial_id in kept_ids
        ]
        jt.todo = [
            (d, _cache.path_key(d, resolved=True), sigs[d]) for d in trial_dirs if d not in kept
        ]
        return jt
    jt.meta = {}
    # signatures are taken by the extraction itself
    jt.todo = [(d, _cache.path_key(d, resolved=True), "") for d in trial_dirs]
    return jt


def _matching_rows(job_dir: str, meta: dict) -> pl.DataFrame | None:
    """The cached rows, if they belong to ``meta`` (their ``_gen`` column is its generation:
    two loads writing the same job at once cannot pair one's meta with the other's rows)."""
    df = _cache.read_rows(job_dir, "trials")
    if df is None or "_gen" not in df.columns:
        return None
    if df.height and df["_gen"][0] != meta.get("generation"):
        return None
    return df.drop("_gen")


def rows(p: JobTrials) -> pl.DataFrame | None:
    """The cached rows of a fast-path job (read on first use), else the kept rows."""
    if p.from_cache and p.frame is None:
        p.frame = _matching_rows(p.job_dir, p.meta)
        if p.frame is None:  # cache removed or rewritten under us: the caller re-plans
            p.from_cache = False
    return p.frame


#: Records turned into a frame at a time (bounds the Python objects alive during a load).
BLOCK = 8192


def _extract_one(d: str, tid: str, sig: str, cache: bool) -> tuple[tuple, list[LoadError], str]:
    """(raw record, load errors, signature) of one trial folder; a reader bug becomes an
    'extract_failed' load error and a record of nulls, never a failed load."""
    try:
        rec, errs, s = extract_trial(d, tid)
        if cache and not sig:  # else already taken by plan_job, or not needed
            sig = s
    except Exception as e:  # a reader bug must not kill the whole load
        rec = tuple([d] + [None] * (len(RAW_SCHEMA) - 1))
        errs = [LoadError(d, "trial", "extract_failed", f"{type(e).__name__}: {e}", trial_id=tid)]
    return rec, errs, sig


def _extract_job(p: JobTrials, run_chunk: Callable, pool: ThreadPoolExecutor | None) -> None:
    """Extract one job's planned trials into ``p.new``, a frame every BLOCK trials; their
    load errors carry the job_id as the cache stores it (warm loads equal cold ones)."""
    frames = []
    for i in range(0, len(p.todo), BLOCK):
        block = p.todo[i : i + BLOCK]
        if pool is not None:
            parts = [block[j : j + 256] for j in range(0, len(block), 256)]
            results = [r for part in pool.map(run_chunk, parts) for r in part]
        else:
            results = run_chunk(block)
        for r in results:
            for e in r[1]:
                p.errors.append(
                    LoadError(
                        e.path, e.level, e.error_type, e.message, p.job_id, e.trial_id or None
                    )
                )
        ids = [t[1] for t in block]
        frames.append(_raw_frame([r[0] for r in results], ids, [r[2] for r in results]))
        del results
    if frames:
        p.new = frames[0] if len(frames) == 1 else pl.concat(frames)


def extract_all(
    plans: list[JobTrials], *, progress: bool, workers: int | None = None, cache: bool = True
) -> None:
    """Extract every planned trial, in place (``p.new`` of each plan).

    Serial by default: file reads are quick syscalls on local disks and JSON parsing and
    extraction hold the GIL, so threads only add lock hand-offs (measured slower, see
    docs/performance.md). ``workers=N`` (N > 1) keeps a thread pool for slow network storage.
    Records become a frame every BLOCK trials; the cyclic garbage collector is paused
    meanwhile (records hold no cycles).
    """
    total = sum(len(p.todo) for p in plans)
    if not total:
        return
    bar = None
    if progress and total >= 200:
        from tqdm.auto import tqdm

        bar = tqdm(total=total, desc="trials", unit="trial", leave=False)

    def run_chunk(chunk: list[tuple[str, str, str]]) -> list[tuple[tuple, list[LoadError], str]]:
        out = [_extract_one(*t, cache) for t in chunk]
        if bar is not None:
            bar.update(len(chunk))
        return out

    pool = ThreadPoolExecutor(max_workers=workers) if workers and workers > 1 else None
    gc_was = gc.isenabled()
    gc.disable()
    try:
        with held_cap():  # the size cap read once, not per file (serial path)
            for p in plans:
                _extract_job(p, run_chunk, pool)
    finally:
        if gc_was:
            gc.enable()
        if pool is not None:
            pool.shutdown()
        if bar is not None:
            bar.close()


def save_job(p: JobTrials, frame: pl.DataFrame, meta: dict) -> None:
    """Write a job's trial rows (raw + derived) to the cache; the meta carries the job
    signature, the trial load errors and a fresh generation id."""
    errs = [
        LoadError(e.path, e.level, e.error_type, e.message, p.job_id, e.trial_id) for e in p.errors
    ]
    signed = list(zip(frame["trial_dir"], frame["_sig"], strict=True))
    p.meta = {
        "job_sig": p.job_sig,
        "complete": p.complete,
        "generation": uuid.uuid4().hex,
        "finished_digest": trials_digest({d: finished_part(sig) for d, sig in signed}),
        "analysed": [d for d, sig in signed if _analysed(sig)],
        "errors": _errors_to_meta(errs),
        **meta,
    }
    gen = pl.lit(p.meta["generation"], pl.String).alias("_gen")
    _cache.write_table(p.job_dir, "trials", EXTRACT_VERSION, frame.with_columns(gen), p.meta)
