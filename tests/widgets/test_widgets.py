"""Widgets headless: set values, fire observers, click buttons; untrusted text is escaped;
callbacks never re-scan steps / calls / findings."""

from __future__ import annotations

from datetime import UTC, datetime

import polars as pl
import pytest

import evalkit
from evalkit.load._columns import conform
from evalkit.load.findings.columns import COLUMNS as FINDING_COLUMNS
from evalkit.load.steps.columns import STEP_COLUMNS, TOOL_CALL_COLUMNS
from evalkit.widgets import CompareExplorer, TrialBrowser, TrialIndex, trajectory_html
from evalkit.widgets import index as index_mod
from tests.conftest import OPENCLAW

EVIL = "<script>alert(1)</script><img src=x onerror=alert(2)>"


def _frames() -> dict[str, pl.DataFrame]:
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    trials, steps, calls = [], [], []
    for run in ("A", "B"):
        for task, ok_a, ok_b in (
            ("t-broken", True, False),
            ("t-fixed", False, True),
            (EVIL, True, True),
        ):
            ok = ok_a if run == "A" else ok_b
            tid = f"{run}-{task[:8]}"
            trials.append({
                "trial_id": tid, "run": run, "job_name": f"job-{run}", "task_name": task,
                "trial_name": f"{task[:8]}__x", "trial_dir": None, "attempt": 1,
                "outcome": "pass" if ok else "fail", "error_kind": "none", "reward": 1.0 if ok else 0.0,
                "exception_type": None, "exception_message": EVIL, "cost_usd": None,
                "n_input_tokens": 10, "n_output_tokens": 2, "duration_s": 5.0, "started_at": t0,
            })  # fmt: skip
            steps += [
                {"trial_id": tid, "step_index": 0, "source": "user", "message": f"do {task}"},
                {"trial_id": tid, "step_index": 1, "source": "agent", "message": EVIL + "x" * 2000},
                {"trial_id": tid, "step_index": 2, "source": "agent", "message": "done"},
            ]
            calls += [
                {"trial_id": tid, "step_index": 1, "call_index": 0, "function_name": "bash",
                 "arguments": '{"cmd": "ls"}', "command": "ls", "observation": EVIL, "is_error": False},
                {"trial_id": tid, "step_index": 2, "call_index": 0, "function_name": "bash",
                 "arguments": '{"cmd": "make"}' if ok else '{"cmd": "rm -rf build"}',
                 "command": "make" if ok else "rm -rf build", "observation": "boom" * 400, "is_error": not ok},
            ]  # fmt: skip
    findings = [{"trial_id": "B-t-broken", "detector": "retry_loop", "step_start": 1, "step_end": 2,
                 "severity": "high", "evidence": EVIL, "rule_version": "structural-1"}]  # fmt: skip
    return {
        "trials": pl.DataFrame(trials),
        "steps": conform(pl.DataFrame(steps), STEP_COLUMNS),
        "tool_calls": conform(pl.DataFrame(calls), TOOL_CALL_COLUMNS),
        "findings": conform(pl.DataFrame(findings), FINDING_COLUMNS),
    }


@pytest.fixture
def index() -> TrialIndex:
    return TrialIndex(**_frames())


def test_untrusted_text_is_escaped(index: TrialIndex) -> None:
    tid = "A-t-broken"
    html = trajectory_html(index.steps(tid), index.calls(tid), index.findings(tid))
    assert "<script>" not in html and "<img src=x" not in html
    assert "&lt;script&gt;" in html
    assert "<details>" in html  # the 2000-character message is collapsed


def test_browser_filters_and_shows_a_trial(index: TrialIndex) -> None:
    b = TrialBrowser(index=index)
    assert len(b.table.options) == 6
    b.run.value = "B"
    b.outcome.value = "fail"
    assert [v for _, v in b.table.options] == ["B-t-broken"]
    b.run.value = "(all)"
    b.outcome.value = "(all)"
    b.detector.value = "retry_loop"
    assert [v for _, v in b.table.options] == ["B-t-broken"]
    b.detector.value = "(all)"
    b.task.value = "FIXED"  # case-insensitive substring
    assert {v for _, v in b.table.options} == {"A-t-fixed", "B-t-fixed"}
    b.task.value = ""
    b.table.value = "B-t-broken"
    assert "t-broken" in b.detail.value and "<script>" not in b.detail.value
    body = b.stepper.body.value
    assert "retry_loop" in body and "&lt;script&gt;" in body and "<script>" not in body
    assert "tool errors at steps [2]" in b.stepper.summary.value
    assert "findings at steps [1, 2]" in b.stepper.summary.value


def test_stepper_buttons(index: TrialIndex) -> None:
    b = TrialBrowser(index=index)
    b.select("B-t-broken")
    s = b.stepper
    assert s.slider.value == 0
    s.next.click()
    assert s.slider.value == 1
    s.next_error.click()
    assert s.slider.value == 2
    s.prev.click()
    assert s.slider.value == 1
    s.next_finding.click()
    assert s.slider.value == 2
    assert "current" in s.body.value
    s.all_steps.value = True
    assert s.body.value.count('class="step') == 3


def test_callbacks_do_not_rescan_the_big_frames(
    index: TrialIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    b = TrialBrowser(index=index)
    b.select("A-t-broken")
    calls = {"n": 0}
    real = index_mod._partition

    def counting(df: pl.DataFrame) -> dict:
        calls["n"] += 1
        return real(df)

    monkeypatch.setattr(index_mod, "_partition", counting)
    for v in ("A", "B", "(all)"):
        b.run.value = v
    b.task.value = "t-"
    b.select("B-t-fixed")
    b.select("A-t-fixed")
    assert calls["n"] == 0
    assert b.task.continuous_update is False  # the task box filters on Enter, not per keystroke


def test_compare_explorer_side_by_side(index: TrialIndex) -> None:
    c = CompareExplorer(index=index, a="A", b="B")
    assert "1 fixed" in c.status.value and "1 broken" in c.status.value
    assert [v for _, v in c.tasks.options] == ["t-broken", "t-fixed"]
    c.show_kind.value = "all"
    assert len(c.tasks.options) == 3
    c.tasks.value = "t-broken"
    assert c.attempt_a.value == "A-t-broken" and c.attempt_b.value == "B-t-broken"
    assert "First divergence" in c.divergence.value
    assert ' diverge"' in c.pane_a.value and ' diverge"' in c.pane_b.value
    assert "call 1" in c.divergence.value
    assert "<script>" not in c.pane_a.value + c.pane_b.value
    c.tasks.value = "t-fixed"  # a fixed task opens on A's failing and B's passing attempt
    assert c.index.row(c.attempt_a.value)["outcome"] == "fail"
    assert c.index.row(c.attempt_b.value)["outcome"] == "pass"
    c.a.value, c.b.value = "B", "A"
    c.go.click()
    assert "1 fixed" in c.status.value


def test_widgets_on_real_harbor_jobs() -> None:
    runs = evalkit.load(OPENCLAW, progress=False, trajectories=True)
    b = TrialBrowser(runs)
    with_steps = runs.trials.filter(pl.col("n_steps") > 0)["trial_id"].to_list()
    b.select(with_steps[0])
    assert "step" in b.stepper.body.value
    CompareExplorer(runs)
