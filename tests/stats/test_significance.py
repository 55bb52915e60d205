"""evalkit.stats.significance: the sign-flip test against brute-force enumeration, McNemar's
edge cases, Fisher's smallest p against the hypergeometric law (math.comb), the Beta
posterior comparison's symmetry, and the bootstrap helpers (task indices, task means, the
cluster bootstrap of a ratio, the percentile / expanded / BCa intervals)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from evalkit.stats.significance import (
    bootstrap_interval,
    bootstrap_task_means,
    cluster_bootstrap_ratio_ci,
    fisher_min_p,
    mcnemar,
    prob_b_better,
    sign_flip_pvalue,
    task_indices,
)

# --------------------------------------------------------------------------------------------
# sign flip
# --------------------------------------------------------------------------------------------


def brute_sign_flip(d: list[float]) -> float:
    """Share of the 2**m sign vectors whose |sum| reaches the observed |sum| (zeros dropped)."""
    nz = [x for x in d if x != 0]
    obs = abs(sum(nz))
    sums = [abs(sum(s * x for s, x in zip(signs, nz, strict=True))) for signs in
            itertools.product((1, -1), repeat=len(nz))]  # fmt: skip
    return sum(s >= obs - 1e-9 for s in sums) / len(sums)


@pytest.mark.parametrize(
    ("d", "p"),
    [
        ([1, 1, 1, 1, 1], 2 / 32),  # only all-plus and all-minus reach |5|
        ([2, 1, 1], 2 / 8),  # sums 4, 2, 2, 0, 0, -2, -2, -4: two reach |4|
        ([3, -1], 1.0),  # every sign vector reaches |2|
        ([1, -1], 1.0),  # observed sum 0
    ],
)
def test_sign_flip_hand_values(d: list[float], p: float) -> None:
    got, exact = sign_flip_pvalue(np.array(d, dtype=float))
    assert exact and got == pytest.approx(p, abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(-4, 4), min_size=1, max_size=11))
def test_sign_flip_exact_matches_enumeration(d: list[int]) -> None:
    got, exact = sign_flip_pvalue(np.array(d, dtype=float))
    assert exact
    assert got == pytest.approx(brute_sign_flip(d) if any(d) else 1.0, abs=1e-12)


def test_sign_flip_drops_zeros_and_non_finite_values() -> None:
    d = np.array([0.5, 0.25, 1.0, 0.75])
    base = sign_flip_pvalue(d)
    padded = np.concatenate([d, [0.0, 0.0, np.nan, np.inf, -np.inf]])
    assert sign_flip_pvalue(padded) == base
    assert base[0] == pytest.approx(brute_sign_flip(d.tolist()))
    assert sign_flip_pvalue(np.array([0.0, 0.0])) == (1.0, True)
    assert sign_flip_pvalue(np.array([])) == (1.0, True)


def test_sign_flip_monte_carlo_p_is_valid_and_seeded() -> None:
    d = np.ones(12)  # exact p = 2 / 4096
    p, exact = sign_flip_pvalue(d, exact_max=5, n_resamples=200, seed=3)
    assert not exact
    # (1 + hits) / (1 + B) is never below 1 / (1 + B), whatever the hits
    assert p >= 1 / 201 and (p * 201) == pytest.approx(round(p * 201))
    assert sign_flip_pvalue(d, exact_max=5, n_resamples=200, seed=3) == (p, False)


# --------------------------------------------------------------------------------------------
# McNemar, Fisher, Beta posteriors
# --------------------------------------------------------------------------------------------


def test_mcnemar_edges() -> None:
    assert mcnemar(0, 0) == (1.0, 1.0)
    assert mcnemar(4, 4) == (1.0, 1.0)  # equal discordant counts: no evidence either way
    with pytest.raises(ValueError, match=">= 0"):
        mcnemar(-1, 3)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 25), st.integers(0, 25))
def test_mcnemar_against_the_binomial_law(b: int, c: int) -> None:
    n, k = b + c, min(b, c)
    exact, midp = mcnemar(b, c)
    if n == 0 or b == c:
        assert (exact, midp) == (1.0, 1.0)
        return
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2**n
    assert exact == pytest.approx(min(1.0, 2 * tail), abs=1e-12)
    assert midp == pytest.approx(min(1.0, 2 * tail) - math.comb(n, k) / 2**n, abs=1e-12)


def fisher_extreme_p(n_a: int, n_b: int) -> float:
    """Two-sided Fisher p of [[n_a, 0], [0, n_b]]: hypergeometric tables as likely or less."""
    total = math.comb(n_a + n_b, n_a)
    probs = [math.comb(n_a, x) * math.comb(n_b, n_a - x) / total for x in range(n_a + 1)
             if n_a - x <= n_b]  # fmt: skip
    obs = 1 / total
    return sum(p for p in probs if p <= obs * (1 + 1e-7))


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 12), st.integers(1, 12))
def test_fisher_min_p_matches_the_hypergeometric_law(n_a: int, n_b: int) -> None:
    assert fisher_min_p(n_a, n_b) == pytest.approx(fisher_extreme_p(n_a, n_b), rel=1e-9)


def test_fisher_min_p_hand_values() -> None:
    # 2 vs 4: tables x = 0, 1, 2 have probabilities 6/15, 8/15, 1/15; only x = 2 is as extreme
    assert fisher_min_p(2, 4) == pytest.approx(1 / 15)
    assert fisher_min_p(0, 5) == 1.0 and fisher_min_p(5, 0) == 1.0


def test_prob_b_better_hand_values() -> None:
    # A ~ Beta(1, 1) (no data), B ~ Beta(2, 1): P(B > A) = E[B] = 2/3
    assert prob_b_better(0, 0, 1, 1) == pytest.approx(2 / 3)
    # B ~ Beta(1, 2): P(B > A) = E[B] = 1/3
    assert prob_b_better(0, 0, 0, 1) == pytest.approx(1 / 3)
    assert prob_b_better(0, 0, 0, 0) == pytest.approx(0.5)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 8), st.integers(0, 8), st.integers(0, 8), st.integers(0, 8))
def test_prob_b_better_is_complementary(xa: int, fa: int, xb: int, fb: int) -> None:
    # continuous posteriors: P(B > A) + P(A > B) = 1
    p = prob_b_better(xa, xa + fa, xb, xb + fb)
    q = prob_b_better(xb, xb + fb, xa, xa + fa)
    assert 0.0 <= p <= 1.0
    assert p + q == pytest.approx(1.0, abs=1e-9)


# --------------------------------------------------------------------------------------------
# bootstrap helpers
# --------------------------------------------------------------------------------------------


def test_task_indices_dtype_range_and_seed() -> None:
    idx = task_indices(np.random.default_rng(5), 7, 300)
    assert idx.shape == (300, 7) and idx.dtype == np.uint16
    assert idx.min() >= 0 and idx.max() <= 6
    assert set(np.unique(idx).tolist()) == set(range(7))  # 2100 draws from 7 hit every task
    again = task_indices(np.random.default_rng(5), 7, 300)
    np.testing.assert_array_equal(idx, again)
    big = task_indices(np.random.default_rng(0), 70_000, 1)
    assert big.dtype == np.int64 and big.max() < 70_000


def test_bootstrap_task_means_is_a_gather_of_seeded_indices() -> None:
    v = np.array([0.0, 1.0, 0.5, 0.25])
    got = bootstrap_task_means(v, n_resamples=500, seed=11)
    idx = task_indices(np.random.default_rng(11), v.size, 500)
    np.testing.assert_allclose(got, v[idx].mean(axis=1))
    # every replicate is the mean of 4 values from v: a multiple of 1/16 in [0, 1]
    assert np.allclose(got * 16, np.round(got * 16))
    assert got.min() >= 0.0 and got.max() <= 1.0


def test_bootstrap_task_means_centre() -> None:
    v = np.array([0.0, 0.0, 1.0, 1.0, 1.0])
    got = bootstrap_task_means(v, n_resamples=20_000, seed=0)
    # E = mean(v) = 0.6; sd of one replicate = sqrt(0.24 / 5) ~ 0.22, of the mean ~ 0.0015
    assert abs(got.mean() - 0.6) < 0.01
    assert abs(got.std() - math.sqrt(0.24 / 5)) < 0.01


def test_cluster_bootstrap_ratio_ci_properties() -> None:
    s = np.array([[3.0, 0.0, 1.0, 2.0, 0.5], [0.0, 0.0, 0.0, 0.0, 0.0]])
    k = np.array([[3.0, 2.0, 2.0, 4.0, 1.0], [0.0, 0.0, 0.0, 0.0, 0.0]])
    lo, hi = cluster_bootstrap_ratio_ci(s, k, 0.9, 2000, 1)
    assert lo.shape == (2,) and hi.shape == (2,)
    p = s[0].sum() / k[0].sum()  # 6.5 / 12
    means = s[0] / k[0]
    # a resampled ratio is a K-weighted mean of task means: inside [min, max] of them
    assert means.min() <= lo[0] <= p <= hi[0] <= means.max()
    assert np.isnan(lo[1]) and np.isnan(hi[1])  # no attempts at all


def test_cluster_bootstrap_ratio_ci_ignores_tasks_without_attempts() -> None:
    s = np.array([1.0, 0.0, 2.0, 3.0, 1.0])
    k = np.array([2.0, 1.0, 3.0, 3.0, 2.0])
    base = cluster_bootstrap_ratio_ci(s, k, 0.95, 1000, 4)
    padded = cluster_bootstrap_ratio_ci(np.append(s, 0.0), np.append(k, 0.0), 0.95, 1000, 4)
    assert float(base[0]) == float(padded[0]) and float(base[1]) == float(padded[1])


def test_cluster_bootstrap_ratio_ci_constant_tasks_and_leading_axes() -> None:
    s = np.full((2, 3, 4), 1.0)
    k = np.full((2, 3, 4), 2.0)
    lo, hi = cluster_bootstrap_ratio_ci(s, k, 0.95, 200, 0)
    assert lo.shape == (2, 3)
    np.testing.assert_allclose(lo, 0.5)
    np.testing.assert_allclose(hi, 0.5)


def test_cluster_bootstrap_ratio_ci_keeps_the_estimate_inside() -> None:
    # one large task dominates; the raw 2 % percentile interval of the seeded draws lies
    # below the estimate 4 / 6, and the function widens it to hold the estimate
    s = np.array([9.0, 0.1, 0.2, 0.0, 0.3, 0.4])
    k = np.array([10.0, 1.0, 1.0, 1.0, 1.0, 1.0])
    p = s.sum() / k.sum()
    idx = task_indices(np.random.default_rng(0), 6, 400)
    raw_lo, raw_hi = np.quantile(s[idx].sum(axis=1) / k[idx].sum(axis=1), [0.49, 0.51])
    assert raw_hi < p  # the precondition this test is about
    lo, hi = cluster_bootstrap_ratio_ci(s, k, 0.02, 400, 0)
    assert float(lo) == pytest.approx(raw_lo) and float(hi) == p


def test_bootstrap_interval_percentile_and_expanded_levels() -> None:
    boot = np.random.default_rng(2).normal(0.0, 1.0, 5001)
    lo, hi = bootstrap_interval(boot, 0.0, confidence=0.9, method="percentile")
    assert (lo, hi) == tuple(np.quantile(boot, [0.05, 0.95]))
    # expanded: level a2 with z_{a2} = sqrt(n/(n-1)) * t_{0.95, n-1}; n = 5
    z = math.sqrt(5 / 4) * stats.t.ppf(0.95, 4)
    a2 = 1 - stats.norm.cdf(z)
    elo, ehi = bootstrap_interval(boot, 0.0, confidence=0.9, method="expanded", n_units=5)
    assert elo == pytest.approx(np.quantile(boot, a2))
    assert ehi == pytest.approx(np.quantile(boot, 1 - a2))
    assert elo < lo and ehi > hi
    # fewer than 2 units: no expansion
    assert bootstrap_interval(boot, 0.0, confidence=0.9, method="expanded", n_units=1) == (lo, hi)
    with pytest.raises(ValueError, match="method"):
        bootstrap_interval(boot, 0.0, method="basic")


def test_bca_reduces_to_percentile_without_bias_or_skew() -> None:
    # boot symmetric about the estimate (z0 = 0), jackknife symmetric (acceleration 0)
    half = np.linspace(0.01, 3.0, 500)
    boot = np.concatenate([-half, half])
    jk = np.array([-1.0, 0.0, 1.0])
    got = bootstrap_interval(boot, 0.0, confidence=0.8, method="bca", jackknife=jk)
    assert got == pytest.approx(tuple(np.quantile(boot, [0.1, 0.9])), abs=1e-12)
    # a constant jackknife has no spread: acceleration 0 too
    same = bootstrap_interval(boot, 0.0, confidence=0.8, method="bca", jackknife=np.ones(4))
    assert same == pytest.approx(got, abs=1e-12)


def test_bca_bias_correction_moves_the_interval() -> None:
    # 75 % of replicates below the estimate: z0 = Phi^-1(0.75), levels Phi(2 z0 +- z_{0.9})
    boot = np.arange(1000, dtype=float)
    est = 749.5
    jk = np.array([-1.0, 0.0, 1.0])
    z0 = stats.norm.ppf(0.75)
    q = stats.norm.cdf(2 * z0 + stats.norm.ppf([0.1, 0.9]))
    got = bootstrap_interval(boot, est, confidence=0.8, method="bca", jackknife=jk)
    assert got == pytest.approx(tuple(np.quantile(boot, q)), abs=1e-9)
