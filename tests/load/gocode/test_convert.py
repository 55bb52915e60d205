"""One go-code rollout's events -> rows (load/gocode/convert.py), called directly on events.

The rules are the module docstring's and rollouts-gates-qc.md §1.3-1.7 / 1.13: run id from
``run.started.conversation_id`` else the file stem; one agent step per go-code step number;
the step message from assistant.message, then the joined deltas, then
llm.turn.completed.content; tool calls paired by call_id, ``llm.turn.completed.tool_calls``
lists used only for steps without tool.call events; the cost precedence and the unpriced-0
rule; recorded ``tool.antipattern`` findings. Checked here: what the end-to-end tests in
test_rollout_*.py do not reach (message / reasoning precedence, per-step usage sums and
timings, call pairing corner cases, exit codes in outputs, findings evidence, the trial's
own fields, integrity errors) and the small helpers.
"""

from __future__ import annotations

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalkit.load.gocode.convert import (
    _cost_known,
    _exit_from_output,
    _parse_args,
    _rollout_date,
    _text,
    convert,
)
from evalkit.load.gocode.events import RolloutFile
from evalkit.load.steps.columns import CALL_FIELDS, STEP_FIELDS
from tests.load.gocode.rollout_helpers import ev

PATH = "/data/rollouts/2026-02-01/run_stem.jsonl"


def _conv(events: list[dict], path: str = PATH, n_malformed: int = 0):
    rf = RolloutFile(path, events=events, n_malformed=n_malformed)
    return convert(rf, job_id="J", job_name="rollouts")


def _steps(c) -> list[dict]:
    return [dict(zip(STEP_FIELDS, r, strict=True)) for r in c.steps]


def _agent_steps(c) -> list[dict]:
    return [s for s in _steps(c) if s["source"] == "agent"]


def _calls(c) -> list[dict]:
    return [dict(zip(CALL_FIELDS, r, strict=True)) for r in c.calls]


def _start(**data) -> dict:
    return ev(0, "run.started", **{"conversation_id": "run_a", "prompt": "fix it", **data})


# --- run id, opening steps, step numbering ---------------------------------------------


def test_run_id_is_the_conversation_id_else_the_file_stem() -> None:
    assert _conv([_start()]).trial["trial_id"] == "run_a"
    # no conversation_id (the hand fixtures), or no run.started at all: the file stem
    assert _conv([ev(0, "run.started", prompt="p")]).trial["trial_id"] == "run_stem"
    assert _conv([ev(1, "run.completed", step=1)]).trial["trial_id"] == "run_stem"


def test_system_prompt_comes_before_the_user_prompt_and_agent_steps_follow_in_step_order() -> None:
    c = _conv(
        [
            _start(system_prompt="be brief"),
            ev(5, "assistant.message", step=3, content="third"),
            ev(3, "assistant.message", step=1, content="first"),
            ev(4, "assistant.message", step=2, content="second"),
        ]
    )
    got = [(s["step_index"], s["step_id"], s["source"], s["message"]) for s in _steps(c)]
    assert got == [
        (0, 0, "system", "be brief"),
        (1, 0, "user", "fix it"),
        (2, 1, "agent", "first"),
        (3, 2, "agent", "second"),
        (4, 3, "agent", "third"),
    ]
    assert all(s["trajectory"] == "main" and s["is_main"] for s in _steps(c))
    # the opening steps carry the run.started time and no calls
    assert [s["_ts"] for s in _steps(c)[:2]] == ["2026-02-01T00:00:00Z"] * 2
    assert [s["n_tool_calls"] for s in _steps(c)[:2]] == [0, 0]


def test_a_prompt_that_is_not_a_string_is_kept_as_json_text() -> None:
    c = _conv([_start(prompt=[{"type": "text", "text": "hi"}])])
    assert _steps(c)[0]["message"] == '[{"type":"text","text":"hi"}]'


