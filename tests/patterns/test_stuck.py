"""evalkit.patterns.stuck: no_progress's rolling window (repeat_share, same_output_share, the
no-new-file condition, the high-severity span) and the long tail (quantile, min passing).

Every call sits on its own agent step after one user step, so call i (0-based) is step i + 1."""

from __future__ import annotations

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import evalkit.patterns as ep
from tests.patterns.build import combine, frames, sh

ROWS = ("trial_id", "step_start", "step_end", "severity", "confidence", "evidence")


def run(f: dict, **kw) -> list[tuple]:
    return ep.detect(f, detectors=["no_progress"], **kw).select(ROWS).rows()


def traj(calls: list[tuple[str, str]], **kw) -> dict:
    return frames([("user", "x")] + [("agent", "", [sh(c, o)]) for c, o in calls], **kw)


# -- the window rule -----------------------------------------------------------------------------


def test_repeat_share_boundary():
    # distinct outputs keep the same-output share at 0; window 10, repeat_share 0.8
    below = [("cmd_a", "o0"), ("cmd_b", "o1"), ("cmd_c", "o2")] + [
        ("cmd_a", f"p{i}") for i in range(7)
    ]
    assert run(traj(below)) == []  # 7 of 10 calls repeat an earlier one: 0.7 < 0.8
    at = [("cmd_a", "o0"), ("cmd_b", "o1")] + [("cmd_a", f"p{i}") for i in range(8)]
    # 8 of 10 repeat: one full window (calls 0-9 = steps 1-10), n = 1 flagged row + 9
    assert run(traj(at)) == [
        ("t1", 1, 10, "medium", 0.7, "10 calls without progress (80% repeated calls, no new file written)")
    ]  # fmt: skip


def test_same_output_share_boundary():
    # distinct commands (0% repeated calls); same_output_share 0.7
    below = [(f"c{i}", f"o{i}") for i in range(3)] + [(f"c{i}", "x") for i in range(3, 10)]
    assert run(traj(below)) == []  # outputs seen before: 6 of 10
    at = [(f"c{i}", f"o{i}") for i in range(2)] + [(f"c{i}", "x") for i in range(2, 10)]
    assert run(traj(at)) == [  # 7 of 10
        ("t1", 1, 10, "medium", 0.7, "10 calls without progress (0% repeated calls, no new file written)")
    ]  # fmt: skip


def test_needs_a_full_window():
    # 9 identical calls: never a full window of 10
    assert run(traj([("cmd_a", "same")] * 9)) == []
    assert len(run(traj([("cmd_a", "same")] * 10))) == 1


@pytest.mark.parametrize(("n", "sev"), [(29, "medium"), (30, "high")])
def test_high_severity_from_three_windows(n, sev):
    # n identical calls: windows ending at calls 9..n-1 are flagged, span = (n - 9) + 9 = n calls
    (row,) = run(traj([("cmd_a", "same")] * n))
    assert row == ("t1", 1, n, sev, 0.7, f"{n} calls without progress (100% repeated calls, no new file written)")  # fmt: skip


def test_a_new_file_in_the_window_is_progress_a_rewrite_is_not():
    # 10x the same write: the window holds the first (new) write of x.txt -> no finding
    w = [("echo 1 > x.txt", "")] * 10
    assert run(traj(w)) == []
    # an 11th: the window of calls 1-10 only rewrites x.txt -> stuck, from step 2 to 11
    assert run(traj([*w, ("echo 1 > x.txt", "")])) == [
        ("t1", 2, 11, "medium", 0.7, "10 calls without progress (100% repeated calls, no new file written)")
    ]  # fmt: skip
    # each write to a new file breaks every window that contains it
    fresh = [(f"echo 1 > f{i}.txt", "") for i in range(12)]
    assert run(traj(fresh)) == []


def test_windows_do_not_cross_trials():
    # 5 + 5 identical calls in two trials: no trial has a full window of 10
    a = traj([("cmd_a", "same")] * 5, trial_id="a")
    b = traj([("cmd_a", "same")] * 5, trial_id="b")
    assert run(combine(a, b)) == []


