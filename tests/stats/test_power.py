"""stats/power.py: minimum detectable effect and sample size (Miller's z values), the variance
decomposition of paired task scores, and the design effect at its extremes."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from evalkit.stats import minimum_detectable_effect, power_inputs_from_tasks, sample_size
from evalkit.stats.power import design_effect


def test_mde_and_sample_size_are_inverse_and_use_miller_z_values() -> None:
    z = stats.norm.ppf(0.975) + stats.norm.ppf(0.8)
    assert abs(z - (1.959964 + 0.841621)) < 1e-5
    var = 0.09
    mde = minimum_detectable_effect(198, var)
    assert abs(mde - z * math.sqrt(var / 198)) < 1e-15
    assert sample_size(mde, var) == 198
    assert sample_size(0.03, var) == math.ceil(z**2 * var / 0.03**2)
    with pytest.raises(ValueError):
        sample_size(0.0, var)


def test_power_inputs_decompose_variance() -> None:
    # 4 tasks x 2 attempts per run, rewards chosen by hand
    a = np.array([[1, 1], [0, 1], [0, 0], [1, 0]], dtype=float)
    b = np.array([[1, 1], [1, 1], [0, 1], [1, 1]], dtype=float)
    pi = power_inputs_from_tasks(
        a.sum(1), (a**2).sum(1), np.full(4, 2.0), b.sum(1), (b**2).sum(1), np.full(4, 2.0)
    )
    d = b.mean(1) - a.mean(1)
    assert abs(pi.var_diff - d.var(ddof=1)) < 1e-15
    assert abs(pi.sigma2_a - a.var(axis=1, ddof=1).mean()) < 1e-15
    assert abs(pi.sigma2_b - b.var(axis=1, ddof=1).mean()) < 1e-15
    assert abs(pi.omega2 - max(d.var(ddof=1) - pi.sigma2_a / 2 - pi.sigma2_b / 2, 0.0)) < 1e-15
    # more attempts never increase the MDE; more tasks shrink it as 1/sqrt(n)
    assert pi.mde(k_a=10, k_b=10) <= pi.mde(k_a=2, k_b=2) + 1e-15
    assert abs(pi.mde(400) * 10 - pi.mde(4)) < 1e-12
    assert pi.sample_size(pi.mde(50)) == 50
    assert set(pi.to_dict()) >= {"omega2", "sigma2_a", "var_diff"}


def test_power_inputs_with_one_attempt_cannot_split_variance() -> None:
    s = np.array([1.0, 0.0, 1.0, 1.0])
    pi = power_inputs_from_tasks(s, s, np.ones(4), 1 - s, 1 - s, np.ones(4))
    assert math.isnan(pi.omega2) and not math.isnan(pi.var_diff)
    assert pi.mde() > 0
    with pytest.raises(ValueError):
        pi.mde(k_a=5)


def test_design_effect_extremes() -> None:
    k = np.full(10, 4.0)
    copies = np.array([4.0] * 5 + [0.0] * 5)  # attempts are copies of each other
    assert abs(design_effect(copies, copies, k) - 4 * (40 - 1) / 40 * 10 / 9) < 1e-9
    mixed = np.full(10, 2.0)  # every task exactly half: no between-task variance
    assert design_effect(mixed, mixed, k) == 0.0
