"""Many runs over shared tasks: scores with intervals, rank uncertainty, tiers, Pareto frontier.

Everything comes from one joint task-level bootstrap: each draw resamples the shared tasks
with replacement (a task brings every attempt of every run), so the runs' scores move
together as they do when the benchmark's task sample changes. A draw is a row of task
weights; every run's score in every draw is one matrix product.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from evalkit.stats._frames import as_lazy, check_columns, collect, task_table
from evalkit.stats.intervals import check_confidence, clustered_proportion_ci
from evalkit.stats.means import clustered_mean_ci
from evalkit.stats.significance import task_indices

__all__ = [
    "LEADERBOARD_COLUMNS",
    "METRICS",
    "MIN_SHARED_TASKS",
    "RunMatrix",
    "bootstrap_weights",
    "leaderboard",
    "pareto_probability",
    "rank_intervals",
    "rank_probabilities",
    "run_matrix",
    "scores",
    "tiers",
]

#: metric -> (what is averaged, mean convention). "pooled": over all trials (tasks weigh by
#: their attempts); "task_mean": each task's rate first, then the mean over tasks.
METRICS: dict[str, tuple[str, str]] = {
    "pass_rate": ("pass", "pooled"),
    "pass_at_1": ("pass", "task_mean"),
    "mean_reward": ("reward", "pooled"),
    "mean_reward_task": ("reward", "task_mean"),
}

#: Fewest shared tasks a leaderboard is computed on (the task bootstrap needs tasks to
#: resample; with one task every draw is the same and nothing can be inferred).
MIN_SHARED_TASKS = 5

#: Columns of :func:`leaderboard`, in order, after the run column.
LEADERBOARD_COLUMNS = [
    "score",
    "ci_low",
    "ci_high",
    "ci_method",
    "rank",
    "rank_low",
    "rank_high",
    "tier",
    "p_rank_1",
    "p_rank",
    "score_pooled",
    "score_task_mean",
    "rank_pooled",
    "rank_task_mean",
    "n_tasks",
    "n_trials",
    "n_tasks_left_out",
    "cost_per_attempt",
    "p_frontier",
    "duration_per_attempt",
    "p_frontier_time",
]


@dataclass(frozen=True)
class RunMatrix:
    """Runs x shared tasks. ``passes``, ``rewards``, ``reward_sq``, ``attempts``: per-cell
    sums (R, T); ``cost``, ``duration``: per-cell sums, NaN where any attempt's value is
    unknown; ``left_out``: per run, its tasks that are not shared by every run."""

    runs: list[str]
    tasks: list[str]
    passes: np.ndarray
    rewards: np.ndarray
    reward_sq: np.ndarray
    attempts: np.ndarray
    cost: np.ndarray
    duration: np.ndarray
    left_out: np.ndarray

    def values(self, what: str) -> np.ndarray:
        """Per-cell sums of ``"pass"`` or ``"reward"``."""
        return self.passes if what == "pass" else self.rewards


def run_matrix(
    trials: pl.DataFrame | pl.LazyFrame,
    by: str = "run",
    task: str = "task_name",
    reward: str = "reward",
) -> RunMatrix:
    """The runs x tasks sums over the tasks every run has (one row per run, sorted by name).

    A trial passes when ``reward >= 1``; a null reward counts as 0 (as in :func:`summarize`).
    Rows whose run or task is null are left out.
    """
    frame = as_lazy(trials).filter(pl.col(by).is_not_null() & pl.col(task).is_not_null())
    tt = task_table(frame, [by], task, reward)
    if tt.height == 0:
        raise ValueError("no trials with a run and a task")
    runs = sorted(tt[by].unique().cast(pl.String).to_list())
    per_run = tt.group_by(by).agg(pl.col(task).n_unique().alias("n"))
    shared = (
        tt.group_by(task).agg(pl.col(by).n_unique().alias("n")).filter(pl.col("n") == len(runs))
    )
    tasks = sorted(shared[task].cast(pl.String).to_list())
    if not tasks:
        raise ValueError(f"the {len(runs)} runs share no task; a leaderboard needs shared tasks")
    extra = _extra_sums(frame, by, task)
    cells = (
        pl.DataFrame({by: runs})
        .join(pl.DataFrame({task: tasks}), how="cross")
        .join(
            tt.with_columns(pl.col(by).cast(pl.String), pl.col(task).cast(pl.String)),
            on=[by, task],
            how="left",
        )
        .join(extra, on=[by, task], how="left")
        .sort(by, task)
    )
    shape = (len(runs), len(tasks))

    def grid(col: str) -> np.ndarray:
        return cells[col].cast(pl.Float64).fill_null(np.nan).to_numpy().reshape(shape)

    n_all = dict(zip(per_run[by].cast(pl.String).to_list(), per_run["n"].to_list(), strict=True))
    return RunMatrix(
        runs=runs,
        tasks=tasks,
        passes=grid("n_pass"),
        rewards=grid("reward_sum"),
        reward_sq=grid("reward_sq_sum"),
        attempts=grid("n_trials"),
        cost=grid("cost_sum"),
        duration=grid("duration_sum"),
        left_out=np.array([n_all[r] - len(tasks) for r in runs], dtype=np.int64),
    )


def _extra_sums(frame: pl.LazyFrame, by: str, task: str) -> pl.DataFrame:
    """Per (run, task): cost and duration sums, null when any attempt's value is unknown."""
    names = frame.collect_schema().names()
    aggs = []
    for col, out in (("cost_usd", "cost_sum"), ("duration_s", "duration_sum")):
        if col in names:
            v = pl.col(col).cast(pl.Float64)
            aggs.append(pl.when(v.null_count() == 0).then(v.sum()).otherwise(None).alias(out))
        else:
            aggs.append(pl.lit(None, dtype=pl.Float64).alias(out))
    q = frame.group_by(by, task).agg(aggs)
    return collect(q.with_columns(pl.col(by).cast(pl.String), pl.col(task).cast(pl.String)))


