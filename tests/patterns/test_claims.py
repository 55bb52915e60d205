"""evalkit.patterns.claims: hedge_assertion, premature_completion, false_success_claim and
giving_up - severity branches, step ranges, evidence texts and thresholds at the boundary.

test_structural.py has the basic positives / negatives; this pins what they leave open."""

from __future__ import annotations

import pytest

import evalkit.patterns as ep
from tests.patterns.build import call, frames, sh

ROWS = ("trial_id", "step_start", "step_end", "severity", "confidence", "evidence")


def run(f: dict, detector: str, **kw) -> list[tuple]:
    return ep.detect(f, detectors=[detector], **kw).select(ROWS).rows()


# -- hedge_assertion -----------------------------------------------------------------------------


@pytest.mark.parametrize(("reward", "sev"), [(0.0, "high"), (1.0, "medium"), (None, "medium")])
def test_hedge_severity_follows_the_reward(reward, sev):
    f = frames([("user", "x"), ("agent", "I changed it. This should work now.")], reward=reward)
    # group 1 of the hedge regex: 'should' ... 'work'
    assert run(f, "hedge_assertion") == [
        ("t1", 1, 1, sev, 0.6, "hedge 'should work' in: I changed it. This should work now.")
    ]


def test_hedge_in_every_turns_closing_message():
    ev = [("user", "a"), ("agent", "It probably fixes the crash."), ("user", "b"),
          ("agent", "Not sure yet", [sh("ls")]), ("agent", "I'm not sure about the dates.")]  # fmt: skip
    got = run(frames(ev), "hedge_assertion")
    # closing messages of turn 1 (step 1) and turn 2 (step 4); step 3 is not closing
    assert [(r[1], r[5].split(" in: ")[0]) for r in got] == [
        (1, "hedge 'probably fixes'"), (4, "hedge 'I'm not sure'"),
    ]  # fmt: skip


def test_hedge_excuse_only_next_to_a_reported_failure():
    # "build ... error" within 40 chars: honest; "build" far from the failure word: a hedge
    assert run(frames([("user", "x"), ("agent", "The build has an error; it should work after.")]),
               "hedge_assertion") == []  # fmt: skip
    far = "The build " + "x" * 45 + " error. It should work after."
    assert len(run(frames([("user", "x"), ("agent", far)]), "hedge_assertion")) == 1


# -- premature_completion --------------------------------------------------------------------------

W = call("Write", args={"file_path": "/app/out.py", "content": "print(1)"}, obs="ok")


def test_unverified_write_range_confidence_and_evidence():
    ev = [("user", "x"), ("agent", "", [W]), ("agent", "", [sh("ls", "out.txt")]),
          ("agent", "Done! The task is complete.")]  # fmt: skip
    # step_start = the last write (1), step_end = the stop (3); claimed: high, 0.8
    assert run(frames(ev), "premature_completion") == [
        ("t1", 1, 3, "high", 0.8,
         "no verification after writing out.py; stopped with: Done! The task is complete.")
    ]  # fmt: skip
    quiet = [("user", "x"), ("agent", "", [W]), ("agent", "Wrote it.")]
    assert run(frames(quiet), "premature_completion") == [
        ("t1", 1, 2, "medium", 0.6, "no verification after writing out.py; stopped with: no claim")
    ]


def test_a_check_before_the_last_write_does_not_count():
    w2 = call("Write", args={"file_path": "/app/lib.py", "content": "x"}, obs="ok")
    ev = [("user", "x"), ("agent", "", [W]), ("agent", "", [sh("pytest -q", "1 passed")]),
          ("agent", "", [w2]), ("agent", "Wrote it.")]  # fmt: skip
    (row,) = run(frames(ev), "premature_completion")
    assert row[1:3] == (3, 4) and row[5].startswith("no verification after writing lib.py;")


def test_reading_the_written_file_counts_as_verification():
    ev = [("user", "x"), ("agent", "", [W]), ("agent", "", [sh("cat /app/out.py", "print(1)")]),
          ("agent", "Done.")]  # fmt: skip
    assert run(frames(ev), "premature_completion") == []
    # a read of some other file does not
    other = [ev[0], ev[1], ("agent", "", [sh("cat /app/other.py", "")]), ev[3]]
    assert len(run(frames(other), "premature_completion")) == 1


def test_finish_call_is_a_stop_and_a_claim():
    fin = call("finish", args={"message": "ok"})
    ev = [("user", "x"), ("agent", "", [W]), ("agent", "", [fin])]
    # 'ok' is no completion phrase, but calling finish claims completion
    assert run(frames(ev), "premature_completion") == [
        (
            "t1",
            1,
            2,
            "high",
            0.8,
            "no verification after writing out.py; stopped with: called finish",
        )
    ]


def test_last_check_failed_after_an_earlier_pass():
    ev = [("user", "x"), ("agent", "", [sh("pytest -q", "1 passed")]),
          ("agent", "", [sh("pytest -q", "FAILED t::a", err=True)]), ("agent", "Here you go.")]  # fmt: skip
    # no writes: start = the last verification (2), end = the stop (3); no claim: medium
    assert run(frames(ev), "premature_completion") == [
        ("t1", 2, 3, "medium", 0.6, "last check failed: pytest -q; stopped with: no claim")
    ]
    passed_last = [ev[0], ev[2], ev[1], ev[3]]  # the last check passes
    assert run(frames(passed_last), "premature_completion") == []


