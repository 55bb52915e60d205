"""Trajectory parsing with the compiled extractor (``steps/native.py``).

The extractor parses whole trial folders (orchestration included: continuations,
subagents, summarisation files, labels, error rows) on several threads and finishes the
rows (timestamps, exit codes, is_error, retried). A trial it hands back (status 1: no
ATIF trajectory, a multi-step task, a file that is unreadable, not strict JSON or not
ATIF, embedded subagent trajectories, ...) is parsed by the Python path
(``extract.parse_trial``). Rows, index and errors are put back in trial order, so the
frames are the ones the Python-only path produces (``tests/load_steps/test_native_parity.py``).

Its tables come out directly in the final column layout (STEP_COLUMNS /
TOOL_CALL_COLUMNS, trial_id filled from the ids), so on the usual load no Polars
operation runs after parsing: a query costs ~0.1 ms whatever the row count, as much as
parsing a few trials. Columns for the rare cases (rows of Python-path trials to put in
place, timestamps or calls the extractor left to Polars) are asked for only when the
library counts such rows.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import NamedTuple

import numpy as np
import polars as pl

from evalkit.load._columns import schema
from evalkit.load.errors import LoadError
from evalkit.load.io import held_cap
from evalkit.load.steps import native
from evalkit.load.steps.columns import STEP_COLUMNS, TOOL_CALL_COLUMNS
from evalkit.load.steps.commands import finish_tool_calls
from evalkit.load.steps.frames import (
    CALL_RAW_SCHEMA,
    finish_calls,
    finish_steps,
    parse_timestamps,
    raw_calls_frame,
    raw_steps_frame,
)

#: Trials per call to the extractor (bounds memory; the progress bar moves per batch).
GROUP = 4096
_STEP = schema(STEP_COLUMNS)
_CALL = schema(TOOL_CALL_COLUMNS)


def _goose(agents: list[str | None]) -> set[str]:
    return {a for a in set(agents) if a and "goose" in a.lower()}


def _status(st: list[int], agents: list[str | None]) -> list[int]:
    """Statuses, with the trials without an ATIF trajectory of a goose agent handed to the
    Python path (status 1: extract.find_goose_log looks for its log; a trial with a goose
    log name in agent/ the extractor hands back itself)."""
    goose = _goose(agents)
    if goose:
        st = list(st)
        for i, a in enumerate(agents):
            if st[i] == 2 and a in goose:
                st[i] = 1
    return st


#: Extractor columns kept after the final ones when needed: the trial's position (_seq),
#: what rows the extractor left need (timestamps it could not parse: _ts; calls it could
#: not finish: fin, _s_err, _s_exit).
_HIDDEN = {"_seq": "trial", "_ts": "_ts", "fin": "fin", "_s_err": "_s_err", "_s_exit": "_s_exit"}
_FROM = {"timestamp": "ts_us"}  # final column <- extractor column, when named differently
_TABLES = {native.STEPS: (_STEP, native.STEP_COLS), native.CALLS: (_CALL, native.CALL_COLS)}
#: TRIALS as the index (table.INDEX_SCHEMA without sig, which Python inserts).
_INDEX_FROM_TRIALS = (
    "has_data", "n_steps", "n_tool_calls", "n_turns", "fm_prompt", "fm_completion", "fm_cached",
    "fm_cost",
)  # fmt: skip


def _trial_layout(cols: tuple[str, ...], null: tuple[str, ...] = ()) -> native.Layout:
    """TRIALS as trial_id (from the ids) + ``cols`` + all-null String columns ``null``."""
    where = {name: (k, kind) for k, (name, kind) in enumerate(native.TRIAL_COLS)}
    return native.layout(
        (
            ("trial_id", "U", native.ROW_TRIAL_ID),
            *((c, native.KIND_FORMAT[where[c][1]], where[c][0]) for c in cols),
            *((c, "U", native.NULL) for c in null),
        )
    )


_TRIAL_LAYOUT = _trial_layout(_INDEX_FROM_TRIALS)
#: TRIALS as frames.SUMMARY_SCHEMA when every total agrees (metrics_mismatch all null).
_SUMMARY_LAYOUT = _trial_layout(("n_steps", "n_tool_calls", "n_turns"), ("metrics_mismatch",))


@functools.cache
def _layout(table: int, hidden: frozenset[str]) -> native.Layout:
    """Table STEPS / CALLS in its final layout (STEP_COLUMNS / TOOL_CALL_COLUMNS: columns
    the extractor does not write all null, trial_id from the trial ids), then the
    ``hidden`` columns (_HIDDEN) in that order."""
    out, raw = _TABLES[table]
    where = {name: k for k, (name, _) in enumerate(raw)}
    kinds = dict(raw)
    cols = [
        (c, native.arrow_format(t), where.get(_FROM.get(c, c), native.NULL)) for c, t in out.items()
    ]
    cols[list(out).index("trial_id")] = ("trial_id", "U", native.TRIAL_ID)
    fmt = native.KIND_FORMAT
    cols += [(h, fmt[kinds[r]], where[r]) for h, r in _HIDDEN.items() if h in hidden]
    return native.layout(tuple(cols))


#: The counts _native needs, asked in one call (native.Result.counts): parts; rows of
#: STEPS, CALLS, TRIALS, ERRORS; status-1 trials; trials without data (status 1 or 2);
#: then per table STEPS / CALLS the null timestamps (ts_us),
#: null _ts, and for CALLS the calls left to Polars (fin False).
_ASK = native.count_spec(
    (
        (0, None, native.PARTS),
        *(
            (t, None, native.ROWS)
            for t in (native.STEPS, native.CALLS, native.TRIALS, native.ERRORS)
        ),
        (native.TRIALS, "status", native.ONES),
        (native.TRIALS, "has_data", native.FALSE),
        (native.STEPS, "ts_us", native.FALSE),
        (native.STEPS, "_ts", native.FALSE),
        (native.CALLS, "ts_us", native.FALSE),
        (native.CALLS, "_ts", native.FALSE),
        (native.CALLS, "fin", native.FALSE),
    )
)


def _take(res: native.Result, table: int, ids: tuple, seq: bool, nulls: tuple) -> pl.DataFrame:
    """Rows of table STEPS / CALLS -> the finished frame (+ _seq, the trial's position,
    when ``seq``); ``ids``: the encoded trial ids; ``nulls``: the table's null ts_us,
    null _ts (and for CALLS, fin False) counts.

    Timestamps come parsed; one the extractor left (``_ts`` set, timestamp null) is parsed
    by Polars. For calls, exit_code, is_error, is_error_source and retried come computed
    (native/atif/src/finish.rs); rows it could not decide exactly (``fin`` False) get the
    Polars rules."""
    out = _TABLES[table][0]
    hidden = set()
    if seq:
        hidden.add("_seq")
    if nulls[0] != nulls[1]:
        hidden.add("_ts")
    if table == native.CALLS and nulls[2]:
        hidden |= {"fin", "_s_err", "_s_exit"}
    lay = _layout(table, frozenset(hidden))
    df = res.frame(table, lay, ids)
    if not hidden:
        return df  # the usual load: final as it comes
    if "fin" in hidden:
        where = (~df["fin"]).arg_true()
        sub = finish_tool_calls(df[where])
        df = df.with_columns(
            df[c].clone().scatter(where, sub[c])
            for c in ("exit_code", "is_error", "is_error_source")
        )
    if "_ts" in hidden:
        df = df.with_columns(pl.coalesce("timestamp", parse_timestamps()).alias("timestamp"))
    return df[[*out, "_seq"] if seq else list(out)]


def _index(tr: pl.DataFrame, sigs: list[str], rows: list[int] | None, seq: bool) -> pl.DataFrame:
    """Index rows (``table.INDEX_SCHEMA``) + _seq when ``seq``, from the TRIALS frame
    (``_TRIAL_LAYOUT``), changed in place (no query plan); ``rows``: the positions in the
    batch of its rows (None: all)."""
    if rows is not None:
        sigs = [sigs[i] for i in rows]
    tr.insert_column(1, pl.Series("sig", sigs, pl.String))
    if seq:
        pos = range(len(sigs)) if rows is None else rows
        tr.insert_column(tr.width, pl.Series("_seq", pos, pl.Int64))
    return tr


def _python_rows(parse_chunk: Callable, items: list[tuple], pos: dict) -> tuple:
    """The Python path over ``items``: finished steps and calls (+ _seq), index, errors."""
    s_cols, c_rows, idx, errs = parse_chunk(items)
    seq = pl.col("trial_id").replace_strict(pos, return_dtype=pl.Int64).alias("_seq")
    calls_cols = (
        dict(zip(CALL_RAW_SCHEMA, zip(*c_rows, strict=True), strict=True))
        if c_rows
        else {k: [] for k in CALL_RAW_SCHEMA}
    )
    steps = finish_steps(raw_steps_frame(s_cols)).with_columns(seq)
    calls = finish_calls(raw_calls_frame(calls_cols)).with_columns(seq)
    return steps, calls, idx, errs


def _in_order(df: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    if df["_seq"].is_sorted():
        return df.drop("_seq")  # rows of one trial are already in order
    return df.sort(keys, maintain_order=True).drop("_seq")


def _native(
    res: native.Result,
    items: list[tuple],
    g: int,
    all_rows: bool,
    summary: bool = False,
    enc: tuple | None = None,
    totals: np.ndarray | None = None,
) -> tuple:
    """What the extractor made of ``items`` (group offset ``g``): (statuses, (steps, calls,
    index) or None when every trial goes to the Python path, errors as (position,
    LoadError), the number of trials whose final_metrics totals differ from ``totals``,
    whether the third frame is the trial summary). The frames carry _seq when some trial has status 1.
    The index holds the parsed trials (status 0), and with ``all_rows`` those without an
    ATIF trajectory too (status 2, has_data False: what the cache needs to know they were
    looked at). ``summary``: when no trial goes to the Python path and no total differs,
    the third frame is the trial_summary itself (frames.SUMMARY_SCHEMA) instead of the
    index. ``enc``: ``native.encode_ids`` of the items' trial
    ids (made here when not given); ``totals``: the items' result totals, compared here
    (``native.Result.compare``; without them no total differs)."""
    n = len(items)
    c = res.counts(_ASK)
    parts, n_rows, (n_one, n_no_data), nulls = c[0], c[1:5], c[5:7], c[7:]
    n_trials, n_errors = n_rows[2], n_rows[3]
    if parts != 1 or min(n_rows) < 0 or n_trials != n:
        return [1] * n, None, [], 0, False  # a worker died (panics are caught per trial)
    differ = 0 if totals is None else res.compare(totals)
    agents = [it[3] for it in items]
    st: list[int] | None = None  # statuses, read when some trial may go to the Python path
    if n_one or (n_no_data and _goose(agents)):
        st = _status(res.ints(native.TRIALS, "status"), agents)
        if all(s == 1 for s in st):
            return st, None, [], 0, False
        if 1 not in st:
            st = None
    seq = st is not None
    if enc is None:
        enc = native.encode_ids([it[0] for it in items])
    steps = _take(res, native.STEPS, enc, seq, nulls[0:2])
    calls = _take(res, native.CALLS, enc, seq, nulls[2:5])
    errors = []
    if n_errors:
        for k, path, kind, msg in res.errors():
            if st is None or st[k] != 1:  # else handed to the Python path (goose log)
                it = items[k]
                errors.append((g + k, LoadError(path, "trajectory", kind, msg, it[2], it[0])))
    if summary and not seq and not differ and not all_rows:
        tr = res.frame(native.TRIALS, _SUMMARY_LAYOUT, enc, keep="has_data")
        return st, (steps, calls, tr), errors, differ, True
    if all_rows and not seq:
        tr, rows = res.frame(native.TRIALS, _TRIAL_LAYOUT, enc), None
    elif all_rows:  # without the trials the Python path parses
        tr = res.frame(native.TRIALS, _TRIAL_LAYOUT, enc).filter(pl.Series(st) != 1)
        rows = [i for i, s in enumerate(st) if s != 1]
    else:  # has_data: status 0 as the extractor wrote it (status 1 or 2 otherwise)
        if st is None:
            st = res.ints(native.TRIALS, "status")  # before the table is taken
        tr = res.frame(native.TRIALS, _TRIAL_LAYOUT, enc, keep="has_data")
        rows = [i for i, s in enumerate(st) if s == 0]
    return st, (steps, calls, _index(tr, [it[4] for it in items], rows, seq)), errors, differ, False


class Parsed(NamedTuple):
    """What ``run`` returns: frames in the Python path's order, errors in trial order."""

    steps: pl.DataFrame  #: STEP_COLUMNS
    tool_calls: pl.DataFrame  #: TOOL_CALL_COLUMNS
    #: the trajectory index (``index_schema``); None when ``summary`` is given instead
    index: pl.DataFrame | None
    errors: list[LoadError]
    #: True: the extractor compared every trial's final_metrics totals with the result
    #: totals passed in and none differ (False: unknown or some differ; compare them)
    totals_agree: bool
    #: the trial_summary (frames.SUMMARY_SCHEMA, metrics_mismatch all null), made by the
    #: extractor when asked for and possible (no index kept, totals agree, no trial on the
    #: Python path, one group); else None
    summary: pl.DataFrame | None = None


