"""go-code failure paths on synthetic rollouts: order, malformed lines, drops, missing terminal
events, cancellation, cost precedence and status, retries, anti-pattern findings."""

from __future__ import annotations

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalkit.load.gocode import read_rollouts
from tests.load.gocode.rollout_helpers import ev, trials_with_details, write_rollout


def _one(tmp_path, events, name="run_x.jsonl", **kw):
    write_rollout(tmp_path / "r" / "2026-02-01" / name, events, **kw)
    return read_rollouts(tmp_path / "r", progress=False)


def _kinds(frames):
    return sorted(e.error_type for e in frames.errors)


def _run(*middle, term=None):
    """run.started (conversation_id run_x) + provider + middle events + terminal."""
    evs = [ev(0, "run.started", conversation_id="run_x", prompt="do it", step=0),
           ev(1, "provider.resolved", model="gpt-5-mini", provider="openai", step=0), *middle]  # fmt: skip
    if term is not None:
        evs.append(term)
    return evs


def test_sorted_by_seq_and_retries(tmp_path):
    calls = []
    seq = 10
    for i, args in enumerate(
        ['{"command":"go test ./..."}', '{"command": "go test ./..."}', '{"command":"ls"}']
    ):
        calls += [
            ev(seq, "tool.call.started", call_id=f"c{i}", tool="bash", arguments=args, step=1),
            ev(seq + 1, "tool.call.completed", call_id=f"c{i}", tool="bash", output="FAIL" if i < 2 else "ok",
               error="exit status 1" if i < 2 else None, duration_ms=12, step=1),
        ]  # fmt: skip
        seq += 2
    calls[-1]["data"].pop("error")  # success: no error key
    events = _run(
        ev(2, "run.step.started", step=1), ev(3, "llm.empty_response.retry", step=1, retry=1, max_retries=3),
        ev(4, "llm.turn.completed", step=1, tool_calls=3), *calls,
        term=ev(30, "run.completed", step=1, output="done",
                cost_totals={"cost_usd_total": 0.5, "cost_status": "available"},
                usage_totals={"prompt_tokens_total": 900, "completion_tokens_total": 30}),
    )  # fmt: skip
    events.reverse()  # written out of order: the reader sorts by seq
    f = _one(tmp_path, events)
    c = f.tool_calls.sort("call_index")
    assert c["tool_call_id"].to_list() == ["c0", "c1", "c2"]
    assert c["command"].to_list() == ["go test ./...", "go test ./...", "ls"]
    # trainerd's rule: same tool + canonical (key-sorted) arguments seen before = retry
    assert c["retried"].to_list() == [False, True, False]
    assert c["is_error"].to_list() == [True, True, False]
    assert c["duration_ms"].to_list() == [12.0, 12.0, 12.0]
    t = trials_with_details(f).row(0, named=True)
    assert (t["n_retried_tool_calls"], t["n_llm_retries"], t["n_tool_calls"]) == (1, 1, 3)
    assert (t["cost_usd"], t["model_name"], t["n_input_tokens"]) == (0.5, "openai/gpt-5-mini", 900)
    assert f.steps.filter(pl.col("source") == "agent")["llm_retries"].to_list() == [1]
    assert f.errors == []


def test_malformed_lines_drops_and_missing_terminal(tmp_path):
    events = _run(
        ev(2, "usage.delta", step=1, cost_status="available", cumulative_cost_usd=0.12,
           cumulative_usage={"prompt_tokens": 50, "completion_tokens": 5, "cached_prompt_tokens": 20},
           turn_usage={"prompt_tokens": 50, "completion_tokens": 5}, turn_cost_usd=0.12),
        ev(3, "recorder.drop_detected", step=1),
        ev(4, "assistant.message.delta", step=1, content="hel"), ev(5, "assistant.message.delta", step=1, content="lo"),
    )  # fmt: skip
    f = _one(tmp_path, events, raw_lines={1: b"{not json", 3: b"[1, 2]", 5: b"   "})
    assert _kinds(f) == [
        "malformed_line",
        "missing_terminal_event",
        "not_an_event",
        "recorder_drop",
    ]
    assert all(e.trial_id in (None, "run_x") and e.level == "rollout" for e in f.errors)
    t = trials_with_details(f).row(0, named=True)
    assert (t["run_status"], t["outcome"], t["error_kind"], t["result_present"]) == (
        "unknown",
        "incomplete",
        "unknown",
        False,
    )
    # no terminal totals: the last usage.delta gives cost and tokens
    assert (t["cost_usd"], t["cost_status"], t["n_input_tokens"], t["n_cache_tokens"]) == (
        0.12,
        "available",
        50,
        20,
    )
    assert (t["recorder_drops"], t["n_malformed_lines"]) == (1, 2)
    assert f.steps.filter(pl.col("source") == "agent")["message"].to_list() == ["hello"]
    assert f.jobs["state"].to_list() == ["unknown"] and f.jobs["finished_at"].to_list() == [None]


