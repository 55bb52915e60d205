"""Benchmark: evalkit.stats.leaderboard vs a plain numpy loop over bootstrap draws.

    .venv/bin/python benchmarks/bench_leaderboard.py [--runs 30] [--tasks 100] [--attempts 5] [--draws 2000] [--repeats 5]

Data: ``--runs`` runs x ``--tasks`` tasks x ``--attempts`` attempts of binary rewards (a
logistic ability - difficulty model), seeded, as a Polars trials frame. Contenders, interleaved
in one process (median of ``--repeats``):

* evalkit: ``leaderboard(trials, draws=...)`` end to end (task table, joint task bootstrap as
  one weights matrix, scores as matrix products, rank probabilities, rank intervals, tiers,
  frontier, per-run intervals).
* numpy loop: the same bootstrap written the plain way, one draw at a time (resample task
  indices, per-run pooled score, ranks by argsort), then P(rank = k) and percentile rank
  intervals; it computes less than evalkit (no pairwise max-t, no tiers, no frontier).

Both start from the same per-(run, task) sums for the statistics part; the loop's time
excludes building them. Timing is never part of the unit tests.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np
import polars as pl

import evalkit


def make_trials(runs: int, tasks: int, attempts: int, seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    ability = np.linspace(-1.0, 1.0, runs)
    difficulty = rng.normal(0.0, 1.5, tasks)
    p = 1.0 / (1.0 + np.exp(-(ability[:, None] - difficulty[None, :])))
    passed = rng.random((runs, tasks, attempts)) < p[:, :, None]
    r, t, a = np.meshgrid(np.arange(runs), np.arange(tasks), np.arange(attempts), indexing="ij")
    return pl.DataFrame(
        {
            "run": [f"run-{i:02d}" for i in r.ravel()],
            "task_name": [f"task-{i:03d}" for i in t.ravel()],
            "attempt": a.ravel() + 1,
            "reward": passed.ravel().astype(float),
        }
    )


def numpy_loop(s: np.ndarray, k: np.ndarray, draws: int, seed: int) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    n_runs, n_tasks = s.shape
    ranks = np.empty((draws, n_runs), dtype=np.int64)
    for b in range(draws):
        idx = rng.integers(0, n_tasks, n_tasks)
        score = s[:, idx].sum(axis=1) / k[:, idx].sum(axis=1)
        order = np.argsort(-score, kind="stable")
        ranks[b, order] = np.arange(1, n_runs + 1)
    p_rank = np.stack([(ranks == j).mean(axis=0) for j in range(1, n_runs + 1)], axis=1)
    return p_rank, np.quantile(ranks, 0.025, axis=0), np.quantile(ranks, 0.975, axis=0)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--tasks", type=int, default=100)
    ap.add_argument("--attempts", type=int, default=5)
    ap.add_argument("--draws", type=int, default=2000)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    trials = make_trials(args.runs, args.tasks, args.attempts)
    tt = (
        trials.group_by("run", "task_name")
        .agg(pl.col("reward").sum().alias("s"), pl.len().alias("k"))
        .sort("run", "task_name")
    )
    shape = (args.runs, args.tasks)
    s = tt["s"].to_numpy().reshape(shape)
    k = tt["k"].to_numpy().astype(float).reshape(shape)
    evalkit.stats.leaderboard(trials, draws=200)  # imports and first-call costs out of the way

    times: dict[str, list[float]] = {"evalkit leaderboard": [], "numpy loop": []}
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        lb = evalkit.stats.leaderboard(trials, draws=args.draws, seed=0)
        times["evalkit leaderboard"].append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        p_rank, _, _ = numpy_loop(s, k, args.draws, 0)
        times["numpy loop"].append(time.perf_counter() - t0)

    print(
        f"{args.runs} runs x {args.tasks} tasks x {args.attempts} attempts = {trials.height:,} "
        f"trials, {args.draws:,} draws, median of {args.repeats}; "
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    )
    for name, ts in times.items():
        print(f"  {name:22s} {statistics.median(ts):8.3f} s")
    ratio = statistics.median(times["numpy loop"]) / statistics.median(times["evalkit leaderboard"])
    print(f"  numpy loop / evalkit: {ratio:.1f}x")
    top = lb.row(0, named=True)
    row = tt["run"].unique(maintain_order=True).to_list().index(top["run"])
    print(
        f"  check: leader {top['run']} P(rank 1) evalkit {top['p_rank_1']:.3f}, "
        f"loop {p_rank[row, 0]:.3f} (independent draws: equal up to Monte-Carlo error)"
    )


if __name__ == "__main__":
    main()
