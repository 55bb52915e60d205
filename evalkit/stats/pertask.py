"""Per-task comparison rows for :func:`evalkit.stats.paired` (descriptive, multiplicity-adjusted)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import polars as pl

from evalkit._lazy import scipy_stats as stats
from evalkit.stats.significance import fisher_min_p, prob_b_better

__all__ = ["task_frame"]


def task_frame(
    both: pl.DataFrame,
    a_only: pl.DataFrame,
    b_only: pl.DataFrame,
    task: str,
    binary: bool,
    metric: str,
    ma: np.ndarray,
    mb: np.ndarray,
) -> pl.DataFrame:
    """The per-task frame of :func:`~evalkit.stats.paired.paired` (see its docstring)."""
    rows: list[dict[str, Any]] = []
    use_fisher = binary or metric == "pass"
    for i, r in enumerate(both.iter_rows(named=True)):
        na, nb, xa, xb = r["n_trials"], r["n_trials_b"], r["n_pass"], r["n_pass_b"]
        if use_fisher:
            p = float(stats.fisher_exact([[xa, na - xa], [xb, nb - xb]]).pvalue)
            test, min_p, pbb = "fisher", fisher_min_p(na, nb), prob_b_better(xa, na, xb, nb)
        else:
            p = _welch(
                r["reward_sum"], r["reward_sq_sum"], na, r["reward_sum_b"], r["reward_sq_sum_b"], nb
            )
            test, min_p, pbb = "welch-t", None, None
        rows.append(
            {
                task: r[task],
                "side": "both",
                "n_a": na,
                "n_b": nb,
                "pass_a": xa,
                "pass_b": xb,
                "mean_a": float(ma[i]),
                "mean_b": float(mb[i]),
                "diff": float(mb[i] - ma[i]),
                "test": test,
                "p_value": p,
                "min_p": min_p,
                "prob_b_better": pbb,
            }
        )
    pv = np.array([r["p_value"] for r in rows], dtype=float)
    bh = np.full(pv.size, np.nan)
    holm = np.full(pv.size, np.nan)
    ok = np.isfinite(pv)
    if ok.any():
        bh[ok] = adjust_bh(pv[ok])
        holm[ok] = adjust_holm(pv[ok])
    for r, x, y in zip(rows, bh, holm, strict=True):
        r["p_bh"], r["p_holm"] = float(x), float(y)
    for side, frame in (("a_only", a_only), ("b_only", b_only)):
        for r in frame.iter_rows(named=True):
            own = r["n_pass"] if metric == "pass" else r["reward_sum"]
            mean = own / r["n_trials"]
            rows.append(
                {
                    task: r[task],
                    "side": side,
                    "n_a": r["n_trials"] if side == "a_only" else 0,
                    "n_b": r["n_trials"] if side == "b_only" else 0,
                    "pass_a": r["n_pass"] if side == "a_only" else None,
                    "pass_b": r["n_pass"] if side == "b_only" else None,
                    "mean_a": mean if side == "a_only" else None,
                    "mean_b": mean if side == "b_only" else None,
                }
            )
    schema = {
        task: both.schema[task] if task in both.schema else pl.String(),
        "side": pl.String(),
        "n_a": pl.Int64(),
        "n_b": pl.Int64(),
        "pass_a": pl.Int64(),
        "pass_b": pl.Int64(),
        "mean_a": pl.Float64(),
        "mean_b": pl.Float64(),
        "diff": pl.Float64(),
        "test": pl.String(),
        "p_value": pl.Float64(),
        "p_bh": pl.Float64(),
        "p_holm": pl.Float64(),
        "min_p": pl.Float64(),
        "prob_b_better": pl.Float64(),
    }
    if not rows:
        return pl.DataFrame(schema=schema)
    return pl.DataFrame(rows, schema=schema)


def _welch(sa: float, qa: float, na: int, sb: float, qb: float, nb: int) -> float:
    if na < 2 or nb < 2:
        return math.nan
    ma, mb = sa / na, sb / nb
    va = max(qa - na * ma * ma, 0.0) / (na - 1)
    vb = max(qb - nb * mb * mb, 0.0) / (nb - 1)
    if va == 0 and vb == 0:
        return 1.0 if ma == mb else math.nan
    res = stats.ttest_ind_from_stats(ma, math.sqrt(va), na, mb, math.sqrt(vb), nb, equal_var=False)
    return float(res.pvalue)


def adjust_holm(p: np.ndarray) -> np.ndarray:
    """Holm step-down adjusted p-values (same numbers as statsmodels' multipletests 'holm',
    tested to 1e-12; computed here because that call costs tens of milliseconds)."""
    p = np.asarray(p, dtype=float)
    m = p.size
    if m == 0:
        return p.copy()
    order = np.argsort(p, kind="mergesort")
    adj = np.maximum.accumulate((m - np.arange(m)) * p[order])
    out = np.empty(m)
    out[order] = np.minimum(adj, 1.0)
    return out


def adjust_bh(p: np.ndarray) -> np.ndarray:
    """Benjamini-Hochberg adjusted p-values (statsmodels' 'fdr_bh', tested to 1e-12)."""
    p = np.asarray(p, dtype=float)
    m = p.size
    if m == 0:
        return p.copy()
    order = np.argsort(p, kind="mergesort")
    ranked = p[order] * m / np.arange(1, m + 1)
    adj = np.minimum.accumulate(ranked[::-1])[::-1]
    out = np.empty(m)
    out[order] = np.minimum(adj, 1.0)
    return out
