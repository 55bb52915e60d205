"""Per-task comparison rows for :func:`evalkit.stats.paired` (descriptive, multiplicity-adjusted)."""

from __future__ import annotations

import numpy as np
import polars as pl

from evalkit._lazy import scipy_stats as stats
from evalkit.stats.significance import fisher_min_p, prob_b_better

__all__ = ["task_frame"]


SCHEMA = {
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
TABLE = ["n_a", "pass_a", "n_b", "pass_b"]


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
    """The per-task frame of :func:`~evalkit.stats.paired.paired`.

    One row per common task, plus the one-sided tasks with side "a_only"/"b_only": task,
    side, n_a, n_b, pass_a, pass_b, mean_a, mean_b, diff, test, p_value, p_bh, p_holm, min_p,
    prob_b_better. Per-task p-values: Fisher exact (binary rewards) or Welch t (fractional),
    adjusted across tasks by Benjamini-Hochberg (p_bh) and Holm (p_holm). They are
    descriptive: with few attempts a single task can rarely or never reach significance
    (min_p: the smallest p the attempt counts allow; 0.10 at 3 vs 3). prob_b_better:
    P(p_B > p_A) under uniform Beta priors (binary rewards).
    """
    schema = {task: both.schema[task] if task in both.schema else pl.String(), **SCHEMA}
    shared = both.select(
        pl.col(task),
        pl.lit("both").alias("side"),
        pl.col("n_trials").alias("n_a"),
        pl.col("n_trials_b").alias("n_b"),
        pl.col("n_pass").alias("pass_a"),
        pl.col("n_pass_b").alias("pass_b"),
        pl.Series("mean_a", np.asarray(ma, dtype=float)),
        pl.Series("mean_b", np.asarray(mb, dtype=float)),
        pl.Series("diff", np.asarray(mb, dtype=float) - np.asarray(ma, dtype=float)),
    )
    if binary or metric == "pass":
        tests = shared.join(_fisher_tables(shared), on=TABLE, how="left", maintain_order="left")
    else:
        p = _welch(*(both[c].to_numpy() for c in _WELCH_COLUMNS))
        tests = shared.with_columns(
            pl.lit("welch-t").alias("test"),
            pl.Series("p_value", p, dtype=pl.Float64),
            pl.lit(None, pl.Float64).alias("min_p"),
            pl.lit(None, pl.Float64).alias("prob_b_better"),
        )
    pv = tests["p_value"].to_numpy().astype(float)
    bh, holm = np.full(pv.size, np.nan), np.full(pv.size, np.nan)
    ok = np.isfinite(pv)
    if ok.any():
        bh[ok], holm[ok] = adjust_bh(pv[ok]), adjust_holm(pv[ok])
    tests = tests.with_columns(pl.Series("p_bh", bh), pl.Series("p_holm", holm))
    parts = [tests.select(list(schema)).cast(schema)]
    parts += [_one_sided(f, side, task, metric, schema) for side, f in (("a_only", a_only), ("b_only", b_only))]  # fmt: skip
    return pl.concat(parts, how="vertical")


def _fisher_tables(shared: pl.DataFrame) -> pl.DataFrame:
    """Fisher exact p-value, smallest attainable p and P(B better) once per distinct 2x2
    table: a comparison has few distinct (attempts, passes) pairs, however many tasks."""
    rows = []
    for na, xa, nb, xb in shared.select(TABLE).unique().iter_rows():
        p = float(stats.fisher_exact([[xa, na - xa], [xb, nb - xb]]).pvalue)
        rows.append((na, xa, nb, xb, "fisher", p, fisher_min_p(na, nb), prob_b_better(xa, na, xb, nb)))  # fmt: skip
    names = [*TABLE, "test", "p_value", "min_p", "prob_b_better"]
    types = [pl.Int64()] * 4 + [pl.String(), pl.Float64(), pl.Float64(), pl.Float64()]
    return pl.DataFrame(rows, schema=dict(zip(names, types, strict=True)), orient="row").cast(
        {c: shared.schema[c] for c in TABLE}
    )


def _one_sided(
    frame: pl.DataFrame, side: str, task: str, metric: str, schema: dict[str, pl.DataType]
) -> pl.DataFrame:
    """Rows of the tasks only one run has: that side's attempts, passes and mean."""
    own = "n_pass" if metric == "pass" else "reward_sum"
    mine, other = ("a", "b") if side == "a_only" else ("b", "a")
    out = frame.select(
        pl.col(task),
        pl.lit(side).alias("side"),
        pl.col("n_trials").alias(f"n_{mine}"),
        pl.lit(0).alias(f"n_{other}"),
        pl.col("n_pass").alias(f"pass_{mine}"),
        (pl.col(own) / pl.col("n_trials")).alias(f"mean_{mine}"),
    )
    return out.with_columns(
        [pl.lit(None).alias(c) for c in schema if c not in out.columns]
    ).select(list(schema)).cast(schema)  # fmt: skip


_WELCH_COLUMNS = ("reward_sum", "reward_sq_sum", "n_trials", "reward_sum_b", "reward_sq_sum_b", "n_trials_b")  # fmt: skip


def _welch(
    sa: np.ndarray, qa: np.ndarray, na: np.ndarray, sb: np.ndarray, qb: np.ndarray, nb: np.ndarray
) -> np.ndarray:
    """Welch t-test p-value per task from the reward sums (one scipy call for all tasks):
    NaN with fewer than 2 attempts a side; with no variance on either side, 1 when the
    means are equal, else NaN."""
    sa, qa, sb, qb = (np.asarray(x, dtype=float) for x in (sa, qa, sb, qb))
    na, nb = np.asarray(na, dtype=float), np.asarray(nb, dtype=float)
    out = np.full(na.size, np.nan)
    enough = (na >= 2) & (nb >= 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        ma, mb = sa / na, sb / nb
        va = np.maximum(qa - na * ma * ma, 0.0) / (na - 1)
        vb = np.maximum(qb - nb * mb * mb, 0.0) / (nb - 1)
    flat = enough & (va == 0) & (vb == 0)
    out[flat & (ma == mb)] = 1.0
    test = enough & ~flat
    if test.any():
        res = stats.ttest_ind_from_stats(
            ma[test], np.sqrt(va[test]), na[test], mb[test], np.sqrt(vb[test]), nb[test],
            equal_var=False,
        )  # fmt: skip
        out[test] = np.asarray(res.pvalue, dtype=float)
    return out


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