@pytest.mark.parametrize("exc", ["ContextWindowExceededError", "TimeoutError", "AgentTimeout"])
def test_trials_that_ended_on_a_budget_are_skipped(exc):
    ev = [("user", "x"), ("agent", "", [W]), ("agent", "Done.")]
    assert run(frames(ev, exception_type=exc), "premature_completion") == []
    assert len(run(frames(ev, exception_type="RuntimeError"), "premature_completion")) == 1


# -- false_success_claim ---------------------------------------------------------------------------


@pytest.mark.parametrize(("reward", "found"), [(0.5, True), (0.51, False)])
def test_max_reward_boundary(reward, found):
    ev = [("user", "x"), ("agent", "All tests pass now.")]
    cfg = {"false_success_claim": {"max_reward": 0.5}}
    want = [
        ("t1", 1, 1, "high", 0.9, f"claimed completion (All tests pass now.) but reward {reward}")
    ]
    assert run(frames(ev, reward=reward), "false_success_claim", config=cfg) == (
        want if found else []
    )


def test_claim_text_and_finish_span():
    fin = call("submit", args={"answer": "42"})
    ev = [("user", "x"), ("agent", "The bug has been fixed."), ("agent", "", [fin])]
    # the last turn's closing messages are step 1's text and the submit argument '42' (step 2):
    # the claim is the last of them matching the completion regex; the range ends at step 2
    assert run(frames(ev, reward=0.0), "false_success_claim") == [
        ("t1", 2, 2, "high", 0.9, "claimed completion (The bug has been fixed.) but reward 0.0")
    ]
    # no claim phrase anywhere: the submit call itself is the claim
    bare = [("user", "x"), ("agent", "Let me see.", [sh("ls")]), ("agent", "", [fin])]
    assert run(frames(bare, reward=0.0), "false_success_claim") == [
        ("t1", 2, 2, "high", 0.9, "claimed completion (called submit) but reward 0.0")
    ]


def test_false_success_negative_reward_counts_as_failure():
    ev = [("user", "x"), ("agent", "I have fixed the parser.")]
    (row,) = run(frames(ev, reward=-1.0), "false_success_claim")
    assert row[5] == "claimed completion (I have fixed the parser.) but reward -1.0"


# -- giving_up -----------------------------------------------------------------------------------


def test_giving_up_strength_confidence_and_evidence():
    msg = "I cannot complete this task without network access."
    # 'i cannot' (inability 1.0) + 'i cannot complete' (refusal 1.0): strength 2/3, medium;
    # the evidence is the lower-cased sentence around the first matching pattern
    (row,) = run(frames([("user", "x"), ("agent", msg)]), "giving_up")
    assert row[:4] == ("t1", 1, 1, "medium")
    assert row[4] == pytest.approx(2 / 3)
    assert row[5] == "abstains: i cannot complete this task without network access"


@pytest.mark.parametrize(
    ("msg", "want"),
    [
        ("I'm not sure.", None),  # uncertainty 0.7 / 3 = 0.233 < 0.3, not a hard family
        ("Could you clarify the format?", None),  # clarification 0.5 / 3 = 0.167
        ("I'm not sure. Could you clarify the format?", ("low", 0.4)),  # 1.2 / 3 = 0.4
        ("I'm not sure and I don't know why.", ("low", 1.4 / 3)),  # 0.7 + 0.7
        ("I can't.", ("medium", 1 / 3)),  # inability alone: hard, 1/3
        ("Stopping here.", ("medium", 1 / 3)),  # refusal alone: hard
    ],
)
def test_giving_up_families_and_threshold(msg, want):
    got = run(frames([("user", "x"), ("agent", msg)]), "giving_up")
    if want is None:
        assert got == []
    else:
        (row,) = got
        assert row[3] == want[0] and row[4] == pytest.approx(want[1])


def test_giving_up_threshold_parameter_boundary():
    fams = {"uncertainty": (1.5, (r"not sure",))}  # 1.5 / 3 = 0.5 exactly
    f = frames([("user", "x"), ("agent", "Not sure.")])
    at = run(f, "giving_up", config={"giving_up": {"families": fams, "threshold": 0.5}})
    assert [(r[3], r[4], r[5]) for r in at] == [("low", 0.5, "abstains: not sure")]
    above = run(f, "giving_up", config={"giving_up": {"families": fams, "threshold": 0.51}})
    assert above == []


def test_giving_up_one_finding_per_trajectory_the_last():
    ev = [
        ("user", "a"),
        ("agent", "I can't open it."),
        ("user", "b"),
        ("agent", "I cannot run it."),
    ]
    got = run(frames(ev), "giving_up")
    assert [(r[1], r[5]) for r in got] == [(3, "abstains: i cannot run it")]


def test_the_claim_quoted_is_the_last_one_the_agent_made():
    # two claims in the closing turn: the step text, then the submit argument
    fin = call("submit", args={"answer": "All tests pass now."})
    ev = [("user", "x"), ("agent", "The bug has been fixed."), ("agent", "", [fin])]
    assert run(frames(ev, reward=0.0), "false_success_claim") == [
        ("t1", 2, 2, "high", 0.9, "claimed completion (All tests pass now.) but reward 0.0")
    ]
