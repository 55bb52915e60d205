"""Per-run charts: pass rate with CI, outcomes, error kinds, cost vs pass rate, distributions,
pass@k curves. Inputs are trial frames (``runs.trials`` or any frame with the columns)."""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import polars as pl

from evalkit.charts._style import (
    PCT,
    PCT1,
    USD,
    WIDTH,
    Chart,
    data,
    empty_chart,
    error_kind_scale,
    frame,
    height_for,
    order_runs,
    outcome_scale,
    passed,
    with_run_labels,
    wrap_title,
)

SUMMARY_COLUMNS = ("pass_rate", "ci_low", "ci_high")


def run_summary(
    df: pl.DataFrame | pl.LazyFrame, by: str = "run", confidence: float = 0.95
) -> pl.DataFrame:
    """``df`` itself when it already is a summary (pass_rate, ci_low, ci_high), else
    ``evalkit.stats.summarize`` of the trials (one row per ``by``)."""
    df = frame(df, by)
    if all(c in df.columns for c in SUMMARY_COLUMNS):
        return df
    from evalkit import stats

    return stats.summarize(df, by=by, confidence=confidence)


def pass_rate_ci(
    df: pl.DataFrame | pl.LazyFrame,
    by: str = "run",
    *,
    order: Sequence[str] | None = None,
    confidence: float = 0.95,
    title: str = "Pass rate per run",
) -> Chart:
    """Pass rate (share of trials with reward >= 1) per run with its confidence interval.

    ``df``: trials (summarised with ``evalkit.stats.summarize``) or a summary frame.
    """
    summ = run_summary(df, by, confidence)
    runs = order_runs(
        summ, by, order or (order_runs(frame(df), by, None) if by in frame(df).columns else None)
    )
    cols = [by, *SUMMARY_COLUMNS] + [
        c
        for c in ("n_tasks", "n_trials", "attempts_max", "mean_reward", "ci_method")
        if c in summ.columns
    ]
    method = _ci_methods(summ)
    tips = _summary_tooltips(summ, by)
    summ, labels, scale = with_run_labels(summ.filter(pl.col(by).is_in(runs)), by, runs, order)
    base = alt.Chart(data(summ, [*cols, "_label", "_colour"]))
    head = alt.Title(
        title, subtitle=wrap_title(f"points: pass rate; bars: {confidence:.0%} interval ({method})")
    )
    y = alt.Y("_label:N", sort=labels, title=None)
    color = alt.Color("_colour:N", scale=scale, legend=None)
    x = alt.X(
        "ci_low:Q", scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format=PCT), title="pass rate"
    )
    rule = base.mark_rule(strokeWidth=3, opacity=0.6).encode(
        y=y, x=x, x2="ci_high:Q", color=color, tooltip=tips
    )
    point = base.mark_point(filled=True, size=110).encode(
        y=y, x="pass_rate:Q", color=color, tooltip=tips
    )
    label = base.mark_text(align="left", dx=8, dy=-9, fontSize=11).encode(
        y=y, x="pass_rate:Q", text=alt.Text("pass_rate:Q", format=PCT1)
    )
    return (rule + point + label).properties(
        width=WIDTH, height=height_for(len(runs), 34), title=head
    )


def _ci_methods(summ: pl.DataFrame) -> str:
    """The interval methods the summary used, for the subtitle ("CI" when not recorded)."""
    methods = (
        summ["ci_method"].drop_nulls().unique(maintain_order=True).to_list()
        if "ci_method" in summ.columns
        else []
    )
    return ", ".join(methods) if methods else "CI"


def _summary_tooltips(summ: pl.DataFrame, by: str) -> list[alt.Tooltip]:
    """Run, pass rate and interval, and the counts the summary has."""
    return [
        alt.Tooltip(f"{by}:N", title="run"),
        alt.Tooltip("pass_rate:Q", format=PCT1, title="pass rate"),
        alt.Tooltip("ci_low:Q", format=PCT1, title="CI low"),
        alt.Tooltip("ci_high:Q", format=PCT1, title="CI high"),
        *([alt.Tooltip("ci_method:N", title="CI method")] if "ci_method" in summ.columns else []),
    ] + [
        alt.Tooltip(f"{c}:Q", title=t, format=f)
        for c, t, f in (
            ("n_tasks", "tasks", "d"),
            ("n_trials", "trials", "d"),
            ("attempts_max", "attempts per task (max)", "d"),
            ("mean_reward", "mean reward", ".3f"),
        )
        if c in summ.columns
    ]


