"""summarize and paired on LazyFrames: the same results as on DataFrames, with only the
needed columns read and (paired) only the two runs' rows."""

from __future__ import annotations

import dataclasses

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from evalkit.stats import paired, pass_k_curve, summarize
from tests.stats.conftest import make_trials


@pytest.fixture
def trials() -> pl.DataFrame:
    df = make_trials({"A": 0.0, "B": 0.2, "C": -0.1}, n_tasks=25, attempts=3, seed=4)
    rng = np.random.default_rng(4)
    frac = rng.random(df.height)
    return df.with_columns(  # fractional rewards and a few nulls
        pl.when(pl.Series(frac) < 0.1)
        .then(None)
        .when(pl.Series(frac) < 0.3)
        .then(pl.Series(frac).round(2))
        .otherwise(pl.col("reward"))
        .alias("reward"),
        pl.lit("unused text").alias("notes"),
    )


def poisoned(df: pl.DataFrame, bad_runs: tuple[str, ...] = ()) -> pl.LazyFrame:
    """``df`` as a LazyFrame whose ``notes`` column, and whose rows of ``bad_runs``, fail
    when computed: a query that reads them (no projection / filter pushdown) raises."""
    bad = pl.col("run").is_in(list(bad_runs))
    return (
        df.lazy()
        .with_columns(
            pl.col("notes").str.to_integer(strict=True).alias("notes"),
            pl.when(bad)
            .then(pl.lit("x"))
            .otherwise(pl.col("reward").cast(pl.String))
            .alias("__reward_text"),
        )
        .with_columns(pl.col("__reward_text").cast(pl.Float64, strict=True).alias("reward"))
        .drop("__reward_text")
    )


def test_the_poison_is_real(trials: pl.DataFrame) -> None:
    with pytest.raises(pl.exceptions.PolarsError):
        poisoned(trials).collect()
    with pytest.raises(pl.exceptions.PolarsError):
        poisoned(trials, ("C",)).select("reward").collect()


@pytest.mark.parametrize("by", ["run", None, ["run"]])
def test_summarize_lazy_equals_eager(trials: pl.DataFrame, by) -> None:
    eager = summarize(trials, by=by)
    assert_frame_equal(summarize(trials.lazy(), by=by), eager)
    assert_frame_equal(summarize(poisoned(trials), by=by), eager)  # reads run, task, reward only


def test_summarize_other_methods_lazy(trials: pl.DataFrame) -> None:
    kw = {"method": "cluster-bootstrap", "reward_method": "cluster-bootstrap", "n_resamples": 500}
    assert_frame_equal(summarize(trials.lazy(), **kw), summarize(trials, **kw))


@pytest.mark.parametrize("metric", ["reward", "pass"])
def test_paired_lazy_equals_eager(trials: pl.DataFrame, metric: str) -> None:
    eager = paired(trials, "A", "B", metric=metric, n_resamples=2000)
    # rows of run C cannot even be computed: paired filters to A and B before collecting
    lazy = paired(poisoned(trials, ("C",)), "A", "B", metric=metric, n_resamples=2000)
    for f in dataclasses.fields(eager):
        if f.name == "tasks":
            assert_frame_equal(lazy.tasks, eager.tasks)
        else:
            assert getattr(lazy, f.name) == pytest.approx(getattr(eager, f.name), nan_ok=True)


def test_paired_missing_columns_still_named(trials: pl.DataFrame) -> None:
    with pytest.raises(ValueError, match="not in frame"):
        paired(trials.lazy(), "A", "B", by="model")
    with pytest.raises(TypeError, match="DataFrame or LazyFrame"):
        paired(trials.to_dicts(), "A", "B")


def test_pass_k_curve_lazy_equals_eager(trials: pl.DataFrame) -> None:
    assert_frame_equal(pass_k_curve(trials.lazy()), pass_k_curve(trials))
