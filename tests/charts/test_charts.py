"""evalkit.charts: every chart builds from Polars frames (eager or lazy), carries titles,
labels and tooltips, keeps outcome colours consistent, and survives hostile text."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta

import altair as alt
import polars as pl
import pytest

import evalkit
from evalkit import charts
from evalkit.charts import offline
from tests.conftest import HARBOR, SKILLSBENCH_JOB

HOSTILE = '</script><script>alert("x")</script>&<b>'


def _trials(
    n_tasks: int = 6, attempts: int = 3, runs: tuple[str, ...] = ("base", "cand")
) -> pl.DataFrame:
    rng = random.Random(1)
    rows = []
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    for ri, run in enumerate(runs):
        for ti in range(n_tasks):
            name = HOSTILE if ti == 0 else f"task-{ti}"
            for a in range(attempts):
                reward = (
                    1.0 if rng.random() < (ti + 1) / (n_tasks + 1) else rng.choice([0.0, 0.5, None])
                )
                outcome = {1.0: "pass", 0.5: "partial", 0.0: "fail", None: "error"}[reward]
                rows.append({
                    "run": run, "task_name": name, "attempt": a + 1, "reward": reward,
                    "outcome": outcome, "error_kind": "agent" if reward is None else "none",
                    "cost_usd": None if ri == 0 and a == 0 else 0.01 * (ri + 1),
                    "duration_s": 60.0 + 10 * a + ti, "n_turns": 3 + a, "n_steps": None,
                    "n_input_tokens": 1000 * (ri + 1), "started_at": t0 + timedelta(days=ri, minutes=a),
                })  # fmt: skip
    return pl.DataFrame(rows)


@pytest.fixture(scope="module")
def trials() -> pl.DataFrame:
    return _trials()


def _spec(ch: alt.TopLevelMixin) -> dict:
    return ch.to_dict()


def _dicts(x: object) -> list[dict]:
    """Every dict inside a chart spec, the spec first."""
    if isinstance(x, dict):
        return [x, *(d for v in x.values() for d in _dicts(v))]
    if isinstance(x, list):
        return [d for v in x for d in _dicts(v)]
    return []


def _tooltip_fields(spec: dict) -> set[str]:
    out: set[str] = set()
    for d in _dicts(spec):
        tip = d.get("tooltip")
        for t in tip if isinstance(tip, list) else ([tip] if isinstance(tip, dict) else []):
            if isinstance(t, dict) and "field" in t:
                out.add(t["field"])
    return out


def _rows(spec: dict) -> list[dict]:
    """Every inline data row of a chart spec (top level and layers)."""
    return [
        row
        for d in _dicts(spec)
        if isinstance(d.get("values"), list)
        for row in d["values"]
        if isinstance(row, dict)
    ]


def _title(spec: dict) -> str:
    t = spec.get("title")
    return t.get("text") if isinstance(t, dict) else t


def test_every_chart_builds_with_title_and_tooltips(trials: pl.DataFrame) -> None:
    built = {
        "outcomes": charts.outcome_bars(trials),
        "errors": charts.error_kind_bars(trials),
        "cost": charts.cost_vs_pass(trials),
        "duration": charts.duration_dist(trials),
        "turns": charts.turns_dist(trials),
        "heatmap": charts.task_heatmap(trials),
        "scatter": charts.ab_scatter(trials, "base", "cand"),
        "pass_rate": charts.pass_rate_ci(trials),
        "passk": charts.pass_at_k_curves(trials),
    }
    for name, ch in built.items():
        spec = _spec(ch)
        assert _title(spec), name
        assert _tooltip_fields(spec), f"{name} has no tooltip"
        json.dumps(spec, allow_nan=False)  # serialisable, no NaN
    assert {"task_name", "attempts", "mean_reward", "mean_cost"} <= _tooltip_fields(
        _spec(built["heatmap"])
    )
    assert {"task_name", "attempts_a", "attempts_b", "mean_cost_b"} <= _tooltip_fields(
        _spec(built["scatter"])
    )


def test_lazyframes_go_in_directly(trials: pl.DataFrame) -> None:
    lazy = trials.lazy()
    a = _spec(charts.task_heatmap(lazy))
    b = _spec(charts.task_heatmap(trials))
    assert a == b
    _spec(charts.outcome_bars(lazy))
    _spec(charts.pass_rate_ci(lazy))


def test_outcome_colours_are_the_same_everywhere(trials: pl.DataFrame) -> None:
    spec = _spec(charts.outcome_bars(trials))
    scale = spec["encoding"]["color"]["scale"]
    assert dict(zip(scale["domain"], scale["range"], strict=True)) == {
        o: charts.OUTCOME_COLORS[o] for o in scale["domain"]
    }
    assert len(set(charts.OUTCOME_COLORS.values())) == len(charts.OUTCOME_COLORS)


def test_heatmap_sorts_tasks_hardest_first(trials: pl.DataFrame) -> None:
    spec = _spec(charts.task_heatmap(trials))
    order = spec["layer"][0]["encoding"]["y"]["sort"]
    rate = trials.group_by("task_name").agg((pl.col("reward").fill_null(0) >= 1).mean().alias("r"))
    rates = dict(rate.iter_rows())
    assert [rates[t] for t in order] == sorted(rates[t] for t in order)


def test_pareto_front_keeps_only_undominated_points() -> None:
    df = pl.DataFrame(
        {
            "run": list("abcde"),
            "cost": [1.0, 2.0, 3.0, 2.5, None],
            "pass_rate": [0.5, 0.7, 0.6, 0.9, 1.0],
        }
    )
    front = charts.pareto_front(df, "cost", "pass_rate")
    assert front["run"].to_list() == ["a", "b", "d"]


def test_pass_at_k_frame_matches_the_estimator(trials: pl.DataFrame) -> None:
    df = pl.DataFrame({"run": ["r"] * 4, "task_name": ["t"] * 4, "reward": [1.0, 0.0, 0.0, 1.0]})
    pk = charts.pass_at_k_frame(df)
    at = dict(pk.filter(pl.col("metric") == "pass@k").select("k", "value").iter_rows())
    hat = dict(pk.filter(pl.col("metric") == "pass^k").select("k", "value").iter_rows())
    assert (
        at[1] == pytest.approx(0.5)
        and at[2] == pytest.approx(1 - 1 / 6)
        and at[4] == pytest.approx(1.0)
    )
    assert hat[2] == pytest.approx(1 / 6) and hat[4] == pytest.approx(0.0)


def test_empty_inputs_say_why(trials: pl.DataFrame) -> None:
    none = trials.with_columns(pl.lit("none").alias("error_kind"))
    spec = _spec(charts.error_kind_bars(none))
    assert "No trial recorded an exception" in json.dumps(spec)
    nocost = trials.with_columns(pl.lit(None, pl.Float64).alias("cost_usd"))
    assert "nothing to plot" in json.dumps(_spec(charts.cost_vs_pass(nocost)))


def test_antipattern_rates_chart() -> None:
    rates = pl.DataFrame({
        "run": ["a", "a", "b", "b"], "detector": ["retry_loop", "hedge", "retry_loop", "hedge"],
        "rate": [0.1, 0.2, 0.05, 0.3], "ci_low": [0.02, 0.1, 0.0, 0.2], "ci_high": [0.2, 0.3, 0.1, 0.4],
        "n_flagged": [1, 2, 1, 3], "n_trials": [10, 10, 10, 10],
    })  # fmt: skip
    spec = _spec(charts.antipattern_rates(rates))
    assert {"detector", "rate", "ci_low", "ci_high", "n_flagged"} <= _tooltip_fields(spec)


def test_transitions_chart_from_counts() -> None:
    t = pl.DataFrame({"outcome_a": ["pass", "fail"], "outcome_b": ["fail", "pass"], "n": [2, 5]})
    spec = _spec(charts.transitions_chart(t, count_col="n"))
    assert spec["layer"][0]["encoding"]["x"]["scale"]["domain"] == ["pass", "fail"]


def test_offline_snippet_escapes_untrusted_text(trials: pl.DataFrame) -> None:
    html = offline.chart_html(_spec(charts.task_heatmap(trials)))
    assert HOSTILE not in html and "</script><script>" not in html
    assert html.count("</script>") == 1  # only the snippet's own closing tag
    assert "vegaEmbed" in html and "cdn" not in html.lower()


def test_bundle_once_and_marker_shared_with_export() -> None:
    from evalkit.report.export import BUNDLE_MARKER, STATIC_CLASS

    assert offline.BUNDLE_MARKER == BUNDLE_MARKER
    assert offline.STATIC_CLASS == STATIC_CLASS
    b = offline.bundle_html()
    assert b.count(BUNDLE_MARKER) == 1 and "window.vegaEmbed" in b
    assert "<script src" not in b


def test_renderer_is_registered_and_used(trials: pl.DataFrame) -> None:
    charts.enable_offline(display_bundle=False)
    try:
        bundle = charts.outcome_bars(trials)._repr_mimebundle_()
        data = bundle[0] if isinstance(bundle, tuple) else bundle
        assert "vegaEmbed" in data["text/html"]
        assert (
            offline.BUNDLE_MARKER not in data["text/html"]
        )  # the bundle is not repeated per chart
    finally:
        alt.renderers.enable("default")


def test_real_harbor_trials() -> None:
    runs = evalkit.load(
        [SKILLSBENCH_JOB, HARBOR / "openclaw-dev-jobs"], progress=False, trajectories=True
    )
    t = runs.trials
    # the plotted numbers are the frame's: trials and pass rate per run inside its interval
    per_run = {r["run"]: r for r in _rows(_spec(charts.pass_rate_ci(t))) if "n_trials" in r}
    assert {r: v["n_trials"] for r, v in per_run.items()} == dict(
        t.group_by("run").len().iter_rows()
    )
    assert all(v["ci_low"] <= v["pass_rate"] <= v["ci_high"] for v in per_run.values())
    # error kinds other than none, counted per run
    kinds = {
        (r["run"], r["error_kind"]): r["trials"]
        for r in _rows(_spec(charts.error_kind_bars(t)))
        if "error_kind" in r
    }
    assert kinds == {
        (r["run"], r["error_kind"]): r["len"]
        for r in t.filter(pl.col("error_kind") != "none")
        .group_by("run", "error_kind")
        .len()
        .iter_rows(named=True)
    }
    # the longest trial is on the duration chart, in minutes
    durations = [
        r["duration_min"] for r in _rows(_spec(charts.duration_dist(t))) if "duration_min" in r
    ]
    assert max(durations) == pytest.approx(t["duration_s"].max() / 60)
    for ch in (charts.turns_dist(t), charts.pass_rate_ci(t)):
        json.dumps(_spec(ch), allow_nan=False)
    # the plotted numbers are the frame's: outcome counts per run, every task in the heatmap
    bars = _rows(_spec(charts.outcome_bars(t)))
    counts = t.group_by("run", "outcome").len()
    assert {(r["run"], r["outcome"]): r["trials"] for r in bars} == {
        (r["run"], r["outcome"]): r["len"] for r in counts.iter_rows(named=True)
    }
    cells = _rows(_spec(charts.task_heatmap(t)))
    assert {r["task_name"] for r in cells if "task_name" in r} == set(t["task_name"].to_list())


def test_ab_scatter_plots_each_shared_task_at_its_rates(trials: pl.DataFrame) -> None:
    points = [
        r for r in _rows(_spec(charts.ab_scatter(trials, "base", "cand"))) if "task_name" in r
    ]
    rates = (
        trials.group_by("run", "task_name")
        .agg((pl.col("reward").fill_null(0.0) >= 1).mean().alias("rate"))  # null = not passed
        .iter_rows()
    )
    expected = {(run, task_name): rate for run, task_name, rate in rates}
    assert {p["task_name"] for p in points} == set(trials["task_name"])
    for p in points:
        assert p["pass_rate_a"] == pytest.approx(expected["base", p["task_name"]])
        assert p["pass_rate_b"] == pytest.approx(expected["cand", p["task_name"]])
        d = p["pass_rate_b"] - p["pass_rate_a"]
        assert p["change"] == ("B better" if d > 0 else "A better" if d < 0 else "same")
        assert abs(p["_x"] - p["pass_rate_a"]) <= 0.03 and abs(p["_y"] - p["pass_rate_b"]) <= 0.03


def test_ab_scatter_from_a_task_table_shows_only_comparable_tasks() -> None:
    tasks = pl.DataFrame({
        "task_name": ["t1", "t2", "t3"], "pass_rate_a": [0.0, 0.5, 1.0],
        "pass_rate_b": [1.0, 0.5, 0.0], "comparable": [True, True, False],
        "cost_usd_a": [0.1, 0.2, 0.3], "cost_usd_b": [0.2, 0.2, 0.2],
    })  # fmt: skip
    spec = _spec(charts.ab_scatter(pl.DataFrame(), "A", "B", tasks=tasks))
    points = {r["task_name"]: r for r in _rows(spec) if "task_name" in r}
    assert set(points) == {"t1", "t2"}
    assert points["t1"]["change"] == "B better" and points["t2"]["change"] == "same"
    assert points["t1"]["mean_cost_a"] == pytest.approx(0.1)  # cost_usd_* read as mean_cost_*
    assert points["t1"]["attempts_a"] is None  # unknown stays null
    assert "1 not shown" in " ".join(spec["title"]["subtitle"])
