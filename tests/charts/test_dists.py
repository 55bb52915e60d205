"""Distribution box plots (the quantiles they draw, which values a log scale drops, when
single trials are dots, empty input) and the pass@k / pass^k curves' data and encodings."""

from __future__ import annotations

import polars as pl
import pytest

from evalkit.charts import dists


def _spec(chart) -> dict:
    return chart.to_dict()


def _box_rows(spec: dict) -> dict[str, dict]:
    """The per-run quantile rows of a distribution chart (the layers' shared data)."""
    rows = spec["data"]["values"] if "data" in spec else spec["layer"][0]["data"]["values"]
    return {r["run"]: r for r in rows}


def _points(spec: dict) -> list[dict]:
    """Rows of the single-trial dots layer (the circle mark), [] when there is none."""
    for layer in spec.get("layer", []):
        if layer["mark"]["type"] == "circle":
            return layer["data"]["values"]
    return []


def _frame() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "run": ["a"] * 4 + ["b"] * 3 + ["c"],
            "v": [1.0, 2.0, 3.0, 10.0, 0.0, 4.0, None, None],
            "task_name": ["w", "x", "y", "z", "w", "x", "y", "w"],
        }
    )


def test_box_plot_draws_the_quantiles_per_run() -> None:
    spec = _spec(dists.distribution(_frame(), "v"))
    q = _box_rows(spec)
    # run a: 1, 2, 3, 10. Linear quantiles: q1 at position 0.75 -> 1.75, median 2.5,
    # q3 at position 2.25 -> 3 + 0.25 * 7 = 4.75; mean 16 / 4 = 4.
    # run b: 0 and 4 (the null is not a value): q1 1, median 2, q3 3, mean 2.
    # run c has no value at all: no box.
    assert set(q) == {"a", "b"}
    assert {k: q["a"][k] for k in ("n", "min", "q1", "median", "q3", "max", "mean")} == {
        "n": 4, "min": 1.0, "q1": 1.75, "median": 2.5, "q3": 4.75, "max": 10.0, "mean": 4.0,
    }  # fmt: skip
    assert {k: q["b"][k] for k in ("n", "min", "q1", "median", "q3", "max", "mean")} == {
        "n": 2, "min": 0.0, "q1": 1.0, "median": 2.0, "q3": 3.0, "max": 4.0, "mean": 2.0,
    }  # fmt: skip
    whisk, box, med = spec["layer"][:3]
    assert (whisk["encoding"]["x"]["field"], whisk["encoding"]["x2"]["field"]) == ("min", "max")
    assert (box["encoding"]["x"]["field"], box["encoding"]["x2"]["field"]) == ("q1", "q3")
    assert med["encoding"]["x"]["field"] == "median"
    assert whisk["encoding"]["y"]["sort"] == ["a", "b"]  # c is not on the axis
    assert whisk["encoding"]["x"]["scale"] == {"zero": True}
    # 6 trials with a value, each a dot (few trials per run)
    assert spec["title"] == {
        "text": "v",
        "subtitle": [
            "6 trials; box: middle half, black tick: median, line: min to max; dots: single trials"
        ],
    }
    assert sorted((p["run"], p["v"], p["task_name"]) for p in _points(spec)) == [
        ("a", 1.0, "w"), ("a", 2.0, "x"), ("a", 3.0, "y"), ("a", 10.0, "z"),
        ("b", 0.0, "w"), ("b", 4.0, "x"),
    ]  # fmt: skip


def test_log_scale_drops_values_that_are_not_positive() -> None:
    spec = _spec(dists.distribution(_frame(), "v", log=True, axis_title="secs"))
    q = _box_rows(spec)
    # b keeps only 4 (0 cannot be drawn on a log scale)
    assert (q["b"]["n"], q["b"]["min"], q["b"]["max"]) == (1, 4.0, 4.0)
    assert q["a"]["n"] == 4
    x = spec["layer"][0]["encoding"]["x"]
    assert x["scale"] == {"type": "log"} and x["title"] == "secs"
    assert spec["title"]["subtitle"][-1].endswith("dots: single trials; log scale")
    assert 0.0 not in [p["v"] for p in _points(spec)]


def test_only_runs_with_few_trials_get_dots(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dists, "POINTS_UP_TO", 3)
    spec = _spec(dists.distribution(_frame(), "v"))
    # a has 4 values (> 3): box only; b has 2: its dots are drawn
    assert sorted(p["v"] for p in _points(spec)) == [0.0, 4.0]
    assert {p["run"] for p in _points(spec)} == {"b"}
    monkeypatch.setattr(dists, "POINTS_UP_TO", 1)
    spec = _spec(dists.distribution(_frame(), "v"))
    assert _points(spec) == [] and len(spec["layer"]) == 3
    assert "dots" not in " ".join(spec["title"]["subtitle"])


