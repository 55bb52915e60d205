"""evalkit.charts.runs: per-run charts from trial frames (pass rate with CI, outcome and
error-kind bars, cost vs pass rate with its Pareto frontier).

Checked on the Vega-Lite spec: the plotted rows (counts, shares, means derived by hand),
which field each channel encodes, the run sort order, colour scales, titles / subtitles,
tooltips and heights; the Pareto frontier against its definition. What test_charts.py and
test_many_runs.py already check (every chart builds, the basic frontier, empty inputs, the
legend of the cost chart) is not repeated.
"""

from __future__ import annotations

from datetime import UTC, datetime

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalkit.charts._style import ERROR_KIND_COLORS, OUTCOME_COLORS, RUN_COLORS
from evalkit.charts.runs import (
    cost_vs_pass,
    error_kind_bars,
    outcome_bars,
    pareto_front,
    pass_rate_ci,
    run_summary,
)


def _values(spec: dict) -> list[dict]:
    return spec["data"]["values"]


def _tips(enc: dict) -> dict[str, dict]:
    return {t["field"]: t for t in enc["tooltip"]}


def _summary() -> pl.DataFrame:
    return pl.DataFrame({
        "run": ["b", "a"], "pass_rate": [0.5, 0.25], "ci_low": [0.2, 0.1],
        "ci_high": [0.8, 0.6], "n_trials": [4, 8], "ci_method": ["wilson", "wilson"],
    })  # fmt: skip


# -- run_summary ------------------------------------------------------------------------------


def test_run_summary_returns_a_summary_frame_unchanged() -> None:
    s = _summary()
    assert run_summary(s).equals(s)
    assert run_summary(s.lazy()).equals(s)


def test_run_summary_summarises_trials_per_group() -> None:
    t = pl.DataFrame({
        "model": ["m1", "m1", "m1", "m2"], "task_name": ["x", "y", "z", "x"],
        "reward": [1.0, 0.0, 1.0, None],
    })  # fmt: skip
    s = run_summary(t, by="model").sort("model")
    assert s["model"].to_list() == ["m1", "m2"]
    assert s["n_trials"].to_list() == [3, 1]
    # m1: 2 of 3 trials pass; m2: the null reward is a failure
    assert s["pass_rate"].to_list() == pytest.approx([2 / 3, 0.0])


# -- pass_rate_ci -----------------------------------------------------------------------------


def test_pass_rate_ci_plots_a_summary_as_given_sorted_by_run_name() -> None:
    spec = pass_rate_ci(_summary()).to_dict()
    rows = {r["run"]: r for r in _values(spec)}
    assert rows["a"] == {
        "run": "a", "pass_rate": 0.25, "ci_low": 0.1, "ci_high": 0.6, "n_trials": 8,
        "ci_method": "wilson", "_label": "a", "_colour": "a",
    }  # fmt: skip
    rule, point, label = spec["layer"]
    assert rule["mark"]["type"] == "rule" and point["mark"]["type"] == "point"
    assert label["mark"]["type"] == "text"
    # the interval bar spans ci_low .. ci_high on a 0-1 axis, the point sits at pass_rate
    assert (
        rule["encoding"]["x"]["field"] == "ci_low" and rule["encoding"]["x2"]["field"] == "ci_high"
    )
    assert rule["encoding"]["x"]["scale"]["domain"] == [0, 1]
    assert point["encoding"]["x"]["field"] == "pass_rate"
    assert label["encoding"]["text"] == {
        "field": "pass_rate",
        "format": ".1%",
        "type": "quantitative",
    }
    # no order and no start times: runs by name
    for layer in (rule, point, label):
        assert layer["encoding"]["y"]["sort"] == ["a", "b"]
    assert spec["height"] == 68  # 2 runs * 34
    assert spec["title"] == {
        "text": "Pass rate per run",
        "subtitle": ["points: pass rate; bars: 95% interval (wilson)"],
    }


