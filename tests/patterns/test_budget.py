"""evalkit.patterns.budget: context_exhaustion (ranked sub-rules, one finding per trial) and
timeout_burn (thresholds at their boundaries, severity, evidence, step range).

test_structural.py has one positive per sub-rule; this pins ranks, boundaries and texts."""

from __future__ import annotations

import polars as pl
import pytest

import evalkit.patterns as ep
from tests.patterns.build import call, combine, frames, sh

ROWS = ("trial_id", "step_start", "step_end", "severity", "confidence", "evidence")


def run(f: dict, detector: str, **kw) -> list[tuple]:
    return ep.detect(f, detectors=[detector], **kw).select(ROWS).rows()


# -- context_exhaustion -----------------------------------------------------------------------


def with_tokens(f: dict, tokens: list[int | None], model: str | None = None) -> dict:
    st = f["steps"].with_columns(pl.Series("prompt_tokens", tokens, pl.Int64))
    if model is not None:
        st = st.with_columns(pl.lit(model).alias("model_name"))
    return {**f, "steps": st}


def test_exception_finding_sits_on_the_last_step_with_type_and_message():
    f = frames(
        [("user", "x"), ("agent", "a"), ("agent", "b")],
        exception_type="ContextWindowExceededError",
        exception_message="prompt is   too\nlong",
    )
    # rank 0: high, 0.95, on the last step (2), evidence "<type>: <message collapsed>"
    assert run(f, "context_exhaustion") == [
        ("t1", 2, 2, "high", 0.95, "ContextWindowExceededError: prompt is too long")
    ]


def test_exception_message_alone_matches_the_context_regex():
    f = frames([("user", "x"), ("agent", "a")], exception_type="RuntimeError",
               exception_message="maximum context length is 8192 tokens")  # fmt: skip
    assert run(f, "context_exhaustion") == [
        ("t1", 1, 1, "high", 0.95, "RuntimeError: maximum context length is 8192 tokens")
    ]
    other = frames([("user", "x"), ("agent", "a")], exception_type="RuntimeError",
                   exception_message="disk full")  # fmt: skip
    assert run(other, "context_exhaustion") == []


def test_the_strongest_sub_rule_wins_one_finding_per_trial():
    # a condensation note (rank 3, step 2) and a context-limit message (rank 1, step 3)
    f = frames([("user", "x"), ("agent", "a"), ("system", "auto-compact ran"),
                ("user", "Error: prompt is too long for this model")])  # fmt: skip
    assert run(f, "context_exhaustion") == [
        ("t1", 3, 3, "high", 0.9, "context limit: prompt is too long")
    ]
    # adding the exception (rank 0) moves the finding to the last step with the exception text
    g = frames([("user", "x"), ("agent", "a"), ("system", "auto-compact ran"),
                ("user", "Error: prompt is too long for this model")],
               exception_type="ContextLengthExceededError")  # fmt: skip
    (row,) = run(g, "context_exhaustion")
    assert row[1:4] == (3, 3, "high") and row[5].startswith("ContextLengthExceededError: ")


def test_context_message_in_an_observation_and_first_one_wins():
    f = frames([("user", "x"), ("agent", "a"),
                ("agent", "", [], "error: context_length_exceeded"),
                ("agent", "", [], "input is too long")])  # fmt: skip
    # the earliest matching step (2); the evidence is the regex match, not the whole text
    # (leftmost alternative first: 'context[_ ]length' matches before 'context_length_exceeded')
    assert run(f, "context_exhaustion") == [
        ("t1", 2, 2, "high", 0.9, "context limit: context_length")
    ]


def test_context_message_before_the_first_agent_step_is_ignored():
    f = frames([("system", "If the context window is full, too many tokens..."), ("user", "x"),
                ("agent", "ok")])  # fmt: skip
    assert run(f, "context_exhaustion") == []


def test_context_limit_in_failing_tool_output_only():
    bad = sh("python big.py", "openai.BadRequestError: maximum context length exceeded", err=True)
    f = frames([("user", "x"), ("agent", "", [bad])])
    assert run(f, "context_exhaustion") == [
        ("t1", 1, 1, "high", 0.9, "context limit in tool output: maximum context")
    ]
    ok = sh("grep -r 'maximum context' docs/", "docs/a.md: maximum context length", err=False)
    assert run(frames([("user", "x"), ("agent", "", [ok])]), "context_exhaustion") == []


@pytest.mark.parametrize(
    ("tokens", "found"),
    [(89_999, False), (90_000, True), (100_000, True)],  # limit_share 0.9 x 100000 = 90000
)
def test_near_context_limit_boundary(tokens, found):
    f = with_tokens(frames([("user", "x"), ("agent", "a")]), [None, tokens])
    cfg = {"context_exhaustion": {"context_limit": 100_000}}
    want = [("t1", 1, 1, "medium", 0.8, f"prompt_tokens {tokens} >= 90% of the context limit")]
    assert run(f, "context_exhaustion", config=cfg) == (want if found else [])


def test_near_context_limit_per_model_and_share():
    f = with_tokens(frames([("user", "x"), ("agent", "a")]), [None, 6_000], model="small")
    # 6000 >= 0.75 x 8000 = 6000 for 'small'; a model missing from the dict has no limit
    cfg = {"context_exhaustion": {"context_limit": {"small": 8_000}, "limit_share": 0.75}}
    assert run(f, "context_exhaustion", config=cfg) == [
        ("t1", 1, 1, "medium", 0.8, "prompt_tokens 6000 >= 75% of the context limit")
    ]
    cfg_other = {"context_exhaustion": {"context_limit": {"big": 8_000}, "limit_share": 0.75}}
    assert run(f, "context_exhaustion", config=cfg_other) == []