def test_window_parameter():
    cfg = {"no_progress": {"window": 4}}
    # 4 identical calls, distinct outputs: repeats 0,1,1,1 = 75% < 80%; 5 calls: window 1-4
    # = 100% (one window: calls 1-4 = steps 2-5, n = 4)
    assert run(traj([("cmd_a", f"o{i}") for i in range(4)]), config=cfg) == []
    assert run(traj([("cmd_a", f"o{i}") for i in range(5)]), config=cfg) == [
        ("t1", 2, 5, "medium", 0.7, "4 calls without progress (100% repeated calls, no new file written)")
    ]  # fmt: skip


CMDS = st.sampled_from(["a", "b", "c"])


@settings(max_examples=40, deadline=None)
@given(st.lists(CMDS, min_size=0, max_size=25))
def test_window_rule_matches_a_reference(cmds):
    # outputs all distinct: only the repeat rule can fire; no writes
    calls = [(f"cmd_{c}", f"o{i}") for i, c in enumerate(cmds)]
    w = 10
    flags = []
    for i in range(len(cmds)):
        if i < w - 1:
            flags.append(False)
            continue
        rep = sum(1 for j in range(i - w + 1, i + 1) if cmds[j] in cmds[:j])
        flags.append(rep / w >= 0.8)
    # reference spans: runs of flagged windows -> (first window's start step, last end step)
    want = []
    i = 0
    while i < len(flags):
        if flags[i]:
            j = i
            while j + 1 < len(flags) and flags[j + 1]:
                j += 1
            want.append((i - w + 1 + 1, j + 1))
            i = j + 1
        else:
            i += 1
    got = [(r[1], r[2]) for r in run(traj(calls))]
    assert got == want


# -- the long tail --------------------------------------------------------------------------------


def tail_frames(passing: list[int], failing: int, *, failing_reward: float | None = 0.0) -> dict:
    parts = [
        frames([("user", "x")], trial_id=f"p{i}", reward=1.0, task_name="T", n_steps=n)
        for i, n in enumerate(passing)
    ]
    parts.append(frames([("user", "x")], trial_id="f", reward=failing_reward, task_name="T",
                        n_steps=failing))  # fmt: skip
    return combine(*parts)


def test_long_tail_quantile_and_evidence():
    # linear p90 of [1, 2, 3, 4, 5] = 4 + 0.6 x (5 - 4) = 4.6
    assert run(tail_frames([1, 2, 3, 4, 5], 5)) == [
        ("f", 0, 4, "low", 0.4, "long tail: 5 steps > p90 of passing trials of the task (4.6)")
    ]
    assert run(tail_frames([1, 2, 3, 4, 5], 4)) == []  # 4 <= 4.6


def test_long_tail_needs_min_passing_trials():
    assert run(tail_frames([3, 3, 3, 3], 9)) == []  # 4 passing < tail_min_passing 5
    assert [r[0] for r in run(tail_frames([3, 3, 3, 3, 3], 9))] == ["f"]
    cfg = {"no_progress": {"tail_min_passing": 4, "tail_quantile": 0.5}}
    (row,) = run(tail_frames([3, 3, 3, 3], 9), config=cfg)
    assert row[5] == "long tail: 9 steps > p50 of passing trials of the task (3.0)"


def test_long_tail_is_per_task_and_only_for_failed_trials():
    f = tail_frames([3, 3, 3, 3, 3], 9)
    # the same failing trial on another task has no passing peers
    other = {**f, "trials": f["trials"].with_columns(
        pl.when(pl.col("trial_id") == "f").then(pl.lit("U")).otherwise(pl.col("task_name")).alias("task_name")
    )}  # fmt: skip
    assert run(other) == []
    # a passing trial is never a long tail, however long
    assert run(tail_frames([3, 3, 3, 3, 3], 9, failing_reward=1.0)) == []


def test_long_tail_needs_a_trial_known_not_to_have_passed():
    # no reward and no verdict (cancelled, verifier never ran): not known to have failed
    assert run(tail_frames([3, 3, 3, 3, 3], 9, failing_reward=None)) == []
    # no reward, but the agent timed out or crashed: it did not pass
    for outcome in ("timeout", "error"):
        f = tail_frames([3, 3, 3, 3, 3], 9, failing_reward=None)
        f = {**f, "trials": f["trials"].with_columns(
            pl.when(pl.col("trial_id") == "f").then(pl.lit(outcome)).alias("outcome"))}  # fmt: skip
        assert [r[0] for r in run(f)] == ["f"]
    # a partial reward is not a pass
    assert [r[0] for r in run(tail_frames([3, 3, 3, 3, 3], 9, failing_reward=0.5))] == ["f"]
