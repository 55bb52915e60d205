"""The findings frame from its two producers: what ``evalkit.patterns`` detects and what
go-code rollouts record (``gocode/convert.py``)."""

from __future__ import annotations

import polars as pl

from evalkit.load._columns import conform, empty
from evalkit.load.findings.columns import COLUMNS


def findings_frame(*parts: pl.DataFrame | None) -> pl.DataFrame:
    """The given findings (None for a producer with nothing) as one frame of COLUMNS."""
    kept = [conform(p, COLUMNS) for p in parts if p is not None]
    return pl.concat(kept, how="diagonal_relaxed") if kept else empty(COLUMNS)
