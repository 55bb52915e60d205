"""evalkit.report.overview builds the report sections about what was loaded: the header
(source, jobs, trial span, freshness, load errors, which runs are compared), the runs table
(one row per run: tasks, attempts, pass rate with CI, reward, pass@k, cost, tokens, time,
timeouts, error kinds) and data quality (evidence shares, problem counts, jobs without an
end or with missing trials).

Checked here: the freshness rule (36 h) and age text, the note on runs not detailed, every
column of ``runs_frame`` on a hand-made frame and on the bundled runs (runs/README.md), the
runs table's display columns, the quality frame and its split into tables, job problems,
load error notes, the compared-runs note, and zones nothing pinned.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any

import polars as pl
import pytest

from evalkit import report
from evalkit.report import overview as ov
from evalkit.report.context import Context
from tests.factories import ROOT
from tests.report.frames import BASE, CAND, SKILLS, T0, jobs_frame, trial, trials_frame


def _ctx(trials: pl.DataFrame, order: list[str], **kw: Any) -> Context:
    runs = SimpleNamespace(
        trials=trials,
        jobs=kw.pop("jobs", jobs_frame([{"job_id": "j", "job_name": "j", "state": "complete"}])),
        load_errors=kw.pop("load_errors", pl.DataFrame()),
    )
    kw = {"candidate": order[-1] if order else None, "baseline": None, **kw}
    return Context(runs=runs, source="src", run_by="label", order=order, choice="why", **kw)  # type: ignore[arg-type]


# --- freshness --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("hours", "text"),
    [(0.6, "0.6 hours"), (47.9, "47.9 hours"), (48.0, "2.0 days"), (84.0, "3.5 days")],
)
def test_age_is_hours_below_two_days_then_days(hours: float, text: str) -> None:
    assert ov._age(T0 + timedelta(hours=hours), T0) == text


def test_age_of_nothing_is_unknown() -> None:
    assert ov._age(T0, None) == "unknown"


def test_newest_trial_at_exactly_36_hours_is_still_fresh() -> None:
    t = trials_frame([trial("a", "x", 1.0)])  # finished T0 + 1 min
    done = T0 + timedelta(minutes=1)
    assert ov.stale_warning(_ctx(t, ["a"], generated_at=done + timedelta(hours=36))) is None
    late = _ctx(t, ["a"], generated_at=done + timedelta(hours=36, minutes=6))
    assert ov.stale_warning(late) == (
        "The newest trial finished 36.1 hours before this report: if this is a nightly "
        "report, check that the runs are still being produced."
    )


def test_freshness_uses_the_newest_trial_of_any_run() -> None:
    t = trials_frame(
        [
            trial("a", "x", 1.0, finished_at=T0 - timedelta(days=10)),
            trial("b", "x", 1.0, finished_at=T0),
        ]
    )
    assert ov.stale_warning(_ctx(t, ["a", "b"], generated_at=T0 + timedelta(hours=1))) is None


def test_no_finish_time_gives_no_stale_warning() -> None:
    t = trials_frame([trial("a", "x", 1.0, finished_at=None)])
    assert ov.stale_warning(_ctx(t, ["a"], generated_at=T0 + timedelta(days=9))) is None
    assert ov.stale_warning(_ctx(t.clear(), [], generated_at=T0)) is None


# --- runs not detailed ------------------------------------------------------------------


def test_left_out_note_names_three_runs_and_counts_the_rest() -> None:
    order = [f"r{i}" for i in range(1, 8)]
    every = trials_frame([trial(r, "x", 1.0) for r in order])
    detailed = SimpleNamespace(trials=every.filter(pl.col("run").is_in(["r6", "r7"])))
    ctx = _ctx(every, order, baseline="r6")
    ctx = replace(ctx, history=ctx.runs, runs=detailed)
    note = ov.left_out_note(ctx)
    assert note is not None
    assert note.startswith("2 of 7 runs are shown in detail (trajectories, anti-patterns, ")
    assert "The other 5 (r1, r2, r3 and 2 more) appear in the runs table" in note
    assert "`evalkit report nightly -p detail_runs 0`" in note


def test_left_out_note_is_none_when_every_run_is_detailed() -> None:
    t = trials_frame([trial("a", "x", 1.0)])
    assert ov.left_out_note(_ctx(t, ["a"])) is None


# --- runs_frame -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def small() -> pl.DataFrame:
    """Run ``a``: 4 trials on 2 tasks (3 + 1 attempts); ``c``: 2 tasks x 3 attempts;
    ``b``: one trial, not in the context's order."""
    return trials_frame(
        [
            trial("a", "x", 1.0, 0, duration_s=10.0, cost_usd=0.1, n_input_tokens=100),
            trial("a", "x", 0.0, 1, duration_s=20.0, n_input_tokens=5, outcome="timeout",
                   error_kind="agent", exception_type="AgentTimeoutError"),
            trial("a", "x", None, 2, duration_s=30.0, cost_usd=0.3, n_input_tokens=0,
                   n_output_tokens=0, tokens_not_recorded=True, outcome="no-reward",
                   error_kind="verifier"),
            trial("a", "y", 1.0, 0, duration_s=40.0, cost_usd=0.2, job_name="job-a2",
                   job_id="job-a2"),
            trial("c", "x", 1.0, 0, error_kind="infra"),
            trial("c", "x", 0.0, 1, error_kind="agent"),
            trial("c", "x", 0.0, 2, error_kind="agent"),
            *[trial("c", "y", 1.0, i, error_kind="verifier") for i in range(3)],
            trial("b", "x", 0.5, 0),
        ]
    )  # fmt: skip