@pytest.mark.parametrize(
    "term,status,outcome,kind",
    [
        (
            ev(
                9,
                "run.failed",
                step=3,
                error="max steps reached",
                reason="max_steps_reached",
                max_steps=3,
            ),
            "failed",
            "error",
            "agent",
        ),
        (
            ev(9, "run.failed", step=1, error="context deadline exceeded"),
            "failed",
            "timeout",
            "agent",
        ),
        (
            ev(9, "run.failed", step=1, error="provider request failed: 429"),
            "failed",
            "error",
            "provider",
        ),
        (ev(9, "run.failed", step=1, error="boom"), "failed", "error", "unknown"),
        (
            ev(9, "run.cancelled", usage_totals={}, cost_totals={}),
            "cancelled",
            "error",
            "cancelled",
        ),
        (ev(9, "run.completed", step=1, output="x"), "completed", "no-reward", "none"),
    ],
)
def test_terminal_events(tmp_path, term, status, outcome, kind):
    t = trials_with_details(_one(tmp_path, _run(term=term))).row(0, named=True)
    assert (t["run_status"], t["outcome"], t["error_kind"]) == (status, outcome, kind)
    assert t["exception_type"] == (None if status == "completed" else term["type"])


@pytest.mark.parametrize(
    "term_data,deltas,cost,status",
    [
        # cost_usd_total first
        (
            {
                "cost_totals": {
                    "cost_usd_total": 0.3,
                    "total_cost_usd": 9.0,
                    "cost_status": "available",
                }
            },
            [],
            0.3,
            "available",
        ),
        # then total_cost_usd (the key go-code's forensics scorer reads)
        (
            {"cost_totals": {"total_cost_usd": 0.2, "cost_status": "available"}},
            [],
            0.2,
            "available",
        ),
        # then the last usage.delta cumulative_cost_usd
        ({}, [0.1, 0.25], 0.25, "available"),
        # an unpriced 0 is unknown, not free
        (
            {"cost_totals": {"cost_usd_total": 0, "cost_status": "unpriced_model"}},
            [],
            None,
            "unpriced_model",
        ),
        ({}, [], None, "unknown"),
        # a real, priced 0 stays 0
        (
            {"cost_totals": {"cost_usd_total": 0.0, "cost_status": "available"}},
            [],
            0.0,
            "available",
        ),
    ],
)
def test_cost_precedence_and_status(tmp_path, term_data, deltas, cost, status):
    ds = [
        ev(2 + i, "usage.delta", step=1, cost_status="available", cumulative_cost_usd=c)
        for i, c in enumerate(deltas)
    ]
    t = _one(tmp_path, _run(*ds, term=ev(9, "run.completed", step=1, **term_data))).trials.row(
        0, named=True
    )
    assert t["cost_usd"] == cost and t["cost_status"] == status


def test_antipattern_findings(tmp_path):
    events = _run(
        ev(2, "llm.turn.completed", step=1, tool_calls=1),
        ev(3, "tool.antipattern", type="retry_loop", tool="bash", call_count=3, step=1),
        ev(4, "tool.antipattern", type="hedge_assertion", evidence="clearly", step=7),
        term=ev(9, "run.completed", step=1),
    )
    fi = _one(tmp_path, events).findings
    assert fi.select(
        "trial_id", "detector", "step_start", "step_end", "severity", "source", "rule_version"
    ).rows() == [
        ("run_x", "retry_loop", 1, 1, "low", "recorded", "go-code-recorded"),
        ("run_x", "hedge_assertion", None, None, "medium", "recorded", "go-code-recorded"),
    ]
    assert fi["evidence"].to_list() == [
        "retry_loop: bash called 3 times with identical arguments",
        "clearly",
    ]


