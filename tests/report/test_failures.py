"""evalkit.report.failures builds the report sections on how trials fail: the per-task
heatmap (capped at HEATMAP_TASKS, keeping the tasks whose pass rate differs most between
runs), the failure taxonomy (exceptions per kind and type, timeouts, `harbor analyze`
checks, anti-pattern rates and their paired change A -> B) and cost and efficiency (cost
vs pass rate, cost / tokens / compute per pass).

Checked here: the task ranking of ``informative_tasks`` and the heatmap's empty and capped
cases, ``exceptions_table``, the timeouts table, analysis checks and job analyses on
hand-made frames, the anti-pattern section's fallbacks and its change table on the bundled
runs, ``_per_pass`` and the cost chart's fallbacks.
"""

from __future__ import annotations

import warnings
from typing import Any

import polars as pl
import pytest

from evalkit import report
from evalkit.load._columns import empty
from evalkit.load.findings.columns import COLUMNS as FINDING_COLUMNS
from evalkit.report import failures as fl
from evalkit.report.context import Context
from tests.factories import ROOT
from tests.report.frames import BASE, CAND, SKILLS, jobs_frame, trial, trials_frame


def _ctx(trials: pl.DataFrame, order: list[str], findings: Any = None, **kw: Any) -> Context:
    class _Runs:
        def __init__(self) -> None:
            self.trials = trials
            self.jobs = kw.pop("jobs", jobs_frame([{"job_id": "none", "job_name": "none"}]))
            self.load_errors = pl.DataFrame()

        @property
        def findings(self) -> pl.DataFrame:
            if isinstance(findings, Exception):
                raise findings
            return empty(FINDING_COLUMNS) if findings is None else findings

    kw = {"candidate": order[-1] if order else None, "baseline": None, **kw}
    return Context(runs=_Runs(), source="s", run_by="label", order=order, choice="", **kw)  # type: ignore[arg-type]


def _rates(**tasks: list[float]) -> pl.DataFrame:
    """One trial per (run, task): ``tasks[name][i]`` is the reward in run r{i+1}."""
    return pl.DataFrame(
        [(f"r{i + 1}", t, float(v)) for t, vs in tasks.items() for i, v in enumerate(vs)],
        schema=["run", "task_name", "reward"],
        orient="row",
    )


# --- heatmap ----------------------------------------------------------------------------


def test_informative_tasks_rank_by_spread_across_runs_then_name() -> None:
    # per-run pass rates (a reward of 0.5 is not a pass): wide, a_same, b_same [0, 1] have
    # std (ddof 0) 0.5 and tie, so go by name; flat [1, 1] has 0 and comes last
    t = _rates(flat=[1, 1], wide=[0.5, 1], b_same=[0, 1], a_same=[0, 1])
    assert fl.informative_tasks(t, 4, ("r1", "r2")) == ["a_same", "b_same", "wide", "flat"]
    assert fl.informative_tasks(t, 2, ("r1", "r2")) == ["a_same", "b_same"]


