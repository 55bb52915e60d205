"""first_divergence on hand-built tool-call frames and on two real hermes trajectories."""

from __future__ import annotations

import polars as pl
import pytest

import evalkit
from evalkit.compare import first_divergence
from evalkit.compare.divergence import normalise_arguments
from tests.conftest import OPENCLAW


def calls(tid: str, seq: list[tuple], main: list[bool] | None = None) -> pl.DataFrame:
    """seq: (step_index, call_index, function_name, arguments JSON, command)."""
    df = pl.DataFrame(
        seq,
        schema={
            "step_index": pl.Int64,
            "call_index": pl.Int64,
            "function_name": pl.String,
            "arguments": pl.String,
            "command": pl.String,
        },
        orient="row",
    ).with_columns(
        pl.lit(tid).alias("trial_id"),
        pl.lit(False).alias("is_error"),
        pl.lit("out").alias("observation"),
    )
    if main is not None:
        df = df.with_columns(pl.Series("is_main", main))
    return df


def test_normalisation():
    assert normalise_arguments('{"b": 1, "a": "  ls   -la \\n"}') == '{"a":"ls -la","b":1}'
    assert normalise_arguments('{"keystrokes": "ls\\n", "duration": 5}') == '{"keystrokes":"ls"}'
    assert normalise_arguments('{"command": "x", "description": "List files"}') == '{"command":"x"}'
    assert normalise_arguments("not json   at all") == "not json at all"
    assert normalise_arguments(None) == ""
    assert normalise_arguments('{"a": 1}', ignore_keys=("a",)) == "{}"


def test_identical_up_to_normalisation():
    a = calls("a", [(1, 0, "bash", '{"cmd": "ls  -la", "timeout": 10}', "ls -la")])
    b = calls("b", [(3, 0, "bash", '{"timeout": 99, "cmd": "ls -la"}', "ls -la")])
    d = first_divergence(a, b)
    assert (d.kind, d.index, d.common_prefix, d.n_calls_a) == ("identical", None, 1, 1)
    assert "identical" in d.summary()


def test_differs_at_third_call_and_shows_both():
    common = [
        (1, 0, "read", '{"path": "a.py"}', None),
        (2, 0, "bash", '{"cmd": "pytest"}', "pytest"),
    ]
    a = calls("a", [*common, (3, 0, "edit", '{"path": "a.py", "text": "x"}', None)])
    b = calls(
        "b",
        [
            *common,
            (3, 0, "bash", '{"cmd": "rm -rf build"}', "rm -rf build"),
            (4, 0, "bash", "{}", None),
        ],
    )
    d = first_divergence(a, b)
    assert (d.kind, d.index, d.common_prefix, d.n_calls_b) == ("differ", 2, 2, 4)
    assert d.a["function_name"] == "edit" and d.b["function_name"] == "bash"
    assert d.a["arguments"] == '{"path":"a.py","text":"x"}'
    assert (d.a["step_index"], d.b["step_index"]) == (3, 3)
    md = d.to_markdown()
    assert "diverge at call 2" in md and "rm -rf build" in md and "call 0: edit" in md


def test_one_sequence_is_a_prefix():
    a = calls("a", [(0, 0, "x", "{}", None)])
    b = calls("b", [(0, 0, "x", "{}", None), (1, 0, "y", "{}", None), (2, 0, "z", "{}", None)])
    d = first_divergence(a, b)
    assert (d.kind, d.index, d.a, d.b["function_name"]) == ("a_ended", 1, None, "y")
    assert "B went on for 2 more" in d.summary()
    assert "(no call: the trajectory ended)" in d.to_markdown()
    assert first_divergence(b, a).kind == "b_ended"


def test_ordering_main_only_and_ids():
    a = calls(
        "a",
        [
            (2, 0, "second", "{}", None),
            (1, 1, "first-b", "{}", None),
            (1, 0, "first-a", "{}", None),
            (1, 2, "sub", "{}", None),
        ],
        main=[True, True, True, False],
    )
    b = calls(
        "b",
        [
            (1, 0, "first-a", "{}", None),
            (1, 1, "first-b", "{}", None),
            (2, 0, "second", "{}", None),
        ],
    )
    assert first_divergence(a, b).kind == "identical"  # sorted by step/call; subagent call dropped
    assert first_divergence(a, b, main_only=False).kind == "differ"
    both = pl.concat([a, b], how="diagonal_relaxed")
    steps = pl.DataFrame({"trial_id": ["a"], "step_index": [2], "message": ["let me run it"]})
    d = first_divergence("a", "b", tool_calls=both, steps=steps, main_only=False)
    assert d.kind == "differ" and d.trial_a == "a"
    with pytest.raises(ValueError):
        first_divergence("a", "b")


def test_no_calls():
    empty = calls("a", [])
    assert first_divergence(empty, empty).kind == "no_calls"


def test_real_hermes_trajectories():
    runs = evalkit.load(OPENCLAW, progress=False)
    t = runs.trials.filter(pl.col("task_name") == "hermes-telegram-mirror-drop")
    ids = dict(zip(t["job_name"].to_list(), t["trial_id"].to_list(), strict=True))
    a = ids["2026-05-14__12-27-32__hermes-telegram-mirror-drop"]  # partial 0.65
    b = ids["2026-05-26__01-59-53"]  # pass 1.0
    d = first_divergence(a, b, runs=runs)
    # both start with session_search, with different queries
    assert (d.kind, d.index, d.n_calls_a, d.n_calls_b) == ("differ", 0, 2, 3)
    assert d.a["function_name"] == d.b["function_name"] == "session_search"
    assert d.a["arguments"] == '{"limit":3,"query":"meeting time"}'
    assert d.b["arguments"] == '{"query":"meeting Bob message telegram"}'
    assert d.a["message"].startswith("I don't have any record")
    assert "No matching sessions found." in d.a["observation"]
