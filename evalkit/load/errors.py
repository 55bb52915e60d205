"""The load_errors frame: one row per problem met while loading. Never raised.

``level`` says what the problem affects: 'job', 'trial', 'file' (one file of a trial, e.g. a
reward file), 'trajectory', 'rollout'. ``error_type`` is a short machine-readable kind
(e.g. 'json_decode', 'not_a_file', 'too_large', 'wrong_type', 'non_numeric_reward',
'not_atif', 'missing_result').
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import polars as pl

from evalkit.load._columns import Column, conform

COLUMNS: tuple[Column, ...] = (
    Column("path", pl.String, "File or folder the problem is about.", True),
    Column("level", pl.String, "job / trial / file / trajectory / rollout.", True),
    Column(
        "error_type",
        pl.String,
        "Short kind of problem (json_decode, too_large, not_atif, ...).",
        True,
    ),
    Column("message", pl.String, "Human-readable explanation.", True),
    Column("job_id", pl.String, "Job the path belongs to, when known."),
    Column("trial_id", pl.String, "Trial the path belongs to, when known."),
)


@dataclass(frozen=True, slots=True)
class LoadError:
    """One load problem; becomes a row of ``runs.load_errors``."""

    path: str
    level: str
    error_type: str
    message: str
    job_id: str | None = None
    trial_id: str | None = None


def errors_frame(errors: list[LoadError]) -> pl.DataFrame:
    """Build the load_errors frame from a list of :class:`LoadError`."""
    rows = {c.name: [getattr(e, c.name) for e in errors] for c in COLUMNS}
    return conform(pl.DataFrame(rows, schema={c.name: c.dtype for c in COLUMNS}), COLUMNS)


def path_text(path: str) -> str:
    """A path as valid UTF-8 text: bytes of a name that are not UTF-8 (which Python keeps as
    lone surrogates) are shown as ``\\xNN`` escapes."""
    try:
        path.encode("utf-8")
        return path
    except UnicodeEncodeError:
        pass
    try:
        return os.fsencode(path).decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:  # a surrogate that did not come from a file name
        return path.encode("utf-8", "replace").decode("utf-8")