@pytest.fixture(scope="module")
def small_frame(small: pl.DataFrame) -> pl.DataFrame:
    return ov.runs_frame(_ctx(small, ["c", "a"]))


def _row(f: pl.DataFrame, run: str) -> dict[str, Any]:
    return f.filter(pl.col("run") == run).to_dicts()[0]


def test_runs_frame_is_in_run_order_with_unknown_runs_last(small_frame: pl.DataFrame) -> None:
    assert small_frame["run"].to_list() == ["c", "a", "b"]


def test_runs_frame_counts_jobs_tasks_trials_and_attempts(small_frame: pl.DataFrame) -> None:
    a = _row(small_frame, "a")
    assert (a["jobs"], a["tasks"], a["trials"]) == (2, 2, 4)
    assert (a["k_min"], a["k_max"]) == (1, 3)  # y once, x three times


def test_runs_frame_rates_count_a_missing_reward_as_a_failure(small_frame: pl.DataFrame) -> None:
    a = _row(small_frame, "a")
    assert a["pass_rate"] == pytest.approx(2 / 4)  # pooled over trials (docs/statistics.md)
    assert a["mean_reward"] == pytest.approx((1 + 0 + 0 + 1) / 4)
    assert a["ci_low"] <= a["pass_rate"] <= a["ci_high"]
    assert _row(small_frame, "b")["mean_reward"] == 0.5


def test_runs_frame_sums_only_known_cost_and_measured_tokens(small_frame: pl.DataFrame) -> None:
    a = _row(small_frame, "a")
    assert a["cost"] == pytest.approx(0.1 + 0.3 + 0.2)  # the unpriced trial is not $0 ...
    assert a["priced"] == 3  # ... and is not counted as priced
    assert a["tokens_in"] == 100 + 5  # the 0 of an agent that recorded no tokens is unknown
    assert a["tokens_out"] is None  # no trial has a known output count
    assert _row(small_frame, "c")["cost"] is None  # unknown, never 0


def test_runs_frame_median_time_timeouts_and_error_kinds(small_frame: pl.DataFrame) -> None:
    a, c = _row(small_frame, "a"), _row(small_frame, "c")
    assert a["median_duration"] == 25.0  # median of 10, 20, 30, 40
    assert a["timeouts"] == 1 and c["timeouts"] == 0
    assert a["errors"] == "agent 1, verifier 1"  # count, then name
    assert c["errors"] == "verifier 3, agent 2, infra 1"
    assert _row(small_frame, "b")["errors"] is None


def test_runs_frame_pass_at_k_uses_the_attempts_every_task_has(small_frame: pl.DataFrame) -> None:
    c = _row(small_frame, "c")
    assert (c["k"], c["k_tasks"]) == (3, 2)
    # x: n=3, c=1: pass@3 = 1 - C(2,3)/C(3,3) = 1, pass^3 = C(1,3)/C(3,3) = 0
    # y: n=3, c=3: pass@3 = 1, pass^3 = 1
    assert c["pass_at_k"] == pytest.approx((1 + 1) / 2)
    assert c["pass_hat_k"] == pytest.approx((0 + 1) / 2)


