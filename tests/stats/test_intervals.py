"""Intervals: reference implementations (statsmodels / scipy) to 1e-9, properties, edge cases."""

from __future__ import annotations

import numpy as np
import pytest
import statsmodels.api as sm
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import optimize, stats
from statsmodels.stats.proportion import proportion_confint

from evalkit.stats import clustered_mean_ci, clustered_proportion_ci, proportion_ci
from evalkit.stats.intervals import FEW_TASKS, normalize_estimand

METHODS = ["wilson", "clopper-pearson", "jeffreys", "mid-p"]


@pytest.mark.parametrize(("ours", "theirs"), [("wilson", "wilson"), ("clopper-pearson", "beta")])
@pytest.mark.parametrize("confidence", [0.8, 0.95, 0.99])
def test_matches_statsmodels_everywhere(ours: str, theirs: str, confidence: float) -> None:
    for n in range(1, 60):
        x = np.arange(n + 1)
        lo, hi = proportion_ci(x, n, confidence=confidence, method=ours)
        slo, shi = proportion_confint(x, n, alpha=1 - confidence, method=theirs)
        np.testing.assert_allclose(lo, slo, rtol=0, atol=1e-9)
        np.testing.assert_allclose(hi, shi, rtol=0, atol=1e-9)


def test_jeffreys_matches_statsmodels_inside_and_fixes_the_boundary() -> None:
    for n in range(2, 60):
        x = np.arange(1, n)
        lo, hi = proportion_ci(x, n, method="jeffreys")
        slo, shi = proportion_confint(x, n, method="jeffreys")
        np.testing.assert_allclose(lo, slo, atol=1e-9)
        np.testing.assert_allclose(hi, shi, atol=1e-9)
    # Brown, Cai & DasGupta's boundary modification keeps the estimate inside the interval.
    assert proportion_ci(0, 10, method="jeffreys")[0] == 0.0
    assert proportion_ci(10, 10, method="jeffreys")[1] == 1.0


@pytest.mark.parametrize(("ours", "theirs"), [("wilson", "wilson"), ("clopper-pearson", "exact")])
def test_matches_scipy_binomtest(ours: str, theirs: str) -> None:
    for n, x in [(10, 0), (10, 3), (25, 24), (89, 40), (7, 7)]:
        ci = stats.binomtest(x, n).proportion_ci(0.95, method=theirs)
        lo, hi = proportion_ci(x, n, method=ours)
        assert abs(lo - ci.low) < 1e-9 and abs(hi - ci.high) < 1e-9


def _midp_reference(x: int, n: int, alpha: float = 0.05) -> tuple[float, float]:
    def lower(p: float) -> float:
        return stats.binom.sf(x, n, p) + 0.5 * stats.binom.pmf(x, n, p) - alpha / 2

    def upper(p: float) -> float:
        return stats.binom.cdf(x - 1, n, p) + 0.5 * stats.binom.pmf(x, n, p) - alpha / 2

    lo = 0.0 if x == 0 else optimize.brentq(lower, 1e-14, 1 - 1e-14, xtol=1e-15)
    hi = 1.0 if x == n else optimize.brentq(upper, 1e-14, 1 - 1e-14, xtol=1e-15)
    return lo, hi


@pytest.mark.parametrize("n", [1, 2, 5, 10, 20, 37, 100])
def test_mid_p_matches_root_finding_on_binomial_tails(n: int) -> None:
    x = np.arange(n + 1)
    lo, hi = proportion_ci(x, n, method="mid-p")
    for xi in range(n + 1):
        rlo, rhi = _midp_reference(xi, n)
        assert abs(lo[xi] - rlo) < 1e-9
        assert abs(hi[xi] - rhi) < 1e-9


def test_mid_p_sits_between_wilson_and_clopper_pearson_width_at_small_n() -> None:
    lo_m, hi_m = proportion_ci(2, 10, method="mid-p")
    lo_c, hi_c = proportion_ci(2, 10, method="clopper-pearson")
    assert lo_c < lo_m and hi_m < hi_c


@settings(max_examples=200, deadline=None)
@given(
    n=st.floats(min_value=0.5, max_value=500, allow_nan=False),
    frac=st.floats(min_value=0, max_value=1),
    method=st.sampled_from(METHODS),
    confidence=st.sampled_from([0.5, 0.9, 0.95, 0.99]),
)
def test_interval_contains_estimate_and_stays_in_unit_interval(
    n: float, frac: float, method: str, confidence: float
) -> None:
    x = frac * n
    lo, hi = proportion_ci(x, n, confidence=confidence, method=method)
    assert 0.0 <= lo <= x / n <= hi <= 1.0


