"""Benchmark: evalkit's paired task-cluster bootstrap vs scipy.stats.bootstrap and plain numpy.

    .venv/bin/python benchmarks/bench_bootstrap.py [--tasks 89] [--attempts 5] [--resamples 10000] [--repeats 31]

Data: two runs on the same tasks (shared task difficulty, U-shaped), binary rewards, seeded.
All contenders run in the same process, interleaved, and the median of ``--repeats`` runs is
reported, so machine load affects them alike. Contenders (10,000 resamples each):

* evalkit: ``bootstrap_task_means`` + ``bootstrap_interval`` (what ``paired`` runs): one
  (B, T) uint16 draw of task indices, gather of the per-task differences (a resampled task brings
  all its attempts: for the mean of task means this is exactly the same as resampling the
  attempts, checked below), quantiles. Both the percentile and the expanded interval.
* evalkit end to end: ``paired_core`` = bootstrap + sign-flip p-value (exact or Monte Carlo).
* scipy BCa / percentile: ``scipy.stats.bootstrap`` on the per-task differences, vectorised.
* numpy: a plain ``d[rng.integers(0, T, (B, T))].mean(1)`` + percentile, as a floor.

The interval check compares evalkit's percentile interval with scipy's percentile interval
(the same estimator) in units of the bootstrap standard error, and shows the spread across
seeds (Monte-Carlo error). Timing is never part of the unit tests.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import numpy as np
from scipy import stats

from evalkit.stats.paired import paired_core
from evalkit.stats.significance import bootstrap_interval, bootstrap_task_means, task_indices


def make_data(tasks: int, attempts: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    p = rng.beta(0.5, 0.5, tasks)
    a = rng.random((tasks, attempts)) < p[:, None]
    b = rng.random((tasks, attempts)) < np.clip(p + 0.1 * (1 - p), 0, 1)[:, None]
    return a.astype(float), b.astype(float)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tasks", type=int, default=89)
    ap.add_argument("--attempts", type=int, default=5)
    ap.add_argument("--resamples", type=int, default=10_000)
    ap.add_argument("--repeats", type=int, default=31)
    args = ap.parse_args()
    B = args.resamples
    A, Bm = make_data(args.tasks, args.attempts, seed=0)
    T = A.shape[0]

    # per-task differences: what every contender resamples
    d = Bm.mean(axis=1) - A.mean(axis=1)
    est = float(d.mean())

    # equivalence: resampling whole tasks with all their attempts == resampling task means
    idx = task_indices(np.random.default_rng(0), T, B)
    literal = Bm[idx].mean(axis=(1, 2)) - A[idx].mean(axis=(1, 2))
    assert np.allclose(literal, d[idx].mean(axis=1), atol=1e-12)
    assert np.array_equal(bootstrap_task_means(d, n_resamples=B, seed=0), d[idx].mean(axis=1))

    def evalkit_pct() -> tuple[float, float]:
        boot = bootstrap_task_means(d, n_resamples=B, seed=0)
        return bootstrap_interval(boot, est, method="percentile")

    def evalkit_expanded() -> tuple[float, float]:
        boot = bootstrap_task_means(d, n_resamples=B, seed=0)
        return bootstrap_interval(boot, est, method="expanded", n_units=T)

    def evalkit_paired_core() -> tuple[float, float]:
        r = paired_core(d, n_resamples=B, seed=0)
        return r.ci_low, r.ci_high

    def scipy_bca() -> tuple[float, float]:
        r = stats.bootstrap(
            (d,),
            np.mean,
            n_resamples=B,
            method="BCa",
            vectorized=True,
            rng=np.random.default_rng(0),
        )
        return r.confidence_interval.low, r.confidence_interval.high

    def scipy_pct() -> tuple[float, float]:
        r = stats.bootstrap(
            (d,),
            np.mean,
            n_resamples=B,
            method="percentile",
            vectorized=True,
            rng=np.random.default_rng(0),
        )
        return r.confidence_interval.low, r.confidence_interval.high

    def numpy_plain() -> tuple[float, float]:
        rng = np.random.default_rng(0)
        boot = d[rng.integers(0, T, size=(B, T))].mean(axis=1)
        lo, hi = np.percentile(boot, [2.5, 97.5])
        return float(lo), float(hi)

    contenders: dict[str, Callable[[], tuple[float, float]]] = {
        "evalkit percentile": evalkit_pct,
        "evalkit expanded (paired default CI)": evalkit_expanded,
        "evalkit paired_core (CI + sign-flip p)": evalkit_paired_core,
        "scipy.stats.bootstrap BCa": scipy_bca,
        "scipy.stats.bootstrap percentile": scipy_pct,
        "numpy index resample": numpy_plain,
    }
    times: dict[str, list[float]] = {k: [] for k in contenders}
    results: dict[str, tuple[float, float]] = {}
    for f in contenders.values():  # warm-up (imports, caches)
        f()
    for _ in range(args.repeats):
        for name, f in contenders.items():
            t0 = time.perf_counter()
            results[name] = f()
            times[name].append(time.perf_counter() - t0)
    med = {k: statistics.median(v) * 1e3 for k, v in times.items()}

    print(
        f"paired task-cluster bootstrap: {T} tasks x {args.attempts} attempts, {B} resamples, median of {args.repeats}"
    )
    print(f"{'contender':42s} {'median ms':>10s}  interval")
    for name in contenders:
        lo, hi = results[name]
        print(f"{name:42s} {med[name]:10.2f}  [{lo:+.4f}, {hi:+.4f}]")
    ek = med["evalkit percentile"]
    print()
    print(f"scipy BCa / evalkit        = {med['scipy.stats.bootstrap BCa'] / ek:.2f}x")
    print(f"scipy percentile / evalkit = {med['scipy.stats.bootstrap percentile'] / ek:.2f}x")
    print(f"numpy plain / evalkit      = {med['numpy index resample'] / ek:.2f}x")
    print(
        f"scipy percentile / evalkit paired_core = {med['scipy.stats.bootstrap percentile'] / med['evalkit paired_core (CI + sign-flip p)']:.2f}x"
    )

    # interval agreement, in bootstrap-SE units, against the seed-to-seed spread
    se = float(np.std(bootstrap_task_means(d, n_resamples=B, seed=0), ddof=1))
    lows_e, lows_s = [], []
    for s in range(20):
        lows_e.append(
            bootstrap_interval(bootstrap_task_means(d, n_resamples=B, seed=100 + s), est)[0]
        )
        r = stats.bootstrap(
            (d,),
            np.mean,
            n_resamples=B,
            method="percentile",
            vectorized=True,
            rng=np.random.default_rng(200 + s),
        )
        lows_s.append(r.confidence_interval.low)
    mc = float(np.std(lows_e, ddof=1))
    gap = abs(float(np.mean(lows_e)) - float(np.mean(lows_s)))
    print()
    print(
        f"bootstrap SE {se:.4f}; lower bound over 20 seeds: evalkit {np.mean(lows_e):+.4f}, scipy {np.mean(lows_s):+.4f}"
    )
    print(
        f"gap {gap:.5f} = {gap / se:.3f} SE; seed-to-seed spread (Monte-Carlo error) {mc:.5f} = {mc / se:.3f} SE"
    )


if __name__ == "__main__":
    main()
