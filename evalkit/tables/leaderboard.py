"""The leaderboard table of the CLI and the report: :func:`evalkit.stats.leaderboard` on the
loaded runs, with each run's integrity counts beside it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import polars as pl

from evalkit.patterns.integrity import integrity_counts
from evalkit.stats._frames import as_lazy, collect
from evalkit.stats.leaderboard import leaderboard

__all__ = ["BY_COLUMNS", "LeaderboardTable", "leaderboard_table", "runs_sharing_tasks"]

#: --by value -> the trials column that names a run.
BY_COLUMNS = {"label": "run", "job": "job_name"}


@dataclass(frozen=True)
class LeaderboardTable:
    """``table``: one row per run, best first; ``left_out``: runs left out because they share
    no task with the others (see :func:`runs_sharing_tasks`)."""

    table: pl.DataFrame
    left_out: list[str]


def runs_sharing_tasks(trials: Any, col: str) -> tuple[list[str], list[str]]:
    """(kept, left out): while the runs share no task, leave out the run whose tasks overlap
    least with the others' (a run of another benchmark in the same folder)."""
    pairs = collect(
        as_lazy(trials)
        .select(pl.col(col).cast(pl.String), pl.col("task_name").cast(pl.String))
        .drop_nulls()
        .unique()
    )
    tasks = {
        k[0]: set(g["task_name"].to_list()) for k, g in pairs.group_by(col, maintain_order=True)
    }
    left_out: list[str] = []
    while len(tasks) > 1 and not set.intersection(*tasks.values()):
        overlap = {r: sum(len(t & o) for q, o in tasks.items() if q != r) for r, t in tasks.items()}
        worst = min(sorted(overlap), key=lambda r: (overlap[r], len(tasks[r])))
        left_out.append(worst)
        del tasks[worst]
    return sorted(tasks), sorted(left_out)


def leaderboard_table(
    runs: Any,
    *,
    by: str = "label",
    metric: str = "pass_rate",
    confidence: float = 0.95,
    draws: int = 2000,
    seed: int = 0,
    integrity: bool = True,
) -> LeaderboardTable:
    """One row per run (``by``: "label" = run label, "job" = job folder), best first: the
    columns of :func:`evalkit.stats.leaderboard` with the run column named ``run``, then the
    integrity counts of :func:`evalkit.patterns.integrity.integrity_counts` (over all of
    each run's trials; ``integrity=False`` leaves them out and the trajectories unread)."""
    col = BY_COLUMNS[by]
    kept, left_out = runs_sharing_tasks(runs.trials, col)
    trials = as_lazy(runs.trials).filter(pl.col(col).cast(pl.String).is_in(kept))
    lb = leaderboard(trials, by=col, metric=metric, confidence=confidence, draws=draws, seed=seed)
    lb = lb.with_columns(pl.col(col).cast(pl.String))
    if integrity:
        ic = integrity_counts(runs, by=col, confidence=confidence).drop("n_trials")
        lb = lb.join(ic, on=col, how="left", maintain_order="left")
    return LeaderboardTable(lb.rename({col: "run"}) if col != "run" else lb, left_out)