@settings(max_examples=60, deadline=None)
@given(x=st.integers(0, 40), extra=st.integers(0, 40), method=st.sampled_from(METHODS))
def test_higher_confidence_is_wider(x: int, extra: int, method: str) -> None:
    n = x + extra
    if n == 0:
        return
    lo1, hi1 = proportion_ci(x, n, confidence=0.9, method=method)
    lo2, hi2 = proportion_ci(x, n, confidence=0.99, method=method)
    assert lo2 <= lo1 + 1e-12 and hi1 <= hi2 + 1e-12


def test_zero_trials_gives_nan_and_bad_input_raises() -> None:
    lo, hi = proportion_ci(0, 0)
    assert np.isnan(lo) and np.isnan(hi)
    with pytest.raises(ValueError):
        proportion_ci(5, 3)
    with pytest.raises(ValueError):
        proportion_ci(1, 3, method="wald")
    with pytest.raises(ValueError):
        proportion_ci(1, 3, confidence=1.5)


# ---------------------------------------------------------------- clustered ----------


def test_one_attempt_per_task_is_plain_wilson_or_mid_p() -> None:
    s = np.array([1.0] * 12 + [0.0] * 18)
    r = clustered_proportion_ci(s, np.ones_like(s))
    lo, hi = proportion_confint(12, 30, method="wilson")
    assert r.label == "wilson" and not bool(r.fallback)
    assert abs(r.low - lo) < 1e-9 and abs(r.high - hi) < 1e-9
    assert float(r.n_eff) == 30
    # few passes: exact mid-p
    s = np.array([1.0] * FEW_TASKS + [0.0] * 17)
    r = clustered_proportion_ci(s, np.ones_like(s))
    assert bool(r.fallback) and r.fallback_label == "mid-p"
    mlo, mhi = proportion_ci(FEW_TASKS, 20, method="mid-p")
    assert abs(r.low - mlo) < 1e-12 and abs(r.high - mhi) < 1e-12


def test_clustered_se_matches_statsmodels_cluster_robust_ols() -> None:
    rng = np.random.default_rng(0)
    groups = np.repeat(np.arange(15), 4)
    y = rng.binomial(1, rng.beta(0.5, 0.5, 15)[groups]).astype(float)
    fit = sm.OLS(y, np.ones_like(y)).fit(
        cov_type="cluster", cov_kwds={"groups": groups, "use_correction": False}
    )
    se_sm = fit.bse[0] * np.sqrt(15 / 14)  # evalkit uses the G/(G-1) finite-cluster factor
    s, k = np.bincount(groups, y), np.bincount(groups).astype(float)
    assert abs(clustered_proportion_ci(s, k).se - se_sm) < 1e-9
    assert abs(clustered_mean_ci(s, s, k).se - se_sm) < 1e-9


def test_effective_sample_size_and_design_effect() -> None:
    # 20 tasks x 5 attempts; tasks are all-or-nothing, so attempts add nothing: deff = K
    s = np.array([5.0] * 10 + [0.0] * 10)
    k = np.full(20, 5.0)
    r = clustered_proportion_ci(s, k)
    assert r.label == "wilson-clustered"
    assert abs(float(r.deff) - 5 * 20 / 19) < 1e-9
    assert abs(float(r.n_eff) - 19.0) < 1e-9
    lo, hi = proportion_ci(0.5 * 19, 19)
    assert abs(r.low - lo) < 1e-12 and abs(r.high - hi) < 1e-12
    # iid-looking data never gets more than N effective trials
    s = np.array([2.0, 3.0] * 10)
    r = clustered_proportion_ci(s, k)
    assert float(r.n_eff) <= 100


def test_all_zero_tasks_do_not_collapse_to_zero_width() -> None:
    s, k = np.zeros(10), np.full(10, 5.0)
    r = clustered_proportion_ci(s, k)
    assert r.low == 0.0 and r.high > 0.2  # task-level bound: 10 tasks, not 50 trials
    assert r.fallback_label == "mid-p-clustered"
    t = clustered_proportion_ci(s, k, method="cluster-t")
    assert t.high == 0.0  # the known failure the default avoids


def test_few_tasks_with_events_use_task_level_n() -> None:
    s = np.zeros(50)
    s[0] = 1.0  # one pass in 250 trials, all in one task
    r = clustered_proportion_ci(s, np.full(50, 5.0))
    assert bool(r.fallback) and float(r.n_eff) <= 50
    assert r.high > 0.05  # a 250-iid-trials interval would stop near 0.022