def test_tool_call_edge_cases(tmp_path):
    events = _run(
        ev(2, "llm.turn.completed", step=1, tool_calls=3),
        ev(
            3,
            "tool.call.started",
            call_id="s",
            tool="bash",
            arguments='{"command": "sleep 100"}',
            step=1,
        ),  # never completed
        ev(
            4, "tool.call.completed", call_id="orphan", tool="read", output="text", step=1
        ),  # started lost
        ev(5, "tool.call.started", call_id="e", tool="edit", arguments="not json", step=1),
        ev(
            6,
            "tool.call.completed",
            call_id="e",
            tool="edit",
            error="",
            output='{"exit_code": 0}',
            step=1,
        ),
        term=ev(9, "run.completed", step=1),
    )
    c = _one(tmp_path, events).tool_calls.sort("call_index")
    assert c["tool_call_id"].to_list() == ["s", "orphan", "e"]
    assert c["is_error"].to_list() == [None, False, False]  # error "" = success (go-code's rule)
    assert c["arguments"].to_list() == ['{"command": "sleep 100"}', None, "not json"]
    assert c["command"].to_list() == ["sleep 100", None, None]
    assert c["exit_code"].to_list() == [None, None, 0]


def test_duplicates_audit_and_empty(tmp_path):
    d = tmp_path / "r" / "2026-02-01"
    write_rollout(d / "a.jsonl", _run(term=ev(9, "run.completed")))
    write_rollout(d / "b.jsonl", _run(term=ev(9, "run.completed")))  # same conversation_id
    (d / "audit.jsonl").write_text(
        '{"timestamp": "x", "run_id": "run_x", "event_type": "t", "prev_hash": "", "entry_hash": ""}\n'
    )
    (d / "empty.jsonl").write_text("")
    f = read_rollouts(tmp_path / "r", progress=False)
    assert f.trials["trial_id"].to_list() == ["run_x"]
    assert _kinds(f) == ["duplicate_run_id"]
    assert read_rollouts(tmp_path / "nothing-here", progress=False).trials.height == 0


event_types = st.sampled_from(
    ["run.started", "run.completed", "run.failed", "run.cancelled", "usage.delta", "llm.turn.completed",
     "tool.call.started", "tool.call.completed", "assistant.message", "tool.antipattern", "recorder.drop_detected",
     "provider.resolved", "llm.empty_response.retry", "reasoning.complete", "run.step.started"]
)  # fmt: skip
junk = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 2**40),
    st.floats(allow_nan=False),
    st.text(max_size=8),
)
payload = st.dictionaries(
    st.sampled_from(["step", "call_id", "tool", "arguments", "output", "error", "cost_totals", "usage_totals",
                     "cumulative_cost_usd", "cost_status", "turn_usage", "content", "type", "model", "provider",
                     "conversation_id", "prompt", "tool_calls", "duration_ms"]),
    st.one_of(junk, st.dictionaries(st.text(max_size=6), junk, max_size=3), st.lists(junk, max_size=3)),
    max_size=6,
)  # fmt: skip
line = st.one_of(
    st.builds(
        lambda s, t, d: {"ts": "2026-01-01T00:00:00Z", "seq": s, "type": t, "data": d},
        st.one_of(st.integers(0, 50), junk),
        event_types,
        st.one_of(payload, junk),
    ),
    st.binary(max_size=30),
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(line, max_size=12))
def test_random_rollouts_never_crash(tmp_path, lines):
    import shutil

    shutil.rmtree(tmp_path / "r", ignore_errors=True)
    f = _one(tmp_path, lines)
    assert f.trials.height <= 1 and f.jobs.height == 1
    if f.tool_calls.height:
        assert f.tool_calls["trial_id"].is_in(f.trials["trial_id"].to_list()).all()
