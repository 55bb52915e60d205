"""Trajectory parsing with the compiled extractor (``steps/native.py``).

The extractor parses whole trial folders (orchestration included: continuations,
subagents, summarisation files, labels, error rows) on several threads. A trial it hands
back (status 1: no ATIF trajectory, a multi-step task, a file that is unreadable, not
strict JSON or not ATIF, embedded subagent trajectories, ...) is parsed by the Python path
(``extract.parse_trial``). Rows, index and errors are put back in trial order, so the
frames are the ones the Python-only path produces (``tests/load_steps/test_native_parity.py``).
"""

from __future__ import annotations

from collections.abc import Callable

import polars as pl

from evalkit.load._columns import UTC_DATETIME, schema
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


def _status(trials: pl.DataFrame, agents: list[str | None]) -> list[int]:
    """Statuses, with the trials without an ATIF trajectory of a goose agent handed to the
    Python path (status 1: extract.find_goose_log looks for its log; a trial with a goose
    log name in agent/ the extractor hands back itself)."""
    st = trials["status"].to_list()
    goose = {a for a in set(agents) if a and "goose" in a.lower()}
    if goose:
        for i, a in enumerate(agents):
            if st[i] == 2 and a in goose:
                st[i] = 1
    return st


def _finished(raw: pl.DataFrame, ids: pl.Series, g: int, out: dict) -> pl.DataFrame:
    """Rows of the extractor -> the ``out`` columns (STEP_COLUMNS / TOOL_CALL_COLUMNS) +
    _seq. Timestamps come parsed (``ts_us``); one it left (``_ts`` set, ``ts_us`` null)
    is parsed by Polars. For calls, exit_code, is_error, is_error_source and retried come
    computed (native/atif/src/finish.rs); rows it could not decide exactly (``fin``
    False) get the Polars rules."""
    if "fin" in raw.columns and not raw["fin"].all():
        where = (~raw["fin"]).arg_true()
        sub = finish_tool_calls(raw[where])
        raw = raw.with_columns(
            raw[c].scatter(where, sub[c]) for c in ("exit_code", "is_error", "is_error_source")
        )
    ts = pl.col("ts_us").cast(UTC_DATETIME)
    if raw["ts_us"].null_count() != raw["_ts"].null_count():
        ts = pl.coalesce(ts, parse_timestamps())
    sch = raw.schema
    have = {
        "trial_id": pl.lit(ids).gather(pl.col("trial")).alias("trial_id"),
        "timestamp": ts.alias("timestamp"),
    }
    return raw.select(
        *[have[c] if c in have else _col(sch, c, t) for c, t in out.items()],
        (pl.col("trial") + g).alias("_seq"),
    )


def _col(have: pl.Schema, name: str, dtype: pl.DataType) -> pl.Expr:
    if name not in have:
        return pl.lit(None, dtype).alias(name)  # task_step, llm_retries, duration_ms
    return pl.col(name) if have[name] == dtype else pl.col(name).cast(dtype)


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


def run(work: list[tuple], parse_chunk: Callable, index_schema: dict, progress: bool) -> tuple:
    """Parse ``work`` (items as in ``table._run``) -> (steps, tool_calls, index frame
    (``index_schema``), errors), in the Python path's order; the frames are finished (STEP_COLUMNS /
    TOOL_CALL_COLUMNS), as ``frames.finish_steps`` / ``finish_calls`` make them."""
    steps_parts: list[pl.DataFrame] = []
    calls_parts: list[pl.DataFrame] = []
    index_parts: list[pl.DataFrame] = []
    errors: list[tuple[int, LoadError]] = []
    bar = None
    if progress and work:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(work), desc="trajectories", unit="trial", leave=False)
    with held_cap() as cap:
        for g in range(0, len(work), GROUP):
            items = work[g : g + GROUP]
            res = native.parse_trials([it[1] for it in items], cap)
            st = _status(res.trials, [it[3] for it in items])
            ids = pl.Series("trial_id", [it[0] for it in items], pl.String)
            # trials the extractor parsed (2: no ATIF trajectory)
            idx = res.trials.select(
                ids, pl.Series("sig", [it[4] for it in items], pl.String),
                (pl.col("status") == 0).alias("has_data"), "n_steps", "n_tool_calls",
                pl.col("n_steps").alias("n_turns"), "fm_prompt", "fm_completion", "fm_cached",
                "fm_cost", pl.int_range(g, g + len(items), dtype=pl.Int64).alias("_seq"),
            )  # fmt: skip
            if 1 in st:
                idx = idx.filter(pl.Series(st) != 1)
            index_parts.append(idx)
            for k, path, kind, msg in res.errors:
                if st[k] == 1:  # handed to the Python path after all (goose log)
                    continue
                it = items[k]
                errors.append((g + k, LoadError(path, "trajectory", kind, msg, it[2], it[0])))
            if res.steps.height:
                steps_parts.append(_finished(res.steps, ids, g, _STEP))
            if res.calls.height:
                calls_parts.append(_finished(res.calls, ids, g, _CALL))
            # the others: the Python path
            rest = [i for i, s in enumerate(st) if s == 1]
            if rest:
                pos = {items[i][0]: g + i for i in rest}
                p_steps, p_calls, p_idx, errs = _python_rows(
                    parse_chunk, [items[i] for i in rest], pos
                )
                steps_parts.append(p_steps)
                calls_parts.append(p_calls)
                index_parts.append(
                    pl.DataFrame(p_idx, schema=index_schema).with_columns(
                        pl.col("trial_id").replace_strict(pos, return_dtype=pl.Int64).alias("_seq")
                    )
                )
                errors += [(pos[e.trial_id], e) for e in errs]  # type: ignore[index]
            if bar is not None:
                bar.update(len(items))
    if bar is not None:
        bar.close()
    seq = {"_seq": pl.Int64}
    steps_parts = steps_parts or [pl.DataFrame(schema={**_STEP, **seq})]
    calls_parts = calls_parts or [pl.DataFrame(schema={**_CALL, **seq})]
    index_parts = index_parts or [pl.DataFrame(schema={**index_schema, **seq})]
    index = pl.concat(index_parts)
    if not index["_seq"].is_sorted():
        index = index.sort("_seq", maintain_order=True)
    index = index.drop("_seq")
    errors.sort(key=lambda x: x[0])  # stable: each trial's errors keep their order
    return (
        _in_order(pl.concat(steps_parts), ["_seq", "step_index"]),
        _in_order(pl.concat(calls_parts), ["_seq", "step_index", "call_index"]),
        index,
        [e for _, e in errors],
    )
