"""Confidence intervals for a pass rate (a proportion) and for a mean reward.

Two layers:

* :func:`proportion_ci` — one binomial proportion from (successes, trials). Wilson score,
  Clopper-Pearson (exact), Jeffreys (with the usual boundary fix) and the exact mid-p interval.
  Counts may be non-integer "effective" counts, which is how the clustered intervals reuse them.
* :func:`clustered_proportion_ci` (and :func:`evalkit.stats.means.clustered_mean_ci`) — a
  pooled rate or mean over tasks that each have one or more attempts. They work on arrays shaped ``(..., n_tasks)`` and
  reduce the last axis, so the coverage simulation (:mod:`evalkit.stats.simulate`) runs the very
  same code, vectorised over replications, that :func:`evalkit.stats.summarize` runs per group.

Estimands (say which one you report; they differ a lot):

* ``"new_tasks"`` (E1, Miller 2024's super-population): how would this agent score on *new tasks
  like these*? Task sampling is the main source of uncertainty, so tasks are the unit.
* ``"same_tasks"`` (E2): if these *same tasks* were re-run, where would the score land? Only
  attempt-to-attempt noise within each task counts. These intervals are much narrower.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from evalkit._lazy import scipy_special as special
from evalkit._lazy import scipy_stats as stats
from evalkit.stats.significance import cluster_bootstrap_ratio_ci

__all__ = [
    "ESTIMANDS",
    "FEW_TASKS",
    "IntervalArrays",
    "check_confidence",
    "clustered_proportion_ci",
    "normalize_estimand",
    "proportion_ci",
    "z_value",
]

Estimand = Literal["new_tasks", "same_tasks"]
ESTIMANDS: dict[str, str] = {
    "new_tasks": "new tasks like these (tasks are sampled; task-clustered)",
    "same_tasks": "re-running these same tasks (attempt noise only)",
}
_ESTIMAND_ALIASES = {"e1": "new_tasks", "e2": "same_tasks"}

#: The exact fallback is used when at most this many tasks show a pass (or a fail). Below it,
#: the design effect cannot be estimated (too few clusters carry events) and the Wilson
#: interval's known weakness near 0 and 1 bites. Chosen by the coverage simulation
#: (docs/coverage.md): 2 leaves one-attempt n = 20, p = 0.05 at 92.5 %, 3 holds every cell.
FEW_TASKS = 3

_PROPORTION_METHODS = {
    "wilson": "wilson",
    "clopper-pearson": "clopper-pearson",
    "cp": "clopper-pearson",
    "beta": "clopper-pearson",
    "exact": "clopper-pearson",
    "jeffreys": "jeffreys",
    "mid-p": "mid-p",
    "midp": "mid-p",
}


def normalize_estimand(estimand: str) -> Estimand:
    """Return the canonical estimand code (``"new_tasks"`` or ``"same_tasks"``)."""
    key = str(estimand).strip().lower().replace("-", "_").replace(" ", "_")
    key = _ESTIMAND_ALIASES.get(key, key)
    if key not in ESTIMANDS:
        raise ValueError(f"estimand must be one of {sorted(ESTIMANDS)}, got {estimand!r}")
    return key  # type: ignore[return-value]


def z_value(confidence: float) -> float:
    """Two-sided normal quantile for ``confidence`` (1.959964 for 0.95)."""
    check_confidence(confidence)
    return float(stats.norm.ppf(0.5 + confidence / 2.0))


def check_confidence(confidence: float) -> None:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")


def method_key(method: str) -> str:
    """A method name as the tables spell it: 'Clopper_Pearson ' -> 'clopper-pearson'."""
    return str(method).strip().lower().replace("_", "-")


def _method_name(method: str) -> str:
    key = method_key(method)
    if key not in _PROPORTION_METHODS:
        raise ValueError(
            f"unknown proportion method {method!r}; use one of {sorted(set(_PROPORTION_METHODS.values()))}"
        )
    return _PROPORTION_METHODS[key]


# --------------------------------------------------------------------------------------------
# one proportion
# --------------------------------------------------------------------------------------------


def proportion_ci(
    successes: float | np.ndarray,
    n: float | np.ndarray,
    *,
    confidence: float = 0.95,
    method: str = "wilson",
) -> tuple[np.ndarray, np.ndarray]:
    """Two-sided interval for a binomial proportion ``successes / n``.

    ``method``: ``"wilson"`` (score interval; good default but under-covers near 0 and 1 at
    small n), ``"clopper-pearson"`` (exact; never under-covers, often over-covers), ``"jeffreys"``
    (Beta(1/2, 1/2) posterior quantiles, with the lower bound 0 at x = 0 and the upper bound 1 at
    x = n) or ``"mid-p"`` (exact mid-p, Lancaster 1961: near-nominal on average).

    Arguments broadcast; non-integer counts are allowed (effective counts). Returns ``(low,
    high)`` arrays (0-d arrays for scalar input). ``n == 0`` gives NaN. The interval always
    contains ``successes / n``.
    """
    check_confidence(confidence)
    name = _method_name(method)
    x, m = np.broadcast_arrays(np.asarray(successes, dtype=float), np.asarray(n, dtype=float))
    x = np.array(x, dtype=float)
    m = np.array(m, dtype=float)
    if np.any(x < 0) or np.any(x > m * (1 + 1e-12) + 1e-12):
        raise ValueError("successes must lie in [0, n]")
    ok = m > 0
    mm = np.where(ok, m, 1.0)
    xx = np.clip(np.where(ok, x, 0.0), 0.0, mm)
    alpha = 1.0 - confidence
    if name == "wilson":
        lo, hi = _wilson(xx, mm, z_value(confidence))
    elif name == "clopper-pearson":
        lo, hi = _clopper_pearson(xx, mm, alpha)
    elif name == "jeffreys":
        lo, hi = _jeffreys(xx, mm, alpha)
    else:
        lo, hi = _mid_p(xx, mm, alpha)
    p = xx / mm
    lo = np.where(xx <= 0, 0.0, np.minimum(lo, p))
    hi = np.where(xx >= mm, 1.0, np.maximum(hi, p))
    lo = np.where(ok, np.clip(lo, 0.0, 1.0), np.nan)
    hi = np.where(ok, np.clip(hi, 0.0, 1.0), np.nan)
    return lo, hi


def _wilson(x: np.ndarray, n: np.ndarray, z: float) -> tuple[np.ndarray, np.ndarray]:
    p = x / n
    z2 = z * z
    denom = 1.0 + z2 / n
    centre = (p + z2 / (2.0 * n)) / denom
    half = z * np.sqrt(np.maximum(p * (1.0 - p), 0.0) / n + z2 / (4.0 * n * n)) / denom
    return centre - half, centre + half


def _clopper_pearson(x: np.ndarray, n: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    tiny = 1e-300
    with np.errstate(invalid="ignore"):
        lo = special.betaincinv(np.maximum(x, tiny), n - x + 1.0, alpha / 2.0)
        hi = special.betaincinv(x + 1.0, np.maximum(n - x, tiny), 1.0 - alpha / 2.0)
    return lo, hi


def _jeffreys(x: np.ndarray, n: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    lo = special.betaincinv(x + 0.5, n - x + 0.5, alpha / 2.0)
    hi = special.betaincinv(x + 0.5, n - x + 0.5, 1.0 - alpha / 2.0)
    return lo, hi


def _mid_p(x: np.ndarray, n: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Exact mid-p limits by vectorised bisection (the tails are monotone in p).

    Lower limit L: P(X > x | L) + P(X = x | L)/2 = alpha/2; upper limit U:
    P(X < x | U) + P(X = x | U)/2 = alpha/2. With the continuous extension
    P(X >= x | p) = I_p(x, n - x + 1), which also serves non-integer effective counts.
    """
    tiny = 1e-300
    a1, b1 = np.maximum(x, tiny), n - x + 1.0  # P(X >= x)
    a2, b2 = x + 1.0, np.maximum(n - x, tiny)  # P(X >= x + 1) = P(X > x)

    def upper_tail(p: np.ndarray) -> np.ndarray:  # increasing in p
        return 0.5 * (special.betainc(a1, b1, p) + special.betainc(a2, b2, p))

    target = alpha / 2.0
    lo_a, lo_b = np.zeros_like(x), np.ones_like(x)
    hi_a, hi_b = np.zeros_like(x), np.ones_like(x)
    for _ in range(52):  # 2**-52: machine precision on [0, 1]
        mid = 0.5 * (lo_a + lo_b)
        above = upper_tail(mid) > target
        lo_b = np.where(above, mid, lo_b)
        lo_a = np.where(above, lo_a, mid)
        mid = 0.5 * (hi_a + hi_b)
        below = (1.0 - upper_tail(mid)) < target  # lower tail P(X < x) + P(X = x)/2
        hi_b = np.where(below, mid, hi_b)
        hi_a = np.where(below, hi_a, mid)
    return 0.5 * (lo_a + lo_b), 0.5 * (hi_a + hi_b)


