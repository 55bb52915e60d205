"""Power analysis for paired run-vs-run comparisons (Miller 2024, "Adding Error Bars to Evals", R5).

Model: task i has true scores x_A,i and x_B,i; an attempt adds noise with mean within-task variance
sigma_A**2 (sigma_B**2). With K_A, K_B attempts and n tasks, the paired mean difference has

    Var(d_bar) = (omega**2 + sigma_A**2 / K_A + sigma_B**2 / K_B) / n
    omega**2   = Var_i(x_B,i - x_A,i)          (between-task variance of the true difference)

so, for a two-sided test at level alpha with power 1 - beta,

    MDE(n) = (z_{alpha/2} + z_beta) * sqrt((omega**2 + sigma_A**2/K_A + sigma_B**2/K_B) / n)
    n(delta) = (z_{alpha/2} + z_beta)**2 * (omega**2 + sigma_A**2/K_A + sigma_B**2/K_B) / delta**2

Estimated from data (see :func:`power_inputs`): sigma_X**2 = mean over tasks of the within-task
sample variance of attempts (ddof 1; needs >= 2 attempts on some task) and
omega**2 = Var_i(d_i) - sigma_A**2/K_A - sigma_B**2/K_B, clipped at 0. Resampling more attempts
only shrinks the sigma part; omega**2 is a floor that only more tasks reduce.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from evalkit._lazy import scipy_stats as stats
from evalkit.stats.means import clustered_mean_ci

__all__ = [
    "PowerInputs",
    "design_effect",
    "minimum_detectable_effect",
    "power_inputs_from_tasks",
    "sample_size",
]


def _z_sum(alpha: float, power: float) -> float:
    if not 0 < alpha < 1 or not 0 < power < 1:
        raise ValueError("alpha and power must be in (0, 1)")
    return float(stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power))


def minimum_detectable_effect(
    n_tasks: float, variance: float, *, alpha: float = 0.05, power: float = 0.80
) -> float:
    """Smallest true mean difference a two-sided level-``alpha`` test detects with ``power``.

    ``variance`` is the per-task variance of the paired difference at the attempt counts you
    plan (``omega**2 + sigma_A**2/K_A + sigma_B**2/K_B``; :meth:`PowerInputs.variance`).
    Same units as the scores (0.05 = 5 percentage points).
    """
    if n_tasks <= 0:
        return math.nan
    return _z_sum(alpha, power) * math.sqrt(max(variance, 0.0) / n_tasks)


def sample_size(effect: float, variance: float, *, alpha: float = 0.05, power: float = 0.80) -> int:
    """Tasks needed so that a true difference ``effect`` is detected with ``power`` (ceil)."""
    if effect == 0:
        raise ValueError("effect must be non-zero")
    n = _z_sum(alpha, power) ** 2 * max(variance, 0.0) / effect**2
    return math.ceil(n * (1 - 1e-12))  # no +1 from rounding noise when n is whole


@dataclass(frozen=True)
class PowerInputs:
    """Variance components of a paired comparison, estimated from per-task data.

    n_tasks: tasks both runs have. k_a, k_b: mean attempts per task. var_diff: Var_i(d_i) of the
    observed per-task differences (ddof 1) at the current attempt counts. sigma2_a, sigma2_b:
    mean within-task attempt variance (NaN with one attempt per task). omega2: between-task
    variance of the true difference (NaN when the sigmas are NaN).
    """

    n_tasks: int
    k_a: float
    k_b: float
    var_diff: float
    sigma2_a: float
    sigma2_b: float
    omega2: float

    def variance(self, k_a: float | None = None, k_b: float | None = None) -> float:
        """Per-task variance of d_i at ``k_a``/``k_b`` attempts (default: the current ones)."""
        if k_a is None and k_b is None:
            return self.var_diff
        ka = self.k_a if k_a is None else k_a
        kb = self.k_b if k_b is None else k_b
        if math.isnan(self.omega2):
            raise ValueError("within-task variance needs >= 2 attempts on some task")
        return self.omega2 + self.sigma2_a / ka + self.sigma2_b / kb

    def mde(
        self,
        n_tasks: float | None = None,
        *,
        k_a: float | None = None,
        k_b: float | None = None,
        alpha: float = 0.05,
        power: float = 0.80,
    ) -> float:
        """Minimum detectable effect at ``n_tasks`` (default: the current n) and attempts."""
        n = self.n_tasks if n_tasks is None else n_tasks
        return minimum_detectable_effect(n, self.variance(k_a, k_b), alpha=alpha, power=power)

    def sample_size(
        self,
        effect: float,
        *,
        k_a: float | None = None,
        k_b: float | None = None,
        alpha: float = 0.05,
        power: float = 0.80,
    ) -> int:
        """Tasks needed to detect ``effect`` at the given attempts per task."""
        return sample_size(effect, self.variance(k_a, k_b), alpha=alpha, power=power)

    def to_dict(self) -> dict[str, float]:
        return {
            k: (None if isinstance(v, float) and math.isnan(v) else v)
            for k, v in asdict(self).items()
        }


def _within_var(sums: np.ndarray, sq: np.ndarray, k: np.ndarray) -> float:
    multi = k >= 2
    if not np.any(multi):
        return math.nan
    v = (sq[multi] - sums[multi] ** 2 / k[multi]) / (k[multi] - 1)
    return float(np.mean(np.maximum(v, 0.0)))


def power_inputs_from_tasks(
    sum_a: np.ndarray,
    sq_a: np.ndarray,
    k_a: np.ndarray,
    sum_b: np.ndarray,
    sq_b: np.ndarray,
    k_b: np.ndarray,
) -> PowerInputs:
    """Estimate :class:`PowerInputs` from per-task reward sums, squared sums and attempts."""
    sum_a, sq_a, k_a, sum_b, sq_b, k_b = (
        np.asarray(v, dtype=float) for v in (sum_a, sq_a, k_a, sum_b, sq_b, k_b)
    )
    n = int(sum_a.size)
    d = sum_b / k_b - sum_a / k_a
    var_d = float(np.var(d, ddof=1)) if n > 1 else math.nan
    s2a, s2b = _within_var(sum_a, sq_a, k_a), _within_var(sum_b, sq_b, k_b)
    # Harmonic-type mean attempts: E[1/K] is what enters the variance of a task mean.
    ka = float(1.0 / np.mean(1.0 / k_a)) if n else math.nan
    kb = float(1.0 / np.mean(1.0 / k_b)) if n else math.nan
    if math.isnan(s2a) or math.isnan(s2b):
        omega2 = math.nan
    else:
        omega2 = max(var_d - s2a / ka - s2b / kb, 0.0)
    return PowerInputs(
        n_tasks=n, k_a=ka, k_b=kb, var_diff=var_d, sigma2_a=s2a, sigma2_b=s2b, omega2=omega2
    )


def design_effect(sums: np.ndarray, sq_sums: np.ndarray, attempts: np.ndarray) -> float:
    """DEFF = SE**2 (task-clustered) / SE**2 (trials treated as iid) for the pooled mean.

    ``sums``/``sq_sums``/``attempts``: per-task reward sums, squared sums and attempt counts.
    1 means repeated attempts are as informative as new tasks; K (attempts per task) means a
    task's attempts are copies of each other. With ICC rho and K attempts, DEFF ~ 1 + (K-1) rho.
    """
    res = clustered_mean_ci(
        np.asarray(sums, float), np.asarray(sq_sums, float), np.asarray(attempts, float)
    )
    return float(res.deff)
