"""Loading a job while Harbor writes it (``harbor_writer.py``): repeated loads with the cache
on never raise, their counts never go backwards, and once the job is finished a cached load
equals a cold one (``cache=False``).
"""

from __future__ import annotations

import time
from pathlib import Path

import polars as pl
import pytest

import evalkit
from tests.live.harbor_writer import HarborLikeJob

COUNTS = ("trial_rows", "with_result", "steps_trials")
PARTIAL = ("empty", "json_decode", "missing", "not_atif", "wrong_type")


def _counts(runs: evalkit.Runs) -> dict[str, int]:
    t = runs.trials
    steps = runs.steps
    _ = runs.tool_calls, runs.load_errors
    return {
        "trial_rows": t.height,
        "with_result": t.filter(pl.col("outcome") != "incomplete").height,
        "steps_trials": steps["trial_id"].n_unique(),
    }


def _equal(a: pl.DataFrame, b: pl.DataFrame, keys: list[str]) -> None:
    assert a.columns == b.columns
    a, b = a.sort(keys, maintain_order=True), b.sort(keys, maintain_order=True)
    for c in a.columns:
        assert a[c].equals(b[c]), f"column {c} differs:\n{a[c]}\n{b[c]}"


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_live_job_loads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    monkeypatch.setenv("EVALKIT_CACHE_DIR", str(tmp_path / "cache"))
    runs_dir = tmp_path / "runs"
    writer = HarborLikeJob(runs_dir / "live-job", n_tasks=4, attempts=3, seed=seed)
    history: list[dict[str, int]] = []
    partial_seen = 0  # loads that met a half-written file (a load error, not an exception)
    writer.pace_s = 10.0
    writer.start()
    deadline = time.monotonic() + 120
    while writer.is_alive() and time.monotonic() < deadline:
        # the runs folder (discovery, trial lists) and the job folder itself, alternately
        path = runs_dir if len(history) % 2 else runs_dir / "live-job"
        if not path.exists():
            continue
        runs = evalkit.load(path, cache=True, progress=False)
        now = _counts(runs)
        partial_seen += runs.load_errors["error_type"].is_in(PARTIAL).any()
        if history:
            before = history[-1]
            back = [k for k in COUNTS if now[k] < before[k]]
            assert not back, f"load {len(history)}: {back} went backwards: {before} -> {now}"
        history.append(now)
        writer.reader_loaded()
    writer.join(5)
    assert writer.error is None, writer.error
    assert not writer.is_alive(), "the writer did not finish"
    assert len(history) >= 5, f"only {len(history)} loads overlapped the writer"
    print(f"{len(history)} loads while writing, {partial_seen} met a partial file")

    warm = evalkit.load(runs_dir, cache=True, progress=False)
    cold = evalkit.load(runs_dir, cache=False, progress=False)
    assert warm.trials.height == cold.trials.height == writer.n_trials
    assert set(cold.trials["outcome"]) <= {"pass", "fail"}
    assert cold.load_errors.height == 0, cold.load_errors
    assert warm.load_errors.height == 0, warm.load_errors
    _equal(warm.trials, cold.trials, ["trial_id"])
    _equal(warm.steps, cold.steps, ["trial_id", "step_index"])
    _equal(warm.tool_calls, cold.tool_calls, ["trial_id", "step_index", "call_index"])
    _equal(warm.jobs, cold.jobs, ["job_id"])
    assert cold.jobs["state"].to_list() == ["complete"]
    assert history[-1]["trial_rows"] <= writer.n_trials
