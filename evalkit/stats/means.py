"""Interval for a pooled mean reward over tasks with repeated attempts (fractional rewards)."""

from __future__ import annotations

import numpy as np

from evalkit._lazy import scipy_stats as stats
from evalkit.stats.intervals import (
    IntervalArrays,
    as_task_arrays,
    check_confidence,
    cluster_ratio_variance,
    method_key,
    normalize_estimand,
)
from evalkit.stats.significance import cluster_bootstrap_ratio_ci

__all__ = ["clustered_mean_ci"]


def clustered_mean_ci(
    totals: np.ndarray,
    sq_totals: np.ndarray,
    attempts: np.ndarray,
    *,
    confidence: float = 0.95,
    method: str = "cluster-t",
    estimand: str = "new_tasks",
    n_resamples: int = 10_000,
    seed: int | None = 0,
) -> IntervalArrays:
    """Interval for a pooled mean reward ``sum(totals) / sum(attempts)`` (fractional rewards).

    ``totals[..., i]``, ``sq_totals[..., i]``: sum of rewards and of squared rewards of task i.

    * new_tasks, ``"cluster-t"``: mean ± t(n_tasks - 1) * se_clustered (linearisation SE of the
      ratio estimator, with the n/(n-1) finite-cluster factor; Inspect's ``ci(cluster=...)``).
    * new_tasks, ``"cluster-bootstrap"``: percentile interval over task resamples; seeded.
    * same_tasks: Var = sum_i K_i s_i**2 / N**2 with s_i**2 the within-task variance (tasks with
      one attempt use the pooled within-task variance), t with df = sum(K_i - 1).
      Label ``"stratified-t"``.
    """
    check_confidence(confidence)
    est = normalize_estimand(estimand)
    tot, kk = as_task_arrays(totals, attempts)
    sq = np.broadcast_to(np.asarray(sq_totals, dtype=float), tot.shape)
    big_n = kk.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        m = tot.sum(axis=-1) / big_n
        # iid variance of the mean: sample variance of all trials (ddof 1) / N
        var_iid = np.maximum(sq.sum(axis=-1) - big_n * m**2, 0.0) / (big_n - 1.0) / big_n
    if est == "same_tasks":
        return _same_tasks_interval(tot, sq, kk, m, var_iid, confidence)
    return _new_tasks_interval(tot, kk, m, var_iid, confidence, method, n_resamples, seed)


def _same_tasks_interval(
    tot: np.ndarray,
    sq: np.ndarray,
    kk: np.ndarray,
    m: np.ndarray,
    var_iid: np.ndarray,
    confidence: float,
) -> IntervalArrays:
    """Stratified t interval from the within-task variances (estimand ``same_tasks``)."""
    present = kk > 0
    big_n = kk.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        kd = np.where(present, kk, 1.0)
        within_ss = np.where(present, sq - tot**2 / kd, 0.0)
        within_ss = np.maximum(within_ss, 0.0)
        dof = np.where(present, kk - 1.0, 0.0).sum(axis=-1)
        pooled = within_ss.sum(axis=-1) / dof
        s2 = np.where(kk > 1, within_ss / np.where(kk > 1, kk - 1.0, 1.0), pooled[..., None])
        var = (np.where(present, kk * s2, 0.0)).sum(axis=-1) / big_n**2
        t = stats.t.ppf(0.5 + confidence / 2.0, np.where(dof > 0, dof, np.nan))
        deff = var / var_iid  # NaN when every reward is equal (var_iid 0), as below
    half = t * np.sqrt(var)
    return IntervalArrays(
        estimate=m,
        low=m - half,
        high=m + half,
        se=np.sqrt(var),
        n_eff=np.full_like(m, np.nan),
        deff=deff,
        fallback=np.zeros_like(m, dtype=bool),
        label="stratified-t",
        fallback_label="stratified-t",
    )


def _new_tasks_interval(
    tot: np.ndarray,
    kk: np.ndarray,
    m: np.ndarray,
    var_iid: np.ndarray,
    confidence: float,
    method: str,
    n_resamples: int,
    seed: int | None,
) -> IntervalArrays:
    """Cluster-t or cluster-bootstrap interval over tasks (estimand ``new_tasks``)."""
    present = kk > 0
    n_tasks = present.sum(axis=-1).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        v_cl = cluster_ratio_variance(tot, kk, m, present, n_tasks, kk.sum(axis=-1))
        deff = v_cl / var_iid
    mkey = method_key(method)
    if mkey in ("auto", "cluster-t"):
        t = stats.t.ppf(0.5 + confidence / 2.0, np.maximum(n_tasks - 1.0, 1.0))
        half = t * np.sqrt(v_cl)
        lo, hi, label = m - half, m + half, "cluster-t"
    elif mkey == "cluster-bootstrap":
        lo, hi = cluster_bootstrap_ratio_ci(tot, kk, confidence, n_resamples, seed)
        label = "cluster-bootstrap"
    else:
        raise ValueError(f"unknown method {method!r}; use 'cluster-t' or 'cluster-bootstrap'")
    ok = n_tasks > 1
    return IntervalArrays(
        estimate=m,
        low=np.where(ok, lo, np.nan),
        high=np.where(ok, hi, np.nan),
        se=np.sqrt(v_cl),
        n_eff=np.full_like(m, np.nan),
        deff=deff,
        fallback=np.zeros_like(m, dtype=bool),
        label=label,
        fallback_label=label,
    )
