"""``build_trajectories``: every trial's trajectories -> steps / tool_calls / trial_summary.

All trials are parsed in one pass: serially by default, by a process pool when the
trajectory bytes are large (:data:`PROCESS_POOL_BYTES`), by a thread pool when ``workers``
asks for one (overlaps file reads on slow storage). Columns are accumulated as lists and turned into frames in
bulk; timestamps, exit codes, is_error, retries and metrics_mismatch are vectorised.

Cache (``evalkit.load.shared.cache``): per job, tables ``traj_steps``, ``traj_calls``,
``traj_index`` and ``traj_errors`` written together under one generation id. A trial's
rows are reused when the signature of its trajectory files (name and ``cache.stat_sig``: size, mtime and
inode change time, of everything in ``agent/`` and ``steps/*/agent/``) is unchanged, so adding trials to a job
parses only the new ones.
"""

from __future__ import annotations

import os
from collections.abc import Collection
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from evalkit.load.errors import LoadError, path_text
from evalkit.load.runs import TrajectoryFrames
from evalkit.load.shared.cache import stat_sig
from evalkit.load.shared.io import held_cap
from evalkit.load.steps import job_cache
from evalkit.load.steps.atif import Acc, as_columns
from evalkit.load.steps.derive import (
    final_totals,
    finish_calls,
    finish_steps,
    raw_calls_frame,
    raw_steps_frame,
    trial_summary,
)
from evalkit.load.steps.extract import Listing, TrialParse, parse_trial
from evalkit.load.trials.table import job_sig

#: Above this many trajectory bytes (and with workers != 1) a process pool is used. Below it,
#: workers=None parses serially (per-step work holds the GIL, so threads do not help unless
#: files are on slow storage: pass workers=N for a thread pool then); a spawned worker costs
#: ~0.5 s to start and rows must be pickled back, so processes pay off only for big loads.
PROCESS_POOL_BYTES = 256 * 1024 * 1024
_NONE: frozenset[str] = frozenset()
INDEX_FIELDS = tuple(job_cache.INDEX_SCHEMA)
#: has_data and the counts and totals (INDEX_FIELDS after trial_id and sig) of a trial with no files
_NOTHING_READ = (False, *(None,) * (len(INDEX_FIELDS) - 3))


def trial_signature(trial_dir: str) -> tuple[str, int]:
    """('name:size:mtime:ctime|...' of every file in agent/ and steps/*/agent/, total bytes)."""
    sig, total, _ = probe(trial_dir, sign=True)
    return sig, total


def probe(trial_dir: str, *, sign: bool) -> tuple[str, int, Listing]:
    """(signature or '-', trajectory bytes, what the folder holds) of one trial folder.

    ``sign``: the signature (``trial_signature``, one scandir + a stat per file of agent/
    and steps/*/agent/); else :func:`_listing`.
    """
    j = os.path.join
    if not sign:
        return "-", *_listing(trial_dir)
    parts: list[str] = []
    total = 0
    dirs = [("", j(trial_dir, "agent"))]
    sdir = j(trial_dir, "steps")
    steps: bool | None = True
    try:
        dirs += [(f"{n}/", j(sdir, n, "agent")) for n in sorted(os.listdir(sdir))]
    except FileNotFoundError:
        steps = False
    except OSError:
        steps = None
    agent = None
    for pre, d in dirs:
        names: list[str] | None = []
        try:
            with os.scandir(d) as it:
                for e in it:
                    names.append(e.name)  # type: ignore[union-attr]
                    if e.is_file():
                        st = e.stat()
                        parts.append(f"{pre}{path_text(e.name)}:{stat_sig(st)}")
                        total += st.st_size
        except FileNotFoundError:
            pass  # no such folder: nothing in it
        except OSError:
            names = None  # not a folder, unreadable: unknown
        if not pre:
            agent = None if names is None else frozenset(names)
    parts.sort()
    return "|".join(parts) or "-", total, Listing(agent, steps)


def _listing(trial_dir: str) -> tuple[int, Listing]:
    """(-1: trajectory bytes not looked up, what the folder holds): one listdir of the
    trial folder (tells agent/ and steps/ apart from nothing, the usual trial without
    trajectories) and one of agent/ when it is there."""
    try:
        top: list[str] | None = os.listdir(trial_dir)
    except FileNotFoundError:
        top = []
    except OSError:
        top = None  # not a folder, unreadable: look inside as if it were one
    agent: frozenset[str] | None = _NONE
    if top is None or "agent" in top:
        try:
            agent = frozenset(os.listdir(trial_dir + "/agent"))  # trial folders never end in /
        except FileNotFoundError:
            agent = _NONE
        except OSError:
            agent = None
    return -1, Listing(agent, None if top is None else "steps" in top)


#: Main trajectories stat'ed to estimate the bytes of an unsigned load (picks the pool).
SIZE_SAMPLE = 64