def test_runs_frame_interval_follows_the_confidence_parameter(small: pl.DataFrame) -> None:
    def width(conf: float) -> float:
        f = ov.runs_frame(_ctx(small, ["c", "a"], params={"confidence": conf}))
        r = _row(f, "c")
        return r["ci_high"] - r["ci_low"]

    assert width(0.5) < width(0.95)


@pytest.fixture(scope="module")
def bundled() -> Context:
    ctx = report.load_context(ROOT / "runs")
    # runs/README.md: the newest trial finished 2026-11-30 07:40 UTC; half a day later
    return replace(ctx, generated_at=datetime(2026, 11, 30, 19, 40, tzinfo=UTC))


def test_runs_frame_of_the_bundled_runs_matches_their_readme(bundled: Context) -> None:
    f = ov.runs_frame(bundled)
    got = f.select("run", "tasks", "trials", "k_min", "k_max", "timeouts").rows()
    assert got == [
        (SKILLS, 5, 17, 1, 5, 1),  # 3 tasks x 5 attempts + 2 tasks x 1; one AgentTimeoutError
        (BASE, 12, 60, 5, 5, 2),  # 37/60 passed, 2 timeouts
        (CAND, 12, 60, 5, 5, 3),  # 45/60 passed, 3 timeouts
    ]
    rates = dict(f.select("run", "pass_rate").iter_rows())
    assert rates[BASE] == pytest.approx(37 / 60) and rates[CAND] == pytest.approx(45 / 60)
    assert f.filter(pl.col("run") == SKILLS)["cost"].to_list() == [None]  # cost_usd is null


# --- runs table -------------------------------------------------------------------------


def test_display_columns_show_attempts_cost_tokens_and_ci_as_text() -> None:
    f = pl.DataFrame(
        {
            "k_min": [3, 2, 1, 1],
            "k_max": [3, 5, 1, 1],
            "cost": [0.6, 2.5, None, None],
            "priced": [3, 4, 0, 0],
            "trials": [4, 4, 1, 1],
            "tokens_in": [105, 25_000, None, 105],
            "tokens_out": [9_999, 2_000_000, None, None],
            "ci_low": [0.025, 0.5, 0.0, 0.0],
            "ci_high": [0.975, 0.8123, 1.0, 1.0],
        }
    )
    d = ov._runs_display_columns(f)
    assert d["attempts per task"].to_list() == ["3", "2–5", "1", "1"]
    assert d["cost"].to_list() == ["$0.6000 (3 of 4 priced)", "$2.50", "–", "–"]
    # neither known: null (shown as "–"); one known: it stays, the other reads "–"
    assert d["tokens in / out"].to_list() == ["105 / 9,999", "25k / 2.0M", None, "105 / –"]
    assert d["ci"].to_list() == ["2.5–97.5", "50.0–81.2", "0.0–100.0", "0.0–100.0"]


def test_methods_name_each_runs_interval_when_they_differ() -> None:
    same = pl.DataFrame({"run": ["a", "b"], "ci_method": ["wilson", "wilson"]})
    assert ov._methods(same) == "wilson"
    mixed = pl.DataFrame({"run": ["a", "b", "c"], "ci_method": ["wilson", None, "mid-p"]})
    assert ov._methods(mixed) == "a: wilson; c: mid-p"
    none = pl.DataFrame(
        {"run": ["a"], "ci_method": [None]}, schema_overrides={"ci_method": pl.String}
    )
    assert ov._methods(none) == "–"


def test_runs_table_names_k_per_run_when_runs_differ(small: pl.DataFrame) -> None:
    html = ov.runs_table(_ctx(small, ["c", "a"])).html()
    # a: most attempts 3; b: 1; c: 3 -> two values of k, so a column k and a generic header
    assert "<th>pass@k</th>" in html.replace('<th class="num">', "<th>")
    assert "k = each run&#x27;s most attempts on a task (column k)" in html


def test_runs_table_with_one_k_puts_it_in_the_header(small: pl.DataFrame) -> None:
    html = ov.runs_table(_ctx(small.filter(pl.col("run") == "c"), ["c"])).html()
    assert "pass@3</th>" in html and "pass^3</th>" in html and "k = 3," in html


