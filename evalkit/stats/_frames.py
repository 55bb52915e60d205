"""Frame plumbing shared by the statistics functions: column checks and the per-task table."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

__all__ = ["as_by_list", "check_columns", "task_table"]


def as_by_list(by: str | Sequence[str] | None) -> list[str]:
    """``None`` -> [], ``"run"`` -> ["run"], a list stays a list."""
    if by is None:
        return []
    if isinstance(by, str):
        return [by]
    out = list(by)
    if not all(isinstance(c, str) for c in out):
        raise TypeError("by must be a column name, a list of column names, or None")
    return out


def check_columns(df: pl.DataFrame, columns: Sequence[str]) -> None:
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ValueError(f"column(s) {missing} not in frame; it has {df.columns}")


def _collect(df: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
    if isinstance(df, pl.LazyFrame):
        return df.collect()
    if not isinstance(df, pl.DataFrame):
        raise TypeError(f"expected a polars DataFrame or LazyFrame, got {type(df).__name__}")
    return df


def task_table(
    df: pl.DataFrame | pl.LazyFrame, by: list[str], task: str, reward: str
) -> pl.DataFrame:
    """One row per (group, task) with the sufficient statistics every estimator here needs.

    Conventions: a trial *passes* when ``reward >= 1``; a null (or NaN) reward counts as 0 and
    as a failure (Harbor <= 0.25's convention); the ``*_valid`` columns use only trials whose
    reward is not null.

    Columns: <by...>, <task>, n_trials, n_pass, reward_sum, reward_sq_sum, n_valid,
    n_pass_valid, reward_sum_valid, n_fractional (rewards not in {0, 1}).
    """
    frame = _collect(df)
    check_columns(frame, [*by, task, reward])
    dup = [c for c in by if c == task]
    if dup:
        raise ValueError("task column cannot also be a by column")
    r = pl.col(reward).cast(pl.Float64, strict=False)
    r = pl.when(r.is_nan()).then(None).otherwise(r)
    keys = [*by, task]
    out = (
        frame.select([*(pl.col(c) for c in keys), r.alias("__r")])
        .with_columns(pl.col("__r").fill_null(0.0).alias("__r0"))
        .group_by(keys)
        .agg(
            pl.len().cast(pl.Int64).alias("n_trials"),
            (pl.col("__r0") >= 1).sum().cast(pl.Int64).alias("n_pass"),
            pl.col("__r0").sum().alias("reward_sum"),
            (pl.col("__r0") ** 2).sum().alias("reward_sq_sum"),
            pl.col("__r").is_not_null().sum().cast(pl.Int64).alias("n_valid"),
            (pl.col("__r") >= 1).sum().cast(pl.Int64).alias("n_pass_valid"),
            pl.col("__r").sum().alias("reward_sum_valid"),
            ((pl.col("__r0") != 0) & (pl.col("__r0") != 1))
            .sum()
            .cast(pl.Int64)
            .alias("n_fractional"),
        )
        .sort(keys, nulls_last=True)
    )
    return out