def test_without_run_started_there_is_no_user_step_and_the_agent_step_is_first() -> None:
    c = _conv([ev(1, "assistant.message", step=1, content="x")])
    assert [(s["step_index"], s["source"]) for s in _steps(c)] == [(0, "agent")]
    assert [e.error_type for e in c.errors] == ["missing_run_started", "missing_terminal_event"]


def test_events_without_a_usable_step_number_make_no_agent_step() -> None:
    c = _conv(
        [
            _start(),
            ev(1, "assistant.message", step=0, content="step 0 is the run itself"),
            ev(2, "assistant.message", step="1", content="a string step"),
            ev(3, "assistant.message", content="no step"),
            ev(4, "prompt.resolved", step=1, intent="x"),  # not a step event type
            ev(5, "assistant.message", step=2.0, content="an integral float step"),
        ]
    )
    assert [(s["step_id"], s["message"]) for s in _agent_steps(c)] == [
        (2, "an integral float step")
    ]
    assert (c.trial["n_steps"], c.trial["n_turns"]) == (1, 1)


# --- step message, reasoning, usage, timings --------------------------------------------


def test_step_message_precedence() -> None:
    c = _conv(
        [
            _start(),
            # step 1: assistant.message beats deltas and turn content
            ev(1, "assistant.message.delta", step=1, content="del"),
            ev(2, "llm.turn.completed", step=1, content="turn"),
            ev(3, "assistant.message", step=1, content="full"),
            # step 2: an empty assistant.message is skipped; the deltas are joined
            ev(4, "assistant.message", step=2, content=""),
            ev(5, "assistant.message.delta", step=2, content="hel"),
            ev(6, "assistant.message.delta", step=2, content=None),  # not text: left out
            ev(7, "assistant.message.delta", step=2, content="lo"),
            # step 3: only the turn's content
            ev(8, "llm.turn.completed", step=3, content="from the turn"),
            # step 4: nothing says anything
            ev(9, "run.step.started", step=4),
            # step 5: structured turn content becomes JSON text
            ev(10, "llm.turn.completed", step=5, content={"k": 1}),
        ]
    )
    assert [s["message"] for s in _agent_steps(c)] == [
        "full",
        "hello",
        "from the turn",
        None,
        '{"k":1}',
    ]


def test_step_reasoning_is_reasoning_complete_else_the_joined_thinking_deltas() -> None:
    c = _conv(
        [
            _start(),
            ev(1, "assistant.thinking.delta", step=1, content="ignored"),
            ev(2, "reasoning.complete", step=1, text="the plan", tokens=3),
            ev(3, "assistant.thinking.delta", step=2, content="a"),
            ev(4, "assistant.thinking.delta", step=2, content="b"),
            ev(5, "assistant.message", step=3, content="no reasoning"),
        ]
    )
    assert [s["reasoning_content"] for s in _agent_steps(c)] == ["the plan", "ab", None]


def test_step_tokens_and_cost_are_summed_over_its_usage_deltas() -> None:
    u = "usage.delta"
    c = _conv(
        [
            _start(),
            ev(1, u, step=1, turn_usage={"prompt_tokens": 100, "completion_tokens": 7},
               turn_cost_usd=0.25, cost_status="available"),
            ev(2, u, step=1, turn_usage={"prompt_tokens": 50, "cached_prompt_tokens": 40},
               turn_cost_usd=0.5, cost_status="available"),
            # step 2: an unpriced 0 is unknown, not free
            ev(3, u, step=2, turn_usage={"prompt_tokens": 10, "completion_tokens": 1},
               turn_cost_usd=0, cost_status="unpriced_model"),
            # step 3: no usage figures at all
            ev(4, "assistant.message", step=3, content="x"),
        ]
    )  # fmt: skip
    got = [
        (s["prompt_tokens"], s["completion_tokens"], s["cached_tokens"], s["cost_usd"])
        for s in _agent_steps(c)
    ]
    # step 1: prompt 100 + 50 = 150, completion 7 (only one delta gives it), cached 40,
    # cost 0.25 + 0.5 = 0.75
    assert got == [(150, 7, 40, 0.75), (10, 1, None, None), (None, None, None, None)]


