"""regression_guard: trainerd's boundaries (1e-9 tolerance), priority, zero baselines, and
go-code's real baseline.json in both formats."""

from __future__ import annotations

import polars as pl
import pytest

from evalkit.compare import GuardMetrics, guard_metrics, regression_guard
from evalkit.load.gocode import read_baseline
from tests.conftest import FIXTURES

ROLLOUTS = FIXTURES / "rollouts"


def m(pass_rate: float, cost: float | None = 1.0, steps: float | None = 10.0) -> dict:
    return {"pass_rate": pass_rate, "avg_cost_usd": cost, "avg_steps": steps}


def test_exactly_five_points_does_not_revert():
    # 0.75 - 0.80 = -0.05000000000000004 in floats: the tolerance keeps it a merge
    r = regression_guard(m(0.80), m(0.75))
    assert r.decision == "merge"
    assert r.accuracy_delta == pytest.approx(-0.05)
    assert regression_guard(m(0.80), m(0.7499)).decision == "revert"
    assert regression_guard(m(0.55), m(0.50)).decision == "merge"
    assert regression_guard(m(0.35), m(0.30)).decision == "merge"


def test_exactly_fifteen_percent_cost_does_not_flag():
    # (0.23 - 0.20) / 0.20 = 0.15000000000000008 in floats
    assert regression_guard(m(0.5, cost=0.20), m(0.5, cost=0.23)).decision == "merge"
    assert regression_guard(m(0.5, cost=1.0), m(0.5, cost=1.15)).decision == "merge"
    r = regression_guard(m(0.5, cost=0.20), m(0.5, cost=0.2301))
    assert r.decision == "flag" and "cost rose" in r.reasons[0]


def test_exactly_twenty_percent_steps_does_not_flag():
    assert regression_guard(m(0.5, steps=10), m(0.5, steps=12)).decision == "merge"
    assert regression_guard(m(0.5, steps=0.35), m(0.5, steps=0.42)).decision == "merge"
    r = regression_guard(m(0.5, steps=10), m(0.5, steps=12.01))
    assert r.decision == "flag" and "steps rose" in r.reasons[0]


def test_zero_baseline_makes_the_delta_zero():
    r = regression_guard(m(0.5, cost=0.0, steps=0.0), m(0.5, cost=9.0, steps=99.0))
    assert (r.decision, r.cost_delta, r.step_delta) == ("merge", 0.0, 0.0)
    assert any("baseline cost is 0" in x for x in r.reasons)


def test_priority_revert_then_cost_then_steps():
    r = regression_guard(m(0.9, 1.0, 10), m(0.5, 2.0, 20))
    assert r.decision == "revert"
    assert [x.split(" ")[0] for x in r.reasons[:3]] == ["pass", "cost", "steps"]
    r = regression_guard(m(0.9, 1.0, 10), m(0.9, 2.0, 20))
    assert r.decision == "flag" and len([x for x in r.reasons if "rose" in x]) == 2
    assert regression_guard(m(0.9, 1.0, 10), m(0.9, 1.0, 20)).decision == "flag"


def test_improvements_merge_and_relative_cost():
    r = regression_guard(m(0.5, 2.0, 10), m(0.9, 1.0, 5))
    assert r.decision == "merge"
    assert r.accuracy_delta == pytest.approx(0.4)
    assert r.cost_delta == pytest.approx(-0.5)
    assert r.step_delta == pytest.approx(-0.5)


def test_missing_keys_are_go_zero_values_and_unknown_cost_is_not_zero():
    assert guard_metrics({"pass_rate": 0.5}) == GuardMetrics(0.5, 0.0, 0.0, None, "mapping")
    r = regression_guard(m(0.5, cost=None), m(0.5, cost=5.0))
    assert r.decision == "merge" and r.cost_delta == 0.0
    assert any("unknown" in x for x in r.reasons)


def test_thresholds_are_parameters():
    assert regression_guard(m(0.8), m(0.77), max_pass_rate_drop=0.02).decision == "revert"
    assert regression_guard(m(0.5, cost=1), m(0.5, cost=1.1), max_cost_rise=0.05).decision == "flag"


def test_gocode_baseline_json_current_and_legacy():
    cur = guard_metrics(ROLLOUTS / "baseline.json")
    # 7 tasks, all expected_pass; steps 12+33+10+7+17+11+8 = 98 -> 14; costs all 0.0
    assert (cur.pass_rate, cur.avg_cost_usd, cur.avg_steps, cur.n) == (1.0, 0.0, 14.0, 7)
    old = guard_metrics(str(ROLLOUTS / "baseline.2026-03-08.json"))
    # 6 of 7 expected_pass; steps 12+15+10+12+10+18+14 = 91 -> 13; costs sum 0.38 -> 0.38/7
    assert old.pass_rate == pytest.approx(6 / 7)
    assert old.avg_steps == pytest.approx(13.0)
    assert old.avg_cost_usd == pytest.approx(0.38 / 7)
    # a candidate at 6/7 against the current baseline drops 14.3 points: revert
    assert regression_guard(ROLLOUTS / "baseline.json", {"pass_rate": 6 / 7}).decision == "revert"
    # same pass rate, +20 % steps exactly (16.8 vs 14) does not flag; 16.81 does; cost
    # baseline 0 (unpriced) never flags
    cand = {"pass_rate": 1.0, "avg_cost_usd": 5.0, "avg_steps": 16.8}
    assert regression_guard(ROLLOUTS / "baseline.json", cand).decision == "merge"
    cand["avg_steps"] = 16.81
    assert regression_guard(ROLLOUTS / "baseline.json", cand).decision == "flag"
    # legacy as base, current as candidate: +14.3 pts, cost -100 %, steps +7.7 % -> merge
    r = regression_guard(ROLLOUTS / "baseline.2026-03-08.json", ROLLOUTS / "baseline.json")
    assert r.decision == "merge"
    assert r.step_delta == pytest.approx(1 / 13)


def test_read_baseline_frame_is_accepted():
    df = read_baseline(str(ROLLOUTS / "baseline.json"))
    g = guard_metrics(df)
    assert g.pass_rate == 1.0 and g.avg_steps == 14.0
    assert g.avg_cost_usd is None  # unpriced 0 is unknown in read_baseline's frame


def test_trials_frames_one_run_only():
    t = pl.DataFrame(
        {
            "run": ["x"] * 4,
            "reward": [1.0, 0.0, None, 1.0],
            "cost_usd": [1.0, 2.0, 3.0, 2.0],
            "n_steps": [10, None, 20, 30],
        }
    )
    g = guard_metrics(t)
    assert (g.pass_rate, g.avg_cost_usd, g.avg_steps) == (0.5, 2.0, 20.0)
    g = guard_metrics(t.with_columns(pl.lit(None, pl.Float64).alias("cost_usd")))
    assert g.avg_cost_usd is None
    with pytest.raises(ValueError, match="runs"):
        guard_metrics(pl.concat([t, t.with_columns(pl.lit("y").alias("run"))]))
    with pytest.raises(TypeError):
        guard_metrics(42)
