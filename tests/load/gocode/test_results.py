"""go-code harness outputs (load/gocode/results.py): results.jsonl, baseline.json, the join.

rollouts-gates-qc.md §1.9-1.11: results.jsonl is concatenated pretty-printed JSON or strict
JSONL of BenchmarkResult records; baseline.json has per-task averages with or without a
``provenance`` block, and a 0 cost whose status is not 'available' means unpriced. Checked
here, beyond test_results_baseline.py: separators between records, the typing of every
known field (wrong types become null, other keys JSON text), empty and missing files, the
per-task / provenance cost status, odd task entries, every branch of the outcome and
error_kind rule, and the join's edge cases (duplicates, missing columns, kept values).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest

from evalkit.load.gocode.results import (
    RESULTS_SCHEMA,
    join_results,
    outcome_exprs,
    read_baseline,
    read_results_jsonl,
)

# --- read_results_jsonl ------------------------------------------------------------------


def _read(tmp_path: Path, text: str) -> tuple[pl.DataFrame, list]:
    p = tmp_path / "results.jsonl"
    p.write_text(text)
    errors: list = []
    return read_results_jsonl(str(p), errors=errors), errors


def test_objects_separated_by_commas_and_blank_lines_all_load(tmp_path: Path) -> None:
    df, errors = _read(tmp_path, '{"run_id": "a"},\n\n{"run_id": "b"}\n,{"run_id": "c"}')
    assert errors == [] and df["run_id"].to_list() == ["a", "b", "c"]


def test_a_strict_jsonl_file_with_a_non_object_line_keeps_the_objects(tmp_path: Path) -> None:
    df, errors = _read(tmp_path, '{"run_id": "a"}\n"text"\n{"run_id": "b"}\n')
    assert df["run_id"].to_list() == ["a", "b"]
    assert [e.error_type for e in errors] == ["wrong_type"]
    assert "is a str, not an object" in errors[0].message


def test_an_unparsable_tail_ends_the_file(tmp_path: Path) -> None:
    df, errors = _read(tmp_path, '{"run_id": "a"}\n{"run_id": ')
    assert df["run_id"].to_list() == ["a"]
    assert [(e.error_type, e.level) for e in errors] == [("json_decode", "file")]


def test_known_fields_are_typed_and_wrong_types_read_as_null(tmp_path: Path) -> None:
    rec = {
        "run_id": "a", "is_resolved": "true", "steps_taken": 3.0, "duration_ms": 1.5,
        "total_prompt_tokens": True, "total_cost_usd": "0.1", "cache_hit_rate": 0.25,
        "model": 5, "tool_calls": [{"tool_name": "ls", "step": 1}], "status": None,
    }  # fmt: skip
    df, _ = _read(tmp_path, json.dumps(rec))
    r = df.row(0, named=True)
    assert r["is_resolved"] is None  # a string is no boolean
    assert (r["steps_taken"], r["duration_ms"], r["total_prompt_tokens"]) == (3, None, None)
    assert (r["total_cost_usd"], r["cache_hit_rate"]) == (None, 0.25)
    assert r["model"] == "5"  # a String column keeps other values as JSON text
    assert json.loads(r["tool_calls"]) == [{"tool_name": "ls", "step": 1}]
    assert r["status"] is None
    assert {k: df.schema[k] for k in RESULTS_SCHEMA} == RESULTS_SCHEMA


def test_other_keys_are_kept_after_the_known_ones_as_text(tmp_path: Path) -> None:
    recs = [
        {"run_id": "a", "drift": {"output_similarity": 0.9}, "tenant_id": "t"},
        {"run_id": "b", "agent_id": 7},
    ]
    df, _ = _read(tmp_path, "\n".join(json.dumps(r) for r in recs))
    extra = df.columns[len(RESULTS_SCHEMA) :]
    assert extra == ["drift", "tenant_id", "agent_id", "created_at_utc", "updated_at_utc"]
    assert df.schema["drift"] == df.schema["agent_id"] == pl.String
    assert df["drift"].to_list() == ['{"output_similarity":0.9}', None]
    assert df["agent_id"].to_list() == [None, "7"]


def test_created_and_updated_times_are_read_as_utc(tmp_path: Path) -> None:
    rec = {"run_id": "a", "created_at": "2026-07-27T03:40:55+02:00", "updated_at": "nonsense"}
    df, _ = _read(tmp_path, json.dumps(rec))
    r = df.row(0, named=True)
    assert r["created_at_utc"] == datetime(2026, 7, 27, 1, 40, 55, tzinfo=UTC)  # 03:40 at +2
    assert r["updated_at_utc"] is None
    assert r["created_at"] == "2026-07-27T03:40:55+02:00"  # the text stays as written


def test_an_empty_file_is_an_empty_typed_frame(tmp_path: Path) -> None:
    df, errors = _read(tmp_path, "  \n\n")
    assert errors == [] and df.height == 0
    assert df.columns == [*RESULTS_SCHEMA, "created_at_utc", "updated_at_utc"]


def test_a_missing_file_is_a_load_error(tmp_path: Path) -> None:
    errors: list = []
    df = read_results_jsonl(str(tmp_path / "nope.jsonl"), errors=errors)
    assert df.height == 0 and [e.error_type for e in errors] == ["missing"]


# --- read_baseline -----------------------------------------------------------------------


def _baseline(tmp_path: Path, doc) -> tuple[pl.DataFrame, list]:
    p = tmp_path / "baseline.json"
    p.write_text(json.dumps(doc))
    errors: list = []
    return read_baseline(str(p), errors=errors), errors


def test_a_tasks_own_cost_status_beats_the_provenance_one(tmp_path: Path) -> None:
    doc = {
        "provenance": {"cost_status": "unpriced_model", "model": "gpt-5-mini"},
        "tasks": {
            "inherits": {"avg_cost_usd": 0.0},  # provenance says unpriced: unknown
            "own-available": {"avg_cost_usd": 0.0, "cost_status": "available"},  # a real 0
            "priced": {"avg_cost_usd": 0.02},  # only a 0 is suspect
        },
    }
    b, errors = _baseline(tmp_path, doc)
    assert errors == []
    assert b.select("task_id", "avg_cost_usd", "avg_cost_usd_recorded", "cost_status").rows() == [
        ("inherits", None, 0.0, "unpriced_model"),
        ("own-available", 0.0, 0.0, "available"),
        ("priced", 0.02, 0.02, "unpriced_model"),
    ]
    assert b["baseline_model"].to_list() == ["gpt-5-mini"] * 3
    assert b["format"].to_list() == ["provenance"] * 3


def test_odd_task_entries_give_rows_of_nulls(tmp_path: Path) -> None:
    doc = {
        "tasks": {
            "7": "not an object",
            "b": {"expected_pass": "yes", "difficulty": 3, "avg_steps": "12", "avg_tokens": 1e400},
        }
    }
    p = tmp_path / "baseline.json"
    # 1e400 is not JSON that json.dumps writes; write the document by hand
    p.write_text(json.dumps(doc).replace('"avg_tokens": Infinity', '"avg_tokens": 1e400'))
    errors: list = []
    b = read_baseline(str(p), errors=errors)
    assert b["task_id"].to_list() == ["7", "b"]
    r7, rb = b.row(0, named=True), b.row(1, named=True)
    assert all(r7[k] is None for k in ("expected_pass", "avg_steps", "avg_cost_usd", "cost_status"))
    assert (rb["expected_pass"], rb["difficulty"], rb["avg_steps"]) == (None, "3", None)
    assert rb["avg_tokens"] is None  # not finite
    assert b["format"].to_list() == ["legacy", "legacy"]


def test_a_provenance_that_is_not_an_object_is_the_legacy_format(tmp_path: Path) -> None:
    b, _ = _baseline(tmp_path, {"provenance": "x", "tasks": {"t": {"avg_cost_usd": 0.0}}})
    r = b.row(0, named=True)
    assert (r["format"], r["baseline_model"], r["avg_cost_usd"]) == ("legacy", None, 0.0)


def test_a_missing_or_broken_baseline_is_a_load_error(tmp_path: Path) -> None:
    errors: list = []
    assert read_baseline(str(tmp_path / "nope.json"), errors=errors).height == 0
    (tmp_path / "bad.json").write_text("{not json")
    assert read_baseline(str(tmp_path / "bad.json"), errors=errors).height == 0
    assert [e.error_type for e in errors] == ["missing", "json_decode"]
    # an empty object has nothing to complain about
    b, errs = _baseline(tmp_path, {})
    assert b.height == 0 and errs == []


# --- outcome_exprs -----------------------------------------------------------------------

_OUT_SCHEMA = {
    "run_status": pl.String,
    "reward": pl.Float64,
    "exception_message": pl.String,
    "failure_reason": pl.String,
}


def _outcome(status, reward=None, msg=None, reason=None) -> tuple[str, str]:
    df = pl.DataFrame([(status, reward, msg, reason)], schema=_OUT_SCHEMA, orient="row")
    return df.select(outcome_exprs()).row(0)


@pytest.mark.parametrize(
    "row,expected",
    [
        # a reward beats any failure (goose rule)
        (("failed", 1.0, "boom"), ("pass", "unknown")),
        (("unknown", 1.0), ("pass", "unknown")),
        (("completed", 0.5), ("partial", "none")),
        (("completed", 0.0), ("fail", "none")),
        (("completed", None), ("no-reward", "none")),
        (("unknown", 0.0), ("incomplete", "unknown")),
        # timeouts: any of the three phrasings, case-insensitive
        (("failed", 0.0, "Tool Timed Out"), ("timeout", "agent")),
        (("failed", None, "TIMEOUT after 30s"), ("timeout", "agent")),
        (("cancelled", None, "context deadline exceeded"), ("timeout", "cancelled")),
        (("cancelled", None, ""), ("error", "cancelled")),
        # the reason names the agent's own limits
        (("failed", None, "stopped", "max_turns_exhausted"), ("error", "agent")),
        (("failed", None, "stopped", "max_steps_reached"), ("error", "agent")),
        # provider trouble
        (("failed", None, "Rate limit reached"), ("error", "provider")),
        (("failed", None, "upstream overloaded"), ("error", "provider")),
        (("failed", None, "HTTP 429"), ("error", "provider")),
        (("failed", None, None), ("error", "unknown")),
    ],
)
def test_outcome_and_error_kind(row, expected) -> None:
    assert _outcome(*row) == expected


# --- join_results ------------------------------------------------------------------------

_TRIALS = {
    "trial_id": pl.String,
    "task_name": pl.String,
    "reward": pl.Float64,
    "run_status": pl.String,
    "exception_message": pl.String,
    "failure_reason": pl.String,
}


def _trials(*rows) -> pl.DataFrame:
    return pl.DataFrame(list(rows), schema=_TRIALS, orient="row")


def test_results_without_run_ids_or_rows_leave_the_trials_as_they_are() -> None:
    t = _trials(("a", None, None, "completed", None, None))
    assert join_results(t, pl.DataFrame({"task_id": ["x"]})).equals(t)
    assert join_results(t, pl.DataFrame(schema={"run_id": pl.String})).equals(t)


def test_the_last_record_of_a_run_id_wins() -> None:
    t = _trials(("a", None, None, "completed", None, None))
    res = pl.DataFrame(
        {"run_id": ["a", "a"], "task_id": ["old", "new"], "is_resolved": [True, False]}
    )
    out = join_results(t, res)
    assert out.height == 1
    assert out.select("task_name", "reward", "outcome", "is_resolved").row(0) == (
        "new",
        0.0,
        "fail",
        False,
    )


def test_a_recorded_task_name_and_reward_are_kept() -> None:
    t = _trials(("a", "mine", 0.5, "completed", None, None))
    out = join_results(t, pl.DataFrame({"run_id": ["a"], "task_id": ["x"], "is_resolved": [True]}))
    assert out.select("task_name", "reward", "outcome").row(0) == ("mine", 0.5, "partial")


def test_results_without_task_or_resolution_columns_add_no_reward() -> None:
    t = _trials(("a", None, None, "completed", None, None), ("b", None, None, "failed", "x", None))
    out = join_results(t, pl.DataFrame({"run_id": ["a", "b"]}))
    assert out.select("task_name", "reward", "is_resolved").rows() == [(None, None, None)] * 2
    assert out["has_reward_file"].to_list() == [False, False]
    assert out["reward_source"].to_list() == [None, None]
    assert out["outcome"].to_list() == ["no-reward", "error"]


def test_only_runs_with_a_resolution_get_a_reward_source() -> None:
    t = _trials(
        ("a", None, None, "completed", None, None), ("b", None, None, "completed", None, None)
    )
    res = pl.DataFrame({"run_id": ["a", "zzz"], "task_id": ["t", "u"], "is_resolved": [True, True]})
    out = join_results(t, res).sort("trial_id")
    assert out.select("trial_id", "task_name", "reward_source", "has_reward_file").rows() == [
        ("a", "t", "results.jsonl", True),
        ("b", None, None, False),
    ]