def test_pass_rate_ci_tooltips_name_the_figures() -> None:
    spec = pass_rate_ci(_summary()).to_dict()
    tips = _tips(spec["layer"][1]["encoding"])
    assert list(tips) == ["run", "pass_rate", "ci_low", "ci_high", "ci_method", "n_trials"]
    assert tips["pass_rate"]["format"] == ".1%" and tips["pass_rate"]["title"] == "pass rate"
    assert tips["n_trials"] == {
        "field": "n_trials",
        "format": "d",
        "title": "trials",
        "type": "quantitative",
    }
    assert tips["ci_method"]["title"] == "CI method"


def test_pass_rate_ci_without_a_method_column_says_ci() -> None:
    s = _summary().drop("ci_method", "n_trials")
    spec = pass_rate_ci(s, confidence=0.9, title="T").to_dict()
    assert spec["title"] == {
        "text": "T",
        "subtitle": ["points: pass rate; bars: 90% interval (CI)"],
    }
    assert list(_tips(spec["layer"][0]["encoding"])) == ["run", "pass_rate", "ci_low", "ci_high"]


def test_pass_rate_ci_follows_the_given_order_and_colours() -> None:
    spec = pass_rate_ci(_summary(), order=["b", "a"]).to_dict()
    assert spec["layer"][0]["encoding"]["y"]["sort"] == ["b", "a"]
    scale = spec["layer"][1]["encoding"]["color"]["scale"]
    assert scale == {"domain": ["b", "a"], "range": [RUN_COLORS[0], RUN_COLORS[1]]}


def test_pass_rate_ci_of_trials_orders_runs_by_first_start() -> None:
    early, late = datetime(2026, 1, 1, tzinfo=UTC), datetime(2026, 2, 1, tzinfo=UTC)
    t = pl.DataFrame({
        "run": ["new"] * 2 + ["old"] * 4,
        "task_name": ["x", "y", "x", "y", "z", "w"],
        "reward": [1.0, 1.0, 1.0, 0.0, 1.0, 1.0],
        "started_at": [late] * 2 + [early] * 4,
    })  # fmt: skip
    spec = pass_rate_ci(t).to_dict()
    assert spec["layer"][0]["encoding"]["y"]["sort"] == ["old", "new"]  # not by name
    rows = {r["run"]: r for r in _values(spec)}
    # old: 3 of 4 pass, new: 2 of 2
    assert rows["old"]["pass_rate"] == pytest.approx(0.75) and rows["old"]["n_trials"] == 4
    assert rows["new"]["pass_rate"] == pytest.approx(1.0) and rows["new"]["n_tasks"] == 2
    methods = {r["ci_method"] for r in rows.values()}
    assert all(m in spec["title"]["subtitle"][0] for m in methods)


# -- outcome_bars -----------------------------------------------------------------------------


def _outcome_trials() -> pl.DataFrame:
    return pl.DataFrame({
        "run": ["a", "a", "a", "b"],
        "task_name": ["x", "y", "x", "x"],
        "outcome": ["fail", "fail", "pass", "timeout"],
    })  # fmt: skip


def test_outcome_bars_count_trials_tasks_and_shares_per_run() -> None:
    spec = outcome_bars(_outcome_trials()).to_dict()
    got = {(r["run"], r["outcome"]): (r["trials"], r["tasks"], r["share"]) for r in _values(spec)}
    # a: 2 of 3 trials fail (tasks x and y), 1 of 3 passes; b: its only trial timed out
    assert got == {
        ("a", "fail"): (2, 2, pytest.approx(2 / 3)),
        ("a", "pass"): (1, 1, pytest.approx(1 / 3)),
        ("b", "timeout"): (1, 1, 1.0),
    }


def test_outcome_bars_stack_in_the_fixed_outcome_order() -> None:
    spec = outcome_bars(_outcome_trials()).to_dict()
    enc = spec["encoding"]
    # stack order: pass (0), fail (2), timeout (3) as in OUTCOME_ORDER
    assert {r["outcome"]: r["_o"] for r in _values(spec)} == {"pass": 0, "fail": 2, "timeout": 3}
    assert enc["order"] == {"field": "_o", "type": "quantitative"}
    assert enc["color"]["scale"] == {
        "domain": ["pass", "fail", "timeout"],
        "range": [OUTCOME_COLORS["pass"], OUTCOME_COLORS["fail"], OUTCOME_COLORS["timeout"]],
    }
    assert enc["x"]["field"] == "share" and enc["x"]["stack"] == "zero"
    assert enc["x"]["axis"] == {"format": ".0%"} and enc["x"]["title"] == "share of trials"
    assert enc["y"]["sort"] == ["a", "b"] and spec["height"] == 60  # 2 * 30
    assert spec["title"]["text"] == "Outcomes per run"
    assert list(_tips(enc)) == ["run", "outcome", "trials", "tasks", "share"]
    assert _tips(enc)["tasks"]["title"] == "tasks affected"


