"""Special files where data files are expected: a load never blocks and never raises.

Found by the fuzz campaign: a FIFO named ``*.jsonl`` in a rollout folder, or named
``config.json`` / ``result.json`` in a job folder, made the sniffers wait forever for a
writer (``open()`` of a FIFO blocks). Each load runs in a thread with a deadline.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

import evalkit
from tests.deadline import with_deadline
from tests.fuzz.corpus import JOBS, ROLLOUT_DIR, template

DEADLINE_S = 60


def _load_with_deadline(path: Path) -> evalkit.Runs:
    def go() -> evalkit.Runs:
        runs = evalkit.load(path, cache=False, progress=False)
        _ = runs.steps, runs.tool_calls, runs.findings, runs.load_errors
        return runs

    return with_deadline(go, DEADLINE_S, f"load of {path}")


SPOTS = [
    f"{ROLLOUT_DIR}/2026-01-15/simple-no-tool.jsonl",
    f"{ROLLOUT_DIR}/results.jsonl",
    "skills-job/config.json",
    "skills-job/result.json",
    f"skills-job/{JOBS['skills-job'][0]}/result.json",
    f"skills-job/{JOBS['skills-job'][0]}/config.json",
    f"skills-job/{JOBS['skills-job'][0]}/verifier/test-stdout.txt",
    f"atif-job/{JOBS['atif-job'][0]}/agent/trajectory.json",
    f"atif-job/{JOBS['atif-job'][0]}/agent/trajectory.summarization-1-summary.json",
    f"atif-job/{JOBS['atif-job'][1]}/agent/trajectory.cont-1.json",
    f"atif-job/{JOBS['atif-job'][1]}/verifier/reward.json",
    f"atif-job/{JOBS['atif-job'][0]}/verifier/reward.txt",
    f"hermes-job/{JOBS['hermes-job'][0]}/agent/hermes-session.jsonl",
]


@pytest.mark.parametrize("spot", SPOTS)
@pytest.mark.parametrize("kind", ["fifo", "dev_zero", "loop"])
def test_special_file_in_place_of_a_data_file(tmp_path: Path, spot: str, kind: str) -> None:
    top = spot.split("/", 1)[0]
    shutil.copytree(template() / top, tmp_path / top, symlinks=True)
    p = tmp_path / spot
    p.unlink()
    if kind == "fifo":
        os.mkfifo(p)
    elif kind == "dev_zero":
        p.symlink_to("/dev/zero")
    else:
        p.symlink_to(p.name)
    runs = _load_with_deadline(tmp_path / top)
    if top != ROLLOUT_DIR:
        assert runs.trials.height == len(JOBS[top])
