"""Job trees, frames and the round-trip check shared by the dataset tests."""

from __future__ import annotations

import shutil
from pathlib import Path

import polars as pl
from polars.testing import assert_frame_equal

import evalkit
from evalkit.load._columns import conform
from evalkit.load.dataset import (
    export_dataset,
    scan,
)
from evalkit.load.trials.columns import COLUMNS as TRIAL_COLUMNS
from tests.conftest import FIXTURES, OPENCLAW
from tests.load import factory

ATIF = FIXTURES / "atif"

#: Keys that order each frame (a dataset has no global row order).
SORT_KEYS = {
    "jobs": ["job_id"],
    "trials": ["trial_id"],
    "steps": ["trial_id", "step_index"],
    "tool_calls": ["trial_id", "step_index", "call_index"],
    "findings": ["trial_id", "detector", "step_start", "step_end"],
    "load_errors": ["path", "level", "error_type", "message"],
}


def assert_round_trip(runs: evalkit.Runs, dest: Path) -> evalkit.load.dataset.Dataset:
    """Export, scan, and require every frame identical (values and dtypes)."""
    export_dataset(runs, dest, redact=False)
    ds = scan(dest)
    for name, keys in SORT_KEYS.items():
        loaded = getattr(runs, name).sort(keys, nulls_last=True)
        back = getattr(ds, name).collect().sort(keys, nulls_last=True)
        assert_frame_equal(back, loaded, check_row_order=True, check_dtypes=True)
    return ds


def atif_runs(root: Path) -> Path:
    """Two Harbor jobs whose trials carry the ATIF fixture trajectories (continuations and
    summarisation subagents included), plus a job whose trial result is broken."""
    golden = ATIF / "harbor-golden"
    trajectories = {
        "t2-summ": (golden / "terminus_2", "hello-world-context-summarization.trajectory"),
        "t2-linear": (
            golden / "terminus_2",
            "hello-world-context-summarization-linear-history.trajectory",
        ),
        "t2-timeout": (golden / "terminus_2", "hello-world-timeout.trajectory"),
        "openhands": (golden / "openhands", "hello-world.trajectory"),
        "cc-pass": (ATIF / "claude-code-real", "trajectory_pass"),
        "cc-fail": (ATIF / "claude-code-real", "trajectory_fail"),
    }
    for j, names in enumerate((list(trajectories)[:3], list(trajectories)[3:])):
        trials = [
            factory.trial_result(f"task-{n}", f"{n}__{j}", rewards={"reward": float(i % 2)})
            for i, n in enumerate(names)
        ]
        jd = factory.job(root, f"atif-job-{j}", trials)
        for n in names:
            folder, stem = trajectories[n]
            agent = jd / f"{n}__{j}" / "agent"
            agent.mkdir(parents=True, exist_ok=True)
            for f in folder.glob(f"{stem}*.json"):
                shutil.copy(f, agent / f.name.replace(stem, "trajectory"))
    broken = factory.job(root, "broken-job", [factory.trial_result("t", "t__0")])
    (broken / "t__0" / "result.json").write_text("{not json")
    return root


def copy_jobs(names: list[str], dest: Path) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    for n in names:
        shutil.copytree(OPENCLAW / n, dest / n)
    return dest


def file_stamps(root: Path) -> dict[str, tuple[int, int]]:
    return {
        str(p.relative_to(root)): (p.stat().st_ino, p.stat().st_mtime_ns)
        for p in root.rglob("*.parquet")
        if not p.relative_to(root).parts[0].startswith("_")
    }


JOBS = sorted(p.name for p in OPENCLAW.iterdir() if p.is_dir())


def trials_frame(run: str | None, job: str, n: int = 2) -> pl.DataFrame:
    return conform(
        pl.DataFrame(
            {
                "job_id": [job] * n,
                "run": [run] * n,
                "trial_id": [f"{job}-{i}" for i in range(n)],
                "task_name": [f"t{i}" for i in range(n)],
                "reward": [1.0, 0.0][:n],
            }
        ),
        TRIAL_COLUMNS,
    )


def steps_frame(trial_ids: list[str]) -> pl.DataFrame:
    return pl.DataFrame({"trial_id": trial_ids, "step_index": list(range(len(trial_ids)))})
