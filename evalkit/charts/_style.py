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
from altair.utils.schemapi import debug_mode

from evalkit.load.runs import run_order

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
AXIS_TICKS = 5


def usd_axis_format(values: list[float]) -> str:
    """A dollar format with enough decimals that ``AXIS_TICKS`` ticks over ``values`` read
    apart (at least cents)."""
    finite = [v for v in values if v is not None and math.isfinite(v)]
    span = (max(finite) - min(finite)) if finite else 0.0
    if span <= 0:
        span = abs(finite[0]) if finite and finite[0] else 1.0
    step = span / AXIS_TICKS
    return f"$,.{min(8, max(2, -math.floor(math.log10(step))))}f"


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
    # Altair validates a schema object against the JSON schema when it is made, row by row
    # for inline data (seconds at thousands of rows); these rows are JSON values by
    # construction, and a whole chart is validated by to_dict() (the chart tests do)
    with debug_mode(False):
        return alt.Data(values=rows)


#: Longest run label drawn on an axis or in a legend (longer ones keep their start and end).
LABEL_WIDTH = 30
#: The legend entry of the runs that get no colour of their own (more runs than colours).
OTHER_RUNS = "other runs"
OTHER_COLOR = "#BBBBBB"


def short_label(label: str, width: int = LABEL_WIDTH, tail: int | None = None) -> str:
    """``label`` cut in the middle to ``width`` characters ("claude-code-son…2026-06-14"):
    run labels that differ only at the end stay apart."""
    if len(label) <= width:
        return label
    tail = max(1, (width - 1) // 2) if tail is None else tail
    return label[: width - 1 - tail] + "…" + label[-tail:]


def short_labels(labels: Iterable[str], width: int = LABEL_WIDTH) -> dict[str, str]:
    """Full label -> a short label, unique among ``labels`` (the kept end grows until no two
    collide; the full label is used when nothing shorter is unique)."""
    labels = list(dict.fromkeys(labels))
    for tail in range(max(1, (width - 1) // 2), width - 1):
        out = {x: short_label(x, width, tail) for x in labels}
        if len(set(out.values())) == len(labels):
            return out
    return {x: x for x in labels}


def run_colours(runs: Sequence[str], order: Sequence[str] | None = None) -> dict[str, str]:
    """Run -> colour, never the same colour twice in one chart. Each run prefers the colour of
    its position in ``order`` (all runs of the report), so a run keeps its colour across
    charts; with more runs than colours only the newest ``len(RUN_COLORS) - 1`` get one (grey
    is kept for the rest, drawn as :data:`OTHER_RUNS`)."""
    order = list(order or runs)
    pos = {r: i for i, r in enumerate(order)}
    ranked = sorted(runs, key=lambda r: pos.get(r, len(order)))
    n = len(RUN_COLORS)
    palette = list(RUN_COLORS)
    if len(ranked) > n:  # grey means "other runs": no run of its own is grey
        palette = [c for c in RUN_COLORS if c != "#999999"]
    coloured = ranked[-len(palette) :] if len(ranked) > n else ranked
    out: dict[str, str] = {}
    free = list(palette)
    for r in coloured:
        want = RUN_COLORS[pos.get(r, len(order)) % n]
        c = want if want in free else free[0]
        free.remove(c)
        out[r] = c
    return out


def with_run_labels(
    df: pl.DataFrame, by: str, runs: Sequence[str], order: Sequence[str] | None = None
) -> tuple[pl.DataFrame, list[str], alt.Scale]:
    """``df`` with ``_label`` (a short unique run label, for axes) and ``_colour`` (the
    legend entry: the short label, or :data:`OTHER_RUNS`), the short labels in ``runs``
    order, and the colour scale over the entries present (a legend lists only what is
    drawn). Tooltips keep the full ``by`` value."""
    short = short_labels(runs)
    colours = run_colours(runs, order)
    entry = {r: short[r] if r in colours else OTHER_RUNS for r in runs}
    df = df.with_columns(
        pl.col(by).replace_strict(short, default=pl.col(by)).alias("_label"),
        pl.col(by).replace_strict(entry, default=OTHER_RUNS).alias("_colour"),
    )
    df = df.sort(pl.col("_colour") != OTHER_RUNS, maintain_order=True)  # grey drawn first
    present = set(df["_colour"].to_list())
    dom = [entry[r] for r in runs if entry[r] in present and r in colours]
    rng = [colours[r] for r in runs if entry[r] in present and r in colours]
    if OTHER_RUNS in present:
        dom.append(OTHER_RUNS)
        rng.append(OTHER_COLOR)
    return df, [short[r] for r in runs], alt.Scale(domain=dom, range=rng)


def run_scale(runs: Sequence[str], order: Sequence[str] | None = None) -> alt.Scale:
    """The colour scale of :func:`run_colours` keyed by the full run labels."""
    colours = run_colours(runs, order)
    dom = [r for r in runs if r in colours]
    return alt.Scale(domain=dom, range=[colours[r] for r in dom])


def wrap_title(text: str, width: int = 100) -> list[str]:
    """A subtitle as lines of at most ``width`` characters (Vega does not wrap titles, and
    one long line makes the whole chart as wide as the text)."""
    import textwrap

    return textwrap.wrap(text, width) or [""]


def outcome_scale(present: Iterable[str] | None = None) -> alt.Scale:
    dom = [o for o in OUTCOME_ORDER if present is None or o in set(present)]
    return alt.Scale(domain=dom, range=[OUTCOME_COLORS[o] for o in dom])


def error_kind_scale(present: Iterable[str] | None = None) -> alt.Scale:
    known = set(present) if present is not None else set(ERROR_KIND_ORDER)
    dom = [k for k in ERROR_KIND_ORDER if k in known]
    return alt.Scale(domain=dom, range=[ERROR_KIND_COLORS[k] for k in dom])


def order_runs(df: pl.DataFrame, by: str, order: Sequence[str] | None) -> list[str]:
    """Run labels in the given order (others after it), else oldest first (the one run
    order, :func:`evalkit.load.runs.run_order`)."""
    if not order:
        return run_order(df, by)
    present = [r for r in df[by].unique(maintain_order=True).to_list() if r is not None]
    known = [r for r in order if r in set(present)]
    return known + [r for r in present if r not in set(known)]


def passed(reward: str = "reward") -> pl.Expr:
    """1.0 for a trial with reward >= 1, else 0.0 (a null reward counts as a failure)."""
    return (pl.col(reward).fill_null(0.0) >= 1.0).cast(pl.Float64)


def empty_chart(message: str, title: str = "") -> alt.Chart:
    """A small chart that says why there is nothing to draw (instead of a blank space)."""
    chart = alt.Chart(alt.Data(values=[{"m": message}]))
    if title:
        chart = chart.properties(title=title)
    return (
        chart.mark_text(align="left", fontSize=13, color="#555555")
        .encode(text="m:N")
        .properties(width=WIDTH, height=30)
    )


def height_for(n: int, per: int = 22, floor: int = 60, cap: int = 2400) -> int:
    return int(max(floor, min(cap, n * per)))
