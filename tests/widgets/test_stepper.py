"""The trajectory Stepper on its own: where a trial opens (start / divergence / first step,
clamped), the error and finding marks it lists and jumps to (with wrap-around), the window
of steps it draws, and that showing another trial redraws even at the same step."""

from __future__ import annotations

import re

import polars as pl

from evalkit.load._columns import conform
from evalkit.load.findings.columns import COLUMNS as FINDING_COLUMNS
from evalkit.load.steps.columns import STEP_COLUMNS, TOOL_CALL_COLUMNS
from evalkit.widgets.stepper import Stepper


def _steps(indices: list[int], tag: str = "s") -> pl.DataFrame:
    return conform(
        pl.DataFrame(
            {
                "trial_id": ["t"] * len(indices),
                "step_index": indices,
                "source": ["agent"] * len(indices),
                "message": [f"{tag}-msg-{i}" for i in indices],
            }
        ),
        STEP_COLUMNS,
    )


def _calls() -> pl.DataFrame:
    # errors at steps 5 and 3 (given out of order, 5 twice); a null is_error is no error
    return conform(
        pl.DataFrame(
            {
                "trial_id": ["t"] * 5,
                "step_index": [5, 3, 5, 4, 6],
                "call_index": [0, 0, 1, 0, 0],
                "function_name": ["bash"] * 5,
                "is_error": [True, True, True, False, None],
            }
        ),
        TOOL_CALL_COLUMNS,
    )


def _findings() -> pl.DataFrame:
    # one finding over steps 4-5, one at step 7 with no end (covers its start only)
    return conform(
        pl.DataFrame(
            {
                "trial_id": ["t", "t"],
                "detector": ["retry_loop", "hedge"],
                "step_start": [4, 7],
                "step_end": [5, None],
            }
        ),
        FINDING_COLUMNS,
    )


def _shown(s: Stepper) -> list[int]:
    """Step indices drawn in the body, in order."""
    return [int(i) for i in re.findall(r'<span class="src">#(\d+) ', s.body.value)]


def _stepper(**show) -> Stepper:
    s = Stepper(window=1)
    s.show(_steps([3, 4, 5, 6, 7]), _calls(), _findings(), **show)
    return s


def test_opens_on_the_first_step_and_lists_the_marks() -> None:
    s = _stepper()
    assert (s.slider.min, s.slider.max, s.slider.value) == (3, 7, 3)
    assert s.summary.value == (
        "<div class='ekw muted'>5 steps; tool errors at steps [3, 5]; "
        "findings at steps [4, 5, 7]</div>"
    )
    # window 1 around step 3: steps 2..4, and there is no step 2
    assert _shown(s) == [3, 4]
    assert '<div class="step agent err current">' in s.body.value  # step 3 had an error


def test_error_and_finding_jumps_wrap_around() -> None:
    s = _stepper()
    s.next_error.click()
    assert s.slider.value == 5
    s.next_error.click()  # no error after 5: back to the first one
    assert s.slider.value == 3
    seen = []
    for _ in range(4):
        s.next_finding.click()
        seen.append(s.slider.value)
    assert seen == [4, 5, 7, 4]


def test_prev_and_next_stop_at_the_ends() -> None:
    s = _stepper()
    s.prev.click()
    assert s.slider.value == 3
    for _ in range(6):
        s.next.click()
    assert s.slider.value == 7
    assert _shown(s) == [6, 7]  # window 1 around the last step


def test_start_wins_over_divergence_and_is_clamped() -> None:
    assert _stepper(start=6, diverge_step=4).slider.value == 6
    assert _stepper(start=99).slider.value == 7
    assert _stepper(start=-5).slider.value == 3
    d = _stepper(diverge_step=5)
    assert d.slider.value == 5
    assert d.summary.value.endswith("; first divergence at step 5</div>")
    assert _shown(d) == [4, 5, 6]
    # step 5: a tool error, inside the retry_loop finding (4-5), current and the divergence
    assert '<div class="step agent err finding current diverge">' in d.body.value


def test_all_steps_and_window_size() -> None:
    s = _stepper()
    s.all_steps.value = True
    assert _shown(s) == [3, 4, 5, 6, 7]
    wide = Stepper(window=2)
    wide.show(_steps([3, 4, 5, 6, 7]), _calls(), _findings(), start=5)
    assert _shown(wide) == [3, 4, 5, 6, 7]
    narrow = Stepper(window=0)
    narrow.show(_steps([3, 4, 5, 6, 7]), _calls(), _findings(), start=5)
    assert _shown(narrow) == [5]


def test_another_trial_at_the_same_step_is_redrawn() -> None:
    s = Stepper(window=1)
    empty = pl.DataFrame()
    s.show(_steps([0, 1, 2], "first"), _calls(), _findings())
    assert "first-msg-0" in s.body.value
    # the slider value stays 0, so no change event: show() must draw by itself
    s.show(_steps([0, 1], "second"), empty, empty)
    assert "second-msg-0" in s.body.value and "first-msg" not in s.body.value
    assert s.summary.value == (
        "<div class='ekw muted'>2 steps; tool errors at steps none; findings at steps none</div>"
    )
    assert s.slider.max == 1


def test_a_trial_without_steps_says_so() -> None:
    s = Stepper()
    empty = pl.DataFrame()
    s.show(empty, empty, empty)
    assert (s.slider.min, s.slider.max, s.slider.value) == (0, 0, 0)
    assert "No trajectory was recorded or parsed for this trial." in s.body.value
    assert s.summary.value.startswith("<div class='ekw muted'>0 steps;")


def test_a_trial_whose_steps_sit_below_the_previous_trials_opens() -> None:
    s = Stepper(window=1)
    empty = pl.DataFrame()
    s.show(_steps([5, 6, 7], "first"), empty, empty)
    # every step of the next trial is below the first trial's lowest step
    s.show(_steps([1, 2, 3], "second"), empty, empty)
    assert (s.slider.min, s.slider.max, s.slider.value) == (1, 3, 1)
    assert "second-msg-1" in s.body.value
    # and back above the previous range
    s.show(_steps([10, 11], "third"), empty, empty)
    assert (s.slider.min, s.slider.max, s.slider.value) == (10, 11, 10)
