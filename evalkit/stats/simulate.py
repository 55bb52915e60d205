"""Seeded coverage / type-I error simulation of evalkit's intervals and paired test.

Regenerate the docs table (about 3-4 minutes on 2 cores)::

    python -m evalkit.stats.simulate --out docs/coverage.md

Model (E1, "new tasks like these"): task i has a true pass probability p_i ~ Beta(mu*s, (1-mu)*s)
with s = 1 (U-shaped for every mean rate mu, as agent benchmarks are: most tasks are nearly
always solved or nearly never); each of K attempts passes with probability p_i. The truth is
the population mean mu. The simulation calls the production functions
(:func:`~evalkit.stats.intervals.clustered_proportion_ci`, vectorised over replications, and
:func:`~evalkit.stats.paired.paired_core`'s pieces), not re-implementations.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import polars as pl

from evalkit.stats.intervals import clustered_proportion_ci
from evalkit.stats.paired import paired_interval
from evalkit.stats.significance import bootstrap_task_means, sign_flip_pvalue

__all__ = ["coverage_grid", "main", "paired_grid", "render_markdown"]

N_TASKS = (10, 20, 50, 100)
ATTEMPTS = (1, 3, 5)
RATES = (0.05, 0.5, 0.95)
COMPARE = ("auto", "wilson", "clopper-pearson", "jeffreys", "cluster-t", "iid-wilson")
CI_METHODS = ("percentile", "expanded", "bca")


def _draw(
    rng: np.random.Generator, n: int, k: int, mu: float, reps: int, s: float
) -> tuple[np.ndarray, np.ndarray]:
    p = rng.beta(mu * s, (1 - mu) * s, size=(reps, n))
    return rng.binomial(k, p).astype(float), p


def coverage_grid(
    *,
    n_tasks: Sequence[int] = N_TASKS,
    attempts: Sequence[int] = ATTEMPTS,
    rates: Sequence[float] = RATES,
    methods: Sequence[str] = COMPARE,
    reps: int = 20_000,
    confidence: float = 0.95,
    concentration: float = 1.0,
    estimand: str = "new_tasks",
    seed: int = 0,
) -> pl.DataFrame:
    """Coverage of the pass-rate interval per (n_tasks, attempts, rate, method).

    new_tasks: the truth is the population mean ``rate``. same_tasks: the truth is each
    replication's own task mean sum_i K p_i / N (tasks fixed, attempts re-drawn).
    Columns: n_tasks, attempts, rate, method, coverage, miss_low (truth below the interval),
    miss_high, mean_width, fallback_share (share of replications that used the exact fallback).
    """
    rng = np.random.default_rng(seed)
    rows = []
    for k in attempts:
        for n in n_tasks:
            for mu in rates:
                s, p = _draw(rng, n, k, mu, reps, concentration)
                kk = np.full_like(s, float(k))
                truth = p.mean(axis=1) if estimand == "same_tasks" else np.full(reps, mu)
                for m in methods:
                    r = clustered_proportion_ci(
                        s, kk, confidence=confidence, method=m, estimand=estimand
                    )
                    tol = 1e-12
                    low, high = r.low, r.high
                    rows.append(
                        {
                            "n_tasks": n,
                            "attempts": k,
                            "rate": mu,
                            "method": m,
                            "coverage": float(
                                np.mean((low <= truth + tol) & (truth - tol <= high))
                            ),
                            "miss_low": float(np.mean(truth + tol < low)),
                            "miss_high": float(np.mean(truth - tol > high)),
                            "mean_width": float(np.mean(high - low)),
                            "fallback_share": float(np.mean(r.fallback)),
                        }
                    )
    return pl.DataFrame(rows)


def paired_grid(
    *,
    n_tasks: Sequence[int] = N_TASKS,
    attempts: Sequence[int] = ATTEMPTS,
    rates: Sequence[float] = RATES,
    reps: int = 2_000,
    n_resamples: int = 2_000,
    alpha: float = 0.05,
    effect: float = 0.0,
    concentration: float = 1.0,
    seed: int = 0,
    with_ci: bool = True,
) -> pl.DataFrame:
    """Paired run-vs-run rejection rates and CI coverage per (n_tasks, attempts, rate).

    Both runs share the task rates p_i (the pairing). ``effect = 0``: the null (B's attempts are
    drawn like A's); rejection rate = type-I error. ``effect = delta > 0``: B fixes a share delta
    of each task's failures, p_B,i = p_i + delta (1 - p_i), so the true difference is
    delta (1 - mu). Columns: n_tasks, attempts, rate, truth, reject_signflip (p <= alpha),
    share_exact, share_fallback (<= 3 tasks differ: few-differences bound), and per CI method
    ``reject_<m>`` (interval excludes 0) and ``cover_<m>`` (interval contains the truth); ``with_ci=False`` skips the bootstrap.
    """
    rng = np.random.default_rng(seed)
    rows = []
    for k in attempts:
        for n in n_tasks:
            for mu in rates:
                p = rng.beta(mu * concentration, (1 - mu) * concentration, size=(reps, n))
                pb = p + effect * (1 - p)
                d = (rng.binomial(k, pb) - rng.binomial(k, p)) / k
                truth = effect * (1 - mu)
                pv = np.empty(reps)
                ex = np.empty(reps, dtype=bool)
                fb = np.zeros(reps, dtype=bool)
                los = {m: np.empty(reps) for m in CI_METHODS}
                his = {m: np.empty(reps) for m in CI_METHODS}
                seeds = rng.integers(0, 2**63 - 1, size=reps)
                for r in range(reps):
                    dr = d[r]
                    rs = int(seeds[r])
                    pv[r], ex[r] = sign_flip_pvalue(dr, n_resamples=n_resamples, seed=rs)
                    if not with_ci:
                        continue
                    boot = bootstrap_task_means(dr, n_resamples=n_resamples, seed=rs)
                    for m in CI_METHODS:
                        los[m][r], his[m][r], fb[r] = paired_interval(
                            dr, boot, confidence=1 - alpha, ci_method=m
                        )
                row = {
                    "n_tasks": n,
                    "attempts": k,
                    "rate": mu,
                    "truth": truth,
                    "reject_signflip": float(np.mean(pv <= alpha)),
                    "share_exact": float(np.mean(ex)),
                    "share_fallback": float(np.mean(fb)),
                }
                tol = 1e-12
                for m in CI_METHODS if with_ci else ():
                    row[f"reject_{m}"] = float(np.mean((los[m] > tol) | (his[m] < -tol)))
                    row[f"cover_{m}"] = float(
                        np.mean((los[m] <= truth + tol) & (truth - tol <= his[m]))
                    )
                rows.append(row)
    return pl.DataFrame(rows)


def _cell_table(df: pl.DataFrame, value: str, fmt: str = "{:.3f}") -> list[str]:
    rates = sorted(df["rate"].unique().to_list())
    head = "| tasks | attempts | " + " | ".join(f"rate {r:g}" for r in rates) + " |"
    lines = [head, "|---|---|" + "---|" * len(rates)]
    for (n, k), g in df.sort("attempts", "n_tasks").group_by(
        ["n_tasks", "attempts"], maintain_order=True
    ):
        vals = {r: g.filter(pl.col("rate") == r)[value][0] for r in rates}
        lines.append(f"| {n} | {k} | " + " | ".join(fmt.format(vals[r]) for r in rates) + " |")
    return lines


def render_markdown(
    cov: pl.DataFrame,
    cov_same: pl.DataFrame,
    null: pl.DataFrame,
    alt: pl.DataFrame,
    *,
    params: dict[str, object],
    seconds: float,
) -> str:
    """The docs/coverage.md page."""
    auto = cov.filter(pl.col("method") == "auto")
    out = [
        *_summary_section(auto, null, params, seconds),
        *_auto_section(auto),
        *_other_methods_section(cov),
        *_same_tasks_section(cov_same),
        *_paired_null_section(null),
        *_paired_alternative_section(null, alt, params),
    ]
    return "\n".join(out) + "\n"


def _summary_section(
    auto: pl.DataFrame, null: pl.DataFrame, params: dict[str, object], seconds: float
) -> list[str]:
    worst = auto.sort("coverage").row(0, named=True)
    avg = float(auto["coverage"].mean())
    t1 = float(null["reject_signflip"].max())
    return [
        "# Coverage of evalkit's intervals (generated)",
        "",
        "Generated by `python -m evalkit.stats.simulate --out docs/coverage.md` "
        f"({', '.join(f'{k}={v}' for k, v in params.items())}; {seconds:.0f} s). "
        "Do not edit by hand. Model: per-task pass probability p_i ~ Beta(mu, 1 - mu) "
        "(concentration 1: U-shaped, intra-task correlation 0.5), K attempts per task; "
        "nominal 95 % intervals; estimand *new tasks like these* (truth = mu) unless stated. "
        "See docs/statistics.md for the methods.",
        "",
        "## Summary",
        "",
        f'- `summarize` pass-rate interval (`method="auto"`): worst cell **{worst["coverage"]:.3f}** '
        f"(n = {worst['n_tasks']}, K = {worst['attempts']}, rate {worst['rate']:g}); "
        f"average over the {auto.height} cells **{avg:.3f}**; "
        f"{'every cell >= 0.93' if worst['coverage'] >= 0.93 else 'SOME CELL BELOW 0.93'}.",
        f"- Paired sign-flip test, type-I error at alpha = 0.05: worst cell **{t1:.3f}** "
        f"(average {float(null['reject_signflip'].mean()):.3f}); requirement <= 0.06.",
        "- Over-coverage at small n is forced by discreteness, not slack in the method: with one "
        "attempt per task at n = 10 any interval that covers p = 0.5 when 2 of 10 pass covers "
        "97.9 %, and at p = 0.05 the only options are 91.4 % (miss 2/10) or 98.9 %. Enumerating "
        "the binomial, the best any interval can do on the 12 one-attempt cells while keeping "
        "each >= 93 % is an average of 0.963; several-attempt cells at n = 10 behave alike.",
        "",
    ]


def _auto_section(auto: pl.DataFrame) -> list[str]:
    return [
        '## Pass-rate interval, `method="auto"` (coverage)',
        "",
        *_cell_table(auto, "coverage"),
        "",
        "Mean width:",
        "",
        *_cell_table(auto, "mean_width"),
        "",
        "Share of replications where the exact mid-p fallback was used (<= 3 tasks with a pass, "
        "or <= 3 with a fail):",
        "",
        *_cell_table(auto, "fallback_share", "{:.2f}"),
        "",
    ]


def _other_methods_section(cov: pl.DataFrame) -> list[str]:
    """Coverage of every method per cell, and each method's worst and average cell."""
    out = [
        "## What else was tried (coverage; same draws)",
        "",
        "`wilson` / `clopper-pearson` / `jeffreys`: that method on the effective sample (plain "
        "on one-attempt data), no mid-p fallback. `cluster-t`: p ± t(n-1)·SE_clustered. "
        "`iid-wilson`: Wilson on all trials as if independent (the common mistake).",
        "",
    ]
    methods = cov["method"].unique(maintain_order=True).to_list()
    out.append("| tasks | attempts | rate | " + " | ".join(methods) + " |")
    out.append("|---|---|---|" + "---|" * len(methods))
    for (n, k, mu), g in cov.sort("attempts", "n_tasks", "rate").group_by(
        ["n_tasks", "attempts", "rate"], maintain_order=True
    ):
        vals = {m: g.filter(pl.col("method") == m)["coverage"][0] for m in methods}
        out.append(
            f"| {n} | {k} | {mu:g} | " + " | ".join(f"{vals[m]:.3f}" for m in methods) + " |"
        )
    summ = cov.group_by("method", maintain_order=True).agg(
        pl.col("coverage").min().alias("worst"), pl.col("coverage").mean().alias("average")
    )
    out += ["", "| method | worst cell | average |", "|---|---|---|"]
    out += [
        f"| {r['method']} | {r['worst']:.3f} | {r['average']:.3f} |"
        for r in summ.iter_rows(named=True)
    ]
    return out


def _same_tasks_section(cov_same: pl.DataFrame) -> list[str]:
    same_auto = cov_same.filter(pl.col("method") == "auto")
    return [
        "",
        '## Estimand *re-running these same tasks* (`estimand="same_tasks"`)',
        "",
        "Truth = the replication's own task mean (tasks fixed, attempts re-drawn). With one attempt "
        "per task the re-run noise is not identifiable from the data; the Jeffreys-smoothed "
        "variance then makes the interval conservative.",
        "",
        *_cell_table(same_auto, "coverage"),
        "",
        f"Worst {float(same_auto['coverage'].min()):.3f}, average {float(same_auto['coverage'].mean()):.3f}.",
        "",
    ]


def _paired_null_section(null: pl.DataFrame) -> list[str]:
    out = [
        "## Paired comparison (`paired`)",
        "",
        "Null: both runs draw their attempts from the same p_i. Rejection rate of the sign-flip "
        "p-value at 0.05 (exact enumeration when <= 30 non-zero differences, else Monte Carlo):",
        "",
        *_cell_table(null, "reject_signflip"),
        "",
        "The sign-flip test is exact under the null and conservative when few tasks differ "
        "(with 5 non-zero differences the smallest possible two-sided p is 1/16).",
        "",
        "Rejection rate under the null when the decision is 'the paired CI excludes 0' (the task "
        "bootstrap with each `ci_method`; when <= 3 tasks differ, all three use the "
        "few-differences bound, which always contains 0 when nothing differs):",
        "",
    ]
    out.append("| tasks | attempts | rate | " + " | ".join(CI_METHODS) + " |")
    out.append("|---|---|---|" + "---|" * len(CI_METHODS))
    for r in null.sort("attempts", "n_tasks", "rate").iter_rows(named=True):
        out.append(
            f"| {r['n_tasks']} | {r['attempts']} | {r['rate']:g} | "
            + " | ".join(f"{r[f'reject_{m}']:.3f}" for m in CI_METHODS)
            + " |"
        )
    return out


def _paired_alternative_section(
    null: pl.DataFrame, alt: pl.DataFrame, params: dict[str, object]
) -> list[str]:
    out = [
        "",
        "Coverage of the paired CI for the true difference under an alternative "
        f"(B fixes {params.get('effect', 0.2):g} of each task's failures; truth = "
        "effect·(1 - rate)), and the sign-flip test's power. `share_fallback`: replications "
        "where <= 3 tasks differed (few-differences bound; without it the bootstrap gave "
        "[0, 0] there and covered 26-50 % at rate 0.95, n <= 20):",
        "",
    ]
    cols = ["share_fallback", *(f"cover_{m}" for m in CI_METHODS), "reject_signflip"]
    out.append("| tasks | attempts | rate | truth | " + " | ".join(cols) + " |")
    out.append("|---|---|---|---|" + "---|" * len(cols))
    for r in alt.sort("attempts", "n_tasks", "rate").iter_rows(named=True):
        out.append(
            f"| {r['n_tasks']} | {r['attempts']} | {r['rate']:g} | {r['truth']:.3f} | "
            + " | ".join(f"{r[c]:.3f}" for c in cols)
            + " |"
        )
    for m in CI_METHODS:
        out.append("")
        out.append(
            f"- `{m}`: worst null rejection {float(null[f'reject_{m}'].max()):.3f}, "
            f"coverage under the alternative worst {float(alt[f'cover_{m}'].min()):.3f} / "
            f"average {float(alt[f'cover_{m}'].mean()):.3f}."
        )
    return out


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, help="write the Markdown page here (else print it)")
    ap.add_argument("--reps", type=int, default=20_000, help="replications per coverage cell")
    ap.add_argument("--paired-reps", type=int, default=2_000, help="replications per paired cell")
    ap.add_argument("--resamples", type=int, default=2_000, help="bootstrap resamples / sign flips")
    ap.add_argument("--effect", type=float, default=0.2)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    t0 = time.perf_counter()
    cov = coverage_grid(reps=a.reps, seed=a.seed)
    cov_same = coverage_grid(
        reps=max(a.reps // 4, 500), seed=a.seed + 1, methods=("auto",), estimand="same_tasks"
    )
    kw = {"reps": a.paired_reps, "n_resamples": a.resamples}
    null = paired_grid(seed=a.seed + 2, **kw)
    alt = paired_grid(seed=a.seed + 3, effect=a.effect, **kw)
    params = {
        "reps": a.reps,
        "paired_reps": a.paired_reps,
        "resamples": a.resamples,
        "effect": a.effect,
        "seed": a.seed,
    }
    text = render_markdown(
        cov, cov_same, null, alt, params=params, seconds=time.perf_counter() - t0
    )
    if a.out:
        a.out.write_text(text)
        print(f"wrote {a.out}")
    else:
        print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