def bootstrap_weights(n_tasks: int, draws: int, seed: int | None) -> np.ndarray:
    """(draws, n_tasks) task multiplicities of a task bootstrap (each row sums to n_tasks)."""
    picks = task_indices(np.random.default_rng(seed), n_tasks, draws).astype(np.int64)
    flat = (picks + n_tasks * np.arange(draws)[:, None]).ravel()
    return np.bincount(flat, minlength=draws * n_tasks).reshape(draws, n_tasks).astype(float)


def scores(
    values: np.ndarray, attempts: np.ndarray, weights: np.ndarray, convention: str
) -> np.ndarray:
    """Each run's score under task weights: (draws, T) weights -> (draws, R) scores.

    ``values``, ``attempts``: (R, T) per-cell sums. ``"pooled"``: sum w*values / sum w*attempts;
    ``"task_mean"``: sum w*(values/attempts) / sum w.
    """
    with np.errstate(invalid="ignore", divide="ignore"):
        if convention == "pooled":
            return (weights @ values.T) / (weights @ attempts.T)
        if convention == "task_mean":
            return (weights @ (values / attempts).T) / weights.sum(axis=1, keepdims=True)
    raise ValueError(f"unknown convention {convention!r}; use 'pooled' or 'task_mean'")


def point_ranks(score: np.ndarray) -> np.ndarray:
    """1 + the number of runs strictly better, along the last axis (ties share the best rank)."""
    return 1 + (score[..., None, :] > score[..., :, None]).sum(axis=-1)


def rank_probabilities(boot: np.ndarray) -> np.ndarray:
    """(R, R) matrix: entry [r, k-1] = share of draws where run r has rank k."""
    draws, n_runs = boot.shape
    ranks = point_ranks(boot) - 1
    counts = np.zeros((n_runs, n_runs))
    np.add.at(counts, (np.broadcast_to(np.arange(n_runs), ranks.shape), ranks), 1.0)
    return counts / draws


