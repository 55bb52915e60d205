"""ATIF v1.0-v1.8 features and bad input, on small hand-written documents."""

from __future__ import annotations

import json

import polars as pl
import pytest

from evalkit.load.steps import read_trajectory
from tests.load.steps.steps_helpers import atif_doc, write_json


def _read(tmp_path, doc, name="trajectory.json", **files):
    for fname, content in files.items():
        write_json(tmp_path / fname.replace("__", "."), content)
    p = tmp_path / name
    if isinstance(doc, bytes):
        p.write_bytes(doc)
    else:
        write_json(p, doc)
    return read_trajectory(p, trial_id="t")


def test_v10_prompt_tokens_normalised_to_include_cached(tmp_path):
    doc = atif_doc(
        [
            {
                "step_id": 1,
                "source": "agent",
                "message": "x",
                "metrics": {"prompt_tokens": 100, "cached_tokens": 40, "completion_tokens": 5},
            }
        ],
        version="ATIF-v1.0",
        final_metrics={"total_prompt_tokens": 100, "total_cached_tokens": 40},
    )
    steps, _, summary, _ = _read(tmp_path, doc)
    assert steps["prompt_tokens"].to_list() == [140]
    assert summary["final_prompt_tokens"].item() == 140
    doc["schema_version"] = "ATIF-v1.2"  # from v1.2 prompt_tokens already include cached
    steps, _, summary, _ = _read(tmp_path, doc)
    assert (
        steps["prompt_tokens"].to_list() == [100] and summary["final_prompt_tokens"].item() == 100
    )


def test_multimodal_content_parts(tmp_path):
    msg = [
        {"type": "text", "text": "look at"},
        {"type": "image", "source": {"media_type": "image/png", "path": "images/a.png"}},
        {
            "type": "audio",
            "source": {"media_type": "audio/wav", "path": "clip.wav", "duration_sec": 2.0},
        },
    ]
    doc = atif_doc(
        [
            {"step_id": 1, "source": "user", "message": msg},
            {
                "step_id": 2, "source": "agent", "message": "",
                "tool_calls": [{"tool_call_id": "c1", "function_name": "screenshot", "arguments": {}}],
                "observation": {"results": [{"source_call_id": "c1", "content": [{"type": "image", "source": {"path": "shot.png"}}]}]},
            },
        ],
        version="ATIF-v1.8",
    )  # fmt: skip
    steps, calls, _, _ = _read(tmp_path, doc)
    assert steps["message"][0] == "look at\n[image: images/a.png]\n[audio: clip.wav]"
    assert calls["observation"].to_list() == ["[image: shot.png]"]


def test_observation_joins(tmp_path):
    doc = atif_doc(
        [
            {
                "step_id": 1, "source": "agent", "message": "m",
                "tool_calls": [
                    {"tool_call_id": "a", "function_name": "bash", "arguments": {"command": "ls"}},
                    {"tool_call_id": "b", "function_name": "bash", "arguments": {"command": "pwd"}},
                ],
                "observation": {"results": [
                    {"source_call_id": "b", "content": "/app"},
                    {"source_call_id": "a", "content": "x.txt"},
                    {"source_call_id": "a", "content": "y.txt"},
                    {"content": "terminal state"},
                    {"source_call_id": "zzz", "content": "orphan"},
                ]},
            }
        ]
    )  # fmt: skip
    steps, calls, _, _ = _read(tmp_path, doc)
    assert calls["observation"].to_list() == ["x.txt\ny.txt", "/app"]
    assert calls["observation_source"].to_list() == ["call_id", "call_id"]
    # no call id, or an id that matches no call of the step: kept on the step
    assert steps["observation"].to_list() == ["terminal state\norphan"]


