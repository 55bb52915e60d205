"""Small trial and job frames for the report's section tests (one trial per dict)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import polars as pl

from evalkit.load._columns import conform
from evalkit.load.jobs.columns import COLUMNS as JOB_COLUMNS
from evalkit.load.trials.columns import COLUMNS as TRIAL_COLUMNS

T0 = datetime(2026, 3, 1, 12, tzinfo=UTC)
#: the bundled runs/ labels
BASE = "evalkit-scripted__baseline__smoke-tasks"
CAND = "evalkit-scripted__candidate__smoke-tasks"
SKILLS = "claude-code__MiniMax-M2.1__tasks-no-skills"


def trial(run: str, task: str | None, reward: float | None, i: int = 0, **kw: Any) -> dict:
    """One trial of ``run`` on ``task`` (attempt ``i``), started at T0, a minute long."""
    return {
        "run": run,
        "task_name": task,
        "reward": reward,
        "trial_id": f"{run}/{task}/{i}",
        "trial_name": f"{task}__{i}",
        "job_name": f"job-{run}",
        "job_id": f"job-{run}",
        "started_at": T0,
        "finished_at": T0 + timedelta(minutes=1),
        "outcome": "pass" if (reward or 0) >= 1 else "fail",
        "error_kind": "none",
        **kw,
    }


def trials_frame(rows: list[dict[str, Any]]) -> pl.DataFrame:
    return conform(pl.DataFrame(rows, infer_schema_length=None), TRIAL_COLUMNS)


def jobs_frame(rows: list[dict[str, Any]]) -> pl.DataFrame:
    return conform(pl.DataFrame(rows, infer_schema_length=None), JOB_COLUMNS)