def _pair_stats(point: np.ndarray, boot: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Differences d[r, j] = score_r - score_j, their bootstrap SEs (from the draws'
    covariance; 0 when two runs move identically) and the centred draws (draws, R)."""
    d = point[:, None] - point[None, :]
    z = boot - point
    cov = np.atleast_2d(np.cov(boot, rowvar=False))
    var = np.diag(cov)[:, None] + np.diag(cov)[None, :] - 2.0 * cov
    se = np.sqrt(np.where(var > 1e-18, var, 0.0))
    return d, se, z


def _separated(d: np.ndarray, se: np.ndarray, crit: np.ndarray | float) -> np.ndarray:
    """d > crit * se, where a zero SE separates any non-zero difference."""
    return np.where(se > 0, d > crit * se, d > 0)


def _inverse(se: np.ndarray) -> np.ndarray:
    """1 / se, 0 where se is 0 (a difference that never moves has no sampling noise)."""
    with np.errstate(divide="ignore"):
        return np.where(se > 0, 1.0 / se, 0.0)


def rank_intervals(
    point: np.ndarray, boot: np.ndarray, confidence: float = 0.95
) -> tuple[np.ndarray, np.ndarray]:
    """Marginal rank intervals (Mogstad, Romano, Shaikh & Wilhelm 2024).

    For run r, simultaneous ``confidence`` intervals for its differences with every other run
    (max-|t| over the R - 1 comparisons, calibrated on the bootstrap); rank_low = 1 + runs
    surely better, rank_high = R - runs surely worse. Covers each run's rank with probability
    >= ``confidence`` when the bootstrap is valid.
    """
    n_runs = point.size
    d, se, z = _pair_stats(point, boot)
    off = ~np.eye(n_runs, dtype=bool)
    t = z[:, :, None] - z[:, None, :]  # (draws, R, R): centred bootstrap differences
    np.abs(t, out=t)
    t *= _inverse(se)[None]
    tmax = t.max(axis=2)  # the diagonal is 0
    crit = np.quantile(tmax, confidence, axis=0)[:, None]
    better = _separated(-d, se, crit) & off
    worse = _separated(d, se, crit) & off
    return 1 + better.sum(axis=1), n_runs - worse.sum(axis=1)


def tiers(point: np.ndarray, boot: np.ndarray, confidence: float = 0.95) -> np.ndarray:
    """Tier per run: tier 1 = the leader plus every run not separable from it, then the same on
    what is left. "Separable": the leader's one-sided lead is significant at 1 - confidence,
    with the multiplicity over the tier's comparisons corrected by the bootstrap max-t (a
    Dunnett-type step against the leader)."""
    d, se, z = _pair_stats(point, boot)
    tier = np.zeros(point.size, dtype=np.int64)
    left = np.arange(point.size)
    level = 1
    while left.size:
        lead = left[np.argmax(point[left])]
        rest = left[left != lead]
        tier[lead] = level
        if rest.size:
            tb = (z[:, [lead]] - z[:, rest]) * _inverse(se[lead, rest])[None]
            crit = np.quantile(tb.max(axis=1), confidence)
            sep = _separated(d[lead, rest], se[lead, rest], crit)
            tier[rest[~sep]] = level
            left = rest[sep]
        else:
            left = rest
        level += 1
    return tier


def pareto_probability(score_boot: np.ndarray, cost_boot: np.ndarray) -> np.ndarray:
    """Per run, the share of draws where no other run has a higher-or-equal score at a
    lower-or-equal cost with one of them strict (NaN for a run with unknown cost; runs of
    unknown cost dominate nobody)."""
    known = np.isfinite(cost_boot).all(axis=0)
    if not known.any():
        return np.full(known.shape, np.nan)
    s_j, s_r = score_boot[:, None, :], score_boot[:, :, None]
    c_j, c_r = cost_boot[:, None, :], cost_boot[:, :, None]
    dominated = ((s_j >= s_r) & (c_j <= c_r) & ((s_j > s_r) | (c_j < c_r))).any(axis=2)
    return np.where(known, (~dominated).mean(axis=0), np.nan)


def leaderboard(
    trials: pl.DataFrame | pl.LazyFrame,
    by: str = "run",
    metric: str = "pass_rate",
    confidence: float = 0.95,
    draws: int = 2000,
    seed: int | None = 0,
    *,
    task: str = "task_name",
    reward: str = "reward",
) -> pl.DataFrame:
    """One row per run over the tasks every run has, best first.

    * ``score`` (``metric``: ``"pass_rate"`` pooled over trials, ``"pass_at_1"`` task-averaged,
      ``"mean_reward"`` pooled, ``"mean_reward_task"`` task-averaged) with a task-clustered
      ``ci_low``/``ci_high`` (``ci_method``; :func:`clustered_proportion_ci` for pass rates,
      task-cluster t for mean rewards).
    * ``rank`` (1 = best; ties share), ``rank_low``/``rank_high``: a ``confidence`` rank
      interval (:func:`rank_intervals`); ``p_rank`` (list: P(rank = k), k = 1..R) and
      ``p_rank_1`` from the joint task bootstrap (``draws`` draws, ``seed``).
    * ``tier``: 1 = not separable from the leader (:func:`tiers`, multiplicity-corrected at
      1 - confidence), 2 = not separable from the leader of the rest, ...
    * Both mean conventions: ``score_pooled``/``score_task_mean`` and their ranks (they differ
      when runs have unequal attempts per task).
    * ``cost_per_attempt`` / ``duration_per_attempt`` (pooled; null when unknown) and
      ``p_frontier`` / ``p_frontier_time``: P(on the score-vs-cost / -time Pareto frontier)
      in the same draws (null when a run's cost or time is unknown).
    * ``n_tasks`` (shared), ``n_trials``, ``n_tasks_left_out`` (its tasks not every run has).

    Raises ValueError when the runs share fewer than :data:`MIN_SHARED_TASKS` tasks.
    """
    _check_arguments(confidence, metric, draws)
    check_columns(trials, [by, task, reward])
    m = _shared_task_matrix(trials, by, task, reward)
    what, convention = METRICS[metric]
    vals = m.values(what)
    ones = np.ones((1, len(m.tasks)))
    w = bootstrap_weights(len(m.tasks), draws, seed)
    point = {c: scores(vals, m.attempts, ones, c)[0] for c in ("pooled", "task_mean")}
    boot = scores(vals, m.attempts, w, convention)
    score = point[convention]
    low, high = rank_intervals(score, boot, confidence)
    p_rank = rank_probabilities(boot)
    ci_low, ci_high, ci_method = _score_intervals(m, what, convention, confidence)
    out = pl.DataFrame(
        {
            by: m.runs,
            "score": score,
            "ci_low": ci_low,
            "ci_high": ci_high,
            "ci_method": ci_method,
            "rank": point_ranks(score),
            "rank_low": low,
            "rank_high": high,
            "tier": tiers(score, boot, confidence),
            "p_rank_1": p_rank[:, 0],
            "p_rank": p_rank.tolist(),
            "score_pooled": point["pooled"],
            "score_task_mean": point["task_mean"],
            "rank_pooled": point_ranks(point["pooled"]),
            "rank_task_mean": point_ranks(point["task_mean"]),
            "n_tasks": np.full(len(m.runs), len(m.tasks)),
            "n_trials": m.attempts.sum(axis=1).astype(np.int64),
            "n_tasks_left_out": m.left_out,
            **_cost_and_time_columns(m, boot, w),
        },
        strict=False,
    )
    return _typed_and_sorted(out, by)


def _check_arguments(confidence: float, metric: str, draws: int) -> None:
    check_confidence(confidence)
    if metric not in METRICS:
        raise ValueError(f"unknown metric {metric!r}; use one of {', '.join(METRICS)}")
    if draws < 100:
        raise ValueError("draws must be at least 100")


def _shared_task_matrix(
    trials: pl.DataFrame | pl.LazyFrame, by: str, task: str, reward: str
) -> RunMatrix:
    """The runs x shared tasks matrix; ValueError when the runs share too few tasks."""
    m = run_matrix(trials, by, task, reward)
    if len(m.tasks) < MIN_SHARED_TASKS:
        raise ValueError(
            f"the {len(m.runs)} runs share {len(m.tasks)} task(s); a leaderboard needs at least "
            f"{MIN_SHARED_TASKS} shared tasks"
        )
    return m


def _cost_and_time_columns(m: RunMatrix, boot: np.ndarray, w: np.ndarray) -> dict[str, Any]:
    """Pooled cost and duration per attempt, and P(on the score-vs-cost / -time frontier)."""
    ones = np.ones((1, len(m.tasks)))
    return {
        "cost_per_attempt": scores(m.cost, m.attempts, ones, "pooled")[0],
        "p_frontier": pareto_probability(boot, scores(m.cost, m.attempts, w, "pooled")),
        "duration_per_attempt": scores(m.duration, m.attempts, ones, "pooled")[0],
        "p_frontier_time": pareto_probability(boot, scores(m.duration, m.attempts, w, "pooled")),
    }


def _typed_and_sorted(out: pl.DataFrame, by: str) -> pl.DataFrame:
    """NaN as null, ranks and counts as Int64, best first."""
    return (
        out.with_columns(pl.col(pl.Float64).fill_nan(None))
        .with_columns(
            pl.col(
                "rank", "rank_low", "rank_high", "rank_pooled", "rank_task_mean", "tier", "n_tasks"
            ).cast(pl.Int64)
        )
        .sort("rank", by)
    )


def _score_intervals(
    m: RunMatrix, what: str, convention: str, confidence: float
) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Task-clustered interval per run for the chosen metric (arrays over runs)."""
    vals, k = m.values(what), m.attempts
    if convention == "task_mean" and not (k == 1).all():
        rates = vals / k
        ci = clustered_mean_ci(rates, rates**2, np.ones_like(k), confidence=confidence)
        return ci.low, ci.high, [f"{ci.label} (task-mean)"] * len(m.runs)
    if what == "pass":
        ci = clustered_proportion_ci(vals, k, confidence=confidence)
        labels = [ci.fallback_label if f else ci.label for f in np.atleast_1d(ci.fallback)]
    else:
        ci = clustered_mean_ci(vals, m.reward_sq, k, confidence=confidence)
        labels = [ci.label] * len(m.runs)
    return np.atleast_1d(ci.low), np.atleast_1d(ci.high), labels