def run(
    work: list[tuple],
    parse_chunk: Callable,
    index_schema: dict,
    progress: bool,
    all_rows: bool,
    totals: Callable[[], np.ndarray] | None = None,
    summary: bool = False,
) -> Parsed:
    """Parse ``work`` (items as in ``table._run``); the frames are finished
    (STEP_COLUMNS / TOOL_CALL_COLUMNS), as ``frames.finish_steps`` / ``finish_calls`` make
    them. Groups of trials come back in order; within a group, rows of trials the Python
    path parsed are put in place by _seq (position of the trial). ``all_rows``: keep the
    index rows of trials without data (has_data False; the cache needs them). ``totals``:
    makes the items' result.json totals (``native.Result.compare``, shape (4,
    len(work))); called once the first group is being parsed. ``summary``: the caller
    needs no index, only the trial_summary (see ``Parsed.summary``).

    Each group is started on the library's pool threads first (``native.start``); the
    totals and the encoded trial ids are made while they parse."""
    parts: list[tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]] = []
    agree = totals is not None
    summary = summary and agree and not all_rows and len(work) <= GROUP
    made = False
    errors: list[tuple[int, LoadError]] = []
    bar = None
    if progress and work:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(work), desc="trajectories", unit="trial", leave=False)
    with held_cap() as cap:
        for g in range(0, len(work), GROUP):
            items = work[g : g + GROUP]
            pending = native.start([it[1] for it in items], cap)
            if callable(totals):
                totals = totals()  # while the first group is parsed
            enc = native.encode_ids([it[0] for it in items])
            res = pending.finish()
            tot = None if totals is None else np.ascontiguousarray(totals[:, g : g + GROUP])
            st, nat, errs, differ, made = _native(res, items, g, all_rows, summary, enc, tot)
            errors += errs
            rest = [i for i, s in enumerate(st) if s == 1] if st else []  # Python path
            agree = agree and not rest and not differ
            if not rest:
                parts.append(nat)
            else:
                pos = {items[i][0]: i for i in rest}
                p_steps, p_calls, p_idx, p_errs = _python_rows(
                    parse_chunk, [items[i] for i in rest], pos
                )
                p_index = pl.DataFrame(p_idx, schema=index_schema).with_columns(
                    pl.col("trial_id").replace_strict(pos, return_dtype=pl.Int64).alias("_seq")
                )
                got = [(p_steps, p_calls, p_index)] + ([nat] if nat else [])
                keys = (["_seq", "step_index"], ["_seq", "step_index", "call_index"], ["_seq"])
                parts.append(
                    tuple(_in_order(pl.concat([x[k] for x in got]), keys[k]) for k in range(3))  # type: ignore[arg-type]
                )
                errors += [(g + pos[e.trial_id], e) for e in p_errs]  # type: ignore[index]
            if bar is not None:
                bar.update(len(items))
    if bar is not None:
        bar.close()
    errors.sort(key=lambda x: x[0])  # stable: each trial's errors keep their order
    third = _concat([p[2] for p in parts], index_schema) if not made else None
    return Parsed(
        _concat([p[0] for p in parts], _STEP),
        _concat([p[1] for p in parts], _CALL),
        third,
        [e for _, e in errors],
        agree,
        parts[0][2] if made else None,
    )


def _concat(parts: list[pl.DataFrame], schema: dict) -> pl.DataFrame:
    if not parts:
        return pl.DataFrame(schema=schema)
    return parts[0] if len(parts) == 1 else pl.concat(parts)
