"""Per-task charts: the tasks x runs heatmap, the A-vs-B scatter and the transition chart."""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import polars as pl

from evalkit.charts._style import (
    OUTCOME_ORDER,
    PCT,
    PCT1,
    RATE_SCHEME,
    USD,
    WIDTH,
    Chart,
    data,
    empty_chart,
    frame,
    height_for,
    order_runs,
    passed,
    short_label,
    with_run_labels,
    wrap_title,
)

UNKNOWN_TASK = "(unknown task)"


def task_cells(
    df: pl.DataFrame | pl.LazyFrame,
    by: str = "run",
    task: str = "task_name",
    reward: str = "reward",
) -> pl.DataFrame:
    """One row per (run, task): attempts, passes, pass_rate, mean_reward, mean cost, outcomes.
    A missing task name is shown as "(unknown task)"."""
    df = frame(df, by, task, reward).with_columns(pl.col(task).fill_null(UNKNOWN_TASK))
    cost = pl.col("cost_usd").mean() if "cost_usd" in df.columns else pl.lit(None, pl.Float64)
    outs = (
        pl.col("outcome").sort().unique(maintain_order=True).str.join(", ")
        if "outcome" in df.columns
        else pl.lit(None, pl.String)
    )
    return df.group_by(by, task, maintain_order=True).agg(
        pl.len().alias("attempts"),
        passed(reward).sum().cast(pl.Int64).alias("passes"),
        passed(reward).mean().alias("pass_rate"),
        pl.col(reward).fill_null(0.0).mean().alias("mean_reward"),
        cost.alias("mean_cost"),
        outs.alias("outcomes"),
    )


def task_heatmap(
    df: pl.DataFrame | pl.LazyFrame,
    by: str = "run",
    task: str = "task_name",
    *,
    order: Sequence[str] | None = None,
    title: str = "Pass rate per task and run",
    cell_text: bool | None = None,
) -> Chart:
    """Tasks (rows, hardest first: lowest pass rate over all runs) x runs (columns); each
    cell is the share of that task's attempts in that run that passed."""
    df = frame(df, by, task)
    runs = order_runs(df, by, order)
    cells = task_cells(df, by, task)
    if cells.height == 0:
        return empty_chart("No trials.", title)
    tasks = _tasks_hardest_first(cells, task)
    cells, labels, _ = with_run_labels(_with_cell_text(cells), by, runs, order)
    if cell_text is None:
        cell_text = len(runs) <= 8
    layers = _heatmap_layers(cells, by, task, tasks, labels, cell_text)
    return layers.properties(
        width=max(160, min(WIDTH, 110 * len(runs))),
        height=height_for(len(tasks), 18, floor=40, cap=4000),
        title=alt.Title(
            title,
            subtitle=wrap_title(
                f"{len(tasks)} tasks, hardest first; cell text: passes / attempts; blank: not run",
                60,
            ),
        ),
    )


def _tasks_hardest_first(cells: pl.DataFrame, task: str) -> list[str]:
    """Task names by pass rate pooled over all runs, lowest first (ties by name)."""
    diff = (
        cells.group_by(task)
        .agg((pl.col("passes").sum() / pl.col("attempts").sum()).alias("_d"))
        .sort("_d", task)
    )
    return diff[task].to_list()


def _with_cell_text(cells: pl.DataFrame) -> pl.DataFrame:
    """Add each cell's ``label`` (passes/attempts) and ``_dark`` (white text on a dark cell)."""
    return cells.with_columns(
        pl.format("{}/{}", "passes", "attempts").alias("label"),
        (pl.col("pass_rate") < 0.55).alias("_dark"),
    )


def _heatmap_tooltips(by: str, task: str) -> list[alt.Tooltip]:
    """Tooltips of one heatmap cell."""
    return [
        alt.Tooltip(f"{task}:N", title="task"),
        alt.Tooltip(f"{by}:N", title="run"),
        alt.Tooltip("attempts:Q"),
        alt.Tooltip("passes:Q"),
        alt.Tooltip("pass_rate:Q", format=PCT1, title="pass rate"),
        alt.Tooltip("mean_reward:Q", format=".3f", title="mean reward"),
        alt.Tooltip("mean_cost:Q", format=USD, title="mean cost"),
        alt.Tooltip("outcomes:N"),
    ]


def _heatmap_layers(
    cells: pl.DataFrame,
    by: str,
    task: str,
    tasks: list[str],
    labels: list[str],
    cell_text: bool,
) -> alt.Chart | alt.LayerChart:
    """The coloured cells (runs by ``labels``, tasks by ``tasks``), with their text on top
    when ``cell_text``."""
    base = alt.Chart(data(cells)).encode(
        x=alt.X(
            "_label:N",
            sort=labels,
            title=None,
            axis=alt.Axis(orient="top", labelAngle=-30, labelLimit=260),
        ),
        y=alt.Y(f"{task}:N", sort=tasks, title=None, axis=alt.Axis(labelLimit=260)),
    )
    tips = _heatmap_tooltips(by, task)
    rect = base.mark_rect(stroke="white", strokeWidth=1).encode(
        color=alt.Color(
            "pass_rate:Q",
            scale=alt.Scale(scheme=RATE_SCHEME, domain=[0, 1]),
            legend=alt.Legend(title="pass rate", format=PCT, orient="right"),
        ),
        tooltip=tips,
    )
    if not cell_text:
        return rect
    text = base.mark_text(fontSize=10).encode(
        text="label:N",
        color=alt.condition("datum._dark", alt.value("white"), alt.value("black")),
        tooltip=tips,
    )
    return rect + text


