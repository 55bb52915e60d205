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

from evalkit.load.errors import LoadError
from evalkit.load.io import held_cap
from evalkit.load.steps import native
from evalkit.load.steps.frames import (
    CALL_RAW_SCHEMA,
    STEP_RAW_SCHEMA,
    raw_calls_frame,
    raw_steps_frame,
)
from evalkit.load.steps.goose import GOOSE_LOG_NAMES

#: Trials per call to the extractor (bounds memory; the progress bar moves per batch).
GROUP = 4096


def _status(trials: pl.DataFrame, agents: list[str | None]) -> pl.Series:
    """Statuses, with the trials without an ATIF trajectory that may have a goose log (a
    goose log name in agent/, or a goose agent: extract.find_goose_log) handed to the
    Python path (status 1)."""
    status = trials["status"]
    goose_agents = [a for a in set(agents) if a and "goose" in a.lower()]
    maybe = trials["agent"].str.contains("goose", literal=True).fill_null(False)
    if goose_agents:
        maybe = maybe | pl.Series(agents, dtype=pl.String).is_in(goose_agents)
    if not maybe.any():
        return status
    st = status.to_list()
    names = trials["agent"].to_list()
    for i in maybe.arg_true().to_list():
        if st[i] == 2 and (
            agents[i] in goose_agents or any(n in GOOSE_LOG_NAMES for n in names[i].split("\0"))
        ):
            st[i] = 1
    return pl.Series("status", st, pl.Int64)


def _typed(df: pl.DataFrame, schema: dict, seq: pl.Expr) -> pl.DataFrame:
    cols = [
        pl.lit(None, t).alias(c) if c not in df.columns else pl.col(c).cast(t)
        for c, t in schema.items()
    ]
    return df.select(*cols, seq.alias("_seq"))


def _in_order(df: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    if df["_seq"].is_sorted():
        return df.drop("_seq")  # rows of one trial are already in order
    return df.sort(keys, maintain_order=True).drop("_seq")


def run(work: list[tuple], parse_chunk: Callable, index_schema: dict, progress: bool) -> tuple:
    """Parse ``work`` (items as in ``table._run``) -> (raw steps, raw calls, index columns,
    errors), in the Python path's order."""
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
            status = _status(res.trials, [it[3] for it in items])
            ids = pl.Series("trial_id", [it[0] for it in items], pl.String)
            seq = pl.int_range(g, g + len(items), eager=True).alias("_seq")
            # trials the extractor parsed (2: no ATIF trajectory)
            t = res.trials.with_columns(
                status, ids, pl.Series("sig", [it[4] for it in items], pl.String), seq
            )
            index_parts.append(
                t.filter(pl.col("status") != 1).select(
                    "trial_id", "sig", (pl.col("status") == 0).alias("has_data"),
                    "n_steps", "n_tool_calls", pl.col("n_steps").alias("n_turns"),
                    "fm_prompt", "fm_completion", "fm_cached", "fm_cost", "_seq",
                ).cast({**index_schema, "_seq": pl.Int64})
            )  # fmt: skip
            st = status.to_list()
            for k, path, kind, msg in res.errors:
                if st[k] == 1:  # handed to the Python path after all (goose log)
                    continue
                it = items[k]
                errors.append((g + k, LoadError(path, "trajectory", kind, msg, it[2], it[0])))
            for raw, schema, parts in (
                (res.steps, STEP_RAW_SCHEMA, steps_parts),
                (res.calls, CALL_RAW_SCHEMA, calls_parts),
            ):
                raw = raw.with_columns(ids.gather(raw["trial"]))
                parts.append(_typed(raw, schema, pl.col("trial") + g))
            # the others: the Python path
            rest = [i for i, s in enumerate(st) if s == 1]
            if rest:
                s_cols, c_rows, idx, errs = parse_chunk([items[i] for i in rest])
                pos = {items[i][0]: g + i for i in rest}
                seq = pl.col("trial_id").replace_strict(pos, return_dtype=pl.Int64)
                calls_cols = (
                    dict(zip(CALL_RAW_SCHEMA, zip(*c_rows, strict=True), strict=True))
                    if c_rows
                    else {k: [] for k in CALL_RAW_SCHEMA}
                )
                steps_parts.append(_typed(raw_steps_frame(s_cols), STEP_RAW_SCHEMA, seq))
                calls_parts.append(_typed(raw_calls_frame(calls_cols), CALL_RAW_SCHEMA, seq))
                index_parts.append(
                    pl.DataFrame(idx, schema=index_schema).with_columns(seq.alias("_seq"))
                )
                errors += [(pos[e.trial_id], e) for e in errs]  # type: ignore[index]
            if bar is not None:
                bar.update(len(items))
    if bar is not None:
        bar.close()
    if not steps_parts:
        empty = pl.lit(0, pl.Int64)
        steps_parts = [_typed(raw_steps_frame({}), STEP_RAW_SCHEMA, empty)]
        calls_parts = [_typed(raw_calls_frame({}), CALL_RAW_SCHEMA, empty)]
        index_parts = [pl.DataFrame(schema={**index_schema, "_seq": pl.Int64})]
    index = pl.concat(index_parts).sort("_seq", maintain_order=True).drop("_seq")
    errors.sort(key=lambda x: x[0])  # stable: each trial's errors keep their order
    return (
        _in_order(pl.concat(steps_parts), ["_seq", "step_index"]),
        _in_order(pl.concat(calls_parts), ["_seq", "step_index", "call_index"]),
        index.to_dict(as_series=False),
        [e for _, e in errors],
    )
