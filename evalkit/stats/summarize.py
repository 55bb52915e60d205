"""Per-run (per-group) summary: pass rate and mean reward with honest intervals."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from evalkit.stats._frames import as_by_list, task_table
from evalkit.stats.intervals import clustered_proportion_ci, normalize_estimand
from evalkit.stats.means import clustered_mean_ci

__all__ = ["SUMMARY_COLUMNS", "summarize"]

#: Contract columns, in order, after the ``by`` columns.
SUMMARY_COLUMNS = [
    "n_tasks",
    "n_trials",
    "attempts_min",
    "attempts_max",
    "mean_reward",
    "pass_rate",
    "ci_low",
    "ci_high",
    "ci_method",
    "estimand",
]

_EXTRA_SCHEMA: dict[str, pl.DataType] = {
    "confidence": pl.Float64(),
    "se": pl.Float64(),
    "n_eff": pl.Float64(),
    "deff": pl.Float64(),
    "reward_binary": pl.Boolean(),
    "reward_ci_low": pl.Float64(),
    "reward_ci_high": pl.Float64(),
    "reward_ci_method": pl.String(),
    "n_trials_valid": pl.Int64(),
    "n_reward_null": pl.Int64(),
    "mean_reward_valid": pl.Float64(),
    "pass_rate_valid": pl.Float64(),
    "pass_at_1": pl.Float64(),
}
_CONTRACT_SCHEMA: dict[str, pl.DataType] = {
    "n_tasks": pl.Int64(),
    "n_trials": pl.Int64(),
    "attempts_min": pl.Int64(),
    "attempts_max": pl.Int64(),
    "mean_reward": pl.Float64(),
    "pass_rate": pl.Float64(),
    "ci_low": pl.Float64(),
    "ci_high": pl.Float64(),
    "ci_method": pl.String(),
    "estimand": pl.String(),
}


def summarize(
    df: pl.DataFrame | pl.LazyFrame,
    by: str | Sequence[str] | None = "run",
    task: str = "task_name",
    reward: str = "reward",
    confidence: float = 0.95,
    seed: int | None = 0,
    *,
    estimand: str = "new_tasks",
    method: str = "auto",
    reward_method: str = "auto",
    n_resamples: int = 10_000,
) -> pl.DataFrame:
    """One row per group: pass rate and mean reward, with a confidence interval for the pass rate.

    Works on any frame with a group column (or none), a task column and a reward column, e.g.
    ``runs.trials`` or a CSV of trials.

    Definitions (every trial of the group counts; a null reward is 0 and a failure — Harbor
    <= 0.25's convention):

    * ``pass_rate`` = trials with ``reward >= 1`` / all trials (pooled over tasks; with unequal
      attempts per task, tasks weigh by their attempts). ``pass_at_1`` is the task-averaged
      version (each task weight 1); the two agree when every task has the same attempts.
    * ``mean_reward`` = mean reward over all trials.
    * ``ci_low``/``ci_high``: a ``confidence`` interval for the pass rate, for the ``estimand``:
      ``"new_tasks"`` (default; how would it do on new tasks like these — tasks are the sampling
      unit) or ``"same_tasks"`` (how much would these same tasks move on a re-run — attempt
      noise only; much narrower). ``ci_low <= pass_rate <= ci_high`` always.
    * ``ci_method``: the method actually used. With ``method="auto"`` it is chosen from the data
      (see :func:`evalkit.stats.intervals.clustered_proportion_ci`): one attempt per task ->
      ``"wilson"`` (``"mid-p"`` exact when <= 3 tasks pass or <= 3 fail); several attempts ->
      ``"wilson-clustered"`` on the task-clustered effective sample size (``"mid-p-clustered"``
      at task level when few tasks carry passes or fails). ``"clopper-pearson"``, ``"jeffreys"``,
      ``"mid-p"``, ``"wilson"``, ``"cluster-t"``, ``"cluster-bootstrap"`` can be forced.
      Coverage evidence: docs/coverage.md.

    Extra columns: ``confidence``; ``se`` (standard error of pass_rate under the estimand);
    ``n_eff`` (effective number of independent trials); ``deff`` (design effect: clustered /
    iid variance; NaN at 0 % or 100 %); ``reward_binary`` (every reward is 0, 1 or null);
    ``reward_ci_low``/``reward_ci_high``/``reward_ci_method`` (interval for mean_reward: the
    pass-rate interval when rewards are binary, else task-cluster t with df = n_tasks - 1, or
    ``"stratified-t"`` for same_tasks; ``reward_method="cluster-bootstrap"`` for a seeded task
    bootstrap); ``n_trials_valid``, ``n_reward_null`` and the reward-valid-only variants
    ``mean_reward_valid`` and ``pass_rate_valid`` (null rewards left out of the denominator).

    ``by``: a column, a list of columns, or None (one row for the whole frame). ``seed`` and
    ``n_resamples`` are used by bootstrap methods only. Groups are sorted by ``by``.
    """
    est = normalize_estimand(estimand)
    by_cols = as_by_list(by)
    tt = task_table(df, by_cols, task, reward)
    by_schema = {c: tt.schema[c] for c in by_cols}
    schema = {**by_schema, **_CONTRACT_SCHEMA, **_EXTRA_SCHEMA}
    if tt.height == 0:
        return pl.DataFrame(schema=schema)
    groups = tt.partition_by(by_cols, as_dict=True, maintain_order=True) if by_cols else {(): tt}
    rows: list[dict[str, object]] = []
    for key, g in groups.items():
        keyvals = dict(zip(by_cols, key, strict=True))
        rows.append(
            {
                **keyvals,
                **_summarize_group(g, confidence, seed, est, method, reward_method, n_resamples),
            }
        )
    return pl.DataFrame(rows, schema=schema)


def _reward_interval(
    rsum: np.ndarray,
    rsq: np.ndarray,
    k: np.ndarray,
    confidence: float,
    seed: int | None,
    estimand: str,
    reward_method: str,
    n_resamples: int,
) -> tuple[float, float, str]:
    """(low, high, method label) of the mean reward's task-clustered interval."""
    mr = clustered_mean_ci(
        rsum,
        rsq,
        k,
        confidence=confidence,
        method="cluster-t" if reward_method == "auto" else reward_method,
        estimand=estimand,
        n_resamples=n_resamples,
        seed=seed,
    )
    return float(mr.low), float(mr.high), mr.label


def _summarize_group(
    g: pl.DataFrame,
    confidence: float,
    seed: int | None,
    estimand: str,
    method: str,
    reward_method: str,
    n_resamples: int,
) -> dict[str, object]:
    k = g["n_trials"].to_numpy().astype(float)
    s = g["n_pass"].to_numpy().astype(float)
    rsum = g["reward_sum"].to_numpy().astype(float)
    rsq = g["reward_sq_sum"].to_numpy().astype(float)
    n_valid = g["n_valid"].to_numpy()
    big_n = float(k.sum())
    binary = int(g["n_fractional"].sum()) == 0

    pr = clustered_proportion_ci(
        s,
        k,
        confidence=confidence,
        method=method,
        estimand=estimand,
        n_resamples=n_resamples,
        seed=seed,
    )
    label = pr.fallback_label if bool(pr.fallback) else pr.label
    if binary and reward_method == "auto":  # a binary reward's mean is the pass rate
        r_lo, r_hi, r_label = float(pr.low), float(pr.high), label
    else:
        r_lo, r_hi, r_label = _reward_interval(
            rsum, rsq, k, confidence, seed, estimand, reward_method, n_resamples
        )
    nv = int(n_valid.sum())
    return {
        "n_tasks": int(k.size),
        "n_trials": int(big_n),
        "attempts_min": int(k.min()),
        "attempts_max": int(k.max()),
        "mean_reward": float(rsum.sum() / big_n),
        "pass_rate": float(pr.estimate),
        "ci_low": float(pr.low),
        "ci_high": float(pr.high),
        "ci_method": label,
        "estimand": estimand,
        "confidence": float(confidence),
        "se": float(pr.se),
        "n_eff": float(pr.n_eff),
        "deff": float(pr.deff),
        "reward_binary": binary,
        "reward_ci_low": r_lo,
        "reward_ci_high": r_hi,
        "reward_ci_method": r_label,
        "n_trials_valid": nv,
        "n_reward_null": int(big_n) - nv,
        "mean_reward_valid": float(g["reward_sum_valid"].sum() / nv) if nv else np.nan,
        "pass_rate_valid": float(g["n_pass_valid"].sum() / nv) if nv else np.nan,
        "pass_at_1": float(np.mean(s / k)),
    }
