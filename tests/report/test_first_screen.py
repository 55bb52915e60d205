"""The first screen's parts: the pair line (paired / not comparable / one-sided tasks), the
"Not decided" reasons, the capped task lists, and the warnings (stale data, thin evidence,
load errors) — which ones the first screen repeats and which it leaves to the reasons."""

from __future__ import annotations

import dataclasses
from datetime import timedelta

import pytest

from evalkit import report
from evalkit.report import first_screen as F
from tests.conftest import HARBOR
from tests.factories import BASELINE_JOB

OPUS = "openclaw-gateway__claude-opus-4-6__persistence"
SONNET = "openclaw-gateway__claude-sonnet-4-6__persistence"


@pytest.fixture(scope="module")
def thin() -> report.Context:
    """Opus (A) vs Sonnet (B) on the persistence tasks of the openclaw fixtures.

    A ran heartbeat-status-watcher, long-running-refresh-token-cache and
    buffered-log-course-correct; B ran heartbeat-status-watcher and buffered-log-course-correct,
    and heartbeat's checksum changed between them. So: 1 task paired (buffered-log, one
    attempt each side), 1 shared but not comparable, 1 only in A, 0 only in B. The fixtures
    also hold one trial folder without result.json (hermes-telegram-mirror-drop__YVXHE7Y):
    one load error."""
    return report.load_context(HARBOR, candidate=SONNET, baseline=OPUS)


@pytest.fixture(scope="module")
def one_run() -> report.Context:
    return report.load_context(BASELINE_JOB)


def _at(ctx: report.Context, after_last: timedelta) -> report.Context:
    last = ctx.trials["finished_at"].max()
    return dataclasses.replace(ctx, generated_at=last + after_last)


def test_pair_line_counts_paired_not_comparable_and_one_sided(thin: report.Context) -> None:
    line = F._pair_line(thin, report.comparison(thin))
    assert line == (
        f'<p class="ek-pair"><b>A</b> (baseline) <code>{OPUS}</code> &nbsp;vs&nbsp; '
        f"<b>B</b> (candidate) <code>{SONNET}</code> — 1 task(s) paired (1 shared task(s) "
        "not comparable), attempts per task A 1, B 1; 1 only in A, 0 only in B</p>"
    )


def test_too_little_overlap_is_not_decided_and_says_why(thin: report.Context) -> None:
    reasons = F._reasons(thin, report.comparison(thin))
    # one comparable task against the default min_shared_tasks of 5
    assert reasons == [
        "Not decided: only 1 comparable task(s), fewer than the 5 needed (min_shared_tasks).",
        "For the record, the ship gate says Hold: not enough evidence and the regression "
        "guard merge; neither means anything on this overlap.",
    ]


def test_warnings_stale_thin_evidence_and_load_errors(thin: report.Context) -> None:
    ctx = _at(thin, timedelta(days=3))  # 72 h > 36 h: stale, shown in days
    cmp = report.comparison(ctx)
    stale = (
        "The newest trial finished 3.0 days before this report: if this is a nightly "
        "report, check that the runs are still being produced."
    )
    thin_ev = (
        "Thin evidence: only 1 comparable task(s), fewer than the 5 needed (min_shared_tasks)."
    )
    errors = (
        "1 load error(s): some files are missing or could not be read fully (see Data quality "
        "and What was loaded); their trials count as incomplete."
    )
    assert F.warnings(ctx, cmp) == [stale, thin_ev, errors]
    # the first screen leaves thin evidence to its reasons
    assert F.warnings(ctx, cmp, evidence=False) == [stale, errors]
    # no comparison: no evidence line either
    assert F.warnings(ctx, None) == [stale, errors]
    # 30 h after the newest trial is still fresh; 40 h is stale and counted in hours
    assert F.warnings(_at(thin, timedelta(hours=30)), cmp, evidence=False) == [errors]
    assert F.warnings(_at(thin, timedelta(hours=40)), None)[0].startswith(
        "The newest trial finished 40.0 hours before this report"
    )


def test_answer_shows_each_warning_once_as_a_box(thin: report.Context) -> None:
    page = F.answer(_at(thin, timedelta(days=3))).html()
    assert page.count('<div class="ek-warn">') == 2  # stale + load errors
    assert page.count("load error(s)") == 1 and page.count("3.0 days before") == 1
    assert "Thin evidence:" not in page  # said once, in the reasons
    assert "<li>Not decided: only 1 comparable task(s)" in page
    assert (
        "Broken (A passed, B does not) (0)" in page and "Fixed (A did not pass, B does) (0)" in page
    )


def test_task_lists_show_up_to_max_names(monkeypatch: pytest.MonkeyPatch) -> None:
    assert F._names("Fixed", []) == "<li><b>Fixed (0)</b></li>"
    monkeypatch.setattr(F, "MAX_NAMES", 2)
    # exactly MAX_NAMES: all shown, no "more"
    assert (
        F._names("Fixed", ["a", "b"]) == "<li><b>Fixed (2)</b>: <code>a</code>, <code>b</code></li>"
    )
    # one over: the first two, then how many more; names are escaped
    assert F._names("Broken", ["<x>", "b", "c"]) == (
        "<li><b>Broken (3)</b>: <code>&lt;x&gt;</code>, <code>b</code> and 1 more</li>"
    )


def test_answer_without_runs_and_with_one_run(one_run: report.Context) -> None:
    fresh = _at(one_run, timedelta(hours=1))
    page = F.answer(fresh).html()
    assert page == (
        '<div class="ek"><div id="evalkit-answer" class="ek-answer"><div class="ek-warn">'
        "Only one run to look at (evalkit-scripted__baseline__smoke-tasks): nothing to "
        "compare.</div></div></div>"
    )
    nothing = dataclasses.replace(fresh, candidate=None, baseline=None)
    assert '<div class="ek-warn">No trials were found.</div>' in F.answer(nothing).html()