# --------------------------------------------------------------------------------------------
# task-clustered rate / mean
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class IntervalArrays:
    """Result of a clustered interval, arrays shaped like the input minus its last axis.

    estimate: the pooled value (sum over trials / number of trials).
    low, high: the interval.
    se: standard error of ``estimate`` under the estimand (task-clustered for new_tasks).
    n_eff: effective number of independent trials (N / deff); NaN where not defined.
    deff: design effect = se**2 / (iid variance with the same N); NaN at 0 % and 100 %.
    fallback: True where the exact task-level fallback was used (few tasks with events).
    label: the method actually used (see :func:`clustered_proportion_ci`); for arrays with
    more than one cell the label of the fallback cells is ``fallback_label``.
    """

    estimate: np.ndarray
    low: np.ndarray
    high: np.ndarray
    se: np.ndarray
    n_eff: np.ndarray
    deff: np.ndarray
    fallback: np.ndarray
    label: str
    fallback_label: str


def cluster_ratio_variance(
    totals: np.ndarray,
    attempts: np.ndarray,
    estimate: np.ndarray,
    present: np.ndarray,
    n_tasks: np.ndarray,
    big_n: np.ndarray,
) -> np.ndarray:
    """Task-clustered (linearisation) variance of the pooled ratio sum(totals) / sum(attempts):
    n/(n-1) * sum_i (T_i - estimate * K_i)^2 / N^2 over the tasks present (NaN for one task)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        resid = np.where(present, totals - estimate[..., None] * attempts, 0.0)
        factor = np.where(n_tasks > 1, n_tasks / (n_tasks - 1.0), np.nan)
        return factor * (resid**2).sum(axis=-1) / big_n**2


def as_task_arrays(successes: np.ndarray, attempts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    s = np.asarray(successes, dtype=float)
    k = np.asarray(attempts, dtype=float)
    s, k = np.broadcast_arrays(s, k)
    if s.ndim == 0:
        raise ValueError("expected an array of per-task values (last axis = tasks)")
    return np.asarray(s, dtype=float), np.asarray(k, dtype=float)


def clustered_proportion_ci(
    successes: np.ndarray,
    attempts: np.ndarray,
    *,
    confidence: float = 0.95,
    method: str = "auto",
    estimand: str = "new_tasks",
    n_resamples: int = 10_000,
    seed: int | None = 0,
) -> IntervalArrays:
    """Interval for the pooled pass rate ``sum(successes) / sum(attempts)`` over tasks.

    ``successes[..., i]`` / ``attempts[..., i]``: passes and attempts of task i (last axis =
    tasks; a task with 0 attempts is ignored). Leading axes are independent data sets.

    ``estimand="new_tasks"`` (default) — methods:

    * ``"auto"`` (default): Wilson on the effective sample. With one attempt per task that is
      the plain Wilson interval on the n tasks. With several, n_eff = p(1-p) / se**2, where se
      is the task-clustered (linearisation) standard error, n_eff <= N (Korn & Graubard 1998's
      effective-sample-size idea), and Wilson is applied to (p * n_eff, n_eff). When at most
      :data:`FEW_TASKS` tasks show a pass (or a fail) the design effect is not estimable and
      Wilson under-covers, so the exact mid-p interval is used at task level
      (n_eff = min(n_eff, n_tasks); = n_tasks at 0 % or 100 %). Labels: ``"wilson"``,
      ``"mid-p"`` (one attempt per task), ``"wilson-clustered"``, ``"mid-p-clustered"``.
    * ``"wilson"``, ``"clopper-pearson"``, ``"jeffreys"``, ``"mid-p"``: that method on the same
      effective counts (with the same task-level n_eff when few tasks carry events).
    * ``"cluster-t"``: p ± t(n_tasks - 1) * se, clipped to [0, 1] (collapses to zero width
      when every task has the same rate, e.g. all 0).
    * ``"cluster-bootstrap"``: percentile interval of the pooled rate over task resamples
      (each resampled task brings all its attempts); seeded.
    * ``"iid-wilson"``: Wilson on all trials as if independent. Wrong for repeated attempts
      (covers 72-87 % in the reference simulations); for comparison only.

    ``estimand="same_tasks"``: the tasks are fixed and each attempt is a fresh draw, so
    Var = sum_i K_i p_i (1 - p_i) / N**2 (stratified by task). p_i is estimated with the Jeffreys
    smoothing (S_i + 1/2) / (K_i + 1) so that a 0/K or K/K task still carries re-run noise (and
    one-attempt tasks get a value at all); Wilson is applied on n_eff = N / deff (deff <= 1).
    Label ``"wilson-rerun"``.
    """
    check_confidence(confidence)
    est = normalize_estimand(estimand)
    s, k = as_task_arrays(successes, attempts)
    mkey = method_key(method)
    if est == "same_tasks":
        if mkey not in ("auto", "wilson"):
            raise ValueError("estimand='same_tasks' supports method 'auto' (= 'wilson') only")
        return _rerun_interval(s, k, confidence)
    d = _TaskPool.of(s, k)
    r = _new_tasks_bounds(d, s, k, method, confidence, n_resamples, seed)
    n_eff = d.n_eff if r.n_eff is None else r.n_eff
    return IntervalArrays(
        estimate=d.p,
        low=np.where(d.empty, np.nan, r.low),
        high=np.where(d.empty, np.nan, r.high),
        se=d.se if r.se is None else r.se,
        n_eff=np.where(d.empty, np.nan, n_eff),
        deff=d.deff,
        fallback=np.asarray(r.fallback),
        label=r.label,
        fallback_label=r.fallback_label,
    )


def _new_tasks_bounds(
    d: _TaskPool,
    s: np.ndarray,
    k: np.ndarray,
    method: str,
    confidence: float,
    n_resamples: int,
    seed: int | None,
) -> _Bounds:
    """The ``estimand="new_tasks"`` interval of the chosen method (see clustered_proportion_ci)."""
    mkey = method_key(method)
    if mkey == "auto" or mkey in _PROPORTION_METHODS:
        return _effective_sample_interval(d, mkey, confidence)
    if mkey == "cluster-t":
        return _cluster_t_interval(d, confidence)
    if mkey == "cluster-bootstrap":
        lo, hi = cluster_bootstrap_ratio_ci(s, k, confidence, n_resamples, seed)
        return _Bounds(
            lo, hi, d.no_fallback, "cluster-bootstrap", "cluster-bootstrap", se=np.sqrt(d.v_cl)
        )
    if mkey == "iid-wilson":
        lo, hi = proportion_ci(
            np.nan_to_num(d.big_s), np.where(d.empty, 0.0, d.big_n), confidence=confidence
        )
        return _Bounds(lo, hi, d.no_fallback, "iid-wilson", "iid-wilson", n_eff=d.big_n)
    raise ValueError(
        f"unknown method {method!r}; use 'auto', 'wilson', 'clopper-pearson', 'jeffreys', "
        "'mid-p', 'cluster-t', 'cluster-bootstrap' or 'iid-wilson'"
    )


@dataclass(frozen=True)
class _TaskPool:
    """The pooled rate of tasks with repeated attempts and its task-clustered spread."""

    s: np.ndarray
    k: np.ndarray
    present: np.ndarray
    n_tasks: np.ndarray
    big_n: np.ndarray
    big_s: np.ndarray
    p: np.ndarray
    v_cl: np.ndarray
    deff: np.ndarray
    n_eff: np.ndarray
    se: np.ndarray
    single: np.ndarray
    empty: np.ndarray

    @classmethod
    def of(cls, s: np.ndarray, k: np.ndarray) -> _TaskPool:
        present = k > 0
        n_tasks = present.sum(axis=-1).astype(float)
        big_n, big_s = k.sum(axis=-1), s.sum(axis=-1)
        with np.errstate(invalid="ignore", divide="ignore"):
            p = np.where(big_n > 0, big_s / np.where(big_n > 0, big_n, 1.0), np.nan)
        v_iid = p * (1.0 - p) / np.where(big_n > 0, big_n, np.nan)
        single = np.all(np.where(present, k == 1, True), axis=-1)
        with np.errstate(invalid="ignore", divide="ignore"):
            v_cl = cluster_ratio_variance(s, k, p, present, n_tasks, big_n)
            deff = np.where((p > 0) & (p < 1), v_cl / v_iid, np.nan)
            ess = np.where(v_cl > 0, p * (1.0 - p) / v_cl, big_n)
        ess = np.where(np.isfinite(ess), np.minimum(ess, big_n), n_tasks)
        return cls(
            s=s, k=k, present=present, n_tasks=n_tasks, big_n=big_n, big_s=big_s, p=p,
            v_cl=v_cl, deff=deff, n_eff=np.where(single, n_tasks, ess),
            se=np.where(single, np.sqrt(v_iid), np.sqrt(v_cl)), single=single,
            empty=~(big_n > 0),
        )  # fmt: skip

    @property
    def no_fallback(self) -> np.ndarray:
        return np.zeros_like(self.p, dtype=bool)


@dataclass(frozen=True)
class _Bounds:
    """One method's interval; n_eff / se None: the pool's."""

    low: np.ndarray
    high: np.ndarray
    fallback: np.ndarray
    label: str
    fallback_label: str
    n_eff: np.ndarray | None = None
    se: np.ndarray | None = None


def _effective_sample_interval(d: _TaskPool, mkey: str, confidence: float) -> _Bounds:
    """A binomial interval on the effective sample (p * n_eff, n_eff); the exact mid-p
    (or the chosen method) at task level when few tasks carry a pass or a fail."""
    tasks_pass = (d.present & (d.s > 0)).sum(axis=-1)
    tasks_fail = (d.present & (d.s < d.k)).sum(axis=-1)
    few = np.minimum(tasks_pass, tasks_fail) <= FEW_TASKS
    edge = (d.p <= 0) | (d.p >= 1)
    n_few = np.where(edge, d.n_tasks, np.minimum(d.n_eff, d.n_tasks))
    suffix = "" if bool(np.all(d.single)) else "-clustered"
    base = "wilson" if mkey == "auto" else _method_name(mkey)
    fb_method = "mid-p" if mkey == "auto" else base
    n_use = np.where(few, n_few, d.n_eff)
    pz = np.nan_to_num(d.p)
    nz = np.where(d.empty, 1.0, np.nan_to_num(n_use, nan=1.0))
    lo, hi = proportion_ci(pz * nz, nz, confidence=confidence, method=base)
    sel = few & ~d.empty
    if np.any(sel):
        lo2, hi2 = proportion_ci(
            pz[sel] * nz[sel], nz[sel], confidence=confidence, method=fb_method
        )
        lo = np.array(lo, dtype=float)
        hi = np.array(hi, dtype=float)
        lo[sel] = lo2
        hi[sel] = hi2
    return _Bounds(
        lo, hi, sel, base + suffix, fb_method + suffix, n_eff=np.where(few, n_few, d.n_eff)
    )


def _cluster_t_interval(d: _TaskPool, confidence: float) -> _Bounds:
    """p ± t(n_tasks - 1) * clustered se, clipped to [0, 1]; undefined for one task."""
    df = np.maximum(d.n_tasks - 1.0, 1.0)
    t = stats.t.ppf(0.5 + confidence / 2.0, df)
    half = t * np.sqrt(np.nan_to_num(d.v_cl))
    lo = np.where(d.n_tasks > 1, np.clip(d.p - half, 0.0, 1.0), np.nan)
    hi = np.where(d.n_tasks > 1, np.clip(d.p + half, 0.0, 1.0), np.nan)
    return _Bounds(lo, hi, d.no_fallback, "cluster-t", "cluster-t", se=np.sqrt(d.v_cl))


def _rerun_interval(s: np.ndarray, k: np.ndarray, confidence: float) -> IntervalArrays:
    """estimand 'same_tasks': Wilson on N / deff with the stratified re-run variance."""
    present = k > 0
    big_n, big_s = k.sum(axis=-1), s.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.where(big_n > 0, big_s / np.where(big_n > 0, big_n, 1.0), np.nan)
    kk = np.where(present, k, 0.0)
    pt = (s + 0.5) / (kk + 1.0)
    var = (kk * pt * (1.0 - pt)).sum(axis=-1) / np.where(big_n > 0, big_n, np.nan) ** 2
    pbar = (kk * pt).sum(axis=-1) / np.where(big_n > 0, big_n, np.nan)
    with np.errstate(invalid="ignore", divide="ignore"):
        deff = var / (pbar * (1.0 - pbar) / big_n)
        n_eff = big_n / deff
    lo, hi = proportion_ci(
        np.nan_to_num(p) * np.nan_to_num(n_eff), np.nan_to_num(n_eff), confidence=confidence
    )
    nanmask = ~(big_n > 0)
    return IntervalArrays(
        estimate=p,
        low=np.where(nanmask, np.nan, lo),
        high=np.where(nanmask, np.nan, hi),
        se=np.sqrt(var),
        n_eff=n_eff,
        deff=deff,
        fallback=np.zeros_like(p, dtype=bool),
        label="wilson-rerun",
        fallback_label="wilson-rerun",
    )
