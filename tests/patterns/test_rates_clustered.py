"""Detector rates: attempts of one task are not independent, so the interval is clustered."""

from __future__ import annotations

import polars as pl
from statsmodels.stats.proportion import proportion_confint

from evalkit.patterns import detector_rates


def _frames(k: int) -> tuple[pl.DataFrame, pl.DataFrame]:
    # 8 tasks x k attempts; tasks 0-3 are flagged on every attempt, tasks 4-7 never
    trials = pl.DataFrame(
        {
            "trial_id": [f"t{i}-{a}" for i in range(8) for a in range(k)],
            "task_name": [f"task{i}" for i in range(8) for _ in range(k)],
            "run": ["r"] * (8 * k),
            "has_trajectory": [True] * (8 * k),
        }
    )
    flagged = [f"t{i}-{a}" for i in range(4) for a in range(k)]
    findings = pl.DataFrame({"trial_id": flagged, "detector": ["retry_loop"] * len(flagged)})
    return findings, trials


def test_several_attempts_widen_the_interval_to_the_task_level() -> None:
    f, t = _frames(5)
    r = detector_rates(f, t).row(0, named=True)
    assert r["rate"] == 0.5 and r["ci_method"] == "wilson-clustered"
    iid = proportion_confint(20, 40, method="wilson")
    tasks = proportion_confint(4, 8, method="wilson")
    assert r["ci_high"] - r["ci_low"] > iid[1] - iid[0]
    # perfectly task-determined flags carry the information of ~8 independent tasks, not 40
    # (the clustered se has a small-sample correction, so "about", not exactly)
    assert abs((r["ci_high"] - r["ci_low"]) / (tasks[1] - tasks[0]) - 1) < 0.1


def test_one_attempt_per_task_is_plain_wilson() -> None:
    f, t = _frames(1)
    r = detector_rates(f, t).row(0, named=True)
    lo, hi = proportion_confint(4, 8, method="wilson")
    assert (
        r["ci_method"] == "wilson"
        and abs(r["ci_low"] - lo) < 1e-12
        and abs(r["ci_high"] - hi) < 1e-12
    )
