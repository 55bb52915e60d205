"""results.jsonl (both producers), baseline.json (both formats) and the run_id join."""

from __future__ import annotations

import json

import polars as pl
import pytest

from evalkit.load.gocode import join_results, read_baseline, read_results_jsonl, read_rollouts
from tests.load.gocode.rollout_helpers import (
    GOLDEN_ID,
    ROLLOUTS,
    fixture_folder,
    trials_with_details,
)


def _record(run_id, task, resolved, **kw):
    r = {
        "tool_id": "go-code", "task_id": task, "run_id": run_id, "status": "completed", "steps_taken": 2,
        "total_prompt_tokens": 260, "total_completion_tokens": 22, "total_cost_usd": 0.0025,
        "cost_status": "available", "cache_hit_rate": 0.0, "model": "fake-model", "prompt": "p",
        "created_at": "2026-07-27T01:40:55Z", "updated_at": "2026-07-27T01:40:56Z", "duration_ms": 1000,
        "tool_calls": [{"tool_name": "ls", "step": 1}],
    }  # fmt: skip
    if resolved is not None:
        r["is_resolved"] = resolved
    r.update(kw)
    return r


RECORDS = [
    _record(GOLDEN_ID, "list-workspace", True, parser_results={"test_a": "passed"}),
    _record("tool-with-output-key", "list-tmp", False, failure_classification="oracle_fail"),
    _record(
        "adapter-infra-error",
        "broken-task",
        None,
        status="failed",
        error_message="docker: no space",
    ),
]


def _pretty(path):  # the comparison harness: `cat result.json >> results.jsonl` of indent=2 dumps
    path.write_text("".join(json.dumps(r, indent=2) + "\n" for r in RECORDS))
    return path


def _strict(path):  # scripts/terminal_bench_artifacts.py: sort_keys JSONL
    path.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in RECORDS))
    return path


@pytest.mark.parametrize("writer", [_pretty, _strict])
def test_results_both_formats(tmp_path, writer):
    errors = []
    df = read_results_jsonl(writer(tmp_path / "results.jsonl"), errors=errors)
    assert errors == [] and df.height == 3
    assert df["run_id"].to_list() == [GOLDEN_ID, "tool-with-output-key", "adapter-infra-error"]
    assert df["is_resolved"].to_list() == [True, False, None]
    assert df["failure_classification"].to_list() == [None, "oracle_fail", None]
    assert json.loads(df["tool_calls"][0]) == [{"tool_name": "ls", "step": 1}]
    assert json.loads(df["parser_results"][0]) == {"test_a": "passed"}
    assert df.schema["total_cost_usd"] == pl.Float64 and df.schema["duration_ms"] == pl.Int64
    assert df["created_at_utc"][0].isoformat() == "2026-07-27T01:40:55+00:00"


def test_results_with_garbage_between_records(tmp_path):
    p = tmp_path / "results.jsonl"
    p.write_text(
        json.dumps(RECORDS[0], indent=2)
        + "\n{ broken\n"
        + json.dumps(RECORDS[1], indent=2)
        + "\n[1]\n"
    )
    errors = []
    df = read_results_jsonl(p, errors=errors)
    assert df["run_id"].to_list() == [GOLDEN_ID, "tool-with-output-key"]
    assert sorted(e.error_type for e in errors) == ["json_decode", "wrong_type"]
    assert read_results_jsonl(tmp_path / "missing.jsonl").height == 0


def test_join_results_onto_rollouts(tmp_path):
    d = fixture_folder(tmp_path)
    _pretty(d / "results.jsonl")  # picked up automatically (and not mistaken for a rollout)
    f = read_rollouts(d, progress=False)
    assert f.errors == []
    t = {r["trial_id"]: r for r in trials_with_details(f).iter_rows(named=True)}
    assert (t[GOLDEN_ID]["task_name"], t[GOLDEN_ID]["reward"], t[GOLDEN_ID]["outcome"]) == (
        "list-workspace",
        1.0,
        "pass",
    )
    assert (t["tool-with-output-key"]["reward"], t["tool-with-output-key"]["outcome"]) == (
        0.0,
        "fail",
    )
    assert (t["simple-no-tool"]["reward"], t["simple-no-tool"]["outcome"]) == (None, "no-reward")
    assert t[GOLDEN_ID]["reward_source"] == "results.jsonl" and t[GOLDEN_ID]["is_resolved"] is True


def test_join_results_reward_beats_failure():
    trials = pl.DataFrame(
        {"trial_id": ["a", "b"], "task_name": [None, None], "reward": [None, None], "run_status": ["failed", "failed"],
         "exception_message": ["deadline exceeded", "boom"], "failure_reason": [None, None]},
        schema={"trial_id": pl.String, "task_name": pl.String, "reward": pl.Float64, "run_status": pl.String,
                "exception_message": pl.String, "failure_reason": pl.String},
    )  # fmt: skip
    res = pl.DataFrame(
        {"run_id": ["a", "b"], "task_id": ["t1", "t2"], "is_resolved": [True, False]}
    )
    out = join_results(trials, res)
    assert out.select("task_name", "reward", "outcome").rows() == [
        ("t1", 1.0, "pass"),
        ("t2", 0.0, "error"),
    ]


def test_baseline_current_format():
    b = read_baseline(ROLLOUTS / "baseline.json")
    assert b.height == 7 and b["format"].unique().to_list() == ["provenance"]
    r = b.filter(pl.col("task_id") == "go-interface-migration").row(0, named=True)
    # "avg_steps": 12, "avg_tokens": 128995, "avg_cost_usd": 0.0, "cost_status": "unpriced_model"
    assert (r["expected_pass"], r["avg_steps"], r["avg_tokens"], r["avg_prompt_tokens"]) == (
        True,
        12,
        128995,
        126056,
    )
    assert (r["avg_cost_usd"], r["avg_cost_usd_recorded"], r["cost_status"]) == (
        None,
        0.0,
        "unpriced_model",
    )
    assert (r["baseline_model"], r["baseline_provider"], r["terminal_bench_version"]) == (
        "gpt-5-mini",
        "openai",
        "0.2.18",
    )
    assert b["expected_pass"].all()
    assert r["baseline_started_at"].isoformat() == "2026-06-27T04:26:42.494084+00:00"


def test_baseline_legacy_format():
    b = read_baseline(ROLLOUTS / "baseline.2026-03-08.json")
    assert b.height == 7 and b["format"].unique().to_list() == ["legacy"]
    r = b.filter(pl.col("task_id") == "go-retry-schedule-fix").row(0, named=True)
    assert (r["expected_pass"], r["avg_steps"], r["avg_cost_usd"], r["cost_status"]) == (
        False,
        12,
        0.05,
        None,
    )
    assert r["avg_prompt_tokens"] is None and r["git_sha"] is None


def test_baseline_bad_input(tmp_path):
    errors = []
    (tmp_path / "b.json").write_text("[1, 2]")
    assert read_baseline(tmp_path / "b.json", errors=errors).height == 0
    (tmp_path / "c.json").write_text('{"_comment": "x"}')
    assert read_baseline(tmp_path / "c.json", errors=errors).height == 0
    assert [e.error_type for e in errors] == ["wrong_type", "missing_tasks"]
