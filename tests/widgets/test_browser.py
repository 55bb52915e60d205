"""evalkit.widgets.browser: ``TrialBrowser`` filters the trials table by run, job, outcome,
error kind, detector and a task substring, lists the matches (at most ``MAX_ROWS``, with a
count), and shows the picked trial's header, verifier output and stepper. Headless here: set
widget values, fire observers, call ``select``. test_widgets.py covers the run / outcome /
detector / task flow on one frame; this module covers the row labels, the count and its
cap, the job and error-kind menus, literal and padded task text, picking a trial outside the
filter, the verifier panel and the findings-error note."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import polars as pl
import pytest

from evalkit.load._columns import empty
from evalkit.load.steps.columns import STEP_COLUMNS, TOOL_CALL_COLUMNS
from evalkit.widgets import TrialBrowser, TrialIndex
from evalkit.widgets import browser as browser_mod
from evalkit.widgets.browser import ALL, _label


def _trials(**over) -> pl.DataFrame:
    rows = [
        ("r1", "j1", "alpha.task", 1, "pass", "none", 1.0),
        ("r1", "j1", "alphaXtask", 2, "fail", "timeout", 0.0),
        ("r1", "j2", "beta", 1, "error", "agent_crash", None),
        ("r2", "j3", "alpha.task", 1, "fail", "timeout", 0.25),
    ]
    return pl.DataFrame(
        [
            {
                "trial_id": f"{run}-{task}-{att}", "run": run, "job_name": job,
                "task_name": task, "trial_name": f"{task}__{att}", "trial_dir": None,
                "attempt": att, "outcome": out, "error_kind": ek, "reward": rew,
            }
            for run, job, task, att, out, ek, rew in rows
        ]
    )  # fmt: skip


@pytest.fixture
def browser() -> TrialBrowser:
    return TrialBrowser(index=TrialIndex(trials=_trials()))


def _ids(b: TrialBrowser) -> list[str]:
    return [v for _, v in b.table.options]


def test_label_pads_columns_and_shows_missing_reward_and_attempt_as_dashes() -> None:
    r = {"run": "r" * 40, "task_name": "t", "attempt": None, "outcome": "fail", "reward": None}
    label = _label({**r, "error_kind": "timeout"})
    assert label.startswith("r" * 30 + " t" + " " * 37 + " #-  ")  # run cut to 30, task padded
    assert label.endswith("    -  timeout")  # reward '-' right-aligned in 5
    assert _label({**r, "reward": 0.5, "attempt": 3, "error_kind": None}).endswith(
        " 0.50  None"
    )  # reward to 2 decimals


def test_menus_list_all_then_the_sorted_distinct_values(browser: TrialBrowser) -> None:
    assert list(browser.run.options) == [ALL, "r1", "r2"]
    assert list(browser.job.options) == [ALL, "j1", "j2", "j3"]
    assert list(browser.outcome.options) == [ALL, "error", "fail", "pass"]
    assert list(browser.error_kind.options) == [ALL, "agent_crash", "none", "timeout"]
    assert list(browser.detector.options) == [ALL]  # no findings, no detector to pick


def test_count_says_how_many_of_all_match(browser: TrialBrowser) -> None:
    assert "<b>4</b> of 4 trials match." in browser.count.value
    browser.error_kind.value = "timeout"
    assert sorted(_ids(browser)) == ["r1-alphaXtask-2", "r2-alpha.task-1"]
    assert "<b>2</b> of 4 trials match." in browser.count.value
    assert browser.matches.height == 2


def test_job_and_error_kind_filters_combine(browser: TrialBrowser) -> None:
    browser.job.value = "j1"
    assert sorted(_ids(browser)) == ["r1-alpha.task-1", "r1-alphaXtask-2"]
    browser.error_kind.value = "timeout"
    assert _ids(browser) == ["r1-alphaXtask-2"]
    browser.job.value = "j2"  # j2 has no timeout
    assert _ids(browser) == [] and "<b>0</b> of 4" in browser.count.value


def test_task_text_is_a_literal_trimmed_substring(browser: TrialBrowser) -> None:
    browser.task.value = "  A.T  "  # trimmed, case-insensitive, '.' is not a regex wildcard
    assert sorted(_ids(browser)) == ["r1-alpha.task-1", "r2-alpha.task-1"]
    browser.task.value = "   "  # only spaces: no task filter
    assert len(_ids(browser)) == 4


def test_the_list_is_capped_at_max_rows_and_the_count_says_so(
    monkeypatch: pytest.MonkeyPatch, browser: TrialBrowser
) -> None:
    monkeypatch.setattr(browser_mod, "MAX_ROWS", 2)
    browser.run.value = "r2"
    browser.run.value = ALL  # refilter under the smaller cap
    assert len(browser.table.options) == 2
    assert "<b>4</b> of 4 trials match (showing the first 2)." in browser.count.value
    browser.run.value = "r2"  # 1 match: under the cap, no note
    assert "showing" not in browser.count.value


def test_selecting_a_trial_outside_the_filter_adds_it_to_the_list(
    browser: TrialBrowser,
) -> None:
    browser.run.value = "r2"
    assert _ids(browser) == ["r2-alpha.task-1"]
    browser.select("r1-beta-1")
    assert _ids(browser) == ["r2-alpha.task-1", "r1-beta-1"]
    assert browser.table.value == "r1-beta-1"
    assert "beta" in browser.detail.value
    browser.select("r1-beta-1")  # already listed: not added twice
    assert _ids(browser).count("r1-beta-1") == 1


def test_a_trial_without_a_folder_says_there_is_no_verifier_output(
    browser: TrialBrowser,
) -> None:
    browser.select("r1-beta-1")
    assert "No verifier output on disk." in browser.verifier.value


def test_the_verifier_panel_shows_the_trials_test_stdout(tmp_path: Path) -> None:
    (tmp_path / "verifier").mkdir()
    (tmp_path / "verifier" / "test-stdout.txt").write_text("3 passed, 1 failed <b>x</b>")
    t = _trials().with_columns(trial_dir=pl.lit(str(tmp_path)))
    b = TrialBrowser(index=TrialIndex(trials=t))
    b.select("r1-beta-1")
    v = b.verifier.value
    assert "verifier/test-stdout.txt" in v and "3 passed, 1 failed" in v
    assert "<b>x</b>" not in v and "&lt;b&gt;x&lt;/b&gt;" in v  # file text is escaped


def test_clearing_the_selection_keeps_the_last_detail(browser: TrialBrowser) -> None:
    browser.select("r1-beta-1")
    before = browser.detail.value
    browser._on_select({"new": None})
    assert browser.detail.value == before


def test_a_failed_detection_is_explained_above_the_list() -> None:
    class Runs(SimpleNamespace):
        @property
        def findings(self) -> pl.DataFrame:
            raise RuntimeError("detector <boom>")

    runs = Runs(trials=_trials(), steps=empty(STEP_COLUMNS), tool_calls=empty(TOOL_CALL_COLUMNS))
    b = TrialBrowser(runs)
    notes = [
        w.value
        for w in b.children
        if "Anti-pattern detection failed" in (getattr(w, "value", None) or "")
    ]
    assert notes == [
        "<div class='ekw muted'>Anti-pattern detection failed: RuntimeError: detector &lt;boom&gt;</div>"
    ]
    assert list(b.detector.options) == [ALL] and len(b.table.options) == 4


def test_no_note_when_detection_worked(browser: TrialBrowser) -> None:
    assert not any("Anti-pattern" in (getattr(w, "value", None) or "") for w in browser.children)