def test_structured_error_signals(tmp_path):
    calls_ = [
        {"tool_call_id": "a", "function_name": "Bash", "arguments": {"command": "false"}},
        {"tool_call_id": "b", "function_name": "Read", "arguments": {"file_path": "/x"}},
        {
            "tool_call_id": "c",
            "function_name": "run",
            "arguments": {"cmd": "make"},
            "extra": {"exit_code": 2},
        },
        {"tool_call_id": "d", "function_name": "edit", "arguments": {}},
    ]
    results = [
        {
            "source_call_id": "a",
            "content": "Exit code 1",
            "extra": {"tool_result_metadata": {"raw_tool_result": {"is_error": True}}},
        },
        {
            "source_call_id": "b",
            "content": "Error: looks bad but the tool said fine",
            "extra": {"is_error": False},
        },
        {"source_call_id": "c", "content": "make: *** [all] Error 2"},
        {"source_call_id": "d", "content": "ok", "extra": {"error": "permission denied"}},
    ]
    doc = atif_doc(
        [
            {
                "step_id": 1,
                "source": "agent",
                "message": "",
                "tool_calls": calls_,
                "observation": {"results": results},
            }
        ]
    )
    _, calls, _, _ = _read(tmp_path, doc)
    assert calls["is_error"].to_list() == [True, False, True, True]
    assert calls["is_error_source"].to_list() == ["structured"] * 4
    assert calls["exit_code"].to_list() == [None, None, 2, None]
    assert calls["command"].to_list() == ["false", None, "make", None]


def test_step_fields_and_extra(tmp_path):
    doc = atif_doc(
        [
            {"step_id": 1, "source": "system", "message": "sys", "is_copied_context": True},
            {
                "step_id": 2, "source": "agent", "message": "hi", "model_name": "m1", "reasoning_content": "because",
                "llm_call_count": 3, "extra": {"stop_reason": "end_turn"}, "timestamp": "2026-01-02T03:04:05+02:00",
            },
            {"step_id": 3, "source": "agent", "message": "x", "timestamp": "2026-01-02 03:04:05"},
            {"step_id": 4, "source": "agent", "message": "y", "timestamp": "yesterday"},
        ],
        agent={"name": "a", "version": "1", "model_name": "fallback-model"},
    )  # fmt: skip
    steps, _, summary, _ = _read(tmp_path, doc)
    r = steps.row(1, named=True)
    assert (r["model_name"], r["reasoning_content"], r["llm_call_count"]) == ("m1", "because", 3)
    assert json.loads(r["extra"]) == {"stop_reason": "end_turn"}
    assert steps["is_copied_context"].to_list() == [True, None, None, None]
    assert steps["model_name"].to_list() == [None, "m1", "fallback-model", "fallback-model"]
    ts = steps["timestamp"].to_list()
    assert ts[0] is None and ts[3] is None
    assert ts[1].isoformat() == "2026-01-02T01:04:05+00:00"  # offset honoured
    assert ts[2].isoformat() == "2026-01-02T03:04:05+00:00"  # naive read as UTC
    assert summary["n_steps"].item() == 3


def test_embedded_subagents_by_id(tmp_path):
    sub = atif_doc(
        [{"step_id": 1, "source": "agent", "message": "sub work"}], trajectory_id="sub-1"
    )
    other = atif_doc(
        [{"step_id": 1, "source": "agent", "message": "unreferenced"}], trajectory_id="sub-2"
    )
    doc = atif_doc(
        [
            {"step_id": 1, "source": "user", "message": "go"},
            {
                "step_id": 2, "source": "agent", "message": "delegating",
                "tool_calls": [{"tool_call_id": "t", "function_name": "Task", "arguments": {"prompt": "p"}}],
                "observation": {"results": [{"source_call_id": "t", "content": "done", "subagent_trajectory_ref": [{"trajectory_id": "sub-1"}]}]},
            },
        ],
        subagent_trajectories=[sub, other],
    )  # fmt: skip
    steps, _calls, summary, errors = _read(tmp_path, doc)
    assert errors == []
    assert steps["trajectory"].to_list() == ["main", "main", "sub-1", "sub-2"]
    assert steps["is_main"].to_list() == [True, True, False, False]
    assert summary["n_steps"].item() == 1  # subagent steps are not main agent steps


def test_subagent_files_nested_and_missing(tmp_path):
    deep = atif_doc([{"step_id": 1, "source": "agent", "message": "deep"}])
    mid = atif_doc(
        [
            {
                "step_id": 1,
                "source": "agent",
                "message": "mid",
                "observation": {
                    "results": [{"subagent_trajectory_ref": [{"trajectory_path": "deep.json"}]}]
                },
            }
        ]
    )
    doc = atif_doc(
        [
            {
                "step_id": 1, "source": "agent", "message": "main",
                "observation": {"results": [{"subagent_trajectory_ref": [
                    {"trajectory_path": "mid.json"}, {"trajectory_path": "/logs/agent/nowhere.json"},
                    {"trajectory_path": "../../etc/passwd"}, {"session_id": "no path no id"},
                ]}]},
            }
        ]
    )  # fmt: skip
    steps, _, _, errors = _read(tmp_path, doc, **{"mid__json": mid, "deep__json": deep})
    assert steps["trajectory"].to_list() == ["main", "mid", "deep"]
    assert sorted(e.error_type for e in errors) == [
        "bad_subagent_ref",
        "missing_subagent",
        "missing_subagent",
    ]


