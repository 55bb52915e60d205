"""Detector rates per run (share of trials flagged, Wilson CI) and run-vs-run differences.

Intervals come from :mod:`evalkit.stats` (``proportion_ci``, ``paired``); the ``ci_method``
/ ``method`` column says which method gave them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import polars as pl

from evalkit.stats import paired, proportion_ci


def _wilson(x: np.ndarray, n: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray, str]:
    lo, hi = proportion_ci(x, n, confidence=confidence, method="wilson")
    return np.asarray(lo, dtype=float), np.asarray(hi, dtype=float), "wilson"


def _denominator(trials: pl.DataFrame, denominator: str) -> pl.DataFrame:
    if denominator == "all":
        return trials
    if denominator != "with_trajectory":
        raise ValueError("denominator must be 'with_trajectory' or 'all'")
    if "has_trajectory" in trials.columns and trials["has_trajectory"].drop_nulls().len():
        return trials.filter(pl.col("has_trajectory").fill_null(False))
    return trials


def flag_table(
    findings: pl.DataFrame,
    trials: pl.DataFrame,
    *,
    by: str | Sequence[str] = "run",
    detectors: Iterable[str] | None = None,
    denominator: str = "with_trajectory",
) -> pl.DataFrame:
    """One row per (trial, detector): the trial's ``by`` / task columns and ``flagged`` (0/1)."""
    by_cols = [by] if isinstance(by, str) else list(by)
    t = _denominator(trials, denominator)
    keep = ["trial_id", *[c for c in (*by_cols, "task_name") if c in t.columns]]
    t = t.select(keep).unique("trial_id")
    for c in by_cols:
        if c not in t.columns:
            t = t.with_columns(pl.lit("all").alias(c))
    names = (
        list(detectors)
        if detectors is not None
        else sorted(findings["detector"].unique().to_list())
    )
    dets = pl.DataFrame({"detector": names}, schema={"detector": pl.String})
    hit = (
        findings.select("trial_id", "detector").unique().with_columns(pl.lit(1.0).alias("flagged"))
    )
    return (
        t.join(dets, how="cross")
        .join(hit, on=["trial_id", "detector"], how="left")
        .with_columns(pl.col("flagged").fill_null(0.0))
    )


def detector_rates(
    findings: pl.DataFrame,
    trials: pl.DataFrame,
    *,
    by: str | Sequence[str] = "run",
    detectors: Iterable[str] | None = None,
    confidence: float = 0.95,
    denominator: str = "with_trajectory",
) -> pl.DataFrame:
    """Per group (``by``, default the run label) and detector: n_trials, n_flagged, rate (share
    of trials with >= 1 finding), ci_low / ci_high, ci_method.

    The denominator is the trials that have a trajectory (``denominator="all"``: every trial).
    When a task has several attempts in a group, its attempts are not independent: the interval
    is then task-clustered (evalkit.stats.clustered_proportion_ci: Wilson on the effective
    sample, exact mid-p when few tasks carry flags); with one attempt per task it is Wilson.
    """
    by_cols = [by] if isinstance(by, str) else list(by)
    ft = flag_table(findings, trials, by=by_cols, detectors=detectors, denominator=denominator)
    g = (
        ft.group_by(*by_cols, "detector", maintain_order=True)
        .agg(
            pl.len().cast(pl.Int64).alias("n_trials"),
            pl.col("flagged").sum().cast(pl.Int64).alias("n_flagged"),
        )
        .sort(*by_cols, "detector")
    )
    clustered = (
        "task_name" in ft.columns
        and (ft.group_by(*by_cols, "detector", "task_name").len()["len"].max() or 0) > 1
    )
    if not clustered:
        x = g["n_flagged"].to_numpy().astype(float)
        n = g["n_trials"].to_numpy().astype(float)
        lo, hi, method = _wilson(x, n, confidence)
        methods = [method] * g.height
    else:
        lo, hi, methods = _clustered(ft, g, by_cols, confidence)
    return g.with_columns(
        (pl.col("n_flagged") / pl.col("n_trials")).alias("rate"),
        pl.Series("ci_low", lo, dtype=pl.Float64),
        pl.Series("ci_high", hi, dtype=pl.Float64),
        pl.Series("ci_method", methods, dtype=pl.String),
    )


