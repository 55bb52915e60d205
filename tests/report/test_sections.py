"""Report sections without a kernel: which runs are compared, what each section shows,
escaping, summary.json."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from evalkit import report

SECTIONS = ("header", "runs_table", "gate", "transitions", "tasks_changed", "config_diff",
            "heatmap", "taxonomy", "cost_efficiency", "data_quality")  # fmt: skip


@pytest.fixture(scope="module")
def ctx(nightly_runs: Path) -> report.Context:
    return report.load_context(nightly_runs)


def test_defaults_pick_newest_and_previous_night(ctx: report.Context) -> None:
    assert ctx.run_by == "job"  # one run label for all nights -> one run per job
    assert ctx.order == ["nightly-2026-06-01", "nightly-2026-06-02", "nightly-2026-06-03"]
    assert (ctx.baseline, ctx.candidate) == ("nightly-2026-06-02", "nightly-2026-06-03")
    assert "newest" in ctx.choice and "earlier" in ctx.choice


def test_explicit_runs_and_errors(nightly_runs: Path) -> None:
    c = report.load_context(
        nightly_runs, candidate="nightly-2026-06-02", baseline="nightly-2026-06-01"
    )
    assert c.pair == ("nightly-2026-06-01", "nightly-2026-06-02")
    with pytest.raises(ValueError, match="not a run"):
        report.load_context(nightly_runs, candidate="no-such-run", run_by="job")


def test_pick_baseline_prefers_same_tasks() -> None:
    t = pl.DataFrame({
        "run": ["old", "old", "mid", "new", "new"],
        "task_name": ["a", "b", "a", "a", "b"],
    })  # fmt: skip
    base, why = report.pick_baseline(t, ["old", "mid", "new"], "new")
    assert base == "old" and "same 2 tasks" in why
    base, why = report.pick_baseline(t.filter(pl.col("run") != "old"), ["mid", "new"], "new")
    assert base == "mid" and "sharing the most" in why


def test_every_section_renders_and_escapes(ctx: report.Context) -> None:
    html = ""
    for name in SECTIONS:
        parts = getattr(report, name)(ctx)
        assert isinstance(parts, report.SectionOutput), name
        html += parts.html()
        for ch in parts.charts():
            json.dumps(ch.to_dict())
    assert 'id="evalkit-gate"' in html
    assert "Ship gate" in html and "Regression guard" in html
    assert "<script>alert(1)</script>" not in html


def test_runs_table_has_ci_and_pass_at_k(ctx: report.Context) -> None:
    f = report.runs_frame(ctx)
    assert f["run"].to_list() == ctx.order
    assert {"ci_low", "ci_high", "pass_at_k", "pass_hat_k"} <= set(f.columns)
    assert (f["ci_low"] <= f["pass_rate"]).all() and (f["pass_rate"] <= f["ci_high"]).all()
    assert f["cost"].min() > 0  # every generated trial has a recorded cost


def test_summary_is_compare_json_plus_report(ctx: report.Context, tmp_path: Path) -> None:
    p = tmp_path / "s.json"
    s = report.write_summary(ctx, p)
    assert json.loads(p.read_text()) == s
    for key in (
        "meanRewardDelta",
        "timeoutRateDelta",
        "evidenceCompletenessDelta",
        "costPerPassDelta",
        "decision",
    ):
        assert key in s
    assert s["report"]["candidate"] == ctx.candidate and len(s["report"]["runs"]) == 3


def test_one_run_only(tmp_path: Path, nightly_runs: Path) -> None:
    import shutil

    shutil.copytree(nightly_runs / "nightly-2026-06-01", tmp_path / "only")
    c = report.load_context(tmp_path)
    assert c.pair is None
    assert "no second run" in report.gate(c).html()
    assert report.summary(c)["decision"] is None


def test_data_quality_shows_times_outside_their_trial(tmp_path: Path) -> None:
    import shutil

    from tests.conftest import FIXTURES

    shutil.copytree(FIXTURES / "harbor-edges" / "zones", tmp_path / "zones")
    html = report.data_quality(report.load_context(tmp_path / "zones")).html()
    assert "times out of window" in html
    assert "outside their own start..finish (1)" in html
    assert "2026-05-09 10:10 UTC" in html  # the stray exception time, shown as read
    # the job has no result.json (no recorded end): its state is shown
    assert "Jobs without a recorded end (1)" in html and "unknown" in html


def test_data_quality_names_checks_that_found_nothing_instead_of_zero_columns(
    ctx: report.Context,
) -> None:
    html = report.data_quality(ctx).html()
    note = html[html.index("No trial in any run has:") :].split("</p>")[0]
    assert "token/cost mismatches" in note and "incomplete" in note
    assert "<th>token/cost mismatches" not in html.replace('<th class="num">', "<th>")
    assert "Share of trials with each kind of evidence" in html


def test_data_quality_shows_zones_tokens_and_job_state_together(tmp_path: Path) -> None:
    """Issue 20 items 1, 5 and 8 in one load: each shows in the data-quality section."""
    import shutil

    from tests.conftest import FIXTURES

    edges = FIXTURES / "harbor-edges"
    for name in ("zones", "tokens-not-recorded", "copied-job"):
        shutil.copytree(edges / name, tmp_path / "runs" / name)
    html = report.data_quality(report.load_context(tmp_path / "runs")).html()
    # 1: a naive time no zone puts inside its trial; the job whose zone nothing pinned
    assert "outside their own start..finish (1)" in html
    assert (
        "read in this machine&#x27;s zone (1)" in html or "read in this machine's zone (1)" in html
    )
    # 5: the agent that ran and recorded 0 tokens
    assert "recorded 0 input and 0 output tokens although it ran (1)" in html
    # 8: the copied job and the job without result.json are not complete, and not running
    assert "Jobs without a recorded end (2)" in html
    table = html.split("Jobs without a recorded end")[1].split("</summary>")[1].split("</table>")[0]
    assert table.count(">unknown<") == 2 and "running" not in table


def test_unrecorded_tokens_are_unknown_in_summaries(tmp_path: Path) -> None:
    import shutil

    from evalkit.tables import jobs_table
    from tests.conftest import FIXTURES

    shutil.copytree(FIXTURES / "harbor-edges" / "tokens-not-recorded", tmp_path / "tok")
    ctx = report.load_context(tmp_path / "tok")
    html = report.data_quality(ctx).html()
    assert "tokens not recorded" in html and "counted as unknown tokens" in html
    t = ctx.runs.trials
    jt = jobs_table(ctx.runs.jobs, t.filter(pl.col("agent_name") != "oracle"))
    assert jt["n_input_tokens"].to_list() == [None]  # unknown, not 0
    assert jobs_table(ctx.runs.jobs, t)["n_input_tokens"].to_list() == [0]  # the oracle's 0
    from evalkit.report.overview import runs_frame

    tokens = dict(runs_frame(ctx).select("run", "tokens_in").iter_rows())
    assert {r.split("__")[0]: v for r, v in tokens.items()} == {"hermes-gateway": None, "oracle": 0}


def test_failure_section_shows_analysis_checks(tmp_path: Path) -> None:
    import shutil

    from tests.conftest import FIXTURES

    shutil.copytree(FIXTURES / "harbor-edges" / "analyzed", tmp_path / "an")
    html = report.taxonomy(report.load_context(tmp_path / "an")).html()
    assert "harbor analyze checks" in html and "Failed checks (1)" in html
    assert "to skip the failing case" in html
    assert "(1 here)" in html  # the trial without analysis.json is not counted as passing
    assert "harbor analyze: job summaries (1)" in html
    assert "1 of 2 analysed trials shows reward hacking." in html


@pytest.fixture(scope="module")
def hold_ctx(tmp_path_factory: pytest.TempPathFactory) -> report.Context:
    """Two nights where the candidate fixes 5 tasks and breaks none: the gate holds."""
    from tests.report.conftest import _gen_nightly

    out = tmp_path_factory.mktemp("hold-runs")
    _gen_nightly().generate(out, jobs=2, tasks=10, attempts=3, seed=2, traj_share=0.0)
    return report.load_context(out)


def test_gate_section_and_summary_carry_the_plan_on_hold(
    hold_ctx: report.Context, ctx: report.Context, tmp_path: Path
) -> None:
    html = report.gate(hold_ctx).html()
    assert 'id="evalkit-plan"' in html
    assert "evalkit run --plan summary.json" in html and "Assumes:" in html
    s = report.write_summary(hold_ctx, tmp_path / "s.json")
    p = s["plan"]
    assert s["gates"]["ship"]["verdict"].startswith("Hold")
    assert p["extra_attempts"] == sum(p["attempts_per_task"].values()) > 0
    assert set(p["tasks"]) <= {t for ts in s["buckets"].values() for t in ts}
    # a decided gate has no plan
    assert 'id="evalkit-plan"' not in report.gate(ctx).html()
    assert report.summary(ctx)["plan"] is None


def test_data_quality_shows_verifier_instability_of_regrades(tmp_path: Path) -> None:
    import shutil

    from tests.conftest import FIXTURES

    shutil.copytree(FIXTURES / "harbor-edges" / "regraded", tmp_path / "regraded")
    html = report.data_quality(report.load_context(tmp_path / "regraded")).html()
    assert "3 regrade trial(s): the verifier changed 1 of 2 rewards" in html
    assert "Tasks whose reward changed on regrade (1)" in html and "harbor/fix-parser" in html
    assert "without their source" not in html  # every regrade found its source
    shutil.copytree(tmp_path / "regraded", tmp_path / "alone")
    shutil.rmtree(tmp_path / "alone" / "2026-05-25__09-00-00")  # the source job is not loaded
    alone = report.data_quality(report.load_context(tmp_path / "alone")).html()
    assert "3 regrade trial(s) name a source trial that is not in this load" in alone
    assert "Regrades without their source (3)" in alone
    shutil.rmtree(tmp_path / "regraded" / "2026-05-25__11-00-00")
    plain = report.data_quality(report.load_context(tmp_path / "regraded")).html()
    assert "regrade" not in plain