def test_continuation_errors(tmp_path):
    doc = atif_doc(
        [{"step_id": 1, "source": "agent", "message": "a"}],
        continued_trajectory_ref="trajectory.cont-1.json",
    )
    _, _, _, errors = _read(tmp_path, doc)
    assert [e.error_type for e in errors] == ["missing_continuation"]
    # a continuation that points back at the main file: read once, cycle reported
    cont = atif_doc(
        [{"step_id": 1, "source": "agent", "message": "b"}],
        continued_trajectory_ref="trajectory.json",
    )
    steps, _, summary, errors = _read(tmp_path, doc, **{"trajectory__cont-1__json": cont})
    assert steps["message"].to_list() == ["a", "b"]
    assert [e.error_type for e in errors] == ["continuation_cycle"]
    assert summary["n_steps"].item() == 2


def test_unlinked_continuation_appended(tmp_path):
    doc = atif_doc([{"step_id": 1, "source": "agent", "message": "a"}])
    cont = atif_doc([{"step_id": 1, "source": "agent", "message": "b"}])
    steps, _, _, errors = _read(tmp_path, doc, **{"trajectory__cont-1__json": cont})
    assert steps["message"].to_list() == ["a", "b"] and steps["trajectory"].unique().to_list() == [
        "main"
    ]
    assert [e.error_type for e in errors] == ["unlinked_continuation"]


def test_odd_shapes_never_crash(tmp_path):
    doc = {
        "schema_version": "ATIF-v9.9",
        "agent": "not a dict",
        "steps": [
            "not a step",
            {
                "step_id": "1",
                "source": 5,
                "message": {"weird": True},
                "tool_calls": "nope",
                "metrics": [1],
            },
            {
                "step_id": 2.0,
                "source": "agent",
                "message": None,
                "tool_calls": [{"function_name": 3, "arguments": "ls -la"}, 7],
            },
            {
                "source": "agent",
                "message": "x",
                "metrics": {"prompt_tokens": "12", "cost_usd": float("inf") if False else "NaN"},
            },
        ],
    }
    steps, calls, _summary, errors = _read(tmp_path, doc)
    assert steps.height == 3 and calls.height == 1
    assert [e.error_type for e in errors] == ["bad_step", "bad_tool_call", "bad_tool_call"]
    assert steps["step_id"].to_list() == [None, 2, None]
    assert steps["message"][0] == '{"weird":true}'
    assert calls["arguments"].to_list() == ["ls -la"] and calls["function_name"].to_list() == [None]


def test_unversioned_dict_with_steps_is_read_as_atif(tmp_path):
    steps, _, summary, errors = _read(
        tmp_path,
        {"agent": {"name": "x"}, "steps": [{"step_id": 1, "source": "agent", "message": "m"}]},
    )
    assert errors == [] and steps.height == 1 and summary["n_steps"].item() == 1


@pytest.mark.parametrize(
    "content,kind,needle",
    [
        (b'[{"episode": 0, "prompt": "p", "response": "r"}]', "not_atif", "episode log"),
        (b'{"sessionId": "x", "messages": []}', "not_atif", "sessionId"),
        (b'{"a": 1}\n{"b": 2}\n', "not_atif", "JSON Lines"),
        (b"", "empty", ""),
        (b"   \n", "empty", ""),
        (b'{"schema_version": "ATIF-v1.2", "steps": [', "json_decode", ""),
        (b"\xff\xfe not utf8", "invalid_utf8", ""),
        (b'"just a string"', "not_atif", "str"),
    ],
)
def test_not_atif_and_bad_files(tmp_path, content, kind, needle):
    steps, calls, summary, errors = _read(tmp_path, content)
    assert steps.height == calls.height == summary.height == 0
    assert [e.error_type for e in errors] == [kind]
    assert needle in errors[0].message
    assert errors[0].level == "trajectory" and errors[0].trial_id == "t"


