"""Per-task charts: the (run, task) cells and their figures, the heatmap's order, cell text
and size, the A/B task table (side, delta), the scatter's jittered points and what it leaves
out, and the transition grid's domain, colours and dropped empty cells."""

from __future__ import annotations

import polars as pl
import pytest

from evalkit.charts import tasks as T


def _frame() -> pl.DataFrame:
    """A: t1 pass + fail, one trial without a task name (pass).
    B: t1 pass; t2 a null reward (error) and a 0.5 (partial: not a pass)."""
    return pl.DataFrame(
        {
            "run": ["A", "A", "A", "B", "B", "B"],
            "task_name": ["t1", "t1", None, "t1", "t2", "t2"],
            "reward": [1.0, 0.0, 1.0, 1.0, None, 0.5],
            "outcome": ["pass", "fail", "pass", "pass", "error", "partial"],
            "cost_usd": [0.1, 0.3, None, 0.2, 0.2, 0.4],
        }
    )


def _cells() -> dict[tuple[str, str], dict]:
    return {(r["run"], r["task_name"]): r for r in T.task_cells(_frame()).iter_rows(named=True)}


def test_task_cells_figures_per_run_and_task() -> None:
    c = _cells()
    assert set(c) == {("A", "t1"), ("A", "(unknown task)"), ("B", "t1"), ("B", "t2")}
    a1 = c["A", "t1"]
    assert (a1["attempts"], a1["passes"], a1["pass_rate"], a1["mean_reward"]) == (2, 1, 0.5, 0.5)
    assert a1["mean_cost"] == pytest.approx(0.2) and a1["outcomes"] == "fail, pass"  # sorted
    # t2 in B: no pass (0.5 is partial, null is a fail); mean reward (0 + 0.5) / 2
    b2 = c["B", "t2"]
    assert (b2["passes"], b2["pass_rate"], b2["mean_reward"]) == (0, 0.0, 0.25)
    assert b2["mean_cost"] == pytest.approx(0.3) and b2["outcomes"] == "error, partial"
    unknown = c["A", "(unknown task)"]
    assert (unknown["attempts"], unknown["passes"], unknown["mean_cost"]) == (1, 1, None)


def test_task_cells_without_cost_or_outcome_columns() -> None:
    df = _frame().drop("cost_usd", "outcome")
    row = (
        T.task_cells(df)
        .filter(pl.col("task_name") == "t1", pl.col("run") == "A")
        .row(0, named=True)
    )
    assert row["mean_cost"] is None and row["outcomes"] is None and row["passes"] == 1


def test_heatmap_orders_tasks_and_labels_cells() -> None:
    spec = T.task_heatmap(_frame()).to_dict()
    rect, text = spec["layer"]
    # pooled over runs: t2 0/2, t1 2/3, (unknown task) 1/1 -> hardest first
    assert rect["encoding"]["y"]["sort"] == ["t2", "t1", "(unknown task)"]
    assert rect["encoding"]["x"]["sort"] == ["A", "B"]
    assert rect["encoding"]["color"]["field"] == "pass_rate"
    assert rect["encoding"]["color"]["scale"] == {"domain": [0, 1], "scheme": "viridis"}
    cells = {(r["run"], r["task_name"]): (r["label"], r["_dark"]) for r in spec["data"]["values"]}
    # label passes/attempts; white text below a 55 % pass rate
    assert cells == {
        ("A", "t1"): ("1/2", True),
        ("A", "(unknown task)"): ("1/1", False),
        ("B", "t1"): ("1/1", False),
        ("B", "t2"): ("0/2", True),
    }
    assert text["encoding"]["text"]["field"] == "label"
    assert text["encoding"]["color"]["condition"] == {"test": "datum._dark", "value": "white"}
    # 2 runs: 110 px each, floor 160; 3 tasks at 18 px = 54
    assert (spec["width"], spec["height"]) == (220, 54)
    assert spec["title"]["subtitle"] == [
        "3 tasks, hardest first; cell text: passes / attempts; blank:", "not run",
    ]  # fmt: skip


def test_heatmap_drops_cell_text_beyond_eight_runs() -> None:
    df = pl.DataFrame(
        {"run": [f"r{i}" for i in range(9)], "task_name": ["t"] * 9, "reward": [1.0] * 9}
    )
    spec = T.task_heatmap(df).to_dict()
    assert "layer" not in spec and spec["mark"]["type"] == "rect"
    assert spec["width"] == 560  # 9 * 110 capped at the chart width
    with_text = T.task_heatmap(df, cell_text=True).to_dict()
    assert [lay["mark"]["type"] for lay in with_text["layer"]] == ["rect", "text"]
    empty = T.task_heatmap(df.clear()).to_dict()
    assert empty["data"]["values"] == [{"m": "No trials."}]