def test_outcome_bars_show_counts_when_not_normalised() -> None:
    spec = outcome_bars(_outcome_trials(), normalize=False, order=["b", "a"]).to_dict()
    x = spec["encoding"]["x"]
    assert x["field"] == "trials" and x["title"] == "trials" and "format" not in x.get("axis", {})
    assert spec["encoding"]["y"]["sort"] == ["b", "a"]


def test_outcome_bars_without_task_names_leave_tasks_unknown() -> None:
    spec = outcome_bars(_outcome_trials().drop("task_name")).to_dict()
    assert {r["tasks"] for r in _values(spec)} == {None}


def test_outcome_bars_need_an_outcome_column() -> None:
    with pytest.raises(ValueError, match="outcome"):
        outcome_bars(pl.DataFrame({"run": ["a"]}))


# -- error_kind_bars --------------------------------------------------------------------------


def test_error_kind_bars_count_errors_against_all_trials_of_the_run() -> None:
    t = pl.DataFrame({
        "run": ["a", "a", "a", "a", "b", "b"],
        "task_name": ["x", "y", "x", "z", "x", "y"],
        "error_kind": ["none", "agent", "agent", "infra", "none", "none"],
    })  # fmt: skip
    spec = error_kind_bars(t).to_dict()
    got = {
        (r["run"], r["error_kind"]): (r["trials"], r["tasks"], r["share"]) for r in _values(spec)
    }
    # a: 2 agent errors (tasks y, x) and 1 infra of its 4 trials; b has no error at all
    assert got == {("a", "agent"): (2, 2, 0.5), ("a", "infra"): (1, 1, 0.25)}
    enc = spec["encoding"]
    assert enc["color"]["scale"] == {
        "domain": ["agent", "infra"],
        "range": [ERROR_KIND_COLORS["agent"], ERROR_KIND_COLORS["infra"]],
    }
    assert enc["x"]["field"] == "trials" and enc["x"]["axis"] == {"format": "d", "tickMinStep": 1}
    assert enc["y"]["sort"] == ["a", "b"]  # the error-free run keeps its row
    assert spec["title"]["text"] == "Errors by kind per run"
    assert _tips(enc)["share"]["title"] == "share of the run's trials"


# -- pareto_front -----------------------------------------------------------------------------


def test_pareto_front_on_equal_cost_keeps_the_better_point() -> None:
    df = pl.DataFrame({"run": ["a", "b", "c"], "x": [1.0, 1.0, 2.0], "y": [0.3, 0.6, 0.6]})
    # b beats a at the same cost; c is as good as b but dearer
    assert pareto_front(df, "x", "y")["run"].to_list() == ["b"]


def test_pareto_front_of_no_complete_point_is_empty() -> None:
    df = pl.DataFrame({"run": ["a"], "x": [None], "y": [0.5]}, schema_overrides={"x": pl.Float64})
    out = pareto_front(df, "x", "y")
    assert out.height == 0 and out.columns == ["run", "x", "y"]


@given(
    st.lists(
        st.tuples(st.integers(0, 20), st.integers(0, 20)), min_size=1, max_size=25, unique=True
    )
)
def test_pareto_front_is_the_set_of_undominated_points(points) -> None:
    df = pl.DataFrame({"x": [float(p[0]) for p in points], "y": [float(p[1]) for p in points]})
    front = pareto_front(df, "x", "y")
    got = list(zip(front["x"].to_list(), front["y"].to_list(), strict=True))

    def dominated(p: tuple[float, float]) -> bool:
        return any(q[0] <= p[0] and q[1] >= p[1] and (q[0] < p[0] or q[1] > p[1]) for q in points)

    want = {(float(x), float(y)) for x, y in points if not dominated((x, y))}
    assert set(got) == want
    assert [p[0] for p in got] == sorted(p[0] for p in got)  # sorted by cost


