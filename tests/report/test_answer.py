"""The first screen (report.answer), thin evidence, run labels the user names, the checksums
parameter, and the same figures in the report, summary.json and ``evalkit compare``."""

from __future__ import annotations

import html
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evalkit import report
from evalkit.cli.app import app
from tests.conftest import HARBOR
from tests.factories import ROOT, skills_ab

RUNS = ROOT / "runs"


@pytest.fixture(scope="module")
def bundled() -> report.Context:
    return report.load_context(RUNS)


def test_answer_leads_with_pair_verdicts_figures_and_tasks(bundled: report.Context) -> None:
    page = report.answer(bundled).html()
    assert page.startswith('<div class="ek"><div id="evalkit-answer"')
    assert "evalkit-scripted__baseline__smoke-tasks" in page
    assert "12 task(s) paired, attempts per task A 5, B 5" in page
    assert 'id="evalkit-ship-gate"' in page and "Ship gate: Hold: not enough evidence" in page
    assert "Regression guard: merge" in page
    assert "Ship gate — net 2 &gt; 0 but p = 0.4444" in page
    assert "Regression guard — merge: no regression detected." in page
    assert "The paired test finds a pass-rate difference (p = 0.0312)" in page  # disagreement
    for text in ("+13.3 pts", "95% CI +5.0 pts … +23.3 pts", "+0.133", "+$0.0008", "+1.0 s"):
        assert html.escape(text) in page, text
    assert "Fixed (A did not pass, B does) (2)" in page and "rename-extensions" in page
    assert "Broken (A passed, B does not) (0)" in page


def test_task_lists_are_capped_with_a_count(bundled: report.Context, monkeypatch) -> None:
    from evalkit.report import first_screen as answer_mod

    monkeypatch.setattr(answer_mod, "MAX_NAMES", 1)
    page = report.answer(bundled).html()
    assert "Fixed (A did not pass, B does) (2)" in page and "and 1 more" in page


def test_thin_evidence_shows_no_green_badge() -> None:
    ctx = report.load_context(
        HARBOR,
        candidate="openclaw-gateway__claude-sonnet-4-6__persistence",
        baseline="openclaw-gateway__claude-opus-4-6__persistence",
    )
    page = report.answer(ctx).html()
    assert "No meaningful comparison" in page
    assert "only 1 comparable task(s), fewer than the 5 needed (min_shared_tasks)" in page
    assert "ek-verdict good" not in page
    gate = report.gate(ctx).html()
    assert "ek-verdict good" not in gate and "No meaningful comparison" in gate
    # with the bar lowered to 1 task, the interval is still far too wide to mean anything
    ctx.params["min_shared_tasks"] = 1
    page = report.answer(ctx).html()
    assert "includes both a 25-point drop and a 25-point gain" in page
    assert "ek-verdict good" not in page


def test_a_guard_that_compared_nothing_on_cost_is_not_green(bundled: report.Context) -> None:
    ctx = report.load_context(
        HARBOR,
        candidate="openclaw-gateway__claude-sonnet-4-6__persistence",
        baseline="openclaw-gateway__claude-opus-4-6__persistence",
        min_shared_tasks=1,
    )
    g = report.comparison(ctx).regression_guard()
    assert g.decision == "merge" and "cost" in g.not_compared
    assert "merge on pass rate only" in g.summary()


def test_runs_parameter_names_the_runs_and_checksums_ignore(tmp_path: Path) -> None:
    no, yes = skills_ab(tmp_path)
    mapping = json.dumps({"noskills": str(no), "skills": str(yes)})
    ctx = report.load_context(tmp_path / "missing-is-fine", runs=mapping)
    assert (ctx.baseline, ctx.candidate) == ("noskills", "skills")
    page = report.answer(ctx).html()
    assert "No meaningful comparison" in page
    assert "the configurations differ in nothing else (job name aside)" in page
    assert "-p checksums ignore" in page
    ctx = report.load_context(tmp_path, runs=mapping, checksums="ignore")
    page = report.answer(ctx).html()
    assert "12 task(s) paired" in page and "Ship gate:" in page
    assert "largest-file" in page and "word-frequency" in page
    with pytest.raises(FileNotFoundError, match="no such path"):
        report.load_context(tmp_path, runs={"a": str(tmp_path / "nope")})
    with pytest.raises(ValueError, match="must map run labels"):
        report.load_context(tmp_path, runs="[1, 2]")


@pytest.mark.slow
def test_report_cli_with_runs_mapping(tmp_path: Path) -> None:
    no, yes = skills_ab(tmp_path / "ab")
    mapping = json.dumps({"noskills": str(no), "skills": str(yes)})
    r = CliRunner().invoke(app, ["report", "nightly", "--out", str(tmp_path / "out"),
                                 "-p", "runs", mapping, "-p", "checksums", "ignore"])  # fmt: skip
    assert r.exit_code == 0, r.output
    s = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert s["baseline"]["label"] == "noskills" and s["candidate"]["label"] == "skills"
    assert s["pairedTasks"] == 12 and s["fixed"] == ["largest-file", "word-frequency"]


def _cli_compare(runs_dir: Path, a: str, b: str) -> tuple[dict, str]:
    run = CliRunner()
    args = ["compare", a, b, "--runs", str(runs_dir)]
    j = json.loads(run.invoke(app, [*args, "--json", "-"], catch_exceptions=False).stdout)
    text = run.invoke(app, args, catch_exceptions=False).stdout
    return j, text


@pytest.mark.slow
@pytest.mark.parametrize("folder", [RUNS, HARBOR], ids=["bundled-runs", "harbor-fixtures"])
def test_report_summary_and_cli_agree(folder: Path, tmp_path: Path) -> None:
    """One source: every figure of the pair reads the same in summary.json, in the report's
    first screen and gate section, and in ``evalkit compare`` (text and --json)."""
    files = report.render("nightly", folder, tmp_path)
    s = json.loads(files.summary.read_text())
    page = files.html.read_text()
    a, b = s["report"]["baseline"], s["report"]["candidate"]
    j, text = _cli_compare(folder, a, b)
    assert [h["line"] for h in s["headline"]] == [h["line"] for h in j["headline"]]
    for key in ("pairedTasks", "meanRewardDelta", "turnsDelta", "tokensDelta", "decision",
                "fixed", "broken", "evidence", "guardNotCompared"):  # fmt: skip
        assert s[key] == j[key], key
    assert s["gates"] == j["gates"]
    for h in s["headline"]:
        assert h["deltaText"] in text, h["line"]
        assert html.escape(h["deltaText"]) in page, h["line"]
        if h["ciText"]:
            assert h["ciText"] in text and html.escape(h["ciText"]) in page, h["line"]
    turns = next(h for h in s["headline"] if h["key"] == "turns")
    assert turns["a"] is not None or folder == HARBOR  # trajectories parsed on both sides


def test_one_run_says_there_is_nothing_to_compare() -> None:
    ctx = report.load_context(RUNS / "scripted-baseline")
    page = report.answer(ctx).html()
    assert "Only one run to look at" in page and "ek-verdict" not in page