def _counts(df: pl.DataFrame, by: str, col: str, exclude: Sequence[str] = ()) -> pl.DataFrame:
    t = df.filter(~pl.col(col).is_in(list(exclude))) if exclude else df
    out = t.group_by(by, col, maintain_order=True).agg(
        pl.len().alias("trials"),
        pl.col("task_name").n_unique().alias("tasks")
        if "task_name" in t.columns
        else pl.lit(None).alias("tasks"),
    )
    totals = df.group_by(by).agg(pl.len().alias("run_trials"))
    return out.join(totals, on=by).with_columns(
        (pl.col("trials") / pl.col("run_trials")).alias("share")
    )


def outcome_bars(
    df: pl.DataFrame | pl.LazyFrame,
    by: str = "run",
    *,
    order: Sequence[str] | None = None,
    normalize: bool = True,
    title: str = "Outcomes per run",
) -> Chart:
    """Stacked bars of trial outcomes per run (shares, or counts with ``normalize=False``)."""
    df = frame(df, by, "outcome")
    runs = order_runs(df, by, order)
    c = _counts(df, by, "outcome").with_columns(
        pl.col("outcome")
        .replace_strict({o: i for i, o in enumerate(outcome_scale().domain)}, default=99)
        .alias("_o")
    )
    c, labels, _ = with_run_labels(c, by, runs, order)
    field = "share" if normalize else "trials"
    return (
        alt.Chart(
            data(c),
            title=alt.Title(title, subtitle="share of trials; colours are the same in every chart"),
        )
        .mark_bar()
        .encode(
            y=alt.Y("_label:N", sort=labels, title=None),
            x=alt.X(
                f"{field}:Q",
                stack="zero",
                title="share of trials" if normalize else "trials",
                axis=alt.Axis(format=PCT) if normalize else alt.Axis(),
            ),
            color=alt.Color(
                "outcome:N",
                scale=outcome_scale(c["outcome"].to_list()),
                legend=alt.Legend(orient="bottom", title="outcome"),
            ),
            order=alt.Order("_o:Q"),
            tooltip=[
                alt.Tooltip(f"{by}:N", title="run"),
                alt.Tooltip("outcome:N"),
                alt.Tooltip("trials:Q"),
                alt.Tooltip("tasks:Q", title="tasks affected"),
                alt.Tooltip("share:Q", format=PCT1, title="share of the run's trials"),
            ],
        )
        .properties(width=WIDTH, height=height_for(len(runs), 30))
    )


def error_kind_bars(
    df: pl.DataFrame | pl.LazyFrame,
    by: str = "run",
    *,
    order: Sequence[str] | None = None,
    title: str = "Errors by kind per run",
) -> Chart:
    """Stacked bars: trials with an exception, by error kind (agent / infra / provider / ...)."""
    df = frame(df, by, "error_kind")
    runs = order_runs(df, by, order)
    c = _counts(df, by, "error_kind", exclude=("none",))
    if c.height == 0:
        return empty_chart("No trial recorded an exception.", title)
    c, labels, _ = with_run_labels(c, by, runs, order)
    return (
        alt.Chart(
            data(c),
            title=alt.Title(
                title, subtitle="trials with an exception, by Harbor error-policy class"
            ),
        )
        .mark_bar()
        .encode(
            y=alt.Y("_label:N", sort=labels, title=None),
            x=alt.X(
                "trials:Q",
                stack="zero",
                title="trials with an error",
                axis=alt.Axis(tickMinStep=1, format="d"),
            ),
            color=alt.Color(
                "error_kind:N",
                scale=error_kind_scale(c["error_kind"].to_list()),
                legend=alt.Legend(orient="bottom", title="error kind"),
            ),
            tooltip=[
                alt.Tooltip(f"{by}:N", title="run"),
                alt.Tooltip("error_kind:N", title="error kind"),
                alt.Tooltip("trials:Q"),
                alt.Tooltip("tasks:Q", title="tasks affected"),
                alt.Tooltip("share:Q", format=PCT1, title="share of the run's trials"),
            ],
        )
        .properties(width=WIDTH, height=height_for(len(runs), 30))
    )