def test_informative_tasks_break_a_spread_tie_by_the_change_between_the_pair() -> None:
    # both tasks: pass rates {1, 0, 0} over three runs (same spread); only "late" changed
    # between the compared pair (r2 -> r3)
    t = _rates(early=[1, 0, 0], late=[0, 0, 1])
    assert fl.informative_tasks(t, 1, ("r2", "r3")) == ["late"]
    assert fl.informative_tasks(t, 2, ("r2", "r3")) == ["late", "early"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no pair is no comparison with None
        assert fl.informative_tasks(t, 1, None) == ["early"]  # no pair: by name


def test_equal_spreads_tie_whatever_the_order_of_the_runs() -> None:
    # rates [1, 0, 0, 0] and [0, 0, 0, 1] have the same spread (std 0.4330...), though the
    # floating-point sums differ in the last bit; the tie goes to the change r3 -> r4
    t = _rates(early=[1, 0, 0, 0], late=[0, 0, 0, 1])
    assert fl.informative_tasks(t, 1, ("r3", "r4")) == ["late"]


def test_informative_tasks_pool_the_attempts_of_a_run() -> None:
    # r1 passes 1 of 2 attempts of "half" (rate 0.5), r2 both: spread 0.25; "full" 0 -> 1: 0.5
    t = pl.DataFrame(
        {
            "run": ["r1", "r1", "r2", "r2", "r1", "r2"],
            "task_name": ["half", "half", "half", "half", "full", "full"],
            "reward": [1.0, 0.0, 1.0, 1.0, 0.0, 1.0],
        }
    )
    assert fl.informative_tasks(t, 2, ("r1", "r2")) == ["full", "half"]


def test_heatmap_without_trials_says_so() -> None:
    t = trials_frame([trial("a", "x", 1.0)]).clear()
    assert (
        fl.heatmap(_ctx(t, [])).html()
        == '<div class="ek"><div class="ek-warn">No trials.</div></div>'
    )


def test_heatmap_counts_a_missing_task_name_as_one_task(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fl, "HEATMAP_TASKS", 2)
    rows = [trial("a", None, 1.0, 0), trial("a", None, 0.0, 1), trial("a", "x", 1.0),
            trial("a", "y", 0.0)]  # fmt: skip
    parts = fl.heatmap(_ctx(trials_frame(rows), ["a"]))
    assert "2 of 3 tasks" in parts.html() and "The other 1 are left out" in parts.html()
    small = fl.heatmap(_ctx(trials_frame(rows[1:]), ["a"]))  # still 3 tasks
    assert "2 of 3 tasks" in small.html()
    few = fl.heatmap(_ctx(trials_frame(rows[2:]), ["a"]))  # 2 tasks: drawn whole, no note
    assert len(few) == 1 and len(few.charts()) == 1


def test_the_capped_heatmap_draws_the_unknown_task_it_counts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # two runs; the unknown task and x change (0 -> 1), y passes in both: keep unknown and x
    monkeypatch.setattr(fl, "HEATMAP_TASKS", 2)
    rows = [trial("r1", None, 0.0), trial("r2", None, 1.0), trial("r1", "x", 0.0),
            trial("r2", "x", 1.0), trial("r1", "y", 1.0), trial("r2", "y", 1.0)]  # fmt: skip
    (chart, note) = fl.heatmap(_ctx(trials_frame(rows), ["r1", "r2"]))
    assert "2 of 3 tasks" in note
    drawn = {v["task_name"] for v in chart.to_dict()["data"]["values"]}
    assert drawn == {"(unknown task)", "x"}


# --- exceptions and timeouts ------------------------------------------------------------


@pytest.fixture(scope="module")
def failing() -> pl.DataFrame:
    return trials_frame(
        [
            trial("a", "x", 1.0, 0, exception_type="AgentTimeoutError", error_kind="agent",
                   exception_message=None),
            trial("a", "y", 0.0, 0, exception_type="ValueError", error_kind="verifier",
                   exception_message="v" * 200 + "\nsecond line"),
            trial("b", "x", 0.0, 0, exception_type="AgentTimeoutError", error_kind="agent",
                   outcome="timeout", exception_message="Agent timed out\nafter 30 s"),
            trial("b", "y", 0.0, 0, exception_type="AgentTimeoutError", error_kind="agent",
                   outcome="timeout", exception_message="second message"),
            trial("b", "z", 0.0, 0, exception_type="VerifierTimeoutError",
                   error_kind="verifier", outcome="timeout"),
            trial("b", "w", 1.0, 0),
            trial("c", "x", 0.0, 0, exception_type="ValueError", error_kind="verifier"),
        ]
    )  # fmt: skip


def test_exceptions_table_counts_a_b_all_runs_and_tasks(failing: pl.DataFrame) -> None:
    ex = fl.exceptions_table(failing, ("a", "b"))
    assert ex.columns == ["kind", "exception", "A", "B", "all runs", "tasks", "example message"]
    rows = {r[1]: r for r in ex.rows()}
    # AgentTimeoutError: a/x, b/x, b/y -> A 1, B 2, 3 in all, tasks x and y
    assert rows["AgentTimeoutError"][:6] == ("agent", "AgentTimeoutError", 1, 2, 3, 2)
    # ValueError: a/y and c/x (c is neither A nor B)
    assert rows["ValueError"][:6] == ("verifier", "ValueError", 1, 0, 2, 2)
    assert rows["VerifierTimeoutError"][2:6] == (0, 1, 1, 1)
    assert ex["exception"].to_list() == ["AgentTimeoutError", "ValueError", "VerifierTimeoutError"]


def test_exceptions_table_example_is_the_first_known_message_cut_to_one_line(
    failing: pl.DataFrame,
) -> None:
    ex = fl.exceptions_table(failing, None)
    assert "A" not in ex.columns and "B" not in ex.columns  # no pair: all runs only
    msgs = dict(ex.select("exception", "example message").iter_rows())
    assert msgs["AgentTimeoutError"] == "Agent timed out"  # a/x has no message
    assert msgs["ValueError"] == "v" * 120  # first line, at most 120 characters
    assert msgs["VerifierTimeoutError"] is None


def test_exceptions_table_without_exceptions_is_empty() -> None:
    assert fl.exceptions_table(trials_frame([trial("a", "x", 1.0)]), ("a", "b")).height == 0


def test_timeouts_table_counts_timeouts_and_passes_despite_one(failing: pl.DataFrame) -> None:
    html = fl.taxonomy(_ctx(failing, ["a", "b", "c"], baseline="a", candidate="b")).html()
    table = html.split("<h4>Timeouts</h4>")[1].split("</table>")[0]
    rows = [r.split("</td>") for r in table.split("<tr>")[2:]]
    cells = [[c.rsplit(">", 1)[-1] for c in r[:-1]] for r in rows]
    # run, trials, timeouts, timeout exceptions, passed despite a timeout, timeout rate
    assert cells == [
        ["a", "2", "0", "1", "1", "0.0%"],  # a/x: AgentTimeoutError, reward 1
        ["b", "4", "3", "3", "0", "75.0%"],  # 3 of 4 timed out
        ["c", "1", "0", "0", "0", "0.0%"],
    ]


def test_a_broken_detector_is_reported_not_raised(failing: pl.DataFrame) -> None:
    ctx = _ctx(failing, ["a", "b"], findings=RuntimeError("detector broke"))
    html = fl.taxonomy(ctx).html()
    assert "Anti-pattern detection failed: RuntimeError: detector broke" in html
    assert "<h4>Timeouts</h4>" in html  # the rest of the section is still there


# --- harbor analyze ---------------------------------------------------------------------


def _check(name: str, verdict: str, why: str = "") -> dict[str, str]:
    return {"name": name, "verdict": verdict, "explanation": why}


def test_analysis_checks_count_verdicts_per_run_and_list_failures() -> None:
    t = trials_frame(
        [
            trial("a", "x", 1.0, 0, analysis_checks=[_check("hack", "pass"),
                                                       _check("spec", "fail", "ignored spec")]),
            trial("a", "x", 0.0, 1, analysis_checks=[_check("hack", "not_applicable")]),
            trial("b", "x", 0.0, 0, analysis_checks=[_check("hack", "fail", "edited tests")]),
            trial("b", "y", 0.0, 0),
        ]
    )  # fmt: skip
    html = fl.analysis_checks(t).html()
    body = html.split("</thead>")[1].split("</table>")[0]
    rows = [[c.rsplit(">", 1)[-1] for c in r.split("</td>")[:-1]] for r in body.split("<tr>")[1:]]
    # run, check, fail, pass, not applicable
    assert rows == [["a", "hack", "0", "1", "1"], ["a", "spec", "1", "0", "0"],
                    ["b", "hack", "1", "0", "0"]]  # fmt: skip
    assert "were not analysed (1 here)" in html  # b/y
    assert "Failed checks (2)" in html and "ignored spec" in html and "edited tests" in html


def test_analysis_checks_without_any_analysis_are_nothing() -> None:
    assert fl.analysis_checks(trials_frame([trial("a", "x", 1.0)])) == []


def test_job_analyses_show_summaries_and_failed_checks_of_analysed_jobs() -> None:
    jobs = jobs_frame(
        [
            {"job_name": "seen", "analysis_summary": "mostly fine",
             "analysis_checks": [_check("hack", "fail"), _check("spec", "pass")]},
            {"job_name": "unseen"},
        ]
    )  # fmt: skip
    html = fl.job_analyses(jobs).html()
    assert "harbor analyze: job summaries (1)" in html
    assert "mostly fine" in html and ">hack<" in html and "unseen" not in html
    assert fl.job_analyses(jobs.filter(pl.col("job_name") == "unseen")) == []
    assert fl.job_analyses(jobs.drop("analysis_summary")) == []


# --- anti-patterns ----------------------------------------------------------------------


def test_antipatterns_without_trajectories_cannot_be_looked_for() -> None:
    t = trials_frame([trial("a", "x", 1.0, has_trajectory=False), trial("b", "x", 1.0)])
    html = fl.antipatterns(_ctx(t, ["a", "b"])).html()
    assert "No trial has a trajectory: anti-patterns cannot be looked for." in html


def test_antipatterns_with_trajectories_and_no_finding_say_none_fired() -> None:
    t = trials_frame([trial("a", "x", 1.0, has_trajectory=True)])
    html = fl.antipatterns(_ctx(t, ["a"])).html()
    assert "No detector fired on any trial with a trajectory." in html


@pytest.fixture(scope="module")
def bundled() -> Context:
    return report.load_context(ROOT / "runs")


def test_antipattern_change_pairs_the_twelve_shared_tasks(bundled: Context) -> None:
    html = fl.antipatterns(bundled).html()
    change = html.split("Change from A (baseline) to B (candidate)")[1].split("</table>")[0]
    rows = change.split("</thead>")[1].split("<tr>")[1:]
    detectors = {r.split("</td>")[0].rsplit(">", 1)[-1] for r in rows}
    assert detectors == set(bundled.runs.findings["detector"].unique().to_list())
    # runs/README.md: both scripted runs ran the same 12 smoke tasks
    assert all(r.split("</td>")[1].endswith(">12") for r in rows)
    assert "95% CI of B − A (pts)" in change
    assert "Paired over the tasks both runs ran" in html


def test_antipatterns_of_one_run_have_no_change_table() -> None:
    one = report.load_context(ROOT / "runs" / "scripted-baseline")
    html = fl.antipatterns(one).html()
    assert "<!-- chart: Anti-pattern rates -->" in html
    assert "Change from A" not in html


# --- cost and efficiency ----------------------------------------------------------------


def test_per_pass_divides_by_passes_and_needs_every_cost() -> None:
    t = trials_frame(
        [
            trial("a", "x", 1.0, 0, cost_usd=0.3, duration_s=10.0, n_input_tokens=100),
            trial("a", "x", 1.0, 1, cost_usd=0.1, duration_s=20.0, n_input_tokens=300),
            trial("a", "y", 0.5, 0, cost_usd=0.2, duration_s=30.0, n_input_tokens=0,
                   tokens_not_recorded=True),
            trial("b", "x", 1.0, 0, cost_usd=0.4, duration_s=5.0),
            trial("b", "y", 0.0, 0, duration_s=7.0),
            trial("z", "x", 0.0, 0, cost_usd=0.9, duration_s=1.0),
        ]
    )  # fmt: skip
    e = {r["run"]: r for r in fl._per_pass(t, ["b", "a"]).to_dicts()}
    assert list(e) == ["b", "a", "z"]  # run order, unknown runs last
    a, b, z = e["a"], e["b"], e["z"]
    assert a["passes"] == 2  # a reward of 0.5 is not a pass
    assert a["cost"] == pytest.approx(0.6) and a["cost per pass"] == pytest.approx(0.6 / 2)
    assert a["tokens_in"] == 400 and a["input tokens per pass"] == pytest.approx(400 / 2)
    assert a["compute"] == 60.0 and a["compute per pass"] == pytest.approx(30.0)
    assert b["cost"] == pytest.approx(0.4) and b["cost per pass"] is None  # b/y unpriced
    assert b["compute per pass"] == pytest.approx(12.0)
    assert z["passes"] == 0 and z["cost per pass"] is None and z["compute per pass"] is None


def test_cost_chart_uses_tokens_when_no_trial_has_a_cost() -> None:
    t = trials_frame([trial("a", "x", 1.0, n_input_tokens=10), trial("b", "x", 0.0)])
    parts = fl._cost_vs_pass(t, ["a", "b"])
    assert "No trial recorded a cost" in parts[0] and "never counted as $0" in parts[0]
    assert parts[1].title.text == "Input tokens vs pass rate"


def test_cost_efficiency_names_the_unpriced_run_and_uses_recorded_cost(bundled: Context) -> None:
    html = fl.cost_efficiency(bundled).html()
    # runs/README.md: cost_usd is null for every skillsbench trial
    assert f"Not in the chart (no trial has a cost): {SKILLS}." in html
    assert "No trial recorded a cost" not in html
    e = fl._per_pass(bundled.trials, bundled.order)
    assert e["run"].to_list() == bundled.order
    passes = dict(e.select("run", "passes").iter_rows())
    assert (passes[BASE], passes[CAND]) == (37, 45)  # runs/README.md
    per = dict(e.select("run", "cost per pass").iter_rows())
    assert per[SKILLS] is None


def test_cost_efficiency_without_turns_says_they_are_unknown() -> None:
    t = trials_frame([trial("a", "x", 1.0, cost_usd=0.1, duration_s=3.0)])
    html = fl.cost_efficiency(_ctx(t, ["a"])).html()
    assert "No trajectories: turns per trial are unknown." in html
