"""evalkit.load wiring: trajectories on first access, trial columns filled, rollouts discovered."""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson
import polars as pl

import evalkit

TESTS = Path(__file__).parents[1]
OPENCLAW = TESTS / "fixtures" / "harbor" / "openclaw-dev-jobs"
ROLLOUTS = TESTS / "fixtures" / "rollouts"


def test_harbor_trajectories_through_load():
    runs = evalkit.load(OPENCLAW, progress=False)
    assert runs.trials["n_steps"].null_count() == runs.trials.height  # not parsed yet
    steps, calls = runs.steps, runs.tool_calls
    # the 11 hermes-gateway ATIF files: 46 steps, 12 tool calls, 29 agent steps (read with json)
    assert (steps.height, calls.height) == (46, 12)
    t = runs.trials.filter(pl.col("n_steps").is_not_null())
    assert t.height == 11 and t["n_steps"].sum() == 29 and t["n_tool_calls"].sum() == 12
    assert (t["n_turns"] == t["n_steps"]).all() and t["metrics_mismatch"].null_count() == 11
    assert set(steps["trial_id"].unique()) <= set(runs.trials["trial_id"])
    assert runs.load_errors.filter(pl.col("level") == "trajectory").height == 0


def test_rollout_folder_through_load(tmp_path):
    d = tmp_path / "rollouts" / "2026-07-27"
    d.mkdir(parents=True)
    shutil.copy(
        ROLLOUTS / "run-toolcall-golden.DERIVED-rollout.jsonl",
        d / "run_8cacf024-8246-4c1c-8d53-7764b878d664.jsonl",
    )
    ap = {
        "ts": "2026-07-27T01:40:56Z",
        "seq": 99,
        "type": "tool.antipattern",
        "data": {"type": "retry_loop", "tool": "ls", "call_count": 3, "step": 1},
    }
    with open(d / "run_8cacf024-8246-4c1c-8d53-7764b878d664.jsonl", "ab") as fh:
        fh.write(orjson.dumps(ap) + b"\n")
    runs = evalkit.load(tmp_path / "rollouts", progress=False)
    t = runs.trials.row(0, named=True)
    assert (t["source_format"], t["trial_id"], t["cost_usd"], t["n_steps"], t["attempt"]) == (
        "go-code", "run_8cacf024-8246-4c1c-8d53-7764b878d664", 0.0025, 2, 1,
    )  # fmt: skip
    assert t["run"] is not None
    assert (runs.steps.height, runs.tool_calls.height) == (3, 1)
    rec = runs.findings.filter(pl.col("source") == "recorded")
    assert rec.select("detector", "step_start").rows() == [("retry_loop", 1)]
    assert runs.jobs["source_format"].to_list() == ["go-code"]
