"""N runs against one baseline in one table: each row is :func:`compare` (baseline, run).

Every rule (comparable tasks, per-task pass with several attempts, the paired statistics, the
ship gate) is compare's; this module only loops over the candidates and adjusts the p-values
for the N comparisons.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl

from evalkit.compare.core import compare
from evalkit.compare.select import trials_of
from evalkit.stats._frames import collect
from evalkit.stats.pertask import adjust_bh, adjust_holm

__all__ = ["ADJUSTMENTS", "BASELINE_COLUMNS", "against_baseline"]

#: p-value adjustment across the N comparisons (the same numbers as statsmodels'
#: ``multipletests`` methods "holm" and "fdr_bh").
ADJUSTMENTS = {"holm": adjust_holm, "bh": adjust_bh}

BASELINE_COLUMNS: dict[str, pl.DataType] = {
    "run": pl.String(),
    "baseline": pl.String(),
    "n_tasks": pl.Int64(),
    "pass_rate_baseline": pl.Float64(),
    "pass_rate": pl.Float64(),
    "delta": pl.Float64(),
    "ci_low": pl.Float64(),
    "ci_high": pl.Float64(),
    "p_value": pl.Float64(),
    "p_adjusted": pl.Float64(),
    "adjustment": pl.String(),
    "fixed": pl.Int64(),
    "broken": pl.Int64(),
    "verdict": pl.String(),
    "n_tasks_excluded": pl.Int64(),
}


def against_baseline(
    runs_or_trials: Any,
    baseline: str,
    runs: Sequence[str] | None = None,
    *,
    by: str = "run",
    adjust: str = "holm",
    exclude_tasks: Sequence[str] = (),
    **compare_options: Any,
) -> pl.DataFrame:
    """One row per candidate run: :func:`compare` (``baseline``, run) on pass rate.

    Columns: run, baseline, n_tasks (comparable tasks), pass_rate_baseline, pass_rate
    (task-weighted over those tasks), delta (run - baseline) with its paired task-cluster
    ``ci_low``/``ci_high``, ``p_value`` (sign-flip) and ``p_adjusted`` across the N
    comparisons (``adjust``: "holm" controls the family-wise error, "bh" the false discovery
    rate), fixed / broken (tasks the run newly passes / newly fails), the ship gate's verdict,
    and n_tasks_excluded (``exclude_tasks``, e.g. flaky tasks, left out of every comparison).

    ``runs``: the candidates (default: every other value of the ``by`` column, sorted).
    ``compare_options``: passed to :func:`compare` (checksums, lam, alpha, tau, confidence,
    seed).
    """
    if adjust not in ADJUSTMENTS:
        raise ValueError(f"adjust must be one of {', '.join(ADJUSTMENTS)}, got {adjust!r}")
    names = _candidates(runs_or_trials, baseline, runs, by)
    rows = [
        _row(compare(runs_or_trials, baseline, r, exclude_tasks=exclude_tasks, **compare_options))
        for r in names
    ]
    out = pl.DataFrame(
        rows, schema={k: v for k, v in BASELINE_COLUMNS.items() if k != "p_adjusted"}
    )
    p = out["p_value"].to_numpy()
    adj = np.full(p.size, np.nan)
    ok = np.isfinite(p)
    adj[ok] = ADJUSTMENTS[adjust](p[ok])
    return out.with_columns(
        pl.Series("p_adjusted", adj).fill_nan(None), pl.lit(adjust).alias("adjustment")
    ).select(list(BASELINE_COLUMNS))


def _candidates(
    runs_or_trials: Any, baseline: str, runs: Sequence[str] | None, by: str
) -> list[str]:
    if runs is not None:
        out = [str(r) for r in runs if str(r) != baseline]
    else:
        col = collect(trials_of(runs_or_trials).select(pl.col(by).cast(pl.String).unique()))[by]
        out = sorted(v for v in col.drop_nulls().to_list() if v != baseline)
    if not out:
        raise ValueError(f"no run to compare with the baseline {baseline!r}")
    return out


def _row(cmp: Any) -> dict[str, Any]:
    ps = cmp.pass_stats
    gate = cmp.gate()
    return {
        "run": cmp.b,
        "baseline": cmp.a,
        "n_tasks": len(cmp.paired_tasks),
        "pass_rate_baseline": ps.mean_a if ps else None,
        "pass_rate": ps.mean_b if ps else None,
        "delta": ps.diff if ps else None,
        "ci_low": ps.ci_low if ps else None,
        "ci_high": ps.ci_high if ps else None,
        "p_value": ps.p_value if ps else float("nan"),
        "adjustment": "",
        "fixed": len(cmp.fixed),
        "broken": len(cmp.broken),
        "verdict": gate.verdict,
        "n_tasks_excluded": len(cmp.options.get("exclude_tasks", ())),
    }
