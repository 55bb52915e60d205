"""TrialIndex: the trials table it keeps (columns, order), per-trial lookups, the detector ->
trials map, filter-menu values, and what it does without frames or when findings fail."""

from __future__ import annotations

import polars as pl
import pytest

from evalkit.load._columns import conform
from evalkit.load.findings.columns import COLUMNS as FINDING_COLUMNS
from evalkit.load.steps.columns import STEP_COLUMNS, TOOL_CALL_COLUMNS
from evalkit.widgets.index import TrialIndex


def _names(cols) -> list[str]:
    return [c.name for c in cols]


def _trials() -> pl.DataFrame:
    # deliberately unsorted, with a column the index does not keep and a null attempt
    return pl.DataFrame(
        {
            "extra": ["x", "y", "z", "w"],
            "trial_id": ["b2", "a1", "b1", "a0"],
            "run": ["B", "A", "B", "A"],
            "task_name": ["t", "t", "t", "s"],
            "attempt": [2, None, 1, 1],
            "outcome": ["pass", "fail", None, "pass"],
            "reward": [1.0, 0.0, None, 1.0],
        }
    )


def _frames() -> dict[str, pl.DataFrame]:
    steps = conform(
        pl.DataFrame(
            {"trial_id": ["a1", "a1", "b1"], "step_index": [0, 1, 0], "message": ["m0", "m1", "n0"]}
        ),
        STEP_COLUMNS,
    )
    calls = conform(
        pl.DataFrame(
            {"trial_id": ["b1"], "step_index": [0], "call_index": [0], "is_error": [True]}
        ),
        TOOL_CALL_COLUMNS,
    )
    findings = conform(
        pl.DataFrame(
            {
                "trial_id": ["a1", "a1", "b1", "b2"],
                "detector": ["retry_loop", "retry_loop", "retry_loop", "hedge"],
                "step_start": [0, 1, 0, 0],
                "step_end": [0, 1, 0, 0],
            }
        ),
        FINDING_COLUMNS,
    )
    return {"trials": _trials(), "steps": steps, "tool_calls": calls, "findings": findings}


def test_trials_are_the_known_columns_sorted_by_run_task_attempt() -> None:
    idx = TrialIndex(**_frames())
    # TRIAL_COLUMNS order, only those present: "extra" dropped
    assert idx.trials.columns == ["trial_id", "run", "task_name", "attempt", "outcome", "reward"]
    # run A: task s (a0) before t (a1, attempt null last); run B: t attempt 1 then 2
    assert idx.trials["trial_id"].to_list() == ["a0", "a1", "b1", "b2"]
    assert idx.row("b2") == {
        "trial_id": "b2", "run": "B", "task_name": "t", "attempt": 2, "outcome": "pass",
        "reward": 1.0,
    }  # fmt: skip
    with pytest.raises(KeyError):
        idx.row("nope")


def test_per_trial_frames_and_empty_ones_for_trials_without_rows() -> None:
    idx = TrialIndex(**_frames())
    assert idx.steps("a1")["message"].to_list() == ["m0", "m1"]
    assert idx.steps("b1")["message"].to_list() == ["n0"]
    assert idx.calls("b1")["is_error"].to_list() == [True]
    assert idx.findings("a1").height == 2 and idx.findings("b2")["detector"].to_list() == ["hedge"]
    # a0 has no steps, calls or findings: empty frames with the declared columns
    for got, cols in (
        (idx.steps("a0"), STEP_COLUMNS),
        (idx.calls("a0"), TOOL_CALL_COLUMNS),
        (idx.findings("a0"), FINDING_COLUMNS),
    ):
        assert got.height == 0 and got.columns == _names(cols)


def test_flagged_maps_each_detector_to_its_distinct_trials() -> None:
    flagged = TrialIndex(**_frames()).flagged
    # retry_loop: a1 twice and b1 -> {a1, b1}; hedge: b2
    assert {d: sorted(ids) for d, ids in flagged.items()} == {
        "retry_loop": ["a1", "b1"],
        "hedge": ["b2"],
    }


def test_values_are_sorted_distinct_non_null() -> None:
    idx = TrialIndex(**_frames())
    assert idx.values("run") == ["A", "B"]
    assert idx.values("outcome") == ["fail", "pass"]  # the null outcome is not a menu entry
    assert idx.values("error_kind") == []  # not a column of these trials


def test_no_runs_and_no_frames_means_empty_frames() -> None:
    idx = TrialIndex(trials=_trials())
    assert idx.steps("a1").height == 0 and idx.steps("a1").columns == _names(STEP_COLUMNS)
    assert idx.calls("b1").height == 0
    assert idx.flagged == {} and idx.findings_error is None


class _Runs:
    """A Runs stand-in whose findings (or steps) fail to compute."""

    def __init__(self, fail_steps: bool = False) -> None:
        f = _frames()
        self.trials, self.tool_calls, self._steps = f["trials"], f["tool_calls"], f["steps"]
        self.fail_steps = fail_steps

    @property
    def steps(self) -> pl.DataFrame:
        if self.fail_steps:
            raise OSError("disk gone")
        return self._steps

    @property
    def findings(self) -> pl.DataFrame:
        raise RuntimeError("detector crashed")


def test_failing_findings_are_recorded_not_raised() -> None:
    idx = TrialIndex(_Runs())
    assert idx.steps("a1")["message"].to_list() == ["m0", "m1"]  # read from the runs
    assert idx.flagged == {}
    assert idx.findings_error == "RuntimeError: detector crashed"
    got = idx.findings("a1")
    assert got.height == 0 and got.columns == _names(FINDING_COLUMNS)


def test_other_frames_that_fail_raise() -> None:
    idx = TrialIndex(_Runs(fail_steps=True))
    with pytest.raises(OSError, match="disk gone"):
        idx.steps("a1")
    assert idx.findings_error is None