def pareto_front(df: pl.DataFrame, x: str, y: str) -> pl.DataFrame:
    """Rows not dominated by another row (lower-or-equal ``x`` and higher-or-equal ``y``,
    one strictly), sorted by ``x``: the cost / pass-rate frontier."""
    pts = df.filter(pl.col(x).is_not_null() & pl.col(y).is_not_null()).sort(
        [x, y], descending=[False, True]
    )
    keep, best = [], float("-inf")
    for i, yv in enumerate(pts[y].to_list()):
        if yv > best:
            keep.append(i)
            best = yv
    return pts[keep] if keep else pts.head(0)


def cost_vs_pass(
    df: pl.DataFrame | pl.LazyFrame,
    by: str = "run",
    *,
    cost: str = "cost_usd",
    cost_title: str = "mean cost per trial (USD)",
    cost_format: str = USD,
    axis_format: str | None = None,
    order: Sequence[str] | None = None,
    title: str = "Cost vs pass rate",
) -> Chart:
    """Mean ``cost`` per trial against pass rate, one point per run, with the Pareto frontier.

    ``cost`` may be any per-trial numeric column (e.g. ``n_input_tokens`` when cost is
    unknown). Runs where no trial has a value are left out and named in the subtitle.
    """
    df = frame(df, by, cost, "reward")
    runs = order_runs(df, by, order)
    agg = _run_cost_and_pass(df, by, cost)
    missing = agg.filter(pl.col("priced") == 0)[by].to_list()
    pts = agg.filter(pl.col("priced") > 0)
    if pts.height == 0:
        return empty_chart(f"No trial has a value for {cost}: nothing to plot.", title)
    front = pareto_front(pts, "cost", "pass_rate")
    sub = "line: Pareto frontier (no other run is both cheaper and better)"
    if missing:
        sub += f"; {len(missing)} run(s) without {cost} not shown"
    shown = [r for r in runs if r in set(pts[by].to_list())]
    pts, _, scale = with_run_labels(pts, by, shown, order)
    tips = _cost_pass_tooltips(by, cost, cost_title, cost_format)
    x = alt.X(
        "cost:Q",
        title=cost_title,
        scale=alt.Scale(zero=True, nice=True),
        axis=alt.Axis(format=axis_format or ("$.3~r" if cost_format == USD else cost_format)),
    )
    y = alt.Y(
        "pass_rate:Q", title="pass rate", axis=alt.Axis(format=PCT), scale=alt.Scale(domain=[0, 1])
    )
    line = (
        alt.Chart(data(front, ["cost", "pass_rate"]))
        .mark_line(strokeDash=[5, 3], color="#555555", interpolate="step-after")
        .encode(x=x, y=y)
    )
    points = (
        alt.Chart(data(pts))
        .mark_point(filled=True, size=140)
        .encode(
            x=x,
            y=y,
            color=alt.Color(
                "_colour:N",
                scale=scale,
                legend=alt.Legend(orient="bottom", title="run", columns=2, labelLimit=260),
            ),
            tooltip=tips,
        )
    )
    return (line + points).properties(
        width=WIDTH, height=320, title=alt.Title(title, subtitle=wrap_title(sub))
    )


def _run_cost_and_pass(df: pl.DataFrame, by: str, cost: str) -> pl.DataFrame:
    """Per run: trials, trials with ``cost``, mean and total ``cost``, pass rate, mean reward."""
    return df.group_by(by, maintain_order=True).agg(
        pl.len().alias("trials"),
        pl.col(cost).is_not_null().sum().alias("priced"),
        pl.col(cost).mean().alias("cost"),
        pl.col(cost).sum().alias("total"),
        passed().mean().alias("pass_rate"),
        pl.col("reward").fill_null(0.0).mean().alias("mean_reward"),
    )


def _cost_pass_tooltips(by: str, cost: str, cost_title: str, cost_format: str) -> list[alt.Tooltip]:
    """Tooltips of one cost_vs_pass point."""
    return [
        alt.Tooltip(f"{by}:N", title="run"),
        alt.Tooltip("pass_rate:Q", format=PCT1, title="pass rate"),
        alt.Tooltip("mean_reward:Q", format=".3f", title="mean reward"),
        alt.Tooltip("cost:Q", format=cost_format, title=cost_title),
        alt.Tooltip("total:Q", format=cost_format, title="total"),
        alt.Tooltip("trials:Q", title="trials"),
        alt.Tooltip("priced:Q", title=f"trials with {cost}"),
    ]
