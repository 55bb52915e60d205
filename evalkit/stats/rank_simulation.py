"""Coverage of the leaderboard's rank intervals and tiers, by simulation on a benchmark shape.

The default shape is Terminal-Bench 2's public table: 16 models x 74 tasks, 1-9 attempts per
(model, task). True pass rates are planted (a logistic model: ability minus task difficulty,
tasks drawn afresh every replicate, so the estimand is the rate on tasks like these); each
replicate's rank intervals are checked against the true ranks, and tier 1 against the true
best model. The percentile interval of the bootstrap ranks is measured beside them as the
naive yardstick.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evalkit._lazy import scipy_special
from evalkit.stats.leaderboard import (
    bootstrap_weights,
    point_ranks,
    rank_intervals,
    scores,
    tiers,
)

__all__ = ["RankCoverage", "abilities_for", "rank_coverage"]


@dataclass(frozen=True)
class RankCoverage:
    """Per run: share of replicates whose rank interval held the true rank (``coverage``) and
    the same for the percentile-of-bootstrap-ranks interval (``coverage_percentile``);
    ``tier1_has_best``: share of replicates whose tier 1 held the truly best run;
    ``mean_width``: mean rank-interval width (high - low)."""

    true_rates: np.ndarray
    coverage: np.ndarray
    coverage_percentile: np.ndarray
    tier1_has_best: float
    mean_width: float
    reps: int


def abilities_for(rates: np.ndarray, difficulty_sd: float, seed: int = 0) -> np.ndarray:
    """Logistic abilities whose mean pass rate over the task population equals ``rates``."""
    pop = np.random.default_rng(seed).normal(0.0, difficulty_sd, 100_000)
    out = []
    for target in np.asarray(rates, dtype=float):
        lo, hi = -15.0, 15.0
        for _ in range(60):  # bisection: the population rate is increasing in the ability
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if scipy_special.expit(mid - pop).mean() < target else (lo, mid)
        out.append(0.5 * (lo + hi))
    return np.array(out)


def rank_coverage(
    reps: int = 200,
    *,
    rates: np.ndarray | None = None,
    n_tasks: int = 74,
    attempts: tuple[int, int] = (1, 9),
    difficulty_sd: float = 1.5,
    draws: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> RankCoverage:
    """Simulate ``reps`` leaderboards (pooled pass rate) and measure coverage.

    ``rates``: the true pass rates (default: 16 runs evenly from 25 % to 65 %, gaps of 2.7
    points, so neighbours are rarely separable).
    """
    true = np.linspace(0.25, 0.65, 16) if rates is None else np.asarray(rates, dtype=float)
    ability = abilities_for(true, difficulty_sd, seed)
    true_rank = point_ranks(true)
    best = int(np.argmax(true))
    rng = np.random.default_rng(seed + 1)
    hit = np.zeros(true.size)
    hit_pct = np.zeros(true.size)
    tier_hit = 0
    width = 0.0
    q = (1 - confidence) / 2
    for rep in range(reps):
        d = rng.normal(0.0, difficulty_sd, n_tasks)
        p = scipy_special.expit(ability[:, None] - d[None, :])
        k = rng.integers(attempts[0], attempts[1] + 1, size=p.shape)
        s = rng.binomial(k, p).astype(float)
        k = k.astype(float)
        boot = scores(s, k, bootstrap_weights(n_tasks, draws, seed + 10_000 + rep), "pooled")
        point = scores(s, k, np.ones((1, n_tasks)), "pooled")[0]
        low, high = rank_intervals(point, boot, confidence)
        hit += (low <= true_rank) & (true_rank <= high)
        width += float((high - low).mean())
        br = point_ranks(boot)
        plo = np.quantile(br, q, axis=0, method="inverted_cdf")
        phi = np.quantile(br, 1 - q, axis=0, method="inverted_cdf")
        hit_pct += (plo <= true_rank) & (true_rank <= phi)
        tier_hit += int(tiers(point, boot, confidence)[best] == 1)
    return RankCoverage(
        true_rates=true,
        coverage=hit / reps,
        coverage_percentile=hit_pct / reps,
        tier1_has_best=tier_hit / reps,
        mean_width=width / reps,
        reps=reps,
    )