def test_ab_tasks_sides_and_delta() -> None:
    ab = {r["task_name"]: r for r in T.ab_tasks(_frame(), "A", "B").iter_rows(named=True)}
    assert list(ab) == ["(unknown task)", "t1", "t2"]  # sorted by name
    assert ab["t1"]["side"] == "both" and ab["t1"]["delta"] == 0.5  # 1.0 - 0.5
    assert ab["(unknown task)"]["side"] == "a_only" and ab["(unknown task)"]["delta"] is None
    assert ab["t2"]["side"] == "b_only" and ab["t2"]["attempts_a"] is None
    assert (ab["t2"]["attempts_b"], ab["t2"]["mean_reward_b"]) == (2, 0.25)


def test_ab_scatter_points_are_jittered_deterministically() -> None:
    df = pl.DataFrame(
        {
            "run": ["A", "A", "B", "B", "A", "B"],
            "task_name": ["t1", "t2", "t1", "t2", "t3", "t4"],
            "reward": [0.0, 1.0, 1.0, 1.0, 1.0, 0.0],
        }
    )
    spec = T.ab_scatter(df, "A", "B").to_dict()
    diag, pts = spec["layer"]
    assert diag["data"]["values"] == [{"v": 0}, {"v": 1}]
    rows = {r["task_name"]: r for r in pts["data"]["values"]}
    assert set(rows) == {"t1", "t2"}  # t3 only in A, t4 only in B
    # row 0 (t1): x offset (0 % 11 - 5) * 0.006 = -0.03, y (0 % 13 - 6) * 0.005 = -0.03;
    # row 1 (t2): 7919 % 11 = 10 -> +0.03, 104729 % 13 = 1 -> -0.025
    assert (rows["t1"]["_x"], rows["t1"]["_y"]) == pytest.approx((0.0 - 0.03, 1.0 - 0.03))
    assert (rows["t2"]["_x"], rows["t2"]["_y"]) == pytest.approx((1.0 + 0.03, 1.0 - 0.025))
    assert rows["t1"]["change"] == "B better" and rows["t2"]["change"] == "same"
    enc = pts["encoding"]
    assert (enc["x"]["field"], enc["y"]["field"], enc["size"]["field"]) == (
        "_x",
        "_y",
        "attempts_b",
    )
    assert enc["color"]["scale"]["domain"] == ["B better", "same", "A better"]
    assert enc["shape"]["scale"]["range"] == ["triangle-up", "circle", "triangle-down"]
    assert spec["title"]["subtitle"] == [
        "A: A", "B: B",
        "2 tasks compared; above the diagonal B does better; jittered",
        "slightly; 2 not shown (one run only, or not comparable)",
    ]  # fmt: skip


def test_ab_scatter_without_shared_tasks_says_so() -> None:
    df = pl.DataFrame({"run": ["A", "B"], "task_name": ["x", "y"], "reward": [1.0, 0.0]})
    spec = T.ab_scatter(df, "A", "B", title="AB").to_dict()
    assert spec["data"]["values"] == [{"m": "A and B have no task in common."}]
    assert spec["title"] == "AB"


def test_transitions_grid_domain_counts_and_colours() -> None:
    t = pl.DataFrame(
        {
            "outcome_a": ["pass", "fail", "weird", "pass"],
            "outcome_b": ["fail", "zzz", "pass", "pass"],
            "count": [2, 5, 1, 0],
        }
    )
    spec = T.transitions_chart(t, a_label="base", b_label="cand", unit="trials").to_dict()
    # the zero cell is not drawn; white text above 0.55 * max (5 -> above 2.75)
    assert spec["data"]["values"] == [
        {"outcome_a": "pass", "outcome_b": "fail", "count": 2, "_dark": False},
        {"outcome_a": "fail", "outcome_b": "zzz", "count": 5, "_dark": True},
        {"outcome_a": "weird", "outcome_b": "pass", "count": 1, "_dark": False},
    ]
    rect, text = spec["layer"]
    # known outcomes in OUTCOME_ORDER, then the others sorted; the same on both axes
    dom = ["pass", "fail", "weird", "zzz"]
    assert rect["encoding"]["x"]["scale"]["domain"] == dom and rect["encoding"]["x"]["sort"] == dom
    assert rect["encoding"]["y"]["scale"]["domain"] == dom
    assert rect["encoding"]["color"]["scale"] == {"domain": [0, 5], "scheme": "blues"}
    assert text["encoding"]["text"]["field"] == "count"
    assert rect["encoding"]["tooltip"][2]["title"] == "trials"
    assert spec["width"] == spec["height"] == 232  # 58 px per outcome
    assert spec["title"]["subtitle"][:2] == ["A: base", "B: cand"]
    assert spec["title"]["subtitle"][2].startswith("trials per (outcome in A, outcome in B)")


def test_transitions_with_only_zero_counts_have_nothing_to_compare() -> None:
    t = pl.DataFrame({"outcome_a": ["pass"], "outcome_b": ["fail"], "count": [0]})
    spec = T.transitions_chart(t).to_dict()
    assert spec["data"]["values"] == [{"m": "Nothing to compare."}]
    assert spec["title"] == "Outcome transitions A -> B"