def test_step_timings_and_turn_counts() -> None:
    c = _conv(
        [
            _start(),
            ev(1, "run.step.started", step=1),
            ev(2, "llm.turn.completed", step=1, total_duration_ms=900, ttft_ms=120),
            ev(3, "llm.empty_response.retry", step=1, retry=1, max_retries=3),
            ev(4, "llm.turn.completed", step=1, total_duration_ms=400, ttft_ms=80),
            ev(5, "run.step.completed", step=1, duration_ms=1500, tool_calls=0),
            ev(6, "assistant.message", step=2, content="no timings"),
        ]
    )
    one, two = _agent_steps(c)
    # the last turn's timings, the step's own duration
    assert orjson.loads(one["extra"]) == {
        "total_duration_ms": 400,
        "ttft_ms": 80,
        "step_duration_ms": 1500,
    }
    assert (one["llm_call_count"], one["llm_retries"]) == (2, 1)
    assert one["_ts"] == "2026-02-01T00:00:02Z"  # the first llm.turn.completed
    assert (two["extra"], two["llm_call_count"], two["llm_retries"]) == (None, 0, 0)
    assert two["_ts"] == "2026-02-01T00:00:06Z"  # no turn: the step's first event
    assert c.trial["n_llm_retries"] == 1


# --- tool calls --------------------------------------------------------------------------


def _call(seq: int, cid: str | None, tool: str = "bash", args: str = "{}", step: int = 1):
    return ev(seq, "tool.call.started", call_id=cid, tool=tool, arguments=args, step=step)


def _done(seq: int, cid: str | None, step: int = 1, **data):
    return ev(seq, "tool.call.completed", call_id=cid, step=step, **data)


def test_a_reused_call_id_starts_a_new_call_once_its_slot_is_filled() -> None:
    c = _conv(
        [
            _start(),
            _call(1, "x", args='{"command":"a"}'),
            _done(2, "x", output="A"),
            _call(3, "x", args='{"command":"b"}'),  # x already started: a second call
            _done(4, "x", output="B"),
        ]
    )
    assert [(k["command"], k["observation"]) for k in _calls(c)] == [("a", "A"), ("b", "B")]
    assert [k["call_index"] for k in _calls(c)] == [0, 1]


def test_calls_without_a_call_id_are_never_paired() -> None:
    c = _conv([_start(), _call(1, None), _done(2, None, tool="bash", output="o")])
    got = [(k["tool_call_id"], k["arguments"], k["observation"]) for k in _calls(c)]
    assert got == [(None, "{}", None), (None, None, "o")]


def test_the_completed_event_names_the_tool_and_the_error_is_the_observation() -> None:
    c = _conv(
        [
            _start(),
            _done(1, "lost", tool="read_file", error="permission denied", duration_ms=4),
            _call(2, "ok", tool="read_file", args='{"path":"a.go"}'),
            _done(3, "ok", output="", error=None),  # error present but null: success
        ]
    )
    lost, ok = _calls(c)
    assert (lost["function_name"], lost["observation"], lost["_s_err"]) == (
        "read_file",
        "permission denied",
        True,
    )
    assert (lost["duration_ms"], lost["_ts"], lost["observation_source"]) == (
        4.0,
        "2026-02-01T00:00:01Z",
        "call_id",
    )
    assert (ok["observation"], ok["_s_err"]) == ("", False)


def test_exit_code_is_read_from_a_json_object_output() -> None:
    c = _conv(
        [
            _start(),
            _call(1, "a"),
            _done(2, "a", output='{"exitCode": 2, "stdout": ""}'),
            _call(3, "b"),
            _done(4, "b", output='{"exit_code": "x", "returncode": 3}'),
            _call(5, "c"),
            _done(6, "c", output="exit status 1"),  # plain text: not this rule's business
        ]
    )
    assert [k["_s_exit"] for k in _calls(c)] == [2, 3, None]