def test_runs_table_without_trials_says_so(small: pl.DataFrame) -> None:
    assert ov.runs_table(_ctx(small.clear(), [])).html() == (
        '<div class="ek"><div class="ek-warn">No trials were found.</div></div>'
    )


def test_runs_table_narrowed_to_the_pair_drops_other_runs(small: pl.DataFrame) -> None:
    html = ov.runs_table(_ctx(small, ["b", "c", "a"], baseline="c"), only_pair=True).html()
    assert ">a</td>" in html and ">c</td>" in html and ">b</td>" not in html


# --- data quality -----------------------------------------------------------------------


def test_quality_frame_shares_and_counts_per_run(small: pl.DataFrame) -> None:
    t = small.with_columns(
        has_trajectory=pl.col("trial_id").is_in(["a/x/0", "a/x/1", "c/x/0"]),
        metrics_mismatch=pl.when(pl.col("trial_id") == "a/y/0").then(pl.lit("steps 3 != 4")),
        timestamp_out_of_window=pl.col("trial_id") == "c/y/2",
    )
    q = ov._quality_frame(t, ["c", "a"])
    assert q["run"].to_list() == ["c", "a", "b"]
    a = q.filter(pl.col("run") == "a").to_dicts()[0]
    assert a["trials"] == 4 and a["trajectory"] == pytest.approx(2 / 4)
    assert a["token/cost mismatches"] == 1
    assert a["cost unknown"] == 1  # the one trial without cost_usd
    assert a["tokens unknown"] == 2  # no count on a/y/0; a 0 not recorded on a/x/2
    assert a["tokens not recorded"] == 1 and a["no reward"] == 1 and a["incomplete"] == 0
    c = q.filter(pl.col("run") == "c").to_dicts()[0]
    assert c["trajectory"] == pytest.approx(1 / 6) and c["times out of window"] == 1
    assert c["evidence complete"] == 0.0  # null evidence flags count as missing


def test_quality_tables_list_only_the_checks_that_found_something() -> None:
    q = pl.DataFrame(
        {
            "run": ["a", "b"],
            "trials": [2, 3],
            **{k: [1.0, 0.5] for k in ov._EVIDENCE_SHARES},
            "cost unknown": [0, 2],
            "incomplete": [0, 0],
            "no reward": [None, 0],
        }
    )
    html = "".join(ov._quality_tables(q))
    problems = html.split("Trials with a problem:")[1]
    assert "cost unknown</th>" in problems and "incomplete</th>" not in problems
    assert "No trial in any run has: incomplete, no reward." in html


def test_data_quality_lists_incomplete_and_unrewarded_trials(small: pl.DataFrame) -> None:
    t = small.with_columns(
        outcome=pl.when(pl.col("trial_id") == "c/x/1")
        .then(pl.lit("incomplete"))
        .otherwise("outcome")
    )
    html = ov.data_quality(_ctx(t, ["c", "a"])).html()
    assert "Incomplete or unrewarded trials (2)" in html  # a/x/2 no-reward, c/x/1 incomplete


def test_job_problems_list_jobs_without_an_end_and_short_jobs() -> None:
    jobs = jobs_frame(
        [
            {"job_name": "done", "state": "complete", "n_trials_declared": 4, "n_trials_found": 4},
            {"job_name": "live", "state": "running", "n_trials_declared": 9, "n_trials_found": 2},
            {"job_name": "copy", "state": "complete", "n_trials_declared": 425,
             "n_trials_found": 17},
            {"job_name": "legacy", "state": "complete", "n_trials_found": 3},
        ]
    )  # fmt: skip
    html = "".join(ov._job_problems(jobs))
    ended = html.split("Jobs without a recorded end (1)")[1].split("</details>")[0]
    assert ">live<" in ended and ">done<" not in ended
    short = html.split("2 job(s) declare a different number of trials than found on disk")[1]
    assert ">live<" in short and ">copy<" in short and ">legacy<" not in short  # none declared
    assert ">425<" in short and ">17<" in short


