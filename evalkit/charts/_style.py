"""Shared look of evalkit charts: colours, orders, number formats and data handling.

Colours come from the Okabe-Ito palette (safe for the common colour-vision deficiencies
and distinct in greyscale print); every chart uses the same colour for the same outcome,
error kind or run so figures can be read side by side.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from datetime import date, datetime
from typing import Any

import altair as alt
import polars as pl

#: What chart functions return: one chart, or a layer / concatenation of charts.
Chart = alt.Chart | alt.LayerChart | alt.VConcatChart | alt.HConcatChart | alt.FacetChart

OUTCOME_ORDER = ("pass", "partial", "fail", "timeout", "error", "no-reward", "incomplete")
OUTCOME_COLORS = {
    "pass": "#009E73",  # bluish green
    "partial": "#56B4E9",  # sky blue
    "fail": "#D55E00",  # vermillion
    "timeout": "#E69F00",  # orange
    "error": "#CC79A7",  # reddish purple
    "no-reward": "#999999",  # grey
    "incomplete": "#DDDDDD",  # light grey
}
ERROR_KIND_ORDER = ("agent", "infra", "provider", "verifier", "config", "cancelled", "unknown")
ERROR_KIND_COLORS = {
    "agent": "#D55E00",
    "infra": "#0072B2",
    "provider": "#E69F00",
    "verifier": "#CC79A7",
    "config": "#56B4E9",
    "cancelled": "#999999",
    "unknown": "#555555",
}
#: Categorical colours for runs (Okabe-Ito without yellow, then greys).
RUN_COLORS = (
    "#0072B2",
    "#D55E00",
    "#009E73",
    "#CC79A7",
    "#E69F00",
    "#56B4E9",
    "#000000",
    "#999999",
)
#: Sequential scheme for rates in [0, 1] (perceptually uniform, colour-blind safe).
RATE_SCHEME = "viridis"

PCT = ".0%"
PCT1 = ".1%"
USD = "$,.4f"
WIDTH = 560


def frame(df: pl.DataFrame | pl.LazyFrame, *required: str) -> pl.DataFrame:
    """A DataFrame from a DataFrame or LazyFrame, checking that ``required`` columns exist."""
    if isinstance(df, pl.LazyFrame):
        df = df.collect()
    if not isinstance(df, pl.DataFrame):
        raise TypeError(f"expected a Polars DataFrame or LazyFrame, got {type(df).__name__}")
    missing = [c for c in required if c not in df.columns]
    if missing:
        raise ValueError(f"missing column(s) {missing}; the frame has {df.columns}")
    return df


def _clean(v: Any) -> Any:
    if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
        return None
    if isinstance(v, datetime | date):
        return v.isoformat()
    return v


def data(df: pl.DataFrame, columns: Iterable[str] | None = None) -> alt.Data:
    """Inline chart data: only the needed columns, JSON-safe values (no NaN, ISO times).

    Passing values (not the frame) keeps the spec small and skips Altair's row limit.
    """
    if columns is not None:
        df = df.select(list(dict.fromkeys(columns)))
    rows = [{k: _clean(v) for k, v in r.items()} for r in df.iter_rows(named=True)]
    return alt.Data(values=rows)


def run_scale(runs: Sequence[str], order: Sequence[str] | None = None) -> alt.Scale:
    """The same colour for the same run everywhere: a run's colour is picked by its position
    in ``order`` (all runs of the report) even when a chart shows only some of them."""
    runs, order = list(runs), list(order or runs)
    pos = {r: i for i, r in enumerate(order)}
    colors = [RUN_COLORS[pos.get(r, len(order) + i) % len(RUN_COLORS)] for i, r in enumerate(runs)]
    return alt.Scale(domain=runs, range=colors)


def outcome_scale(present: Iterable[str] | None = None) -> alt.Scale:
    dom = [o for o in OUTCOME_ORDER if present is None or o in set(present)]
    return alt.Scale(domain=dom, range=[OUTCOME_COLORS[o] for o in dom])


def error_kind_scale(present: Iterable[str] | None = None) -> alt.Scale:
    known = set(present) if present is not None else set(ERROR_KIND_ORDER)
    dom = [k for k in ERROR_KIND_ORDER if k in known]
    return alt.Scale(domain=dom, range=[ERROR_KIND_COLORS[k] for k in dom])


def order_runs(df: pl.DataFrame, by: str, order: Sequence[str] | None) -> list[str]:
    """Run labels in the given order, else by first start time when known, else by name."""
    present = [r for r in df[by].unique(maintain_order=True).to_list() if r is not None]
    if order:
        known = [r for r in order if r in set(present)]
        return known + [r for r in present if r not in set(known)]
    if "started_at" in df.columns:
        firsts = (
            df.group_by(by)
            .agg(pl.col("started_at").min().alias("_s"))
            .sort("_s", by, nulls_last=True)
        )
        return [r for r in firsts[by].to_list() if r is not None]
    return sorted(present)


def passed(reward: str = "reward") -> pl.Expr:
    """1.0 for a trial with reward >= 1, else 0.0 (a null reward counts as a failure)."""
    return (pl.col(reward).fill_null(0.0) >= 1.0).cast(pl.Float64)


def empty_chart(message: str, title: str = "") -> alt.Chart:
    """A small chart that says why there is nothing to draw (instead of a blank space)."""
    return (
        alt.Chart(alt.Data(values=[{"m": message}]), title=title or None)
        .mark_text(align="left", fontSize=13, color="#555555")
        .encode(text="m:N")
        .properties(width=WIDTH, height=30)
    )


def height_for(n: int, per: int = 22, floor: int = 60, cap: int = 2400) -> int:
    return int(max(floor, min(cap, n * per)))
