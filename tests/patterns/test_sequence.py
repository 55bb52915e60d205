"""evalkit.patterns.sequence: label / shift_in_group, and retry_loop, repeated_failed_command,
skipped_diagnostic, ignored_error_output at their thresholds (one below: nothing; at: one),
with their evidence texts, step ranges and severities.

test_structural.py / test_properties.py hold the basic positives and reference checks of the
failing-run rule; this pins the boundaries and texts they leave open. Each call sits on its own
agent step after one user step, so call i (0-based) is step i + 1."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import evalkit.patterns as ep
from evalkit.patterns.config import merge_config
from evalkit.patterns.context import Context, coerce_frames
from evalkit.patterns.sequence import label, shift_in_group
from tests.patterns.build import call, combine, frames, sh

ROWS = ("trial_id", "step_start", "step_end", "severity", "confidence", "evidence")
TB = "Traceback (most recent call last):\n  File \"app.py\", line 3\nNameError: name 'x'"


def run(f: dict, detector: str, **kw) -> list[tuple]:
    return ep.detect(f, detectors=[detector], **kw).select(ROWS).rows()


def one_per_step(calls: list[dict], **kw) -> dict:
    return frames([("user", "x")] + [("agent", "", [c]) for c in calls], **kw)


def ctx_of(f: dict) -> Context:
    return Context(*coerce_frames(f), merge_config(None), "structural")


# -- helpers -------------------------------------------------------------------------------------


def test_label_is_the_command_else_name_and_arguments():
    f = one_per_step([sh("ls   -la\n /app"), call("Read", args={"file_path": "a.py"})])
    c = ctx_of(f)
    got = c.calls.select(label(c)).to_series().to_list()
    # whitespace collapsed; non-shell: 'name <arguments as recorded>'
    assert got == ["ls -la /app", 'Read {"file_path": "a.py"}']


def test_shift_in_group_is_null_across_trajectories():
    f = combine(
        one_per_step([sh("a1"), sh("a2")], trial_id="a"), one_per_step([sh("b1")], trial_id="b")
    )
    c = ctx_of(f).calls
    got = c.select(
        "cmd", shift_in_group("cmd", 1).alias("prev"), shift_in_group("cmd", -1).alias("nxt")
    )
    assert got.rows() == [("a1", None, "a2"), ("a2", "a1", None), ("b1", None, None)]


# -- retry_loop ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("n", "found"), [(3, False), (4, True)])
def test_failing_run_threshold_is_configurable(n, found):
    f = one_per_step([sh("make", f"Error {i}", err=True) for i in range(n)])
    got = run(f, "retry_loop", config={"retry_loop": {"min_failing_repeats": 4}})
    want = [("t1", 1, n, "high", 0.95, f"{n}x identical failing call: make")]
    assert got == (want if found else [])


def test_same_output_run_boundary_and_text():
    three = one_per_step([sh("cat a.txt", "hello")] * 3)
    assert run(three, "retry_loop") == []  # < min_same_output_repeats 4
    four = one_per_step([sh("cat a.txt", "hello")] * 4)
    assert run(four, "retry_loop") == [
        ("t1", 1, 4, "medium", 0.9, "4x identical call, identical output: cat a.txt")
    ]


def test_strongest_rule_wins_for_one_call():
    # 4 identical failing calls with identical output match (a) and (b): one finding, (a)
    f = one_per_step([sh("pytest -q", "FAILED", err=True)] * 4)
    assert run(f, "retry_loop") == [
        ("t1", 1, 4, "high", 0.95, "4x identical failing call: pytest -q")
    ]


def test_failing_runs_do_not_cross_trials():
    a = one_per_step([sh("ls"), sh("make", "E", err=True), sh("make", "E", err=True)], trial_id="a")
    b = one_per_step([sh("make", "E", err=True)], trial_id="b")
    assert run(combine(a, b), "retry_loop") == []


def windowed(last_gap: int) -> dict:
    """'python run.py' five times at calls 0, 5, 10, 15 and 15 + last_gap; distinct fillers."""
    pos = [0, 5, 10, 15, 15 + last_gap]
    calls = [sh("python run.py", f"run {i}") if i in pos else sh(f"echo {i}", str(i))
             for i in range(pos[-1] + 1)]  # fmt: skip
    return one_per_step(calls)


def test_window_repeats_boundary():
    # 5th occurrence at call 19: 19 - 0 < window 20 -> found, from step 1 to step 20
    assert run(windowed(4), "retry_loop") == [
        ("t1", 1, 20, "low", 0.7, ">= 5 repeats within 20 calls: python run.py")
    ]
    assert run(windowed(5), "retry_loop") == []  # 5th at call 20: 20 - 0 is not < 20


# -- repeated_failed_command ----------------------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 7), st.lists(st.booleans(), min_size=7, max_size=7))
def test_repeated_failed_severity_matches_the_table(n, fillers):
    # n identical failures of 'npm test' (digits in the error masked), each optionally followed
    # by an unrelated passing call; docs: 2 low, 3-4 medium, >= 5 high
    calls = []
    for i in range(n):
        calls.append(sh("npm test", f"npm ERR! exited with code {i + 1}\n", err=True))
        if fillers[i]:
            calls.append(sh(f"echo {i}", "ok"))
    got = run(one_per_step(calls), "repeated_failed_command")
    if n < 2:
        assert got == []
        return
    sev = "low" if n == 2 else ("medium" if n <= 4 else "high")
    fail_steps = [i + 1 for i, c in enumerate(calls) if c["cmd"] == "npm test"]
    assert got == [
        ("t1", fail_steps[0], fail_steps[-1], sev, 0.9,
         f"failed {n}x with the same error (npm ERR! exited with code #): npm test")
    ]  # fmt: skip


def test_repeated_failed_needs_the_same_exit_code():
    calls = [
        sh("make", "Error: boom", err=True, exit_code=1),
        sh("make", "Error: boom", err=True, exit_code=2),
    ]
    assert run(one_per_step(calls), "repeated_failed_command") == []
    same = [sh("make", "Error: boom", err=True, exit_code=2)] * 2
    assert len(run(one_per_step(same), "repeated_failed_command")) == 1


def test_repeated_failed_min_repeats_and_last_line_fallback():
    # no error word in the output: the last non-empty line is the signature
    calls = [sh("./run", "starting\nbad thing 7\n\n", err=True)] * 3
    cfg = {"repeated_failed_command": {"min_repeats": 4}}
    assert run(one_per_step(calls), "repeated_failed_command", config=cfg) == []
    cfg3 = {"repeated_failed_command": {"min_repeats": 3}}
    assert run(one_per_step(calls), "repeated_failed_command", config=cfg3) == [
        ("t1", 1, 3, "medium", 0.9, "failed 3x with the same error (bad thing #): ./run")
    ]


# -- skipped_diagnostic ---------------------------------------------------------------------------


def test_stopping_right_after_an_error_is_low():
    f = frames(
        [("user", "x"), ("agent", "", [sh("python app.py", TB, err=True)]), ("agent", "Bye.")]
    )
    assert run(f, "skipped_diagnostic") == [
        ("t1", 1, 1, "low", 0.6, "error in python app.py -> stopped")
    ]


def test_finishing_after_an_error_is_medium_and_spans_the_lookahead():
    f = one_per_step([sh("python app.py", TB, err=True), sh("echo hi", "hi"),
                      call("finish", args={"message": "done"})])  # fmt: skip
    # the next 2 calls (steps 2, 3): no diagnostic, a finish -> medium, end = step 3
    assert run(f, "skipped_diagnostic") == [
        ("t1", 1, 3, "medium", 0.6, "error in python app.py -> finished")
    ]


def test_lookahead_boundary():
    # the blind repeat is at +1, the diagnostic (cat) at +3: outside lookahead 2 -> found
    calls = [sh("python app.py", TB, err=True), sh("python app.py", "ok"), sh("echo 1", "1"),
             sh("cat app.py", "x")]  # fmt: skip
    (row,) = run(one_per_step(calls), "skipped_diagnostic")
    assert (
        row[1:4] == (1, 3, "medium")
        and row[5] == "error in python app.py -> repeated the same call"
    )
    cfg = {"skipped_diagnostic": {"lookahead": 3}}
    assert run(one_per_step(calls), "skipped_diagnostic", config=cfg) == []


def test_verbose_rerun_is_a_diagnostic():
    calls = [sh("pytest -q", "FAILED t", err=True), sh("pytest -q --tb=long", "FAILED t", err=True),
             sh("pytest -q", "FAILED t", err=True)]  # fmt: skip
    got = run(one_per_step(calls), "skipped_diagnostic")
    # the first error is followed by a verbose re-run: not flagged; the third stops: low
    assert [(r[1], r[3]) for r in got] == [(3, "low")]


# -- ignored_error_output -------------------------------------------------------------------------


def test_ignored_error_takes_the_next_message_with_text():
    ev = [("user", "x"), ("agent", "", [sh("pytest", "FAILED t.py::a", err=True)]), ("agent", ""),
          ("agent", "", [sh("ls", "a")]), ("agent", "Perfect, it works.")]  # fmt: skip
    # steps 2-3 have no text; the next agent message with text is step 4
    assert run(frames(ev), "ignored_error_output") == [
        ("t1", 1, 4, "medium", 0.6, "error in pytest (FAILED t.py::a) then: Perfect, it works.")
    ]


def test_ignored_error_one_finding_per_message():
    ev = [("user", "x"), ("agent", "", [sh("a", "Error 1", err=True), sh("b", "Error 2", err=True)]),
          ("agent", "", [sh("c", "Error 3", err=True)]), ("agent", "Great!")]  # fmt: skip
    # two failing steps point at the same message (step 3): one finding, the first error
    got = run(frames(ev), "ignored_error_output")
    assert [(r[1], r[2]) for r in got] == [(1, 3)] and got[0][5].startswith("error in a (Error 1)")


def test_ignored_error_ignores_finish_messages():
    fin = call("finish", args={"message": "Done, success."})
    ev = [("user", "x"), ("agent", "", [sh("make", "Error: x", err=True)]), ("agent", "", [fin])]
    assert run(frames(ev), "ignored_error_output") == []
