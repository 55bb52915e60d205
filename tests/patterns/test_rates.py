"""Detector rates per run with Wilson intervals, and paired run-vs-run differences."""

from __future__ import annotations

import polars as pl
import pytest
from statsmodels.stats.proportion import proportion_confint

import evalkit.patterns as ep


def _trials() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "trial_id": ["a1", "a2", "a3", "a4", "b1", "b2", "b3", "b4"],
            "run": ["A"] * 4 + ["B"] * 4,
            "task_name": ["t1", "t2", "t3", "t4"] * 2,
            "has_trajectory": [True, True, True, False, True, True, True, True],
        }
    )


def _findings() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "trial_id": ["a1", "a1", "b1", "b2", "b3", "b2"],
            "detector": [
                "retry_loop",
                "retry_loop",
                "retry_loop",
                "retry_loop",
                "retry_loop",
                "giving_up",
            ],
        }
    )


def test_detector_rates_with_wilson_intervals():
    r = ep.detector_rates(_findings(), _trials())
    a = r.filter((pl.col("run") == "A") & (pl.col("detector") == "retry_loop")).row(0, named=True)
    # a4 has no trajectory: not in the denominator; a1 counted once
    assert (a["n_trials"], a["n_flagged"]) == (3, 1)
    lo, hi = proportion_confint(1, 3, alpha=0.05, method="wilson")
    assert a["rate"] == pytest.approx(1 / 3)
    assert (a["ci_low"], a["ci_high"]) == (pytest.approx(lo), pytest.approx(hi))
    assert a["ci_method"].startswith("wilson")
    b = r.filter((pl.col("run") == "B") & (pl.col("detector") == "giving_up")).row(0, named=True)
    assert (b["n_trials"], b["n_flagged"]) == (4, 1)
    assert r.height == 4  # 2 runs x 2 detectors, zero-flag cells included


def test_detector_rates_all_trials_and_named_detectors():
    r = ep.detector_rates(
        _findings(), _trials(), denominator="all", detectors=["retry_loop", "no_progress"]
    )
    assert set(r["detector"]) == {"retry_loop", "no_progress"}
    a = r.filter((pl.col("run") == "A") & (pl.col("detector") == "no_progress")).row(0, named=True)
    assert (a["n_trials"], a["n_flagged"], a["rate"], a["ci_low"]) == (4, 0, 0.0, 0.0)


def test_paired_rate_difference():
    t = _trials().with_columns(pl.lit(True).alias("has_trajectory"))
    d = ep.paired_rate_diff(_findings(), t, "A", "B", detectors=["retry_loop"]).row(0, named=True)
    # per task A: t1 1, t2 0, t3 0, t4 0 ; B: t1 1, t2 1, t3 1, t4 0  -> diff 2/4
    assert d["n_tasks"] == 4
    assert (d["rate_a"], d["rate_b"], d["diff"]) == (0.25, 0.75, pytest.approx(0.5))
    assert d["ci_low"] <= d["diff"] <= d["ci_high"]
    assert d["p_value"] is None or 0 <= d["p_value"] <= 1
    assert d["method"]


def test_rates_from_detect_output_on_frames():
    from tests.patterns.build import combine, frames, sh

    loop = [("user", "x")] + [("agent", "", [sh("pytest", "E", err=True)]) for _ in range(3)]
    ok = [("user", "x"), ("agent", "", [sh("pytest", "1 passed")]), ("agent", "ok")]
    f = combine(frames(loop, trial_id="1", run="r"), frames(ok, trial_id="2", run="r"))
    r = ep.detector_rates(ep.detect(f), f["trials"], detectors=["retry_loop"]).row(0, named=True)
    assert (r["n_trials"], r["n_flagged"]) == (2, 1)


def test_paired_rate_difference_degrades_gracefully():
    t = _trials()
    only_a = t.filter(pl.col("run") == "A").with_columns(pl.lit(True).alias("has_trajectory"))
    d = ep.paired_rate_diff(_findings(), only_a, "A", "B", detectors=["retry_loop"]).row(
        0, named=True
    )
    assert d["n_tasks"] == 0 and "no trial" in d["method"]
    no_task = t.drop("task_name")
    d = ep.paired_rate_diff(_findings(), no_task, "A", "B", detectors=["retry_loop"]).row(
        0, named=True
    )
    assert d["n_tasks"] == 0 and "task_name" in d["method"]
    disjoint = t.with_columns(
        pl.concat_str([pl.col("run"), pl.col("task_name")]).alias("task_name")
    )
    d = ep.paired_rate_diff(_findings(), disjoint, "A", "B", detectors=["retry_loop"]).row(
        0, named=True
    )
    assert d["n_tasks"] == 0