def _clustered(
    ft: pl.DataFrame, g: pl.DataFrame, by_cols: list[str], confidence: float
) -> tuple[list[float], list[float], list[str]]:
    """Task-clustered interval per (group, detector) row of ``g``."""
    from evalkit.stats import clustered_proportion_ci

    per_task = (
        ft.group_by(*by_cols, "detector", pl.col("task_name").fill_null("(unknown task)"))
        .agg(pl.col("flagged").sum().alias("s"), pl.len().alias("k"))
        .group_by(*by_cols, "detector")
        .agg(pl.col("s"), pl.col("k"))
    )
    keyed = {tuple(r[c] for c in (*by_cols, "detector")): r for r in per_task.iter_rows(named=True)}
    lo, hi, methods = [], [], []
    for r in g.iter_rows(named=True):
        t = keyed[tuple(r[c] for c in (*by_cols, "detector"))]
        res = clustered_proportion_ci(
            np.asarray(t["s"], dtype=float), np.asarray(t["k"], dtype=float), confidence=confidence
        )
        lo.append(float(np.asarray(res.low)))
        hi.append(float(np.asarray(res.high)))
        methods.append(str(res.fallback_label if bool(np.asarray(res.fallback)) else res.label))
    return lo, hi, methods


def paired_rate_diff(
    findings: pl.DataFrame,
    trials: pl.DataFrame,
    a: Any,
    b: Any,
    *,
    by: str = "run",
    task: str = "task_name",
    detectors: Iterable[str] | None = None,
    confidence: float = 0.95,
    seed: int = 0,
    denominator: str = "with_trajectory",
) -> pl.DataFrame:
    """Per detector: run ``b`` minus run ``a`` in flag rate, paired on the tasks both ran.

    Per task the flag rate is averaged over its attempts; diff = mean over common tasks of
    (rate_b - rate_a). Interval and p-value from :func:`evalkit.stats.paired` (paired task
    bootstrap, sign-flip permutation p, McNemar when one attempt per task per run); columns:
    detector, n_tasks, rate_a, rate_b, diff, ci_low, ci_high, p_value, mcnemar_exact_p, method.
    """
    ft = flag_table(findings, trials, by=by, detectors=detectors, denominator=denominator)
    ft = ft.filter(pl.col(by).is_in([a, b]))
    rows = []
    for det in ft["detector"].unique(maintain_order=True).to_list():
        sub = ft.filter(pl.col("detector") == det)
        rows.append({"detector": det, **_paired(sub, a, b, by, task, confidence, seed)})
    schema = {
        "detector": pl.String, "n_tasks": pl.Int64, "rate_a": pl.Float64, "rate_b": pl.Float64,
        "diff": pl.Float64, "ci_low": pl.Float64, "ci_high": pl.Float64, "p_value": pl.Float64,
        "mcnemar_exact_p": pl.Float64, "method": pl.String,
    }  # fmt: skip
    return pl.DataFrame(rows, schema=schema, orient="row") if rows else pl.DataFrame(schema=schema)


def _paired(
    sub: pl.DataFrame, a: Any, b: Any, by: str, task: str, confidence: float, seed: int
) -> dict:
    if task not in sub.columns:
        return _empty_row(f"no {task!r} column to pair on")
    sides = set(sub.get_column(by).unique().to_list())
    if a not in sides or b not in sides:
        return _empty_row("a run has no trial with a trajectory")
    try:
        r = paired(sub, a, b, by=by, task=task, reward="flagged", confidence=confidence, seed=seed)
    except ValueError as e:  # e.g. no common task
        return _empty_row(f"not computed: {e}")
    return {
        "n_tasks": int(r.n_tasks), "rate_a": r.mean_a, "rate_b": r.mean_b, "diff": r.diff,
        "ci_low": r.ci_low, "ci_high": r.ci_high, "p_value": r.p_value,
        "mcnemar_exact_p": getattr(r, "mcnemar_exact_p", None), "method": str(r.method),
    }  # fmt: skip


def _empty_row(why: str) -> dict:
    nan = float("nan")
    return {"n_tasks": 0, "rate_a": nan, "rate_b": nan, "diff": nan, "ci_low": nan,
            "ci_high": nan, "p_value": nan, "mcnemar_exact_p": None, "method": why}  # fmt: skip
