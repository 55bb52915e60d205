"""Distributions per run (duration, turns, any per-trial value) and pass@k / pass^k curves."""

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
    frame,
    height_for,
    order_runs,
    with_run_labels,
    wrap_title,
)

#: Up to this many trials per run, every trial is drawn as a point (with its tooltip).
POINTS_UP_TO = 60


def distribution(
    df: pl.DataFrame | pl.LazyFrame,
    value: str,
    by: str = "run",
    *,
    order: Sequence[str] | None = None,
    title: str | None = None,
    axis_title: str | None = None,
    log: bool = False,
    fmt: str = ",.3~g",
) -> Chart:
    """Box plot of a per-trial value per run (box: quartiles, tick: median, whiskers: min to
    max). Quantiles are computed here, so the chart stays small for any number of trials;
    runs with at most ``POINTS_UP_TO`` trials also show each trial as a point."""
    df = frame(df, by, value)
    runs = order_runs(df, by, order)
    keep = pl.col(value).is_not_null() & ((pl.col(value) > 0) if log else pl.lit(True))
    t = df.filter(keep)
    title = title or value
    if t.height == 0:
        return empty_chart(f"No trial has a value for {value}.", title)
    q = _run_quantiles(t, by, value)
    runs = [r for r in runs if r in set(q[by].to_list())]
    q, labels, cscale = with_run_labels(q, by, runs, order)
    scale = alt.Scale(type="log") if log else alt.Scale(zero=True)
    x_title = axis_title or value
    y = alt.Y("_label:N", sort=labels, title=None)
    color = alt.Color("_colour:N", scale=cscale, legend=None)
    tips = [alt.Tooltip(f"{by}:N", title="run"), alt.Tooltip("n:Q", title="trials")] + [
        alt.Tooltip(f"{c}:Q", format=fmt) for c in ("min", "q1", "median", "q3", "max", "mean")
    ]
    base = alt.Chart(data(q))
    whisk = base.mark_rule(color="#777777").encode(
        x=alt.X("min:Q", scale=scale, title=x_title), x2="max:Q", y=y, tooltip=tips
    )
    box = base.mark_bar(size=16, opacity=0.45).encode(
        x="q1:Q", x2="q3:Q", y=y, color=color, tooltip=tips
    )
    med = base.mark_tick(color="black", thickness=2, size=18).encode(
        x="median:Q", y=y, tooltip=tips
    )
    layers = whisk + box + med
    small = q.filter(pl.col("n") <= POINTS_UP_TO)[by].to_list()
    if small:
        layers = layers + _trial_points(
            t.filter(pl.col(by).is_in(small)), by, value, runs, order, x_title, fmt, y, color
        )
    sub = f"{t.height} trials; box: middle half, black tick: median, line: min to max"
    if small:
        sub += "; dots: single trials"
    if log:
        sub += "; log scale"
    return layers.properties(
        width=WIDTH,
        height=height_for(len(runs), 42),
        title=alt.Title(title, subtitle=wrap_title(sub)),
    )


def _run_quantiles(t: pl.DataFrame, by: str, value: str) -> pl.DataFrame:
    """Per run: trial count, min, quartiles, median, max and mean of ``value``."""
    v = pl.col(value)
    return t.group_by(by, maintain_order=True).agg(
        pl.len().alias("n"),
        v.min().alias("min"),
        v.quantile(0.25, "linear").alias("q1"),
        v.median().alias("median"),
        v.quantile(0.75, "linear").alias("q3"),
        v.max().alias("max"),
        v.mean().alias("mean"),
    )


def _trial_points(
    t: pl.DataFrame,
    by: str,
    value: str,
    runs: list[str],
    order: Sequence[str] | None,
    x_title: str,
    fmt: str,
    y: alt.Y,
    color: alt.Color,
) -> Chart:
    """One point per trial (with its tooltip) for the runs in ``t``."""
    cols = [by, value] + [
        c for c in ("task_name", "attempt", "reward", "cost_usd", "outcome") if c in t.columns
    ]
    pts, _, _ = with_run_labels(t, by, runs, order)
    ptips = [alt.Tooltip(f"{value}:Q", title=x_title, format=fmt)] + [
        alt.Tooltip(
            f"{c}:{'Q' if t.schema[c].is_numeric() else 'N'}",
            **({"format": USD} if c == "cost_usd" else {}),
        )
        for c in cols[2:]
    ]
    cols += ["_label", "_colour"]
    return (
        alt.Chart(data(pts, cols))
        .mark_circle(size=28, opacity=0.6)
        .encode(x=f"{value}:Q", y=y, color=color, tooltip=ptips)
    )


