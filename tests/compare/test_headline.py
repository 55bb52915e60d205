"""evalkit.compare.headline: the shared figures, their units, the evidence check, the
checksum reason and the test / gate disagreement sentence."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import evalkit
from evalkit.compare import compare, regression_guard
from evalkit.compare.headline import Figure, checksum_reason, disagreement, figure_rows
from evalkit.stats.paired import paired_core
from tests.conftest import OPENCLAW

ROOT_RUNS = OPENCLAW.parents[3] / "runs"


def trials(n_tasks: int, rate_a: float, rate_b: float, k: int = 1, **extra) -> pl.DataFrame:
    """A two-run trials frame: task i passes in a run when i < rate * n_tasks."""
    rows = []
    for run, rate in (("a", rate_a), ("b", rate_b)):
        for i in range(n_tasks):
            for j in range(k):
                rows.append(
                    {
                        "run": run,
                        "task_name": f"task-{i:02d}",
                        "trial_id": f"{run}-{i}-{j}",
                        "attempt": j + 1,
                        "reward": 1.0 if i < rate * n_tasks else 0.0,
                        "cost_usd": 0.01 * (i + 1) * (1.2 if run == "b" else 1.0),
                        "duration_s": 30.0 + i,
                        "n_input_tokens": 12_000 + 100 * i,
                        "n_output_tokens": 800,
                        "task_checksum": extra.get(f"checksum_{run}", "same"),
                    }
                )
    return pl.DataFrame(rows)


def fig(c, key: str) -> Figure:
    return next(f for f in c.figures if f.key == key)


def test_units_one_per_figure():
    f = Figure("pass_rate", "pass rate", "pts", 0.617, 0.75, 0.133, 0.05, 0.233)
    assert (f.value_text(f.a), f.delta_text()) == ("61.7%", "+13.3 pts")
    assert f.ci_text() == "95% CI +5.0 pts … +23.3 pts"
    t = Figure("tokens", "tokens / attempt", "tokens", 6944.0, 8004.6, 1060.65, -421.7, 2837.2)
    assert (t.value_text(t.b), t.delta_text()) == ("8,005", "+1,061")
    assert t.ci_text() == "95% CI -422 … +2,837"
    d = Figure("duration_s", "time / attempt", "time", 300.0, 420.0, 120.0, -30.0, 250.0)
    assert (d.value_text(d.a), d.delta_text(), d.ci_text()) == (
        "5.0 min",
        "+2.0 min",
        "95% CI -0.5 min … +4.2 min",
    )
    u = Figure("cost_per_attempt", "cost / attempt", "usd", None, 0.2, None, note="unknown")
    assert u.delta_text() == "not compared" and u.ci_text() == ""
    assert "not compared (unknown)" in u.line()


def test_figures_match_the_paired_statistics():
    c = compare(trials(12, 0.5, 0.75, k=2), "a", "b")
    pr = fig(c, "pass_rate")
    assert pr.delta == pytest.approx(0.25)
    assert (pr.ci_low, pr.ci_high) == (c.pass_stats.ci_low, c.pass_stats.ci_high)
    assert fig(c, "mean_reward").ci_low == c.stats.ci_low
    cost = fig(c, "cost_per_attempt")
    d = c.tasks.filter(pl.col("comparable"))["d_cost_usd"].to_numpy()
    ref = paired_core(np.asarray(d, dtype=float), confidence=0.95, seed=0)
    assert (cost.ci_low, cost.ci_high) == (ref.ci_low, ref.ci_high)
    assert cost.delta == pytest.approx(float(d.mean()))
    # compare.json carries the same figures, text included
    j = c.to_json()
    assert [h["line"] for h in j["headline"]] == [f.line() for f in c.figures]


def test_figure_rows_are_the_figures_text_under_the_given_headers():
    t = trials(8, 0.5, 0.5).with_columns(
        pl.when(pl.col("run") == "b").then(None).otherwise(pl.col("cost_usd")).alias("cost_usd")
    )
    c = compare(t, "a", "b")
    rows = figure_rows(c.figures)
    assert rows.columns == ["figure", "A", "B", "B - A", "CI"]
    assert rows.height == len(c.figures)
    cost = rows.row(2, named=True)
    assert cost == {
        "figure": "cost / attempt",
        "A": fig(c, "cost_per_attempt").value_text(fig(c, "cost_per_attempt").a),
        "B": "unknown",
        "B - A": "not compared",
        "CI": "unknown on a side",
    }
    some = figure_rows(c.figures, ("pass_rate", "duration_s"), ("", "a", "b", "d", "ci"))
    assert some.columns == ["", "a", "b", "d", "ci"]
    assert some[""].to_list() == ["pass rate", "time / attempt"]
    assert some["ci"][0] == fig(c, "pass_rate").ci_text()


def test_unknown_cost_is_not_compared():
    t = trials(8, 0.5, 0.5).with_columns(
        pl.when(pl.col("run") == "b").then(None).otherwise(pl.col("cost_usd")).alias("cost_usd")
    )
    c = compare(t, "a", "b")
    f = fig(c, "cost_per_attempt")
    assert not f.compared and f.delta_text() == "not compared"
    g = c.regression_guard()
    assert g.not_compared == ["cost", "steps"]
    assert "cost not compared" in g.numbers() and "+0.0%" not in g.numbers()
    assert g.summary().startswith("merge on pass rate only")


def test_guard_not_compared_on_mappings():
    g = regression_guard(
        {"pass_rate": 0.8, "avg_cost_usd": None, "avg_steps": 10},
        {"pass_rate": 0.8, "avg_cost_usd": 1.0, "avg_steps": 11},
    )
    assert g.decision == "merge" and g.not_compared == ["cost"]
    assert g.numbers() == "pass rate +0.0 pts, cost not compared, steps +10.0%"


def test_one_shared_task_is_no_meaningful_comparison():
    c = compare(trials(1, 0.0, 1.0), "a", "b")
    ev = c.evidence()
    assert not ev.meaningful and ev.n_tasks == 1
    assert "fewer than the 5 needed (min_shared_tasks)" in ev.reasons[0]
    assert c.evidence(min_shared_tasks=1).meaningful is False  # the interval is too wide
    j = c.to_json()
    assert j["decision"] == "hold" and j["evidence"]["meaningful"] is False


def test_enough_tasks_and_a_narrow_interval_is_meaningful():
    c = compare(trials(40, 0.5, 0.6, k=3), "a", "b")
    assert c.evidence().meaningful and c.evidence().reasons == []


def test_every_checksum_changed_names_the_option():
    t = trials(8, 0.5, 0.75, checksum_a="v1", checksum_b="v2")
    c = compare(t, "a", "b")
    assert c.paired_tasks == []
    why = checksum_reason(c)
    assert "every one of the 8 shared tasks" in why
    assert 'checksums="ignore"' in why and "--checksums ignore" in why
    assert "-p checksums ignore" in why
    assert why in c.to_json()["decisionReasons"]
    c2 = compare(t, "a", "b", checksums="ignore")
    assert len(c2.paired_tasks) == 8 and checksum_reason(c2) is None
    with pytest.raises(ValueError, match="exclude, ignore"):
        compare(t, "a", "b", checksums="bogus")


def test_disagreement_sentence_when_test_and_gate_differ():
    runs = evalkit.load(ROOT_RUNS, progress=False)
    c = compare(runs, "scripted-baseline", "scripted-candidate")
    g = c.gate()
    assert g.verdict.startswith("Hold") and c.pass_stats.p_value < 0.05
    s = disagreement(c, g.verdict)
    assert s.startswith("The paired test finds a pass-rate difference (p = 0.0312)")
    assert "2 fixed, 0 broken" in s
    # the same comparison agreeing (a test that is not significant) says nothing
    assert disagreement(c, g.verdict, confidence=0.99) is None


def test_guard_reason_says_pass_rate_in_one_unit():
    g = regression_guard(
        {"pass_rate": 0.8, "avg_cost_usd": 1.0, "avg_steps": 10},
        {"pass_rate": 0.6, "avg_cost_usd": 1.0, "avg_steps": 10},
    )
    assert g.decision == "revert"
    assert g.reasons[0].startswith("pass rate dropped 20.0 pts (80.0% -> 60.0%)")