def test_listed_tool_calls_are_used_only_for_steps_without_tool_call_events() -> None:
    listed = [
        {"id": "l1", "name": "bash", "arguments": '{"cmd": "ls"}'},
        {"id": "l2", "name": "read", "arguments": {"path": "x"}},
        "not a call",
    ]
    c = _conv(
        [
            _start(),
            ev(1, "llm.turn.completed", step=1, tool_calls=listed),
            ev(2, "llm.turn.completed", step=2, tool_calls=listed),
            _call(3, "real", step=2),
            ev(4, "llm.turn.completed", step=3, tool_calls=4),  # a count (real runs)
        ]
    )
    got = [(k["step_index"], k["tool_call_id"], k["function_name"]) for k in _calls(c)]
    assert got == [(1, "l1", "bash"), (1, "l2", "read"), (2, "real", "bash")]
    listed_call = _calls(c)[0]
    assert (listed_call["command"], listed_call["_s_err"], listed_call["observation"]) == (
        "ls",
        None,  # nothing says how a listed call ended
        None,
    )
    assert listed_call["_ts"] == "2026-02-01T00:00:01Z"  # the turn's time
    assert _calls(c)[1]["arguments"] == '{"path":"x"}'  # an object is kept as JSON text
    assert [s["n_tool_calls"] for s in _agent_steps(c)] == [2, 1, 0]
    assert c.trial["n_tool_calls"] == 3


def test_retries_count_across_steps_on_key_sorted_arguments() -> None:
    c = _conv(
        [
            _start(),
            _call(1, "a", args='{"b": 1, "a": 2}', step=1),
            _call(2, "b", args='{"a":2,"b":1}', step=2),  # same tool, same arguments
            _call(3, "c", tool="sh", args='{"a":2,"b":1}', step=2),  # another tool
            _call(4, "d", args='{"a":2,"b":1}', step=3),
        ]
    )
    # 2nd and 3rd identical bash calls are retries (trainerd: count > 1)
    assert c.trial["n_retried_tool_calls"] == 2
    sigs = [k["_sig"] for k in _calls(c)]
    assert sigs[0] == sigs[1] == sigs[3] != sigs[2]


# --- findings ----------------------------------------------------------------------------


def test_recorded_findings_map_the_step_and_severity_and_fill_missing_evidence() -> None:
    c = _conv(
        [
            _start(),
            ev(1, "assistant.message", step=4, content="x"),
            ev(
                2, "tool.antipattern", step=4, type="premature_completion", tool="bash", evidence=""
            ),
            ev(3, "tool.antipattern", step=4, tool="bash"),  # no type, no count
            ev(4, "tool.antipattern", type="retry_loop", tool="grep", call_count=5),  # no step
        ]
    )
    rows = [(f["detector"], f["step_start"], f["severity"], f["evidence"]) for f in c.findings]
    assert rows == [
        # go-code step 4 is step_index 1 (after the user step)
        ("premature_completion", 1, "high", "premature_completion: bash"),
        ("unknown", 1, "medium", "unknown: bash"),
        ("retry_loop", None, "low", "retry_loop: grep called 5 times with identical arguments"),
    ]
    assert {(f["confidence"], f["source"], f["mode"]) for f in c.findings} == {
        (1.0, "recorded", None)
    }


# --- the trial row -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "provider,model,expected",
    [
        ("openai", "gpt-5-mini", "openai/gpt-5-mini"),
        ("default", "fake-model", "fake-model"),
        (None, "gpt-5", "gpt-5"),
        ("openai", None, None),
    ],
)
def test_model_name_joins_a_real_provider(provider, model, expected) -> None:
    c = _conv([_start(), ev(1, "provider.resolved", provider=provider, model=model)])
    assert (c.trial["model_name"], c.trial["model_provider"]) == (expected, provider)