def ab_tasks(
    df: pl.DataFrame | pl.LazyFrame, a: str, b: str, by: str = "run", task: str = "task_name"
) -> pl.DataFrame:
    """One row per task of A or B: attempts, passes, pass rate, mean reward and cost on each
    side, ``side`` (both / a_only / b_only) and ``delta`` (B - A pass rate; null one-sided)."""
    cells = task_cells(df, by, task)
    cols = ["attempts", "passes", "pass_rate", "mean_reward", "mean_cost"]
    sa = cells.filter(pl.col(by) == a).select(task, *[pl.col(c).alias(f"{c}_a") for c in cols])
    sb = cells.filter(pl.col(by) == b).select(task, *[pl.col(c).alias(f"{c}_b") for c in cols])
    out = sa.join(sb, on=task, how="full", coalesce=True)
    return out.with_columns(
        pl.when(pl.col("attempts_a").is_null())
        .then(pl.lit("b_only"))
        .when(pl.col("attempts_b").is_null())
        .then(pl.lit("a_only"))
        .otherwise(pl.lit("both"))
        .alias("side"),
        (pl.col("pass_rate_b") - pl.col("pass_rate_a")).alias("delta"),
    ).sort(task)


def ab_scatter(
    df: pl.DataFrame | pl.LazyFrame,
    a: str,
    b: str,
    by: str = "run",
    task: str = "task_name",
    *,
    tasks: pl.DataFrame | None = None,
    title: str | None = None,
) -> Chart:
    """Per task: pass rate in A (x) against B (y). Above the diagonal B does better.
    Tasks on one side only are left out (and counted in the subtitle).

    ``tasks``: a per-task frame to use instead of aggregating ``df`` (``cmp.tasks`` of
    evalkit.compare works: its ``comparable`` column then decides which tasks are shown).
    """
    if tasks is not None:
        t, both = _given_task_rates(tasks, task)
    else:
        t = ab_tasks(df, a, b, by, task)
        both = t.filter(pl.col("side") == "both")
    one = t.height - both.height
    title = title or "Per-task pass rate: A vs B"
    if both.height == 0:
        return empty_chart("A and B have no task in common.", title)
    sc = alt.Scale(domain=[-0.06, 1.06], nice=False)
    diag = (
        alt.Chart(alt.Data(values=[{"v": 0}, {"v": 1}]))
        .mark_line(color="#999999", strokeDash=[4, 4])
        .encode(x=alt.X("v:Q", scale=sc), y=alt.Y("v:Q", scale=sc))
    )
    pts = _ab_points(_jittered(_with_change(both)), task, sc)
    sub = f"{both.height} tasks compared; above the diagonal B does better; jittered slightly"
    if one:
        sub += f"; {one} not shown (one run only, or not comparable)"
    head = alt.Title(
        title,
        subtitle=[f"A: {short_label(a, 60)}", f"B: {short_label(b, 60)}", *wrap_title(sub, 60)],
    )
    return (diag + pts).properties(width=380, height=380, title=head)


_AB_SIDE_COLUMNS = ("attempts", "mean_reward", "mean_cost")


def _given_task_rates(tasks: pl.DataFrame, task: str) -> tuple[pl.DataFrame, pl.DataFrame]:
    """A given per-task frame, and its comparable tasks with delta and every side column."""
    t = frame(tasks, task, "pass_rate_a", "pass_rate_b")
    if "mean_cost_a" not in t.columns and "cost_usd_a" in t.columns:
        t = t.rename({"cost_usd_a": "mean_cost_a", "cost_usd_b": "mean_cost_b"})
    keep = pl.col("comparable") if "comparable" in t.columns else pl.col("side") == "both"
    both = t.filter(keep).with_columns(
        (pl.col("pass_rate_b") - pl.col("pass_rate_a")).alias("delta")
    )
    side_cols = [f"{c}_{s_}" for c in _AB_SIDE_COLUMNS for s_ in ("a", "b")]
    missing = [c for c in side_cols if c not in both.columns]
    both = both.with_columns(pl.lit(None, pl.Float64).alias(c) for c in missing)
    return t, both.select(task, "pass_rate_a", "pass_rate_b", "delta", *side_cols)


def _with_change(both: pl.DataFrame) -> pl.DataFrame:
    return both.with_columns(
        pl.when(pl.col("delta") > 0)
        .then(pl.lit("B better"))
        .when(pl.col("delta") < 0)
        .then(pl.lit("A better"))
        .otherwise(pl.lit("same"))
        .alias("change"),
    )


