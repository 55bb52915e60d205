"""evalkit.stats.leaderboard: planted tiers, rank intervals, both conventions, frontier."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import evalkit
from evalkit.stats.leaderboard import (
    LEADERBOARD_COLUMNS,
    bootstrap_weights,
    pareto_probability,
    point_ranks,
    rank_probabilities,
    run_matrix,
    scores,
)
from evalkit.stats.rank_simulation import rank_coverage


def planted(
    rates: dict[str, float], n_tasks: int, attempts: int = 1, seed: int = 0
) -> pl.DataFrame:
    """Each run passes exactly round(rate * n_tasks) tasks on every attempt; which tasks is
    random per run (so the runs disagree task by task, as real runs do)."""
    rng = np.random.default_rng(seed)
    rows = []
    for run, rate in rates.items():
        passed = set(rng.permutation(n_tasks)[: round(rate * n_tasks)].tolist())
        for t in range(n_tasks):
            for a in range(attempts):
                rows.append(
                    {
                        "run": run,
                        "task_name": f"t{t:03d}",
                        "attempt": a + 1,
                        "reward": float(t in passed),
                    }
                )
    return pl.DataFrame(rows)


def test_planted_tiers_and_ranks() -> None:
    df = planted({"a": 0.9, "b": 0.88, "c": 0.5, "d": 0.48, "e": 0.1}, n_tasks=200)
    lb = evalkit.stats.leaderboard(df, draws=1000)
    assert lb.columns == ["run", *LEADERBOARD_COLUMNS]
    assert lb["run"].to_list() == ["a", "b", "c", "d", "e"]
    assert lb["tier"].to_list() == [1, 1, 2, 2, 3]
    assert lb["rank"].to_list() == [1, 2, 3, 4, 5]
    # a and b are tied within noise: both can be first, neither can be third
    assert lb["rank_low"].to_list()[:2] == [1, 1] and lb["rank_high"].to_list()[:2] == [2, 2]
    assert lb.row(4, named=True)["rank_low"] == lb.row(4, named=True)["rank_high"] == 5
    assert lb["p_rank_1"][0] > 0.5 > lb["p_rank_1"][1] > 0.05
    assert lb["p_rank_1"][2:].sum() == 0
    np.testing.assert_allclose([sum(p) for p in lb["p_rank"].to_list()], 1.0)
    np.testing.assert_allclose(lb["score"].to_numpy(), [0.9, 0.88, 0.5, 0.48, 0.1])
    for r in lb.iter_rows(named=True):
        assert r["ci_low"] <= r["score"] <= r["ci_high"]
        assert r["rank_low"] <= r["rank"] <= r["rank_high"]
    assert lb["n_tasks"].unique().to_list() == [200]
    assert lb["p_frontier"].null_count() == lb.height  # no cost column


def test_conventions_differ_with_unequal_attempts() -> None:
    # x: passes the one task it tried 9 times, fails 9 single-attempt tasks ... pooled 9/18,
    # task mean 1/10; y: half of every task -> 0.5 either way
    rows = [{"run": "x", "task_name": "t0", "reward": 1.0} for _ in range(9)]
    rows += [{"run": "x", "task_name": f"t{i}", "reward": 0.0} for i in range(1, 10)]
    for i in range(10):
        rows += [{"run": "y", "task_name": f"t{i}", "reward": float(a)} for a in (0, 1)]
    df = pl.DataFrame(rows)
    pooled = evalkit.stats.leaderboard(df, metric="pass_rate", draws=200)
    task_mean = evalkit.stats.leaderboard(df, metric="pass_at_1", draws=200)
    x = pooled.filter(pl.col("run") == "x").row(0, named=True)
    assert x["score_pooled"] == pytest.approx(0.5)
    assert x["score_task_mean"] == pytest.approx(0.1)
    assert task_mean["run"].to_list() == ["y", "x"]
    assert task_mean.filter(pl.col("run") == "x")["ci_method"][0].endswith("(task-mean)")


def test_only_shared_tasks_count_and_left_out_are_reported() -> None:
    df = planted({"a": 0.5, "b": 0.5}, n_tasks=20)
    extra = pl.DataFrame(
        {"run": ["a"] * 3, "task_name": ["x1", "x2", "x3"], "attempt": [1] * 3, "reward": [1.0] * 3}
    )
    lb = evalkit.stats.leaderboard(pl.concat([df, extra]), draws=200)
    assert lb["n_tasks"].to_list() == [20, 20]
    assert dict(zip(lb["run"], lb["n_tasks_left_out"], strict=True)) == {"a": 3, "b": 0}
    with pytest.raises(ValueError, match="at least 5 shared tasks"):
        evalkit.stats.leaderboard(planted({"a": 0.5, "b": 0.5}, n_tasks=3), draws=200)
    with pytest.raises(ValueError, match="share no task"):
        evalkit.stats.leaderboard(
            pl.DataFrame({"run": ["a", "b"], "task_name": ["t1", "t2"], "reward": [1.0, 0.0]}),
            draws=200,
        )


def test_cost_frontier_known_answer() -> None:
    df = planted({"cheap": 0.5, "best": 0.9, "dominated": 0.45}, n_tasks=150).with_columns(
        pl.col("run")
        .replace_strict({"cheap": 0.1, "best": 1.0, "dominated": 2.0})
        .alias("cost_usd"),
        pl.lit(10.0).alias("duration_s"),
    )
    lb = evalkit.stats.leaderboard(df, draws=500)
    p = dict(zip(lb["run"], lb["p_frontier"], strict=True))
    assert p["best"] == 1.0 and p["cheap"] == 1.0 and p["dominated"] < 0.05
    assert lb.filter(pl.col("run") == "cheap")["cost_per_attempt"][0] == pytest.approx(0.1)
    # same time for everyone: only the best score is on the time frontier
    pt = dict(zip(lb["run"], lb["p_frontier_time"], strict=True))
    assert pt["best"] == 1.0 and pt["dominated"] == 0.0


def test_unknown_cost_gives_null_frontier() -> None:
    df = planted({"a": 0.5, "b": 0.6}, n_tasks=30).with_columns(
        pl.when(pl.col("run") == "a").then(None).otherwise(1.0).cast(pl.Float64).alias("cost_usd")
    )
    lb = evalkit.stats.leaderboard(df, draws=200)
    row = lb.filter(pl.col("run") == "a").row(0, named=True)
    assert row["p_frontier"] is None and row["cost_per_attempt"] is None


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.floats(-2, 2), min_size=2, max_size=8), st.integers(5, 40), st.integers(0, 10**6)
)
def test_rank_probabilities_are_distributions(shifts: list[float], n_tasks: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    k = rng.integers(1, 6, (len(shifts), n_tasks)).astype(float)
    s = rng.binomial(k.astype(int), 1 / (1 + np.exp(-np.array(shifts)))[:, None]).astype(float)
    w = bootstrap_weights(n_tasks, 200, seed)
    assert (w.sum(axis=1) == n_tasks).all()
    boot = scores(s, k, w, "pooled")
    pr = rank_probabilities(boot)
    np.testing.assert_allclose(pr.sum(axis=1), 1.0)
    # every draw has a rank-1 run (ties share it), so column 1 sums to >= 1
    assert pr[:, 0].sum() >= 1.0 - 1e-12
    assert (point_ranks(boot).min(axis=1) == 1).all()


def test_pareto_probability_point_case() -> None:
    s = np.array([[0.5, 0.9, 0.4]])
    c = np.array([[1.0, 2.0, 3.0]])
    np.testing.assert_array_equal(pareto_probability(s, c), [1.0, 1.0, 0.0])


def test_run_matrix_rejects_empty() -> None:
    with pytest.raises(ValueError, match="no trials"):
        run_matrix(
            pl.DataFrame(schema={"run": pl.String, "task_name": pl.String, "reward": pl.Float64})
        )


def test_bad_metric() -> None:
    with pytest.raises(ValueError, match="unknown metric"):
        evalkit.stats.leaderboard(planted({"a": 0.5}, 5), metric="nope")


def test_one_run_is_rank_one_tier_one() -> None:
    lb = evalkit.stats.leaderboard(planted({"solo": 0.5}, 10), draws=200)
    row = lb.row(0, named=True)
    assert (row["rank"], row["rank_low"], row["rank_high"], row["tier"]) == (1, 1, 1, 1)
    assert row["p_rank_1"] == 1.0


@pytest.mark.slow
def test_rank_interval_and_tier_coverage_on_a_terminal_bench_shape() -> None:
    # 16 models x 74 tasks, 1-9 attempts, true rates 25 %..65 % in steps of 2.7 points
    cov = rank_coverage(reps=100, draws=500, seed=7)
    assert cov.coverage.size == 16
    assert cov.coverage.mean() >= 0.93, cov.coverage
    assert cov.coverage.min() >= 0.9, cov.coverage
    assert cov.tier1_has_best >= 0.93
    # the intervals are informative, not 1..16
    assert cov.mean_width < 10