def duration_dist(df: pl.DataFrame | pl.LazyFrame, by: str = "run", **kw) -> Chart:
    """Trial wall time (setup + agent + verifier) per run, in minutes, log scale."""
    df = frame(df, by, "duration_s").with_columns((pl.col("duration_s") / 60).alias("duration_min"))
    kw.setdefault("title", "Trial duration per run")
    kw.setdefault("axis_title", "trial duration (minutes, log scale)")
    kw.setdefault("log", True)
    kw.setdefault("fmt", ",.1f")
    return distribution(df, "duration_min", by, **kw)


def turns_dist(df: pl.DataFrame | pl.LazyFrame, by: str = "run", **kw) -> Chart:
    """Agent turns per trial per run (``n_turns``, else ``n_steps``)."""
    df = frame(df, by)
    cols = [c for c in ("n_turns", "n_steps") if c in df.columns]
    if not cols:
        raise ValueError("turns_dist needs an n_turns or n_steps column")
    df = df.with_columns(pl.coalesce(cols).alias("turns"))
    kw.setdefault("title", "Agent turns per trial")
    kw.setdefault("axis_title", "turns per trial")
    kw.setdefault("fmt", ",.0f")
    return distribution(df, "turns", by, **kw)


def pass_at_k_frame(
    df: pl.DataFrame | pl.LazyFrame,
    by: str = "run",
    task: str = "task_name",
    reward: str = "reward",
) -> pl.DataFrame:
    """Per run and k: mean over tasks of pass@k and pass^k (tasks with at least k attempts),
    long (one row per run, metric and k) from :func:`evalkit.stats.pass_k_curve`."""
    from evalkit import stats

    curve = stats.pass_k_curve(frame(df, by, task, reward), by, task, reward)
    long = curve.rename({"pass_at_k": "pass@k", "pass_hat_k": "pass^k"}).unpivot(
        index=[by, "k", "n_tasks"], on=["pass@k", "pass^k"], variable_name="metric",
        value_name="value",
    )  # fmt: skip
    return long.select(
        by, "k", "metric", "value", pl.col("n_tasks").cast(pl.UInt32).alias("tasks")
    ).sort(by, "metric", "k")


def pass_at_k_curves(
    df: pl.DataFrame | pl.LazyFrame,
    by: str = "run",
    *,
    order: Sequence[str] | None = None,
    title: str = "pass@k and pass^k",
) -> Chart:
    """pass@k (solid: at least one of k attempts passes) and pass^k (dashed: all k pass)
    per run, k = 1 .. attempts, averaged over the tasks that have at least k attempts."""
    df = frame(df, by)
    runs = order_runs(df, by, order)
    pk = pass_at_k_frame(df, by)
    if pk.height == 0:
        return empty_chart("No trials.", title)
    pk, _, scale = with_run_labels(pk, by, runs, order)
    return (
        alt.Chart(
            data(pk),
            title=alt.Title(
                title,
                subtitle=wrap_title(
                    "solid: pass@k (any of k passes); dashed: pass^k (all k pass); "
                    "unbiased estimators"
                ),
            ),
        )
        .mark_line(point=True)
        .encode(
            x=alt.X("k:O", title="k (attempts)", axis=alt.Axis(labelAngle=0)),
            y=alt.Y(
                "value:Q",
                title="probability",
                axis=alt.Axis(format=PCT),
                scale=alt.Scale(domain=[0, 1]),
            ),
            color=alt.Color(
                "_colour:N",
                scale=scale,
                legend=alt.Legend(orient="bottom", title="run", columns=2, labelLimit=260),
            ),
            detail=alt.Detail(f"{by}:N"),
            strokeDash=alt.StrokeDash(
                "metric:N",
                scale=alt.Scale(domain=["pass@k", "pass^k"], range=[[1, 0], [5, 3]]),
                legend=None,  # the subtitle says solid / dashed
            ),
            tooltip=[
                alt.Tooltip(f"{by}:N", title="run"),
                "metric:N",
                "k:O",
                alt.Tooltip("value:Q", format=PCT1),
                alt.Tooltip("tasks:Q", title="tasks with >= k attempts"),
            ],
        )
        .properties(width=WIDTH, height=280)
    )
