"""The leaderboard chart set, drawn from :func:`evalkit.stats.leaderboard`'s frame (run column
``run``): scores with intervals coloured by tier, P(rank = k), and the cost frontier."""

from __future__ import annotations

import altair as alt
import polars as pl

from evalkit.charts._style import (
    AXIS_TICKS,
    PCT,
    PCT1,
    USD,
    WIDTH,
    Chart,
    short_labels,
    usd_axis_format,
)

__all__ = [
    "TIER_COLORS",
    "frontier_chart",
    "leaderboard_charts",
    "leaderboard_scores",
    "rank_probabilities_chart",
]

#: tier 1, 2, 3, 4+ (colour-blind safe, darkest = best tier)
TIER_COLORS = ("#1b7837", "#5aae61", "#a6dba0", "#bdbdbd")


def _tier_label(lb: pl.DataFrame) -> pl.DataFrame:
    """Adds _tier ("tier 1" .. "tier 4+"), _rank_ci ("1-3") and _label (a short unique run
    label; the full name stays in the tooltip)."""
    short = short_labels(lb["run"].to_list())
    return lb.with_columns(
        pl.col("run").replace_strict(short, return_dtype=pl.String).alias("_label"),
        pl.when(pl.col("tier") >= 4)
        .then(pl.lit("tier 4+"))
        .otherwise(pl.format("tier {}", "tier"))
        .alias("_tier"),
        pl.format("{}-{}", "rank_low", "rank_high").alias("_rank_ci"),
    )


def _tier_color() -> alt.Color:
    domain = ["tier 1", "tier 2", "tier 3", "tier 4+"]
    return alt.Color(
        "_tier:N", scale=alt.Scale(domain=domain, range=list(TIER_COLORS)), title="tier"
    )


def leaderboard_scores(lb: pl.DataFrame, *, title: str = "Leaderboard") -> Chart:
    """One row per run, best first: the score with its interval, coloured by tier."""
    d = _tier_label(lb).select(
        "run", "_label", "score", "ci_low", "ci_high", "rank", "_rank_ci", "_tier", "p_rank_1",
        "n_tasks",
    )  # fmt: skip
    order = d["_label"].to_list()
    tips = [
        alt.Tooltip("run:N"),
        alt.Tooltip("score:Q", format=PCT1),
        alt.Tooltip("ci_low:Q", format=PCT1, title="CI low"),
        alt.Tooltip("ci_high:Q", format=PCT1, title="CI high"),
        alt.Tooltip("rank:Q"),
        alt.Tooltip("_rank_ci:N", title="95% rank interval"),
        alt.Tooltip("_tier:N", title="tier"),
        alt.Tooltip("p_rank_1:Q", format=PCT1, title="P(rank 1)"),
        alt.Tooltip("n_tasks:Q", title="shared tasks"),
    ]
    base = alt.Chart(alt.Data(values=d.to_dicts()))
    y = alt.Y("_label:N", sort=order, title=None)
    x = alt.X("ci_low:Q", scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format=PCT), title="score")
    rule = base.mark_rule(strokeWidth=3, opacity=0.7).encode(
        y=y, x=x, x2="ci_high:Q", color=_tier_color(), tooltip=tips
    )
    point = base.mark_point(filled=True, size=100).encode(
        y=y, x="score:Q", color=_tier_color(), tooltip=tips
    )
    text = base.mark_text(align="left", dx=8, dy=-9, fontSize=11).encode(
        y=y, x="score:Q", text=alt.Text("_rank_ci:N")
    )
    head = alt.Title(
        title,
        subtitle="points: score; bars: interval; label: rank interval; colour: tier "
        "(tier 1 = not separable from the leader)",
    )
    return (rule + point + text).properties(
        width=WIDTH, height=max(80, 28 * len(order)), title=head
    )


def rank_probabilities_chart(lb: pl.DataFrame, *, title: str = "P(rank = k)") -> Chart:
    """Runs x ranks: the share of bootstrap draws in which the run has rank k."""
    lab = _tier_label(lb)
    order = lab["_label"].to_list()
    long = (
        lab.select("run", "_label", "p_rank")
        .with_columns(pl.int_ranges(1, pl.col("p_rank").list.len() + 1).alias("k"))
        .explode("p_rank", "k")
        .filter(pl.col("p_rank") > 0)
    )
    base = alt.Chart(alt.Data(values=long.to_dicts()))
    rect = base.mark_rect().encode(
        x=alt.X("k:O", title="rank"),
        y=alt.Y("_label:N", sort=order, title=None),
        color=alt.Color("p_rank:Q", scale=alt.Scale(scheme="greens", domain=[0, 1]), title="P"),
        tooltip=[
            alt.Tooltip("run:N"),
            alt.Tooltip("k:O", title="rank"),
            alt.Tooltip("p_rank:Q", format=PCT1, title="P"),
        ],
    )
    return rect.properties(
        width=min(WIDTH, 40 * len(order)), height=max(80, 28 * len(order)), title=title
    )


def frontier_chart(
    lb: pl.DataFrame, *, title: str = "Cost vs score: P(on the frontier)"
) -> Chart | None:
    """Cost per attempt against score; point size and label: P(on the cost/score Pareto
    frontier) over the draws. None when no run has a known cost."""
    d = _tier_label(lb).filter(pl.col("cost_per_attempt").is_not_null())
    if d.height == 0:
        return None
    d = d.select("run", "_label", "score", "cost_per_attempt", "p_frontier", "_tier").with_columns(
        pl.format("{} ({}%)", "_label", (pl.col("p_frontier") * 100).round(0).cast(pl.Int64)).alias(
            "_text"
        )
    )
    tips = [
        alt.Tooltip("run:N"),
        alt.Tooltip("score:Q", format=PCT1),
        alt.Tooltip("cost_per_attempt:Q", format=USD, title="cost per attempt"),
        alt.Tooltip("p_frontier:Q", format=PCT1, title="P(on frontier)"),
    ]
    base = alt.Chart(alt.Data(values=d.to_dicts()))
    x = alt.X(
        "cost_per_attempt:Q",
        title="cost per attempt (USD)",
        axis=alt.Axis(
            format=usd_axis_format(d["cost_per_attempt"].to_list()), tickCount=AXIS_TICKS
        ),
        scale=alt.Scale(zero=False, nice=True, padding=24),
    )
    y = alt.Y(
        "score:Q", axis=alt.Axis(format=PCT), title="score", scale=alt.Scale(zero=False, padding=24)
    )
    pts = base.mark_circle(opacity=0.85).encode(
        x=x, y=y, color=_tier_color(),
        size=alt.Size("p_frontier:Q", scale=alt.Scale(domain=[0, 1], range=[30, 400]), legend=None),
        tooltip=tips,
    )  # fmt: skip
    txt = base.mark_text(align="left", dx=9, fontSize=11).encode(x=x, y=y, text="_text:N")
    return (pts + txt).properties(width=WIDTH, height=300, title=title)


def leaderboard_charts(lb: pl.DataFrame) -> list[Chart]:
    """The chart set: scores by tier, P(rank = k), and the cost frontier when cost is known."""
    out = [leaderboard_scores(lb), rank_probabilities_chart(lb)]
    f = frontier_chart(lb)
    return out + ([f] if f is not None else [])
