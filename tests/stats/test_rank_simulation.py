"""evalkit.stats.rank_simulation: the planted logistic abilities (checked against logit and
an independent task population) and the coverage simulation's bookkeeping on small shapes
whose answer is known (well-separated runs: every interval is the point rank)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import special

from evalkit.stats.rank_simulation import RankCoverage, abilities_for, rank_coverage


def test_abilities_without_task_spread_are_the_logits() -> None:
    rates = np.array([0.1, 0.25, 0.5, 0.8, 0.97])
    a = abilities_for(rates, difficulty_sd=0.0)
    np.testing.assert_allclose(a, special.logit(rates), atol=1e-9)


def test_abilities_hit_the_target_rate_on_an_independent_population() -> None:
    rates = np.array([0.2, 0.45, 0.7])
    a = abilities_for(rates, difficulty_sd=1.5, seed=0)
    pop = np.random.default_rng(12345).normal(0.0, 1.5, 200_000)
    got = special.expit(a[:, None] - pop[None, :]).mean(axis=1)
    # sampling error of a 100k-population mean of expit is ~1e-3
    np.testing.assert_allclose(got, rates, atol=5e-3)
    # spread in difficulty pulls rates towards 1/2: abilities lie further out than the logits
    assert a[0] < special.logit(0.2) and a[2] > special.logit(0.7)
    assert np.all(np.diff(a) > 0)


def test_abilities_are_seeded() -> None:
    rates = np.array([0.3, 0.6])
    np.testing.assert_array_equal(
        abilities_for(rates, 1.0, seed=4), abilities_for(rates, 1.0, seed=4)
    )


def test_separated_runs_are_always_covered_with_point_intervals() -> None:
    # best run first: tier 1 must find index 0, not the last one
    rates = np.array([0.95, 0.05, 0.5])
    cov = rank_coverage(reps=4, rates=rates, n_tasks=60, attempts=(3, 5), draws=200, seed=1)
    assert isinstance(cov, RankCoverage)
    np.testing.assert_array_equal(cov.true_rates, rates)
    assert cov.reps == 4
    np.testing.assert_array_equal(cov.coverage, [1.0, 1.0, 1.0])
    np.testing.assert_array_equal(cov.coverage_percentile, [1.0, 1.0, 1.0])
    assert cov.tier1_has_best == 1.0
    assert cov.mean_width == 0.0  # every interval is [point rank, point rank]


def test_tied_runs_give_shares_of_replicates() -> None:
    rates = np.array([0.5, 0.5, 0.5])
    cov = rank_coverage(reps=5, rates=rates, n_tasks=20, attempts=(1, 1), draws=200, seed=1)
    for share in (*cov.coverage, *cov.coverage_percentile, cov.tier1_has_best):
        assert 0.0 <= share <= 1.0
        assert share * 5 == pytest.approx(round(share * 5))  # k of 5 replicates
    # three runs: a rank interval is at most 1..3 wide
    assert 0.0 <= cov.mean_width <= 2.0
    again = rank_coverage(reps=5, rates=rates, n_tasks=20, attempts=(1, 1), draws=200, seed=1)
    np.testing.assert_array_equal(again.coverage, cov.coverage)
    assert again.mean_width == cov.mean_width