def test_iid_wilson_is_the_pooled_interval() -> None:
    s, k = np.array([5.0, 0.0, 4.0, 1.0]), np.full(4, 5.0)
    r = clustered_proportion_ci(s, k, method="iid-wilson")
    lo, hi = proportion_confint(10, 20, method="wilson")
    assert abs(r.low - lo) < 1e-12 and abs(r.high - hi) < 1e-12


def test_cluster_t_formula() -> None:
    s, k = np.array([1.0, 2.0, 3.0, 0.0, 3.0]), np.full(5, 3.0)
    rates = s / k
    r = clustered_proportion_ci(s, k, method="cluster-t")
    half = stats.t.ppf(0.975, 4) * rates.std(ddof=1) / np.sqrt(5)
    assert abs(r.low - (rates.mean() - half)) < 1e-12
    assert r.high == min(1.0, rates.mean() + half)  # clipped to [0, 1]


def test_cluster_bootstrap_is_seeded_and_contains_estimate() -> None:
    rng = np.random.default_rng(3)
    s, k = rng.integers(0, 6, 25).astype(float), np.full(25, 5.0)
    a = clustered_proportion_ci(s, k, method="cluster-bootstrap", seed=1, n_resamples=2000)
    b = clustered_proportion_ci(s, k, method="cluster-bootstrap", seed=1, n_resamples=2000)
    assert (a.low, a.high) == (b.low, b.high)
    assert a.low <= a.estimate <= a.high
    t = clustered_proportion_ci(s, k, method="cluster-t")
    assert abs(a.low - t.low) < 0.03 and abs(a.high - t.high) < 0.03


def test_same_tasks_is_narrower_than_new_tasks_with_heterogeneous_tasks() -> None:
    s = np.array([5.0] * 8 + [0.0] * 8 + [2.0, 3.0, 4.0, 1.0])
    k = np.full(20, 5.0)
    e1 = clustered_proportion_ci(s, k)
    e2 = clustered_proportion_ci(s, k, estimand="same_tasks")
    assert e2.label == "wilson-rerun"
    assert e2.high - e2.low < 0.5 * (e1.high - e1.low)
    assert e2.low <= e2.estimate <= e2.high
    assert float(e2.deff) < 1


@settings(max_examples=150, deadline=None)
@given(
    data=st.lists(st.tuples(st.integers(1, 8), st.floats(0, 1)), min_size=1, max_size=40),
    method=st.sampled_from(["auto", *METHODS, "cluster-t", "iid-wilson"]),
    estimand=st.sampled_from(["new_tasks", "same_tasks"]),
)
def test_clustered_interval_contains_pooled_rate(
    data: list[tuple[int, float]], method: str, estimand: str
) -> None:
    if estimand == "same_tasks" and method != "auto":
        return
    k = np.array([a for a, _ in data], dtype=float)
    s = np.round(np.array([f for _, f in data]) * k)
    r = clustered_proportion_ci(s, k, method=method, estimand=estimand)
    p = s.sum() / k.sum()
    if method == "cluster-t" and len(data) < 2:
        assert np.isnan(r.low)
        return
    assert 0.0 <= r.low <= p + 1e-12 and p - 1e-12 <= r.high <= 1.0


def test_vectorised_over_replications_equals_row_by_row() -> None:
    rng = np.random.default_rng(5)
    s = rng.binomial(3, rng.beta(0.5, 0.5, size=(40, 12))).astype(float)
    k = np.full_like(s, 3.0)
    whole = clustered_proportion_ci(s, k)
    for i in range(40):
        row = clustered_proportion_ci(s[i], k[i])
        assert abs(row.low - whole.low[i]) < 1e-12 and abs(row.high - whole.high[i]) < 1e-12


def test_mean_ci_same_tasks_uses_within_task_variance() -> None:
    tot = np.array([1.5, 2.0, 0.5])
    sq = np.array([1.25, 2.0, 0.25])  # rewards (1, .5), (1, 1), (.5, 0)
    k = np.full(3, 2.0)
    r = clustered_mean_ci(tot, sq, k, estimand="same_tasks")
    within = np.array([0.125, 0.0, 0.125])
    var = (2 * within).sum() / 36
    assert abs(r.se - np.sqrt(var)) < 1e-12
    half = stats.t.ppf(0.975, 3) * np.sqrt(var)
    assert abs(r.high - (4.0 / 6 + half)) < 1e-12


def test_estimand_aliases() -> None:
    assert normalize_estimand("E1") == "new_tasks"
    assert normalize_estimand("same tasks") == "same_tasks"
    with pytest.raises(ValueError):
        normalize_estimand("population")