def test_the_last_provider_resolved_wins() -> None:
    c = _conv(
        [
            _start(),
            ev(1, "provider.resolved", provider="openai", model="a"),
            ev(2, "provider.resolved", provider="anthropic", model="b"),
            ev(3, "assistant.message", step=1, content="x"),
        ]
    )
    assert c.trial["model_name"] == "anthropic/b"
    assert _agent_steps(c)[0]["model_name"] == "anthropic/b"


def test_trial_fields_read_off_run_started_and_the_terminal_event() -> None:
    c = _conv(
        [
            _start(task_id="list-tmp", previous_run_id="run_prev"),
            ev(1, "recorder.drop_detected"),
            ev(2, "recorder.drop_detected"),
            ev(3, "run.completed", step=7, output="done"),
        ],
        n_malformed=2,
    )
    t = c.trial
    assert (t["job_id"], t["job_name"], t["trial_dir"], t["source_format"]) == (
        "J",
        "rollouts",
        PATH,
        "go-code",
    )
    assert (t["task_name"], t["previous_run_id"], t["harness_steps"]) == ("list-tmp", "run_prev", 7)
    assert (t["recorder_drops"], t["n_events"], t["n_malformed_lines"]) == (2, 4, 2)
    assert (t["_started"], t["_finished"]) == ("2026-02-01T00:00:00Z", "2026-02-01T00:00:03Z")
    assert (t["run_status"], t["exception_type"], t["exception_message"]) == (
        "completed",
        None,
        None,
    )
    assert (t["result_present"], t["rollout_date"]) == (True, "2026-02-01")
    assert [e.error_type for e in c.errors] == ["recorder_drop"]
    assert "2 recorder.drop_detected" in c.errors[0].message
    assert (c.errors[0].job_id, c.errors[0].trial_id, c.errors[0].level) == (
        "J",
        "run_a",
        "rollout",
    )


def test_the_failure_message_is_the_error_else_the_reason_else_empty() -> None:
    def outcome(term):
        t = _conv([_start(), term]).trial
        return t["run_status"], t["exception_type"], t["exception_message"], t["failure_reason"]

    assert outcome(ev(1, "run.failed", error="boom", reason="max_turns_exhausted")) == (
        "failed",
        "run.failed",
        "boom",
        "max_turns_exhausted",
    )
    assert outcome(ev(1, "run.failed", reason="max_steps_reached")) == (
        "failed",
        "run.failed",
        "max_steps_reached",
        "max_steps_reached",
    )
    assert outcome(ev(1, "run.cancelled")) == ("cancelled", "run.cancelled", "", None)


def test_the_last_terminal_event_decides() -> None:
    t = _conv([_start(), ev(1, "run.failed", error="x"), ev(2, "run.completed")]).trial
    assert (t["run_status"], t["_finished"]) == ("completed", "2026-02-01T00:00:02Z")


def test_terminal_token_totals_win_over_the_cumulative_usage() -> None:
    c = _conv(
        [
            _start(),
            ev(1, "usage.delta", step=1, cost_status="available", cumulative_cost_usd=0.4,
               cumulative_usage={"prompt_tokens": 10, "completion_tokens": 2, "cached_prompt_tokens": 3}),
            ev(2, "run.completed", step=1, usage_totals={"prompt_tokens_total": 99},
               total_cost_usd=0.3),
        ]
    )  # fmt: skip
    t = c.trial
    # prompt from usage_totals; completion and cached only in cumulative_usage
    assert (t["n_input_tokens"], t["n_output_tokens"], t["n_cache_tokens"]) == (99, 2, 3)
    # a top-level total_cost_usd beats the usage.delta cumulative cost; its status is the delta's
    assert (t["cost_usd"], t["cost_status"]) == (0.3, "available")


def test_a_cost_with_no_status_anywhere_is_marked_recorded() -> None:
    t = _conv([_start(), ev(1, "run.completed", cost_totals={"total_cost_usd": 0.0})]).trial
    assert (t["cost_usd"], t["cost_status"]) == (0.0, "recorded")