def test_no_value_at_all_is_a_message() -> None:
    df = _frame().with_columns(pl.lit(None, pl.Float64).alias("v"))
    spec = _spec(dists.distribution(df, "v", title="Cost"))
    assert spec["data"]["values"] == [{"m": "No trial has a value for v."}]
    assert spec["title"] == "Cost" and spec["mark"]["type"] == "text"
    # the same with a log scale when nothing is positive
    neg = _frame().with_columns(pl.lit(-1.0).alias("v"))
    assert _spec(dists.distribution(neg, "v", log=True))["data"]["values"] == [
        {"m": "No trial has a value for v."}
    ]


def test_duration_is_in_minutes_on_a_log_scale() -> None:
    df = pl.DataFrame({"run": ["r", "r", "r"], "duration_s": [60.0, 180.0, 600.0]})
    spec = _spec(dists.duration_dist(df))
    # 60 s, 3 min, 10 min: median 3 minutes
    r = _box_rows(spec)["r"]
    assert (r["min"], r["median"], r["max"]) == (1.0, 3.0, 10.0)
    x = spec["layer"][0]["encoding"]["x"]
    assert x["title"] == "trial duration (minutes, log scale)" and x["scale"] == {"type": "log"}
    assert spec["title"]["text"] == "Trial duration per run"
    assert spec["layer"][0]["encoding"]["tooltip"][2]["format"] == ",.1f"


def test_turns_use_n_turns_then_n_steps() -> None:
    df = pl.DataFrame({"run": ["r"] * 3, "n_turns": [4, None, 8], "n_steps": [40, 6, 80]})
    r = _box_rows(_spec(dists.turns_dist(df)))["r"]
    # turns 4, 6 (from n_steps), 8
    assert (r["n"], r["min"], r["median"], r["max"]) == (3, 4.0, 6.0, 8.0)
    only_steps = pl.DataFrame({"run": ["r", "r"], "n_steps": [2, 4]})
    assert _box_rows(_spec(dists.turns_dist(only_steps)))["r"]["mean"] == 3.0
    with pytest.raises(ValueError, match="n_turns or n_steps"):
        dists.turns_dist(pl.DataFrame({"run": ["r"], "reward": [1.0]}))


def test_pass_at_k_curves_plot_the_estimates_for_tasks_with_k_attempts() -> None:
    df = pl.DataFrame(
        {"run": ["r1"] * 6, "task_name": ["t1"] * 4 + ["t2"] * 2,
         "reward": [1.0, 0.0, 0.0, 1.0, 1.0, 1.0]}
    )  # fmt: skip
    spec = _spec(dists.pass_at_k_curves(df))
    got = {
        (r["metric"], r["k"]): (round(r["value"], 6), r["tasks"]) for r in spec["data"]["values"]
    }
    # t1: 2 of 4 pass; t2: 2 of 2. k=1: (0.5 + 1) / 2. k=2 (both tasks): pass@2 for t1 is
    # 1 - C(2,2)/C(4,2) = 5/6, pass^2 = C(2,2)/C(4,2) = 1/6, t2 1 -> 11/12 and 7/12.
    # k=3, 4: t1 only; it cannot fail 3 times (2 fails) and cannot pass 3 times: 1 and 0
    assert got == {
        ("pass@k", 1): (0.75, 2), ("pass@k", 2): (round(11 / 12, 6), 2),
        ("pass@k", 3): (1.0, 1), ("pass@k", 4): (1.0, 1),
        ("pass^k", 1): (0.75, 2), ("pass^k", 2): (round(7 / 12, 6), 2),
        ("pass^k", 3): (0.0, 1), ("pass^k", 4): (0.0, 1),
    }  # fmt: skip
    enc = spec["encoding"]
    assert enc["x"]["field"] == "k" and enc["x"]["type"] == "ordinal"
    assert enc["y"]["field"] == "value" and enc["y"]["scale"] == {"domain": [0, 1]}
    assert enc["strokeDash"]["scale"] == {"domain": ["pass@k", "pass^k"], "range": [[1, 0], [5, 3]]}
    assert enc["detail"]["field"] == "run"
    assert spec["mark"] == {"type": "line", "point": True}


def test_pass_at_k_curves_without_trials_say_so() -> None:
    empty = pl.DataFrame(schema={"run": pl.String, "task_name": pl.String, "reward": pl.Float64})
    spec = _spec(dists.pass_at_k_curves(empty, title="curves"))
    assert spec["data"]["values"] == [{"m": "No trials."}] and spec["title"] == "curves"
