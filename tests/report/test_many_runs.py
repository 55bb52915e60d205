"""The many-runs section on the bundled runs/ folder: which runs it ranks and which it leaves
out (with the note saying so), the task-signal counts, the integrity columns only when every
run is detailed, and its notes for too few runs or no leaderboard."""

from __future__ import annotations

import dataclasses
import re

import pytest

from evalkit import report
from evalkit.report import many_runs
from tests.factories import BASELINE_JOB, ROOT

BASE = "evalkit-scripted__baseline__smoke-tasks"
CAND = "evalkit-scripted__candidate__smoke-tasks"
SKILLS = "claude-code__MiniMax-M2.1__tasks-no-skills"


@pytest.fixture(scope="module")
def bundled() -> report.Context:
    """runs/: scripted-baseline and scripted-candidate (the same 12 smoke tasks, 60 trials
    each) and skillsbench-minimax-claude-code (17 trials of 5 other tasks)."""
    return report.load_context(ROOT / "runs")


@pytest.fixture(scope="module")
def section(bundled: report.Context) -> report.SectionOutput:
    return many_runs.leaderboard(bundled, draws=200)


def _notes(html: str) -> list[str]:
    return re.findall(r'<p class="ek-note">([^<]*)</p>', html)


def _rows(html: str) -> list[str]:
    """Run labels in the first column of the first table (the leaderboard)."""
    first = html.split("</table>")[0]
    return [
        re.sub(r"<wbr>", "", c)
        for c in re.findall(r'<td class="lead">([^<]*(?:<wbr>[^<]*)*)</td>', first)
    ]


def test_ranks_the_runs_sharing_tasks_and_notes_the_one_left_out(
    section: report.SectionOutput,
) -> None:
    out = section
    html = out.html()
    # the skillsbench run shares no task with the smoke-task runs
    assert _notes(html)[0] == f"Left out (no task shared with the others): {SKILLS}."
    # candidate 45/60 passing (75%) ranks above baseline 37/60 (62%)
    assert _rows(html) == [CAND, BASE]
    assert '<td class="num">75%</td>' in html and '<td class="num">62%</td>' in html
    # every run detailed: the integrity columns are there and no note about them
    assert "tampered passes" in html and "Integrity counts" not in html
    assert "<!-- chart: Leaderboard -->" in html and len(out.charts()) == 3


def test_task_signal_counts_over_the_kept_runs(section: report.SectionOutput) -> None:
    html = section.html()
    # passes out of 10 attempts (both runs, reward 1.0 in the result.json files):
    # count-lines, dedupe-lines, hello-file, reverse-lines 10; extract-version 9,
    # sort-numbers 8, fix-script 7, sum-column 6, rename-extensions 5, word-frequency 3,
    # largest-file and project-skeleton 2: 4 always pass, none always fails, 8 informative
    kv = dict(re.findall(r"<tr><td>([^<]+)</td><td>([^<]+)</td></tr>", html))
    assert kv["tasks"] == "12"
    assert kv["every run passes every attempt"] == "4"
    assert kv["every run fails every attempt"] == "0"
    assert kv["informative"] == "8"
    # the noise floor is per kept run only: the left-out run has no row
    noise = html.split("Noise floor")[1].split("</table>")[0]
    assert CAND.replace("__", "__<wbr>") in noise and BASE.replace("__", "__<wbr>") in noise
    assert "MiniMax" not in noise
    assert "MiniMax" not in html.split("Which tasks carry the signal")[1]


def test_runs_not_detailed_drop_the_integrity_columns_with_a_note() -> None:
    two = report.load_context(ROOT / "runs", detail_runs=2)
    assert two.left_out == [SKILLS]  # the pair is detailed, the third run is not
    html = many_runs.leaderboard(two, draws=200).html()
    assert _notes(html)[:2] == [
        "Integrity counts need every run&#x27;s trajectories; 1 run is not shown in detail "
        "(see What was loaded): `-p detail_runs 0` adds them.",
        f"Left out (no task shared with the others): {SKILLS}.",
    ]
    for col in ("tampered passes", "green fails", "passes unverified"):
        assert col not in html, col
    assert _rows(html) == [CAND, BASE]


def test_fewer_than_three_runs_is_a_note_with_the_count() -> None:
    one = report.load_context(BASELINE_JOB)
    out = many_runs.leaderboard(one, draws=50)
    assert out.html() == (
        '<div class="ek"><p class="ek-note">Shown when more than two runs are loaded '
        "(1 here).</p></div>"
    )
    assert out.charts() == []
    # None entries of the order do not count as runs
    ctx = dataclasses.replace(one, order=["a", None, "b"])
    assert "(2 here)" in many_runs.leaderboard(ctx, draws=50).html()


def test_a_leaderboard_that_cannot_be_made_is_a_warning(
    bundled: report.Context, monkeypatch: pytest.MonkeyPatch
) -> None:
    def fail(*a, **k):
        raise ValueError("no run has a <score>")

    monkeypatch.setattr(many_runs, "leaderboard_table", fail)
    out = many_runs.leaderboard(bundled, draws=50)
    assert out.html() == (
        '<div class="ek"><div class="ek-warn">No leaderboard: no run has a &lt;score&gt;</div></div>'
    )