def test_non_finite_and_non_numeric_costs_are_skipped_in_the_precedence() -> None:
    t = _conv(
        [
            _start(),
            ev(1, "usage.delta", step=1, cumulative_cost_usd=0.7),
            ev(2, "run.completed", cost_totals={"cost_usd_total": "0.1", "total_cost_usd": True}),
        ]
    ).trial
    assert t["cost_usd"] == 0.7


def test_rollout_date_is_the_date_folder_only() -> None:
    assert _rollout_date("/r/2026-07-27/run_x.jsonl") == "2026-07-27"
    assert _rollout_date("/r/flat/run_x.jsonl") is None
    assert _rollout_date("run_x.jsonl") is None
    assert _rollout_date("/r/2026-13-45/run_x.jsonl") is None  # not a calendar date
    assert _rollout_date("/r/runs-v2-ok/run_x.jsonl") is None
    assert _conv([_start()], path="/r/flat/run_x.jsonl").trial["rollout_date"] is None


# --- helpers -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "cost,status,expected",
    [
        (0.0, "unpriced_model", None),
        (0, "provider_unreported", None),
        (0.0, "pending", None),
        (0.0, "available", 0.0),
        (0.0, None, 0.0),  # nothing says it is unpriced
        (0.5, "unpriced_model", 0.5),  # only a 0 is suspect
        (None, "available", None),
    ],
)
def test_cost_known(cost, status, expected) -> None:
    assert _cost_known(cost, status) == expected


def test_text_keeps_strings_and_none_and_writes_the_rest_as_json() -> None:
    assert _text(None) is None and _text("a") == "a"
    assert _text({"a": [1, True]}) == '{"a":[1,true]}'
    assert _text(2**70) == "1180591620717411303424"  # beyond orjson's 64 bits


def test_parse_args_reads_json_strings_and_keeps_anything_else() -> None:
    assert _parse_args('{"a": 1}') == {"a": 1}
    assert _parse_args("not json") == "not json"
    assert _parse_args({"a": 1}) == {"a": 1}
    assert _parse_args(None) is None


@pytest.mark.parametrize(
    "out,expected",
    [
        ('{"exit_code": 0}', 0),
        ('{"return_code": 4}', 4),
        ('{"exit_code": 1.0}', 1),
        ('{"exit_code": true}', None),  # a bool is no exit code
        ('{"exit_code": 1', None),  # not JSON
        ("[1]", None),
        ('["x"]', None),
        ("exit_code: 3", None),
        (None, None),
    ],
)
def test_exit_from_output(out, expected) -> None:
    assert _exit_from_output(out) == expected


@given(st.lists(st.tuples(st.integers(1, 6), st.integers(0, 3)), max_size=25))
def test_agent_steps_are_the_distinct_step_numbers_in_order(pairs) -> None:
    # each (step, kind) is one event; any of these types makes its step an agent step
    kinds = ["usage.delta", "assistant.message", "run.step.started", "tool.call.started"]
    events = [_start()] + [
        ev(i + 1, kinds[k], step=n, call_id=f"c{i}", tool="t", arguments="{}")
        for i, (n, k) in enumerate(pairs)
    ]
    c = _conv(events)
    numbers = sorted({n for n, _ in pairs})
    agent = _agent_steps(c)
    assert [s["step_id"] for s in agent] == numbers
    assert [s["step_index"] for s in agent] == list(range(1, len(numbers) + 1))
    # every tool.call.started is one call, in the step of its number
    n_started = sum(1 for _, k in pairs if k == 3)
    assert len(c.calls) == c.trial["n_tool_calls"] == n_started
    index_of = {s["step_id"]: s["step_index"] for s in agent}
    expected = sorted(index_of[n] for n, k in pairs if k == 3)
    assert sorted(k["step_index"] for k in _calls(c)) == expected