# -- cost_vs_pass -----------------------------------------------------------------------------


def _cost_trials() -> pl.DataFrame:
    return pl.DataFrame({
        "run": ["a"] * 4 + ["b"] * 2 + ["c"] * 2 + ["d"] * 2,
        "reward": [1.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.5, None, 0.0, 1.0],
        "cost_usd": [0.1, 0.3, None, 0.2, 0.5, 0.3, 0.05, 0.15, 0.5, 0.7],
        "n_input_tokens": [100, 300, None, 200, 500, 300, 50, 150, 500, 700],
    })  # fmt: skip


def test_cost_vs_pass_plots_mean_cost_and_pass_rate_per_run() -> None:
    spec = cost_vs_pass(_cost_trials()).to_dict()
    line, points = spec["layer"]
    rows = {r["run"]: r for r in points["data"]["values"]}
    # a: cost mean of 0.1, 0.3, 0.2 (the null is not a zero) = 0.2, total 0.6, 2/4 pass
    assert rows["a"]["cost"] == pytest.approx(0.2) and rows["a"]["total"] == pytest.approx(0.6)
    assert (rows["a"]["trials"], rows["a"]["priced"]) == (4, 3)
    assert rows["a"]["pass_rate"] == pytest.approx(0.5)
    # b: (0.5 + 0.3) / 2 = 0.4, both pass
    assert rows["b"]["cost"] == pytest.approx(0.4) and rows["b"]["pass_rate"] == 1.0
    # c: reward 0.5 is not a pass; mean reward (0.5 + 0) / 2 with the null as 0
    assert rows["c"]["pass_rate"] == 0.0 and rows["c"]["mean_reward"] == pytest.approx(0.25)
    # d: cost 0.6, pass 0.5: dominated by b (cheaper and better) -> not on the frontier
    front = [(p["cost"], p["pass_rate"]) for p in line["data"]["values"]]
    assert front == [
        (pytest.approx(0.1), 0.0), (pytest.approx(0.2), 0.5), (pytest.approx(0.4), 1.0),
    ]  # fmt: skip
    assert line["mark"]["interpolate"] == "step-after" and line["mark"]["strokeDash"] == [5, 3]


def test_cost_vs_pass_axes_titles_and_tooltips() -> None:
    spec = cost_vs_pass(_cost_trials()).to_dict()
    enc = spec["layer"][1]["encoding"]
    assert enc["x"]["field"] == "cost" and enc["x"]["title"] == "mean cost per trial (USD)"
    assert enc["x"]["axis"] == {"format": "$.3~r"}  # the USD default
    assert enc["y"]["field"] == "pass_rate" and enc["y"]["scale"] == {"domain": [0, 1]}
    tips = _tips(enc)
    assert list(tips) == ["run", "pass_rate", "mean_reward", "cost", "total", "trials", "priced"]
    assert tips["cost"]["format"] == "$,.4f" and tips["priced"]["title"] == "trials with cost_usd"
    assert spec["title"]["text"] == "Cost vs pass rate" and spec["height"] == 320
    assert spec["title"]["subtitle"] == [
        "line: Pareto frontier (no other run is both cheaper and better)"
    ]


def test_cost_vs_pass_on_another_numeric_column() -> None:
    spec = cost_vs_pass(
        _cost_trials(), cost="n_input_tokens", cost_title="mean input tokens", cost_format=",d"
    ).to_dict()
    enc = spec["layer"][1]["encoding"]
    assert enc["x"]["axis"] == {"format": ",d"} and enc["x"]["title"] == "mean input tokens"
    assert _tips(enc)["priced"]["title"] == "trials with n_input_tokens"
    rows = {r["run"]: r["cost"] for r in spec["layer"][1]["data"]["values"]}
    assert rows["a"] == pytest.approx(200.0)  # (100 + 300 + 200) / 3
    custom = cost_vs_pass(_cost_trials(), axis_format="$.2f").to_dict()
    assert custom["layer"][0]["encoding"]["x"]["axis"] == {"format": "$.2f"}