def _jittered(both: pl.DataFrame) -> pl.DataFrame:
    """A small deterministic jitter (_x, _y) so tasks at the same rates do not hide each other."""
    return (
        both.with_row_index("_i")
        .with_columns(pl.col("_i").cast(pl.Int64))
        .with_columns(
            (pl.col("pass_rate_a") + ((pl.col("_i") * 7919 % 11) - 5) * 0.006).alias("_x"),
            (pl.col("pass_rate_b") + ((pl.col("_i") * 104729 % 13) - 6) * 0.005).alias("_y"),
        )
    )


def _ab_points(both: pl.DataFrame, task: str, sc: alt.Scale) -> alt.Chart:
    """One point per task: coloured and shaped by which side does better."""
    ax = alt.Axis(format=PCT)
    change_domain = ["B better", "same", "A better"]
    return (
        alt.Chart(data(both))
        .mark_point(filled=True, opacity=0.75)
        .encode(
            x=alt.X("_x:Q", title="pass rate in A (baseline)", axis=ax, scale=sc),
            y=alt.Y("_y:Q", title="pass rate in B (candidate)", axis=ax, scale=sc),
            size=alt.Size(
                "attempts_b:Q", title="attempts (B)", scale=alt.Scale(range=[40, 200]), legend=None
            ),
            color=alt.Color(
                "change:N",
                scale=alt.Scale(domain=change_domain, range=["#009E73", "#999999", "#D55E00"]),
                legend=alt.Legend(orient="bottom", title=None),
            ),
            shape=alt.Shape(
                "change:N",
                scale=alt.Scale(
                    domain=change_domain, range=["triangle-up", "circle", "triangle-down"]
                ),
                legend=None,
            ),
            tooltip=[
                alt.Tooltip(f"{task}:N", title="task"),
                alt.Tooltip("attempts_a:Q", title="attempts A"),
                alt.Tooltip("attempts_b:Q", title="attempts B"),
                alt.Tooltip("pass_rate_a:Q", format=PCT1, title="pass rate A"),
                alt.Tooltip("pass_rate_b:Q", format=PCT1, title="pass rate B"),
                alt.Tooltip("mean_reward_a:Q", format=".3f", title="mean reward A"),
                alt.Tooltip("mean_reward_b:Q", format=".3f", title="mean reward B"),
                alt.Tooltip("mean_cost_a:Q", format=USD, title="mean cost A"),
                alt.Tooltip("mean_cost_b:Q", format=USD, title="mean cost B"),
            ],
        )
    )


def _outcome_domain(trans: pl.DataFrame, a_col: str, b_col: str) -> list[str]:
    """The outcomes on either side: known ones in OUTCOME_ORDER, then the others by name."""
    present = set(trans[a_col].to_list()) | set(trans[b_col].to_list())
    return [o for o in OUTCOME_ORDER if o in present] + sorted(
        str(o) for o in present - set(OUTCOME_ORDER) if o is not None
    )


def transitions_chart(
    trans: pl.DataFrame | pl.LazyFrame,
    a_col: str = "outcome_a",
    b_col: str = "outcome_b",
    count_col: str = "count",
    *,
    a_label: str = "A",
    b_label: str = "B",
    title: str = "Outcome transitions A -> B",
    unit: str = "tasks",
) -> Chart:
    """Counts of (outcome in A, outcome in B) as a grid; the diagonal is 'unchanged'."""
    trans = frame(trans, a_col, b_col, count_col).filter(pl.col(count_col) > 0)
    if trans.height == 0:
        return empty_chart("Nothing to compare.", title)
    dom = _outcome_domain(trans, a_col, b_col)
    top = max(1, trans[count_col].max())
    t = trans.with_columns((pl.col(count_col) > top * 0.55).alias("_dark"))
    base = alt.Chart(data(t)).encode(
        x=alt.X(
            f"{b_col}:N",
            sort=dom,
            scale=alt.Scale(domain=dom),
            title="outcome in B (candidate)",
            axis=alt.Axis(orient="top", labelAngle=0),
        ),
        y=alt.Y(
            f"{a_col}:N", sort=dom, scale=alt.Scale(domain=dom), title="outcome in A (baseline)"
        ),
    )
    tips = [
        alt.Tooltip(f"{a_col}:N", title="in A"),
        alt.Tooltip(f"{b_col}:N", title="in B"),
        alt.Tooltip(f"{count_col}:Q", title=unit),
    ]
    rect = base.mark_rect(stroke="white").encode(
        color=alt.Color(
            f"{count_col}:Q", scale=alt.Scale(scheme="blues", domain=[0, top]), legend=None
        ),
        tooltip=tips,
    )
    text = base.mark_text(fontSize=13, fontWeight="bold").encode(
        text=f"{count_col}:Q",
        color=alt.condition("datum._dark", alt.value("white"), alt.value("black")),
        tooltip=tips,
    )
    side = max(160, 58 * len(dom))
    return (rect + text).properties(
        width=side,
        height=side,
        title=alt.Title(
            title,
            subtitle=[
                f"A: {short_label(a_label, 60)}",
                f"B: {short_label(b_label, 60)}",
                *wrap_title(
                    f"{unit} per (outcome in A, outcome in B); the diagonal is unchanged", 60
                ),
            ],
        ),
    )