def test_condensed_history_via_a_summarisation_trajectory():
    main = frames([("user", "x"), ("agent", "a")])
    summ = frames([("agent", "start"), ("user", "Summarize the conversation so far")],
                  trajectory="summarization-1")  # fmt: skip
    f = combine(main, {**summ, "trials": summ["trials"].head(0)})
    # rank 3 (low, 0.6), at the sub-trajectory's user step (1); evidence is the step's message
    assert run(f, "context_exhaustion") == [
        (
            "t1",
            1,
            1,
            "low",
            0.6,
            "history summarised / compacted: Summarize the conversation so far",
        )
    ]


# -- timeout_burn -----------------------------------------------------------------------------

TO = {"exception_type": "AgentTimeoutError"}


@pytest.mark.parametrize(("secs", "sev"), [(9, None), (10, "high"), (10.5, "high")])
def test_long_sleep_boundary(secs, sev):
    # one sleep counts as one waiting call (< min_wait_calls 2): only the long_sleep_s rule
    ev = [("user", "x"), ("agent", "", [sh("make")]), ("agent", "", [sh(f"sleep {secs}")])]
    got = run(frames(ev, **TO), "timeout_burn")
    if sev is None:
        assert got == []
    else:
        # step_start = first waiting call (2), step_end = last call (2)
        assert got == [
            ("t1", 2, 2, sev, 0.75, f"AgentTimeoutError; 1 waiting calls ({float(secs)} s of explicit waits), e.g. sleep {secs}")
        ]  # fmt: skip


def test_min_wait_calls_boundary_gives_medium():
    one = [("user", "x"), ("agent", "", [sh("tail -f log.txt")]), ("agent", "", [sh("make")])]
    assert run(frames(one, **TO), "timeout_burn") == []
    two = [*one, ("agent", "", [sh("watch ls")])]
    # two waiting calls, no explicit seconds: medium; span from the first wait (1) to the last
    # call (3)
    assert run(frames(two, **TO), "timeout_burn") == [
        ("t1", 1, 3, "medium", 0.75, "AgentTimeoutError; 2 waiting calls (0.0 s of explicit waits), e.g. tail -f log.txt")
    ]  # fmt: skip
    cfg = {"timeout_burn": {"min_wait_calls": 3}}
    assert run(frames(two, **TO), "timeout_burn", config=cfg) == []


def test_outcome_timeout_without_exception_type():
    ev = [("user", "x"), ("agent", "", [sh("sleep 3 && ls")]), ("agent", "", [sh("sleep 4")])]
    f = frames(ev, outcome="timeout")
    (row,) = run(f, "timeout_burn")
    # no exception type: 'timeout'; 3 + 4 = 7.0 s of explicit waits (< 10: medium)
    assert row[3] == "medium"
    assert row[5] == "timeout; 2 waiting calls (7.0 s of explicit waits), e.g. sleep 3 && ls"
    assert run(frames(ev, outcome="failure"), "timeout_burn") == []


def test_one_call_taking_half_the_agent_budget_boundary():
    def f(ms: float, **kw):
        ev = [("user", "x"), ("agent", "", [sh("ls")]), ("agent", "", [sh("make", duration_ms=ms)])]
        return frames(ev, exception_type="AgentTimeoutError", **kw)

    # budget_share 0.5 x agent_s 100 s = 50 000 ms
    assert run(f(49_999.0, agent_s=100.0), "timeout_burn") == []
    assert run(f(50_000.0, agent_s=100.0), "timeout_burn") == [
        ("t1", 2, 2, "high", 0.75, "AgentTimeoutError; 0 waiting calls (0.0 s of explicit waits), e.g. make")
    ]  # fmt: skip
    # without agent_s the trial's duration_s is the budget
    assert len(run(f(50_000.0, duration_s=100.0), "timeout_burn")) == 1
    assert run(f(50_000.0, duration_s=100_001.0), "timeout_burn") == []


def test_terminal_wait_with_a_duration_argument():
    wait = call("send_keys", args={"keystrokes": "", "duration": 12})
    f = frames([("user", "x"), ("agent", "", [wait])], **TO)
    (row,) = run(f, "timeout_burn")
    # duration 12 >= long_sleep_s 10: high, and it is one waiting call of 12 s
    assert row[1:4] == (1, 1, "high")
    assert row[5].startswith(
        "AgentTimeoutError; 1 waiting calls (12.0 s of explicit waits), e.g. send_keys "
    )


def test_no_finding_without_a_timeout_or_without_calls():
    ev = [("user", "x"), ("agent", "", [sh("sleep 60")])]
    assert run(frames(ev, exception_type="ContextWindowExceededError"), "timeout_burn") == []
    assert run(frames([("user", "x"), ("agent", "hi")], **TO), "timeout_burn") == []


def test_a_command_run_under_timeout_is_work_not_a_wait():
    # `timeout 30 make` bounds make at 30 s; it is not 30 s of waiting
    ev = [("user", "x"), ("agent", "", [sh("timeout 30 make")]), ("agent", "", [sh("ls")])]
    assert run(frames(ev, **TO), "timeout_burn") == []


def test_a_duration_argument_counts_only_on_a_terminal_wait():
    # the duration of a call that is not a keystroke wait is not seconds spent waiting
    other = call("poll_job", args={"duration": 15})
    assert run(frames([("user", "x"), ("agent", "", [other])], **TO), "timeout_burn") == []
