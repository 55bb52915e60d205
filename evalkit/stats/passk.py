"""pass@k and pass^k: unbiased per-task estimators and per-group curves.

* pass@k (Chen et al. 2021, arXiv 2107.03374): probability that at least one of k attempts,
  drawn without replacement from a task's n recorded attempts, passes:
  ``1 - C(n - c, k) / C(n, k)``. Unbiased for the task's true pass@k when attempts are iid.
* pass^k (tau-bench, Yao et al. 2024, arXiv 2406.12045): probability that *all* k attempts pass:
  ``C(c, k) / C(n, k)``. A reliability measure; pass^1 = pass@1 = the task's pass rate.

Both are computed as products (never as binomial coefficients, which overflow) and are
vectorised over arrays. ``k > n`` gives NaN (not 1.0: that inflation was a real Inspect bug).
"""

from __future__ import annotations

import numpy as np
import polars as pl

from evalkit.stats._frames import as_by_list, task_table

__all__ = ["pass_at_k", "pass_hat_k", "pass_k_curve", "pass_k_per_task"]


def _prepare(n: object, c: object, k: object) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool]:
    scalar = all(np.ndim(v) == 0 for v in (n, c, k))
    nn, cc, kk = np.broadcast_arrays(np.asarray(n), np.asarray(c), np.asarray(k))
    for name, v in (("n", nn), ("c", cc), ("k", kk)):
        if v.dtype.kind not in "iub" and not np.all(np.equal(np.mod(v, 1), 0)):
            raise ValueError(f"{name} must be whole numbers")
    nn, cc, kk = (np.asarray(v, dtype=np.int64) for v in (nn, cc, kk))
    if np.any(cc < 0) or np.any(cc > nn):
        raise ValueError("c must satisfy 0 <= c <= n")
    if np.any(kk < 1):
        raise ValueError("k must be >= 1")
    return nn, cc, kk, scalar


def _out(x: np.ndarray, scalar: bool) -> float | np.ndarray:
    return float(x) if scalar else x


def pass_at_k(n: int | np.ndarray, c: int | np.ndarray, k: int | np.ndarray) -> float | np.ndarray:
    """Unbiased pass@k for a task with ``n`` attempts of which ``c`` passed.

    ``1 - prod_{j = n-c+1}^{n} (1 - k / j)`` (Chen et al.'s stable form), 1.0 when
    ``n - c < k``, NaN when ``k > n``. Arguments broadcast (numpy arrays); scalars give a float.
    """
    nn, cc, kk, scalar = _prepare(n, c, k)
    valid = kk <= nn
    # log of C(n-c, k) / C(n, k) = sum_{j=n-c+1}^{n} log(1 - k/j); j runs over c values.
    log_ratio = np.zeros(nn.shape, dtype=float)
    zero = (nn - cc < kk) & valid
    active = valid & ~zero & (cc > 0)
    cmax = int(cc[active].max()) if np.any(active) else 0
    for t in range(cmax):
        j = nn - t  # j = n, n-1, ..., n-c+1
        use = active & (t < cc)
        jj = np.where(use, j, 1).astype(float)
        kf = np.where(use, kk, 0).astype(float)
        log_ratio += np.where(use, np.log1p(-kf / jj), 0.0)
    out = -np.expm1(log_ratio) + 0.0  # + 0.0 turns -0.0 (no passes) into 0.0
    out = np.where(kk == 1, cc / np.maximum(nn, 1), out)  # pass@1 = c/n exactly
    out = np.where(zero, 1.0, out)
    out = np.where(valid, out, np.nan)
    return _out(np.clip(out, 0.0, 1.0), scalar)


def pass_hat_k(n: int | np.ndarray, c: int | np.ndarray, k: int | np.ndarray) -> float | np.ndarray:
    """pass^k = C(c, k) / C(n, k) = prod_{j=0}^{k-1} (c - j) / (n - j).

    The unbiased estimate of the probability that k fresh attempts *all* pass. 0 when
    ``c < k``, NaN when ``k > n``. Arguments broadcast; scalars give a float.
    """
    nn, cc, kk, scalar = _prepare(n, c, k)
    valid = kk <= nn
    out = np.ones(nn.shape, dtype=float)
    kmax = int(kk[valid].max()) if np.any(valid) else 0
    for j in range(kmax):
        use = valid & (j < kk)
        num = np.where(use, cc - j, 1).astype(float)
        den = np.where(use, nn - j, 1).astype(float)
        out *= np.where(use, np.maximum(num, 0.0) / den, 1.0)
    out = np.where(valid, out, np.nan)
    return _out(np.clip(out, 0.0, 1.0), scalar)


def pass_k_curve(
    df: pl.DataFrame | pl.LazyFrame,
    by: str | list[str] | None = "run",
    task: str = "task_name",
    reward: str = "reward",
    *,
    max_k: int | None = None,
) -> pl.DataFrame:
    """pass@k and pass^k for every k from 1 to the most attempts any task has, per group.

    A trial passes when ``reward >= 1``; a null reward is a failure (evalkit's default
    convention). For each k, tasks with fewer than k attempts are left out (the estimator needs
    k <= n) and ``n_tasks`` says how many tasks the value averages over — compare curves only
    where ``n_tasks`` is the same. Values are the mean over tasks (each task weight 1).

    Returns one row per group and k: <by...>, k, n_tasks, pass_at_k, pass_hat_k.
    """
    by_cols = as_by_list(by)
    per_k = pass_k_per_task(task_table(df, by_cols, task, reward), max_k)
    out = per_k.group_by([*by_cols, "k"]).agg(
        pl.len().cast(pl.Int64).alias("n_tasks"),
        pl.col("pass_at_k").mean(),
        pl.col("pass_hat_k").mean(),
    )
    return out.sort([*by_cols, "k"], nulls_last=True)


def pass_k_per_task(tt: pl.DataFrame, max_k: int | None = None) -> pl.DataFrame:
    """A task table (``n_trials``, ``n_pass`` per task) with one row per task and k, for
    k = 1 .. the task's attempts (at most ``max_k``), and that task's pass@k and pass^k:
    the estimators run once over all rows (numpy), never per task."""
    n = pl.col("n_trials")
    top = n if max_k is None else pl.min_horizontal(n, pl.lit(int(max_k), pl.Int64))
    long = (
        tt.with_columns(pl.int_ranges(1, top + 1, dtype=pl.Int64).alias("k"))
        .explode("k")
        .drop_nulls("k")
    )
    nn, cc, kk = (long[c].to_numpy() for c in ("n_trials", "n_pass", "k"))
    return long.with_columns(
        pl.Series("pass_at_k", np.atleast_1d(pass_at_k(nn, cc, kk)), dtype=pl.Float64),
        pl.Series("pass_hat_k", np.atleast_1d(pass_hat_k(nn, cc, kk)), dtype=pl.Float64),
    )
