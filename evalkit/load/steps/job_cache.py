"""The per-job cache of the trajectory tables (``build_trajectories(cache=True)``): the
steps, tool_calls, index and error rows of a job's trials, written together under one
generation id so a half-written set is never read back (``evalkit/load/cache.py`` stores
them)."""

from __future__ import annotations

import hashlib
import uuid
from typing import NamedTuple

import polars as pl

from evalkit.load import cache as _cache
from evalkit.load.errors import COLUMNS as ERROR_COLUMNS
from evalkit.load.errors import LoadError
from evalkit.load.steps.columns import STEP_COLUMNS, TOOL_CALL_COLUMNS

_SCHEMA_HASH = hashlib.blake2b(
    repr([(c.name, str(c.dtype)) for c in (*STEP_COLUMNS, *TOOL_CALL_COLUMNS)]).encode(),
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
