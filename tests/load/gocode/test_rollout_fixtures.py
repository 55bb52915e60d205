"""The go-code fixtures load with the outcome, cost, steps and tool calls read off the files."""

from __future__ import annotations

import polars as pl
import pytest

from evalkit.load.findings.columns import COLUMNS as FINDING_COLUMNS
from evalkit.load.gocode import read_rollouts
from evalkit.load.jobs.columns import COLUMNS as JOB_COLUMNS
from evalkit.load.steps.columns import STEP_COLUMNS, TOOL_CALL_COLUMNS
from evalkit.load.trials.columns import COLUMNS as TRIAL_COLUMNS
from tests.load.gocode.rollout_helpers import GOLDEN_ID, fixture_folder, trials_with_details


@pytest.fixture
def frames(tmp_path):
    return read_rollouts(fixture_folder(tmp_path), progress=False)


def test_frames_conform(frames):
    assert frames.errors == []
    assert frames.trials.columns == [c.name for c in TRIAL_COLUMNS]
    assert frames.jobs.columns == [c.name for c in JOB_COLUMNS]
    assert frames.steps.columns == [c.name for c in STEP_COLUMNS]
    assert frames.tool_calls.columns == [c.name for c in TOOL_CALL_COLUMNS]
    assert (
        frames.findings.columns == [c.name for c in FINDING_COLUMNS] and frames.findings.height == 0
    )


def test_golden_run_trial(frames):
    t = trials_with_details(frames).filter(pl.col("trial_id") == GOLDEN_ID).row(0, named=True)
    assert t["source_format"] == "go-code" and t["trial_name"] == GOLDEN_ID
    assert t["run"] is None and t["attempt"] is None  # the loader fills them
    assert (t["model_name"], t["model_provider"]) == ("fake-model", "default")
    assert (t["run_status"], t["outcome"], t["error_kind"]) == ("completed", "no-reward", "none")
    # run.completed cost_totals: cost_usd_total 0.0025, cost_status available
    assert (t["cost_usd"], t["cost_status"]) == (0.0025, "available")
    # usage_totals: prompt 260, completion 22
    assert (t["n_input_tokens"], t["n_output_tokens"], t["n_cache_tokens"]) == (260, 22, None)
    assert (t["n_steps"], t["n_tool_calls"], t["n_turns"], t["harness_steps"]) == (2, 1, 2, 2)
    assert t["started_at"].isoformat() == "2026-07-27T01:40:55.235653+00:00"
    assert t["duration_s"] == pytest.approx(0.684994)
    assert (t["n_retried_tool_calls"], t["n_llm_retries"], t["recorder_drops"]) == (0, 0, 0)
    assert (t["rollout_date"], t["n_events"], t["has_trajectory"]) == ("2026-07-27", 22, True)


def test_golden_run_steps_and_call(frames):
    s = frames.steps.filter(pl.col("trial_id") == GOLDEN_ID)
    assert s.select("step_index", "step_id", "source").rows() == [
        (0, 0, "user"),
        (1, 1, "agent"),
        (2, 2, "agent"),
    ]
    assert s["message"].to_list() == [
        "list the workspace",
        None,
        "I listed the workspace and it contains the project files.",
    ]
    # usage.delta turn_usage per step: 120/10 then 140/12; step 1 cost 0 is unpriced_model -> unknown
    assert s["prompt_tokens"].to_list() == [None, 120, 140]
    assert s["completion_tokens"].to_list() == [None, 10, 12]
    assert s["cost_usd"].to_list() == [None, None, 0.0025]
    assert s["n_tool_calls"].to_list() == [0, 1, 0] and s["llm_call_count"].to_list() == [
        None,
        1,
        1,
    ]
    c = frames.tool_calls.filter(pl.col("trial_id") == GOLDEN_ID).row(0, named=True)
    assert (c["step_index"], c["call_index"], c["tool_call_id"], c["function_name"]) == (
        1,
        0,
        "c1",
        "ls",
    )
    assert c["arguments"] == '{"path":"."}'  # the JSON string as recorded
    assert c["observation"].startswith('{"entries":["AGENTS.md","CLAUDE.md"')
    assert (c["is_error"], c["is_error_source"], c["command"], c["retried"], c["duration_ms"]) == (
        False,
        "structured",
        None,
        False,
        0.0,
    )
    assert c["timestamp"].isoformat() == "2026-07-27T01:40:55.920245+00:00"


def test_hand_fixtures(frames):
    t = {r["trial_id"]: r for r in trials_with_details(frames).iter_rows(named=True)}
    # no conversation_id in the hand fixtures: run id = file stem
    assert set(t) == {GOLDEN_ID, "simple-no-tool", "tool-with-output-key"}
    assert t["simple-no-tool"]["n_steps"] == 1 and t["tool-with-output-key"]["n_steps"] == 2
    assert (
        t["simple-no-tool"]["cost_usd"] is None and t["simple-no-tool"]["cost_status"] == "unknown"
    )
    s = frames.steps.filter(pl.col("trial_id") == "simple-no-tool")
    assert s.select("source", "message").rows() == [
        ("system", "You are a helpful assistant."),
        ("user", "What is 2+2?"),
        ("agent", "2+2 equals 4."),
    ]
    c = frames.tool_calls.filter(pl.col("trial_id") == "tool-with-output-key").row(0, named=True)
    assert (c["function_name"], c["arguments"], c["command"]) == (
        "bash",
        '{"cmd":"ls /tmp"}',
        "ls /tmp",
    )
    assert c["observation"] == "file_a.txt\nfile_b.log\nfile_c.go" and c["is_error"] is False


def test_job_row(frames, tmp_path):
    j = frames.jobs.row(0, named=True)
    assert (j["job_name"], j["source_format"], j["state"], j["n_trials_found"], j["n_trials_with_result"]) == (
        "rollouts", "go-code", "complete", 3, 3,
    )  # fmt: skip
    assert frames.trials["job_id"].unique().to_list() == [j["job_id"]]
    assert j["started_at"].isoformat() == "2026-01-15T10:00:00+00:00"


def test_single_file_and_flat_folder(tmp_path):
    d = fixture_folder(tmp_path)
    one = read_rollouts(d / "2026-07-27" / f"{GOLDEN_ID}.jsonl", progress=False)
    assert one.trials["trial_id"].to_list() == [GOLDEN_ID] and one.jobs["job_name"].to_list() == [
        "2026-07-27"
    ]
    flat = read_rollouts(d / "2026-01-15", progress=False)
    assert sorted(flat.trials["trial_id"].to_list()) == ["simple-no-tool", "tool-with-output-key"]
