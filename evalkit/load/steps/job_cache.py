"""The per-job cache of the trajectory tables (``build_trajectories(cache=True)``): the
steps, tool_calls, index and error rows of a job's trials, written together under one
generation id so a half-written set is never read back (``evalkit/load/shared/cache.py`` stores
them)."""

from __future__ import annotations

import hashlib
import uuid
from typing import NamedTuple

import polars as pl

from evalkit.load._columns import Column, schema
from evalkit.load.errors import COLUMNS as ERROR_COLUMNS
from evalkit.load.errors import LoadError
from evalkit.load.shared import cache as _cache
from evalkit.load.steps.columns import STEP_COLUMNS, TOOL_CALL_COLUMNS

_FINAL = "summed over the trial's trajectory files (null when none records it)"
#: The traj_index table: one row per trial whose folder was looked at.
INDEX_COLUMNS: tuple[Column, ...] = (
    Column("trial_id", pl.String, "Trial (join key)."),
    Column("sig", pl.String, "Signature of its trajectory files ('-' when not signed)."),
    Column("has_data", pl.Boolean, "A trajectory or an agent log was read (in trial_summary)."),
    Column("n_steps", pl.Int64, "Main agent steps (trials.n_steps); null without a trajectory."),
    Column("n_tool_calls", pl.Int64, "Their tool calls (trials.n_tool_calls)."),
    Column("n_turns", pl.Int64, "Agent turns, from the trajectory or an agent log."),
    Column("fm_prompt", pl.Float64, f"final_metrics.total_prompt_tokens {_FINAL}."),
    Column("fm_completion", pl.Float64, f"final_metrics.total_completion_tokens {_FINAL}."),
    Column("fm_cached", pl.Float64, f"final_metrics.total_cached_tokens {_FINAL}."),
    Column("fm_cost", pl.Float64, f"final_metrics.total_cost_usd {_FINAL}."),
)
INDEX_SCHEMA = schema(INDEX_COLUMNS)

_SCHEMA_HASH = hashlib.blake2b(
    repr(
        [(c.name, str(c.dtype)) for c in (*STEP_COLUMNS, *TOOL_CALL_COLUMNS, *INDEX_COLUMNS)]
    ).encode(),
    digest_size=4,
).hexdigest()
#: Cache version of the trajectory tables (bump when extraction rules change).
CACHE_VERSION = f"traj-1-{_SCHEMA_HASH}"
#: The tables cached per job, in this order.
TABLES = ("traj_steps", "traj_calls", "traj_index", "traj_errors")


def errors_frame(errors: list[LoadError]) -> pl.DataFrame:
    """LoadErrors as a frame (the cached form)."""
    cols = {c.name: [getattr(e, c.name) for e in errors] for c in ERROR_COLUMNS}
    return pl.DataFrame(cols, schema={c.name: c.dtype for c in ERROR_COLUMNS})


def errors_list(df: pl.DataFrame) -> list[LoadError]:
    """The LoadErrors of a cached frame."""
    return [LoadError(**r) for r in df.iter_rows(named=True)]


class Cached(NamedTuple):
    """A job's cached tables (TABLES) and the meta they were written with."""

    tables: dict[str, pl.DataFrame]
    meta: dict


def read_job(job_dir: str) -> Cached | None:
    """The job's cached tables, or None when any is missing, of another CACHE_VERSION or
    of another generation than the others."""
    got = {}
    first: dict | None = None
    for name in TABLES:
        r = _cache.read_table(job_dir, name, CACHE_VERSION)
        if r is None:
            return None
        df, meta = r
        if first is None:
            first = meta
        if first.get("generation") is None or meta.get("generation") != first["generation"]:
            return None
        got[name] = df
    return Cached(got, first or {})


def write_job(job_dir: str, tables: dict[str, pl.DataFrame], meta: dict | None = None) -> None:
    """Write the job's tables (TABLES) and ``meta`` under a new generation id."""
    gen = uuid.uuid4().hex
    for name in TABLES:
        _cache.write_table(
            job_dir, name, CACHE_VERSION, tables[name], {**(meta or {}), "generation": gen}
        )
