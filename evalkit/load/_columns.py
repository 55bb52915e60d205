"""Column declarations shared by every frame.

Each frame level (jobs, trials, steps, tool_calls, findings, load_errors) declares its
columns exactly once, in ``<level>/columns.py``, as a tuple of :class:`Column`. That tuple is
the single source of truth for the frame's schema: names, Polars dtypes, documentation. Use
:func:`schema` for a ``{name: dtype}`` mapping, :func:`empty` for a typed empty frame and
:func:`conform` to cast/complete a frame built elsewhere.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import polars as pl

UTC_DATETIME = pl.Datetime("us", "UTC")


@dataclass(frozen=True, slots=True)
class Column:
    """One column of a frame: its name, Polars dtype and what the value means.

    ``derived``: computed over the whole frame from other columns after the readers ran
    (e.g. steps' timestamp from the recorded text), so no reader fills it row by row.
    """

    name: str
    dtype: pl.DataType
    doc: str
    required: bool = False  # part of the public contract (api-contract.md)
    derived: bool = False


def schema(columns: Sequence[Column]) -> dict[str, pl.DataType]:
    """``{name: dtype}`` in declaration order."""
    return {c.name: c.dtype for c in columns}


def reader_schema(
    columns: Sequence[Column], working: Sequence[Column] = ()
) -> dict[str, pl.DataType]:
    """``{name: dtype}`` of what a reader fills per row: the declared columns that are not
    ``derived``, then the ``working`` columns the derivation consumes."""
    return {c.name: c.dtype for c in (*columns, *working) if not c.derived}


def empty(columns: Sequence[Column]) -> pl.DataFrame:
    """A zero-row frame with exactly the declared columns and dtypes."""
    return pl.DataFrame(schema=schema(columns))


def conform(df: pl.DataFrame, columns: Sequence[Column], *, extra: bool = True) -> pl.DataFrame:
    """Cast ``df`` to the declared schema, adding missing columns as nulls.

    Declared columns come first, in declaration order; with ``extra=True`` undeclared columns
    are kept after them (user additions), otherwise dropped.
    """
    decl = schema(columns)
    exprs = []
    for name, dtype in decl.items():
        if name in df.columns:
            exprs.append(pl.col(name).cast(dtype, strict=False))
        else:
            exprs.append(pl.lit(None, dtype=dtype).alias(name))
    if extra:
        exprs.extend(pl.col(c) for c in df.columns if c not in decl)
    return df.select(exprs)


def docs_table(columns: Iterable[Column]) -> str:
    """A Markdown table of the columns (used by docs/schemas.md)."""
    rows = ["| column | dtype | meaning |", "|---|---|---|"]
    for c in columns:
        star = " *(contract)*" if c.required else ""
        rows.append(f"| `{c.name}` | `{c.dtype}` | {c.doc}{star} |")
    return "\n".join(rows)