def _estimated_bytes(work: list[tuple]) -> int:
    """Trajectory bytes of unsigned work items (cache off): the mean size of up to
    SIZE_SAMPLE main trajectories, evenly spaced, times the items that may hold one."""
    items = [w for w in work if w[5].agent is None or "trajectory.json" in w[5].agent]
    if not items:
        return 0
    step = max(1, len(items) // SIZE_SAMPLE)
    sample = items[::step][:SIZE_SAMPLE]
    sizes = [_size(w[1] + "/agent/trajectory.json") for w in sample]
    return sum(sizes) * len(items) // len(sample)


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def _parse_chunk(items: list[tuple]) -> tuple[dict, list, dict, list[LoadError]]:
    """Worker: parse trials -> (step rows, call rows, index columns, errors)."""
    acc = Acc()
    idx: list[tuple] = []
    errors: list[LoadError] = []
    for trial_id, trial_dir, job_id, agent_name, sig, listing in items:
        if listing is not None and listing.steps is False and listing.agent == _NONE:
            # no agent/ files and no steps/: nothing parse_trial could find
            idx.append((trial_id, sig, *_NOTHING_READ))
            continue
        tp = parse_trial(trial_id, trial_dir, job_id, agent_name, acc, listing=listing)
        errors.extend(tp.errors)
        idx.append(_index_row(trial_id, sig, tp))
    return acc.steps, acc.calls, as_columns(idx, INDEX_FIELDS), errors


def _index_row(trial_id: str, sig: str, tp: TrialParse) -> tuple:
    """What a parsed trial gave, in INDEX_COLUMNS order."""
    t = final_totals(tp.final_metrics)
    has = tp.has_trajectory
    return (
        trial_id, sig, has or tp.n_turns is not None,
        tp.n_steps if has else None, tp.n_tool_calls if has else None, tp.n_turns,
        t["total_prompt_tokens"], t["total_completion_tokens"], t["total_cached_tokens"],
        t["total_cost_usd"],
    )  # fmt: skip


#: Steps held as Python lists before they become a raw frame: bounds the Python objects
#: alive during a parse (each step's texts are copied into Arrow buffers once per block).
FRAME_BLOCK_STEPS = 65_536


class _RawFrames:
    """Parsed rows as raw step / call frames, turned into frames every FRAME_BLOCK_STEPS."""

    def __init__(self) -> None:
        self.acc = Acc()
        self.steps: list[pl.DataFrame] = []
        self.calls: list[pl.DataFrame] = []

    def add(self, steps: dict[str, list], calls: list) -> None:
        for key, v in steps.items():
            self.acc.steps[key].extend(v)
        self.acc.calls.extend(calls)
        if self.acc.n_steps >= FRAME_BLOCK_STEPS:
            self._flush()

    def _flush(self) -> None:
        self.steps.append(raw_steps_frame(self.acc.step_columns()))
        self.calls.append(raw_calls_frame(self.acc.call_columns()))
        self.acc = Acc()

    def frames(self) -> tuple[pl.DataFrame, pl.DataFrame]:
        """(raw steps, raw calls) of everything added, in the order added."""
        if self.acc.n_steps or self.acc.calls or not self.steps:
            self._flush()
        one = len(self.steps) == 1
        return (
            self.steps[0] if one else pl.concat(self.steps),
            self.calls[0] if one else pl.concat(self.calls),
        )


def _run(work: list[tuple], total_bytes: int, workers: int | None, progress: bool) -> tuple:
    """Parse work items in parallel; returns (raw steps, raw calls, index columns, errors)."""
    raw = _RawFrames()
    index: dict[str, list] = {k: [] for k in INDEX_FIELDS}
    errors: list[LoadError] = []
    n = len(work)
    if workers is None:  # threads only contend for the GIL here: serial, or processes when large
        big = total_bytes >= PROCESS_POOL_BYTES
        workers = max(1, min(8, os.cpu_count() or 1)) if big else 1
    workers = max(1, workers)
    use_procs = workers > 1 and total_bytes >= PROCESS_POOL_BYTES
    size = 64 if use_procs else 16
    chunks = [work[i : i + size] for i in range(0, n, size)]
    bar = None
    if progress and n:
        from tqdm.auto import tqdm

        bar = tqdm(total=n, desc="trajectories", unit="trial", leave=False)

    def merge(res: tuple, k: int) -> None:
        s, c, i, e = res
        raw.add(s, c)
        for key, v in i.items():
            index[key].extend(v)
        errors.extend(e)
        if bar is not None:
            bar.update(k)

    if workers == 1 or len(chunks) <= 1:
        with held_cap():  # the size cap read once, not per file
            for ch in chunks:
                merge(_parse_chunk(ch), len(ch))
    else:
        ex: Executor
        if use_procs:
            import multiprocessing as mp

            ex = ProcessPoolExecutor(min(workers, len(chunks)), mp_context=mp.get_context("spawn"))
        else:
            ex = ThreadPoolExecutor(min(workers, len(chunks)))
        with ex:
            futs = {ex.submit(_parse_chunk, ch): len(ch) for ch in chunks}
            for f in as_completed(futs):
                merge(f.result(), futs.pop(f))  # dropped once merged: not held to the end
    if bar is not None:
        bar.close()
    return *raw.frames(), index, errors


def _keep(df: pl.DataFrame, ids: Any, col: str = "trial_id") -> pl.DataFrame:
    return df.filter(pl.col(col).is_in(list(ids)))


def _harbor_trials(trials: pl.DataFrame) -> pl.DataFrame:
    """The trials to parse: trial_dir set, source_format null or 'harbor', the first row of
    each trial_id. Null counts first (no expression runs on the usual input: each costs
    ~50 us, more than the rest of a small load's bookkeeping)."""
    td = trials["trial_dir"]
    keep = td.is_not_null() if td.null_count() else None
    if "source_format" in trials.columns:
        sf = trials["source_format"]
        is_harbor = sf == "harbor"  # null where sf is null: kept too
        if sf.null_count() != sf.len() and not is_harbor.all():  # all() skips nulls
            harbor = is_harbor.fill_null(True)
            keep = harbor if keep is None else keep & harbor
    t = trials if keep is None or keep.all() else trials.filter(keep)
    ids = t["trial_id"].to_list()
    if len(set(ids)) != len(ids):
        t = t.unique("trial_id", keep="first", maintain_order=True)
    return t


def _unchanged_finished(
    jd: str, ids: list[str], old: job_cache.Cached | None, finished: Collection[str]
) -> bool:
    """The job has finished, its folder signature (``trials.table.job_sig``: the trials
    cache's rule) is the cached one and the cache holds every trial asked for: its tables
    are reused without signing each trial folder."""
    if old is None or jd not in finished or not old.meta.get("finished"):
        return False
    if old.meta.get("job_sig") != job_sig(jd):
        return False
    return set(ids) <= set(old.tables["traj_index"]["trial_id"].to_list())


@dataclass
class _JobPlan:
    """What a load does with each job's trajectories: cached tables to reuse (whole for the
    ``fast`` jobs), the job signatures taken before its trials were looked at, and the
    trials to parse now (with their trajectory bytes, which pick serial or a pool)."""

    cached: dict[str, dict[str, pl.DataFrame]] = field(default_factory=dict)
    job_sigs: dict[str, str] = field(default_factory=dict)
    fast: set[str] = field(default_factory=set)
    work: list[tuple] = field(default_factory=list)
    total_bytes: int = 0


def _trial_rows(t: pl.DataFrame) -> tuple[list[tuple], dict[str, list[int]]]:
    """(trial_id, trial_dir, job_id, job_dir, agent_name) per trial, and their indexes by
    job_dir ('' when unknown)."""
    have, none = set(t.columns), [None] * t.height
    names = ("trial_id", "trial_dir", "job_id", "job_dir", "agent_name")
    rows = list(zip(*(t[c].to_list() if c in have else none for c in names), strict=True))
    by_job: dict[str, list[int]] = {}
    for i, r in enumerate(rows):
        by_job.setdefault(r[3] or "", []).append(i)
    return rows, by_job


def _plan_jobs(
    rows: list[tuple], by_job: dict[str, list[int]], cache: bool, finished: Collection[str]
) -> _JobPlan:
    """Per job: reuse its cached tables whole (finished and unchanged), or sign each trial
    folder and parse those whose signature is not the cached one (every trial, cache off)."""
    plan = _JobPlan()
    for jd, idxs in by_job.items():
        if cache and jd:
            plan.job_sigs[jd] = job_sig(jd)  # before the trials are looked at
        old = job_cache.read_job(jd) if (cache and jd) else None
        if _unchanged_finished(jd, [rows[i][0] for i in idxs], old, finished):
            plan.cached[jd] = old.tables  # type: ignore[union-attr]
            plan.fast.add(jd)
            continue
        old_sig = dict(old.tables["traj_index"].select("trial_id", "sig").rows()) if old else {}
        if old:
            plan.cached[jd] = old.tables
        for i in idxs:
            tid, tdir, jid, _, agent = rows[i]
            # the file signature (cache) or listing: both tell the parser which files exist
            sig, nbytes, listing = probe(tdir, sign=cache)
            if not cache or old_sig.get(tid) != sig:
                plan.work.append((tid, tdir, jid, agent, sig, listing))
                plan.total_bytes += nbytes
    if not cache:
        plan.total_bytes = _estimated_bytes(plan.work)
    return plan


def _cached_parts(
    plan: _JobPlan, rows: list[tuple], by_job: dict[str, list[int]], parsed: set[str]
) -> list[list[pl.DataFrame]]:
    """Per table of ``job_cache.TABLES``, the cached rows still wanted: trials asked for and
    not parsed again. The usual reload (same trials, nothing changed) filters nothing, so
    the big text tables are not copied."""
    parts: list[list[pl.DataFrame]] = [[] for _ in job_cache.TABLES]
    for jd, old in plan.cached.items():
        job_tids = {rows[i][0] for i in by_job[jd]}
        cached_ids = set(old["traj_index"]["trial_id"].to_list())
        wanted = (cached_ids & job_tids) - parsed
        for name, out in zip(job_cache.TABLES, parts, strict=True):
            out.append(old[name] if wanted == cached_ids else _keep(old[name], wanted))
    return parts


def _write_caches(
    plan: _JobPlan,
    by_job: dict[str, list[int]],
    trial_job: dict[str, str],
    new: dict[str, pl.DataFrame],
    finished: Collection[str],
) -> None:
    """Store each job's tables: its cached rows with the trials parsed now replaced; a job
    with nothing new is rewritten only when it has just finished (then reused whole)."""
    parsed = set(new["traj_index"]["trial_id"].to_list())
    for jd in by_job:
        if not jd:
            continue
        mine = {tid for tid in parsed if trial_job.get(tid) == jd}
        meta = {"job_sig": plan.job_sigs[jd], "finished": jd in finished}
        old = plan.cached.get(jd)
        if not mine:
            if old is not None and meta["finished"] and jd not in plan.fast:
                job_cache.write_job(jd, old, meta)  # now finished: reused whole next time
            continue  # nothing new for this job: its cache is already current
        fresh = {n: _keep(new[n], mine) for n in job_cache.TABLES}
        if old is not None:
            fresh = {
                n: pl.concat(
                    [old[n].filter(~pl.col("trial_id").is_in(list(mine))), fresh[n]],
                    how="vertical_relaxed",
                )
                for n in job_cache.TABLES
            }
        job_cache.write_job(jd, fresh, meta)


def build_trajectories(
    trials: pl.DataFrame,
    *,
    cache: bool = True,
    progress: bool = True,
    workers: int | None = None,
    finished_jobs: Collection[str] = (),
) -> TrajectoryFrames:
    """Parse the trajectories of every Harbor trial in ``trials`` (all at once, in parallel).

    ``trials`` needs trial_id and trial_dir; job_id / job_dir (cache, error rows),
    agent_name (goose logs), source_format (non-'harbor' rows are skipped) and
    n_input_tokens / n_cache_tokens / n_output_tokens / cost_usd (metrics_mismatch) are used
    when present. ``finished_jobs``: job_dirs of jobs that have finished (their cached
    tables are reused whole while the job folder is unchanged). Returns steps and
    tool_calls conforming to STEP_COLUMNS / TOOL_CALL_COLUMNS, a trial_summary (trial_id,
    n_steps, n_tool_calls, n_turns, metrics_mismatch; one row per trial with a trajectory or
    goose log) and LoadErrors (level 'trajectory'). Never raises on file content.
    """
    t = _harbor_trials(trials)
    rows, by_job = _trial_rows(t)
    plan = _plan_jobs(rows, by_job, cache, finished_jobs)
    raw_steps, raw_calls, idx_cols, errors = _run(plan.work, plan.total_bytes, workers, progress)
    new = {
        "traj_steps": finish_steps(raw_steps),
        "traj_calls": finish_calls(raw_calls),
        "traj_index": pl.DataFrame(idx_cols, schema=job_cache.INDEX_SCHEMA),
        "traj_errors": job_cache.errors_frame(errors) if (cache or plan.cached) else None,
    }
    parsed = set(new["traj_index"]["trial_id"].to_list())
    if cache:
        _write_caches(plan, by_job, {r[0]: (r[3] or "") for r in rows}, new, finished_jobs)
    if not plan.cached:  # nothing from the cache: the parsed frames as they are
        steps, calls, index = new["traj_steps"], new["traj_calls"], new["traj_index"]
        errs = list(errors)
    else:
        parts = _cached_parts(plan, rows, by_job, parsed)
        steps, calls, index, err = (
            pl.concat([new[n], *p], how="vertical_relaxed")
            for n, p in zip(job_cache.TABLES, parts, strict=True)
        )
        errs = job_cache.errors_list(err)
    has = index["has_data"]
    if not has.all():
        # Series filters (no query plan); rechunked, as a frame's columns must be chunked alike
        index = pl.DataFrame([c.filter(has).rechunk() for c in index.iter_columns()])
    summary = trial_summary(index, t)
    return TrajectoryFrames(steps=steps, tool_calls=calls, trial_summary=summary, errors=errs)