def test_job_problems_of_healthy_jobs_are_nothing() -> None:
    jobs = jobs_frame([{"job_name": "ok", "state": "complete", "n_trials_declared": 1,
                   "n_trials_found": 1}])  # fmt: skip
    assert ov._job_problems(jobs) == []


def test_unpinned_zones_lists_only_jobs_with_naive_trials() -> None:
    jobs = jobs_frame(
        [
            {"job_id": "j1", "job_name": "naive-job", "naive_tz": "local (could not infer)"},
            {"job_id": "j2", "job_name": "aware-job", "naive_tz": "local (could not infer)"},
            {"job_id": "j3", "job_name": "pinned-job", "naive_tz": "+08:00 (inferred)"},
        ]
    )
    t = trials_frame(
        [
            trial("a", "x", 1.0, 0, job_id="j1", naive_timestamps=True),
            trial("a", "x", 1.0, 1, job_id="j2", naive_timestamps=False),
            trial("a", "x", 1.0, 2, job_id="j3", naive_timestamps=True),
        ]
    )
    html = ov.unpinned_zones(jobs, t).html()
    assert "Jobs whose naive times were read in this machine&#x27;s zone (1)" in html
    assert "naive-job" in html and "aware-job" not in html and "pinned-job" not in html


def test_regrade_notes_are_empty_without_regrades(small: pl.DataFrame) -> None:
    assert ov.regrade_notes(small) == []
    assert ov.regrade_notes(small.drop("regrade_of")) == []


# --- header -----------------------------------------------------------------------------


def test_load_error_notes_count_by_level_and_type() -> None:
    errs = pl.DataFrame(
        {
            "path": ["p1", "p2", "p3"],
            "level": ["trial", "trial", "trajectory"],
            "error_type": ["JSONDecodeError", "JSONDecodeError", "ValidationError"],
            "message": ["bad json 1", "bad json 2", "missing steps"],
        }
    )
    html = ov._load_error_notes(errs).html()
    assert "3 load error(s): files that are missing or could not be read fully." in html
    counts = html.split("</thead>")[1].split("</table>")[0]
    # JSONDecodeError first (2), with the first message as its example
    assert counts.index("JSONDecodeError") < counts.index("ValidationError")
    assert ">2<" in counts and "bad json 1" in counts and "bad json 2" not in counts
    assert "Every load error" in html and "bad json 2" in html


def test_no_load_errors_is_said_plainly() -> None:
    empty = pl.DataFrame(schema=["path", "level", "error_type", "message"])
    assert "No load errors: every file found was read." in ov._load_error_notes(empty).html()


def test_compared_runs_note_names_the_pair_or_the_one_run() -> None:
    t = trials_frame([trial("a", "x", 1.0)])
    both = ov._compared_runs_note(_ctx(t, ["a", "b"], candidate="b", baseline="a")).html()
    assert "Compared below: A (baseline) = a; B (candidate) = b." in both
    assert "Why these two: why." in both
    one = ov._compared_runs_note(_ctx(t, ["a"], candidate="a")).html()
    assert "Only one run to look at (a): the comparison sections are empty. (why.)" in one
    assert ov._compared_runs_note(_ctx(t, [], candidate=None)) == []


def test_header_of_the_bundled_runs(bundled: Context) -> None:
    html = ov.header(bundled).html()
    assert "<td>jobs</td><td>3 (3 complete)</td>" in html
    assert "<td>trials</td><td>137 in 3 run(s), 17 tasks</td>" in html  # 17+60+60; 5+12
    assert "<td>runs are</td><td>evalkit run labels (agent, model, dataset)</td>" in html
    assert "(12.0 hours before this report)" in html
    assert "ek-warn" not in html  # fresh, and no load errors
    assert "<details open><summary>Jobs (3)</summary>" in html


def test_header_warns_when_the_newest_trial_is_old(bundled: Context) -> None:
    old = replace(bundled, generated_at=datetime(2026, 12, 3, 7, 40, tzinfo=UTC))
    assert "The newest trial finished 3.0 days before this report" in ov.header(old).html()


def test_data_quality_of_the_bundled_runs_flags_the_partial_copy(bundled: Context) -> None:
    html = ov.data_quality(bundled).html()
    # runs/README.md: the skillsbench job declares 425 trials, 17 are on disk
    assert "1 job(s) declare a different number of trials than found on disk" in html
    assert "Jobs without a recorded end" not in html