def test_nan_literal_tolerated(tmp_path):
    raw = b'{"schema_version": "ATIF-v1.2", "agent": {}, "steps": [{"step_id": 1, "source": "agent", "message": "m", "metrics": {"cost_usd": NaN, "prompt_tokens": 3}}]}'
    steps, _, _, errors = _read(tmp_path, raw)
    assert (
        errors == []
        and steps["cost_usd"].to_list() == [None]
        and steps["prompt_tokens"].to_list() == [3]
    )


def test_size_cap_and_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("EVALKIT_MAX_FILE_MB", "0.00001")
    _, _, _, errors = _read(
        tmp_path, atif_doc([{"step_id": 1, "source": "agent", "message": "x" * 100}])
    )
    assert [e.error_type for e in errors] == ["too_large"]
    monkeypatch.delenv("EVALKIT_MAX_FILE_MB")
    d = tmp_path / "dir" / "trajectory.json"
    d.mkdir(parents=True)
    assert [e.error_type for e in read_trajectory(d, trial_id="t")[3]] == ["not_a_file"]
    assert [e.error_type for e in read_trajectory(tmp_path / "missing.json", trial_id="t")[3]] == [
        "missing"
    ]


def test_frames_are_typed_even_when_empty(tmp_path):
    steps, calls, summary, _ = _read(tmp_path, b"[]")
    assert steps.schema["timestamp"] == pl.Datetime("us", "UTC")
    assert calls.schema["is_error"] == pl.Boolean and summary.height == 0


@pytest.mark.parametrize("steps", [{"1": {"source": "agent"}}, "steps", 3])
def test_steps_that_are_not_a_list_are_a_load_error(tmp_path, steps):
    """'steps' as an object (or any non-list) reads no steps and says so (was silent)."""
    doc = atif_doc([])
    doc["steps"] = steps
    got, _, summary, errors = _read(tmp_path, doc)
    assert got.height == 0
    assert [e.error_type for e in errors] == ["bad_steps"]
    assert "not a list" in errors[0].message and errors[0].trial_id == "t"
    assert summary["n_steps"].to_list() == [0]


def test_tool_calls_that_are_not_objects_are_a_load_error(tmp_path):
    """Non-object tool_calls entries (and a non-list tool_calls) are skipped with a
    load-error row each step (were dropped silently); the object calls are kept."""
    call = {"tool_call_id": "c1", "function_name": "bash", "arguments": {"command": "ls"}}
    doc = atif_doc(
        [
            {"step_id": 1, "source": "agent", "message": "a", "tool_calls": [call, "x", 5]},
            {"step_id": 2, "source": "agent", "message": "b", "tool_calls": "ls"},
        ]
    )
    _, calls, summary, errors = _read(tmp_path, doc)
    assert calls["tool_call_id"].to_list() == ["c1"]
    assert [e.error_type for e in errors] == ["bad_tool_call", "bad_tool_call"]
    assert "2 tool call(s) are not JSON objects" in errors[0].message
    assert "'tool_calls' is a JSON string" in errors[1].message
    assert summary["n_tool_calls"].to_list() == [1]


@pytest.mark.parametrize("raise_limit", [0, 5000])
@pytest.mark.parametrize(("depth", "shown"), [(300, True), (600, False)])
def test_deep_values_shown_by_a_fixed_depth_rule(tmp_path, depth, shown, raise_limit):
    """A value too deep for orjson to write is shown as Python's repr up to MAX_REPR_DEPTH
    levels, else as NESTED_TOO_DEEP, whatever the interpreter's recursion limit."""
    import sys

    from evalkit.load.steps.atif import NESTED_TOO_DEEP

    extra: object = [1]
    for _ in range(depth):
        extra = {"a": extra}
    body = json.dumps(atif_doc([{"step_id": 1, "source": "agent", "extra": extra}]))
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(old + raise_limit)
    try:
        steps, *_ = _read(tmp_path, body.encode())
    finally:
        sys.setrecursionlimit(old)
    text = steps["extra"].item()
    assert (text != NESTED_TOO_DEEP) is shown
    if shown:
        assert text.startswith("{'a': {'a': ")
