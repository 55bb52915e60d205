"""Which tasks carry the signal: noise floor, flaky tasks, dead tasks.

A trial passes when ``reward >= 1`` (a null reward is a fail), as everywhere in evalkit.stats.
A task "flips" between two runs when its per-task pass (strict majority of its attempts, the
rule of :func:`evalkit.compare.compare`) differs.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np
import polars as pl

from evalkit._lazy import scipy_stats as stats
from evalkit.stats._frames import as_lazy, check_columns, collect, task_table

__all__ = [
    "NoiseFloor",
    "dead_tasks",
    "flaky_task_names",
    "flaky_tasks",
    "informative_tasks",
    "majority_pass_probability",
    "noise_floor",
    "noise_floor_detail",
]


@dataclass(frozen=True)
class NoiseFloor:
    """How often a run flips against itself.

    ``flip_rate``: share of tasks whose per-task pass differs between two runs of the same
    configuration. ``source``: "repeat runs" (measured between the run's jobs, mean over job
    pairs on their shared tasks) or "attempts" (one job only: expected flip rate between two
    re-runs that draw each task's attempts from the observed ones). ``n_tasks``: tasks
    used; ``n_tasks_single``: tasks with one attempt (no within-run estimate; left out).
    """

    run: str
    flip_rate: float
    source: str
    n_tasks: int
    n_tasks_single: int
    n_jobs: int

    @property
    def note(self) -> str:
        if self.source == "repeat runs":
            return f"measured between {self.n_jobs} runs of the same configuration"
        return "estimated from within-run attempts (only one run of this configuration)"


def majority_pass_probability(p: np.ndarray, k: np.ndarray) -> np.ndarray:
    """P(more than half of k attempts pass) when each passes with probability p."""
    k = np.asarray(k, dtype=float)
    return stats.binom.sf(np.floor(k / 2.0), k, p)


def noise_floor(
    trials: pl.DataFrame | pl.LazyFrame,
    a: str,
    *,
    by: str = "run",
    task: str = "task_name",
    reward: str = "reward",
    job: str = "job_name",
) -> float:
    """Flip rate of run ``a`` against itself (:func:`noise_floor_detail` says how)."""
    return noise_floor_detail(trials, a, by=by, task=task, reward=reward, job=job).flip_rate


def noise_floor_detail(
    trials: pl.DataFrame | pl.LazyFrame,
    a: str,
    *,
    by: str = "run",
    task: str = "task_name",
    reward: str = "reward",
    job: str = "job_name",
) -> NoiseFloor:
    """The A -> A flip rate of run ``a`` (the value ``by`` has for it), to set beside A -> B.

    With several jobs of the run (the same configuration run again) the flips between them are
    counted. With one, each task's attempts stand in for re-runs: with s of K attempts
    passing, a re-run of K attempts passes the task with q = P(Binomial(K, s/K) > K/2), and two
    re-runs disagree with probability 2q(1-q); the mean over tasks with K >= 2.
    """
    frame = as_lazy(trials).filter(pl.col(by).cast(pl.String) == str(a))
    names = frame.collect_schema().names()
    jobs_col = [job] if job in names else []
    tt = task_table(frame, jobs_col, task, reward)
    if tt.height == 0:
        raise ValueError(f"no trials of {a!r} in column {by!r}")
    jobs = tt[job].unique().drop_nulls().to_list() if jobs_col else []
    if len(jobs) >= 2:
        return _between_jobs(tt, str(a), job, task, len(jobs))
    per_task = tt.group_by(task).agg(pl.col("n_pass").sum(), pl.col("n_trials").sum())
    k = per_task["n_trials"].to_numpy().astype(float)
    s = per_task["n_pass"].to_numpy().astype(float)
    multi = k >= 2
    q = majority_pass_probability(s[multi] / k[multi], k[multi])
    flip = float(np.mean(2 * q * (1 - q))) if multi.any() else float("nan")
    return NoiseFloor(str(a), flip, "attempts", int(multi.sum()), int((~multi).sum()), 1)


def _between_jobs(tt: pl.DataFrame, run: str, job: str, task: str, n_jobs: int) -> NoiseFloor:
    passed = tt.select(
        job, task, (pl.col("n_pass") * 2 > pl.col("n_trials")).alias("p")
    )  # strict majority
    by_job = {
        k[0]: dict(zip(g[task].to_list(), g["p"].to_list(), strict=True))
        for k, g in passed.group_by(job, maintain_order=True)
    }
    rates, used = [], set()
    for x, y in combinations(sorted(by_job, key=str), 2):
        shared = set(by_job[x]) & set(by_job[y])
        if shared:
            rates.append(np.mean([by_job[x][t] != by_job[y][t] for t in shared]))
            used |= shared
    flip = float(np.mean(rates)) if rates else float("nan")
    return NoiseFloor(run, flip, "repeat runs", len(used), 0, n_jobs)


def _per_run_task(
    trials: pl.DataFrame | pl.LazyFrame, by: str, task: str, reward: str
) -> pl.DataFrame:
    frame = as_lazy(trials).filter(pl.col(by).is_not_null() & pl.col(task).is_not_null())
    check_columns(frame, [by, task, reward])
    return task_table(frame, [by], task, reward)


def flaky_tasks(
    trials: pl.DataFrame | pl.LazyFrame,
    by: str = "run",
    *,
    task: str = "task_name",
    reward: str = "reward",
    min_disagreement: float = 0.25,
    alpha: float = 0.05,
) -> pl.DataFrame:
    """Per task: does its outcome depend on the agent, or is it a coin flip for everyone?

    Columns: task_name, n_runs, n_attempts, pass_rate, disagreement (share of attempt pairs
    of the same run that disagree, pooled over runs; 0 when every run is consistent),
    homogeneity_p (chi-square test that every run has the same pass rate on it; null with
    one run), flaky, evidence.

    ``flaky``: disagreement >= ``min_disagreement`` and the runs are not distinguishable on
    it (homogeneity_p >= ``alpha``), i.e. attempts of one agent disagree as often as
    different agents do: the outcome is not a property of the agent. With one run only the
    first condition can be checked and the evidence says so. Tasks with no run of two or
    more attempts are never flaky (nothing to measure). Sorted by disagreement, highest first.
    """
    tt = _per_run_task(trials, by, task, reward)
    k = pl.col("n_trials")
    s = pl.col("n_pass")
    agg = (
        tt.group_by(task)
        .agg(
            pl.len().alias("n_runs"),
            k.sum().alias("n_attempts"),
            s.sum().alias("n_pass"),
            (2 * s * (k - s)).sum().alias("_dis"),
            (k * (k - 1)).sum().alias("_pairs"),
            pl.col("n_pass").alias("_s"),
            pl.col("n_trials").alias("_k"),
        )
        .sort(task)
    )
    hom = [_homogeneity(sv, kv) for sv, kv in zip(agg["_s"], agg["_k"], strict=True)]
    out = agg.with_columns(
        (pl.col("n_pass") / pl.col("n_attempts")).alias("pass_rate"),
        pl.when(pl.col("_pairs") > 0).then(pl.col("_dis") / pl.col("_pairs")).alias("disagreement"),
        pl.Series("homogeneity_p", hom, dtype=pl.Float64),
    )
    noisy = pl.col("disagreement").fill_null(0) >= min_disagreement
    same = pl.col("homogeneity_p").is_null() | (pl.col("homogeneity_p") >= alpha)
    evidence = pl.format(
        "{}/{} attempts pass; {}% of same-run attempt pairs disagree; {}",
        "n_pass",
        "n_attempts",
        (pl.col("disagreement").fill_null(0) * 100).round(0).cast(pl.Int64),
        pl.when(pl.col("homogeneity_p").is_null())
        .then(pl.lit("one run: attempts only"))
        .otherwise(pl.format("runs differ on it: p = {}", pl.col("homogeneity_p").round(3))),
    )
    return (
        out.with_columns((noisy & same).alias("flaky"), evidence.alias("evidence"))
        .select(
            task,
            "n_runs",
            "n_attempts",
            "pass_rate",
            "disagreement",
            "homogeneity_p",
            "flaky",
            "evidence",
        )
        .sort(["flaky", "disagreement"], descending=True, nulls_last=True)
    )


def flaky_task_names(trials: pl.DataFrame | pl.LazyFrame, by: str = "run") -> list[str]:
    """The names :func:`flaky_tasks` flags (for ``compare(exclude_tasks=...)``)."""
    ft = flaky_tasks(trials, by)
    return sorted(ft.filter(pl.col("flaky"))["task_name"].to_list())


def _homogeneity(s: pl.Series, k: pl.Series) -> float | None:
    """p of the chi-square test that every run has the same pass rate (None: one run, or
    every attempt passes / fails)."""
    sv, kv = s.to_numpy().astype(float), k.to_numpy().astype(float)
    if sv.size < 2 or sv.sum() in (0.0, kv.sum()):
        return None
    table = np.stack([sv, kv - sv], axis=1)
    return float(stats.chi2_contingency(table, correction=False).pvalue)


def dead_tasks(
    trials: pl.DataFrame | pl.LazyFrame,
    by: str = "run",
    *,
    task: str = "task_name",
    reward: str = "reward",
    min_runs: int = 2,
) -> pl.DataFrame:
    """Tasks every run passes on every attempt ("always pass") or fails on every attempt
    ("always fail") across the loaded history: they cannot separate runs. Columns: task_name,
    n_runs, n_attempts, status. Informative tasks, and tasks fewer than ``min_runs`` runs
    attempted (too little history to call them dead), are left out."""
    tt = _per_run_task(trials, by, task, reward)
    agg = tt.group_by(task).agg(
        pl.len().alias("n_runs"),
        pl.col("n_trials").sum().alias("n_attempts"),
        pl.col("n_pass").sum().alias("_s"),
    )
    status = (
        pl.when(pl.col("_s") == pl.col("n_attempts"))
        .then(pl.lit("always pass"))
        .when(pl.col("_s") == 0)
        .then(pl.lit("always fail"))
    )
    return (
        agg.with_columns(status.alias("status"))
        .filter(pl.col("status").is_not_null() & (pl.col("n_runs") >= min_runs))
        .select(task, "n_runs", "n_attempts", "status")
        .sort("status", task)
    )


def informative_tasks(
    trials: pl.DataFrame | pl.LazyFrame,
    by: str = "run",
    *,
    task: str = "task_name",
    reward: str = "reward",
) -> dict[str, float | int]:
    """How many tasks carry signal for comparing runs.

    n_tasks, n_always_pass, n_always_fail, n_informative (= n_tasks minus the dead ones) and
    n_effective: the participation ratio (sum v)^2 / sum v^2 of v = the variance across runs of
    each task's pass rate, i.e. how many equally discriminating tasks would carry the same
    signal (equal to n_informative when every informative task separates the runs equally;
    0 with one run).
    """
    tt = _per_run_task(trials, by, task, reward)
    dead = dead_tasks(trials, by, task=task, reward=reward)
    rate = tt.with_columns((pl.col("n_pass") / pl.col("n_trials")).alias("r"))
    v = collect(rate.lazy().group_by(task).agg(pl.col("r").var(ddof=0).fill_null(0.0)))["r"]
    v = v.to_numpy()
    n_eff = float(v.sum() ** 2 / (v**2).sum()) if (v > 0).any() else 0.0
    n_tasks = int(tt[task].n_unique())
    n_pass = int((dead["status"] == "always pass").sum())
    n_fail = int((dead["status"] == "always fail").sum())
    return {
        "n_tasks": n_tasks,
        "n_always_pass": n_pass,
        "n_always_fail": n_fail,
        "n_informative": n_tasks - n_pass - n_fail,
        "n_effective": n_eff,
    }
