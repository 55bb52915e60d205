"""Noise floor, flaky and dead tasks: planted answers."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import evalkit
from evalkit.stats.taskquality import majority_pass_probability


def history(seed: int = 0, attempts: int = 6) -> pl.DataFrame:
    """5 runs of rising ability. Tasks: coin-* pass with probability 0.5 for every run (flaky),
    sep-* pass always for the strong runs and never for the weak ones (informative, stable),
    easy-* always pass, hard-* never pass (dead)."""
    rng = np.random.default_rng(seed)
    rows = []
    for r in range(5):
        for t in range(30):
            kind = ("coin", "sep", "easy", "hard")[t % 4]
            for _ in range(attempts):
                if kind == "coin":
                    ok = rng.random() < 0.5
                elif kind == "sep":
                    ok = r >= 2 + (t % 3) - 1  # threshold varies by task
                else:
                    ok = kind == "easy"
                rows.append({"run": f"r{r}", "task_name": f"{kind}-{t:02d}", "reward": float(ok)})
    return pl.DataFrame(rows)


def test_flaky_tasks_are_exactly_the_planted_coins() -> None:
    ft = evalkit.stats.flaky_tasks(history())
    assert {"task_name", "flaky", "disagreement", "homogeneity_p", "evidence"} <= set(ft.columns)
    flagged = set(ft.filter("flaky")["task_name"])
    coins = {t for t in ft["task_name"] if t.startswith("coin")}
    assert flagged == coins
    sep = ft.filter(pl.col("task_name").str.starts_with("sep"))
    assert (sep["disagreement"] == 0).all()  # each run is consistent on them


def test_one_run_flaky_uses_attempts_only_and_says_so() -> None:
    ft = evalkit.stats.flaky_tasks(history().filter(pl.col("run") == "r0"))
    coin = ft.filter(pl.col("task_name").str.starts_with("coin"))
    assert coin["homogeneity_p"].null_count() == coin.height
    assert coin["evidence"].str.contains("one run").all()


def test_dead_tasks_and_effective_count() -> None:
    df = history()
    dead = evalkit.stats.dead_tasks(df)
    assert set(dead.filter(pl.col("status") == "always pass")["task_name"]) == {
        f"easy-{t:02d}" for t in range(30) if t % 4 == 2
    }
    assert set(dead.filter(pl.col("status") == "always fail")["task_name"]) == {
        f"hard-{t:02d}" for t in range(30) if t % 4 == 3
    }
    info = evalkit.stats.informative_tasks(df)
    assert info["n_tasks"] == 30
    assert info["n_always_pass"] == 7 and info["n_always_fail"] == 7
    assert info["n_informative"] == 16
    # coin tasks barely separate the runs: the effective count sits near the 8 sep tasks
    assert 6 < info["n_effective"] < 12
    # one run's lone task is not called dead
    lone = pl.DataFrame({"run": ["x"], "task_name": ["t"], "reward": [0.0]})
    assert evalkit.stats.dead_tasks(lone).height == 0


def test_noise_floor_from_attempts_known_value() -> None:
    # K = 2 with one pass: a re-run passes by strict majority with P = 1/4, so two re-runs
    # disagree with 2 * 1/4 * 3/4 = 0.375; K = 2 with two passes: q = 1, flip 0
    df = pl.DataFrame(
        {
            "run": ["a"] * 5,
            "task_name": ["t1", "t1", "t2", "t2", "t3"],
            "reward": [1.0, 0.0, 1.0, 1.0, 1.0],
        }
    )
    nf = evalkit.stats.noise_floor_detail(df, "a")
    assert nf.source == "attempts" and "within-run attempts" in nf.note
    assert nf.flip_rate == pytest.approx((0.375 + 0.0) / 2)
    assert nf.n_tasks == 2 and nf.n_tasks_single == 1
    assert evalkit.stats.noise_floor(df, "a") == pytest.approx(0.1875)


def test_noise_floor_between_repeat_jobs() -> None:
    rows = []
    for job, passed in (("j1", {0, 1, 2}), ("j2", {0, 1, 3})):
        rows += [
            {"run": "cfg", "job_name": job, "task_name": f"t{t}", "reward": float(t in passed)}
            for t in range(10)
        ]
    nf = evalkit.stats.noise_floor_detail(pl.DataFrame(rows), "cfg")
    assert nf.source == "repeat runs" and nf.n_jobs == 2
    assert nf.flip_rate == pytest.approx(0.2)  # t2 and t3 flip out of 10


def test_majority_probability_matches_direct_sum() -> None:
    from math import comb

    for k in range(1, 8):
        for p in (0.1, 0.5, 0.8):
            direct = sum(comb(k, j) * p**j * (1 - p) ** (k - j) for j in range(k + 1) if 2 * j > k)
            assert majority_pass_probability(np.array(p), np.array(k)) == pytest.approx(direct)
