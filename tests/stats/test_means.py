"""evalkit.stats.means.clustered_mean_ci: the pooled mean reward's interval over tasks with
repeated fractional attempts, checked against statsmodels' cluster-robust OLS (new_tasks),
a per-task variance computed from the raw rewards (same_tasks), and hand values."""

from __future__ import annotations

import numpy as np
import pytest
import statsmodels.api as sm
from scipy import stats

from evalkit.stats.means import clustered_mean_ci

# Three tasks with unequal attempts and fractional rewards.
REWARDS = [[1.0, 0.5, 0.0], [0.25, 0.75], [1.0, 1.0, 0.5, 0.0]]


def sufficient(rewards: list[list[float]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    tot = np.array([sum(r) for r in rewards])
    sq = np.array([sum(x * x for x in r) for r in rewards])
    k = np.array([len(r) for r in rewards], dtype=float)
    return tot, sq, k


def test_cluster_t_matches_statsmodels_cluster_robust_ols() -> None:
    rng = np.random.default_rng(3)
    rewards = [list(rng.choice([0.0, 0.25, 0.5, 1.0], size=rng.integers(1, 6))) for _ in range(12)]
    y = np.concatenate(rewards)
    groups = np.repeat(np.arange(12), [len(r) for r in rewards])
    fit = sm.OLS(y, np.ones_like(y)).fit(
        cov_type="cluster", cov_kwds={"groups": groups, "use_correction": False}
    )
    se_ref = fit.bse[0] * np.sqrt(12 / 11)  # evalkit's G/(G-1) finite-cluster factor
    r = clustered_mean_ci(*sufficient(rewards), confidence=0.9)
    assert r.label == "cluster-t"
    assert float(r.estimate) == pytest.approx(y.mean(), abs=1e-12)
    assert float(r.se) == pytest.approx(se_ref, rel=1e-9)
    half = stats.t.ppf(0.95, 11) * se_ref
    assert float(r.low) == pytest.approx(y.mean() - half, rel=1e-9)
    assert float(r.high) == pytest.approx(y.mean() + half, rel=1e-9)
    # design effect: clustered variance over the iid variance of the mean (ddof 1)
    assert float(r.deff) == pytest.approx(se_ref**2 / (y.var(ddof=1) / y.size), rel=1e-9)
    assert np.isnan(r.n_eff) and not bool(r.fallback)


def test_cluster_t_hand_values() -> None:
    # totals 1.5, 1.0, 2.5 over 3, 2, 4 attempts: m = 5 / 9
    # residuals T_i - m K_i = 1.5 - 15/9, 1 - 10/9, 2.5 - 20/9 = -1/6, -1/9, 5/18
    # var = 3/2 * (1/36 + 1/81 + 25/324) / 81 = 3/2 * (38/324) / 81
    r = clustered_mean_ci(*sufficient(REWARDS))
    var = 1.5 * (38 / 324) / 81
    assert float(r.estimate) == pytest.approx(5 / 9)
    assert float(r.se) == pytest.approx(np.sqrt(var))
    half = stats.t.ppf(0.975, 2) * np.sqrt(var)
    assert (float(r.low), float(r.high)) == pytest.approx((5 / 9 - half, 5 / 9 + half))


def test_same_tasks_from_raw_within_task_variances() -> None:
    tot, sq, k = sufficient(REWARDS)
    r = clustered_mean_ci(tot, sq, k, estimand="same_tasks", confidence=0.8)
    s2 = np.array([np.var(x, ddof=1) for x in REWARDS])
    var = (k * s2).sum() / k.sum() ** 2
    dof = (k - 1).sum()  # 2 + 1 + 3
    assert r.label == "stratified-t"
    assert float(r.se) == pytest.approx(np.sqrt(var))
    half = stats.t.ppf(0.9, dof) * np.sqrt(var)
    assert float(r.high) - float(r.estimate) == pytest.approx(half)
    assert float(r.estimate) - float(r.low) == pytest.approx(half)


def test_same_tasks_single_attempt_task_uses_the_pooled_variance() -> None:
    rewards = [[1.0, 0.0], [0.5, 0.5, 1.0], [0.75]]
    tot, sq, k = sufficient(rewards)
    r = clustered_mean_ci(tot, sq, k, estimand="E2")  # alias of same_tasks
    # within sums of squares: 0.5, 1/6, 0 (one attempt); pooled = (0.5 + 1/6) / (1 + 2)
    pooled = (0.5 + 1 / 6) / 3
    s2 = np.array([0.5, 1 / 12, pooled])
    var = (k * s2).sum() / 36
    assert float(r.se) == pytest.approx(np.sqrt(var))
    half = stats.t.ppf(0.975, 3) * np.sqrt(var)
    assert float(r.high) == pytest.approx(3.75 / 6 + half)  # m = (1 + 2 + 0.75) / 6


def test_one_task_has_no_new_tasks_interval() -> None:
    r = clustered_mean_ci(np.array([1.5]), np.array([1.25]), np.array([3.0]))
    assert float(r.estimate) == pytest.approx(0.5)
    assert np.isnan(r.low) and np.isnan(r.high) and np.isnan(r.se)


def test_tasks_without_attempts_are_ignored() -> None:
    tot, sq, k = sufficient(REWARDS)
    base = clustered_mean_ci(tot, sq, k)
    pad = clustered_mean_ci(np.append(tot, 0.0), np.append(sq, 0.0), np.append(k, 0.0))
    for f in ("estimate", "low", "high", "se", "deff"):
        assert float(getattr(pad, f)) == pytest.approx(float(getattr(base, f)), rel=1e-12)


def test_leading_axes_are_independent_data_sets() -> None:
    tot, sq, k = sufficient(REWARDS)
    other = sufficient([[0.0, 1.0], [1.0, 1.0, 1.0], [0.5]])
    r = clustered_mean_ci(
        np.stack([tot, other[0]]), np.stack([sq, other[1]]), np.stack([k, other[2]])
    )
    assert r.low.shape == (2,)
    for i, one in enumerate((clustered_mean_ci(tot, sq, k), clustered_mean_ci(*other))):
        assert r.low[i] == pytest.approx(float(one.low))
        assert r.high[i] == pytest.approx(float(one.high))


def test_all_equal_rewards_give_nan_design_effect() -> None:
    tot, sq, k = sufficient([[1.0, 1.0], [1.0], [1.0, 1.0, 1.0]])
    r = clustered_mean_ci(tot, sq, k)
    assert float(r.estimate) == 1.0 and float(r.se) == 0.0
    assert float(r.low) == 1.0 and float(r.high) == 1.0
    assert np.isnan(r.deff)


def test_cluster_bootstrap_is_seeded_and_brackets_the_estimate() -> None:
    rng = np.random.default_rng(8)
    rewards = [list(rng.uniform(0, 1, size=rng.integers(2, 5))) for _ in range(40)]
    tot, sq, k = sufficient(rewards)
    b = clustered_mean_ci(tot, sq, k, method="Cluster_Bootstrap", n_resamples=4000, seed=2)
    assert b.label == "cluster-bootstrap"
    m = float(b.estimate)
    assert float(b.low) < m < float(b.high)
    # task means lie in [0, 1] and so does every resampled ratio
    means = tot / k
    assert means.min() <= float(b.low) and float(b.high) <= means.max()
    again = clustered_mean_ci(tot, sq, k, method="cluster-bootstrap", n_resamples=4000, seed=2)
    assert (float(again.low), float(again.high)) == (float(b.low), float(b.high))
    # with 40 tasks the percentile bootstrap is close to cluster-t (width within 20 %)
    t = clustered_mean_ci(tot, sq, k)
    assert (float(b.high) - float(b.low)) == pytest.approx(float(t.high) - float(t.low), rel=0.2)
    assert float(b.se) == pytest.approx(float(t.se))  # se is the linearisation SE either way


def test_argument_errors() -> None:
    tot, sq, k = sufficient(REWARDS)
    with pytest.raises(ValueError, match="unknown method"):
        clustered_mean_ci(tot, sq, k, method="wilson")
    with pytest.raises(ValueError, match="confidence"):
        clustered_mean_ci(tot, sq, k, confidence=1.0)
    with pytest.raises(ValueError, match="estimand"):
        clustered_mean_ci(tot, sq, k, estimand="everything")
    with pytest.raises(ValueError, match="per-task"):
        clustered_mean_ci(1.0, 1.0, 2.0)
