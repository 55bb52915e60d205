"""evalkit.report.context decides what a report is about: the runs loaded, their order
(oldest first by latest trial start), which two are compared (candidate: the newest run;
baseline: the most recent earlier run over the same tasks, else sharing the most), the runs
shown in detail, and the ``runs`` parameter of user-named labels.

Checked here: ``named_runs`` validation, ``pick_baseline`` beyond the
same-tasks case of test_sections.py, ``_pair_from_labels``, ``detail_runs`` as a property,
the ``Context`` views (detail / left_out / all_trials / trials / load_errors / narrow /
pair) on hand-made frames, and ``load_context`` on the bundled runs/ (prefixes, a job named
in auto mode, run_by, the notes saying why each run was picked).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace

import polars as pl
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from evalkit import report
from evalkit.report.context import (
    Context,
    _pair_from_labels,
    detail_runs,
    named_runs,
    pick_baseline,
)
from tests.factories import ROOT

RUNS = ROOT / "runs"
BASE = "evalkit-scripted__baseline__smoke-tasks"
CAND = "evalkit-scripted__candidate__smoke-tasks"
SKILLS = "claude-code__MiniMax-M2.1__tasks-no-skills"


def _at(hour: int) -> datetime:
    return datetime(2026, 1, 1, hour, tzinfo=UTC)


# --- named_runs -------------------------------------------------------------------------


def test_named_runs_without_a_value_is_none() -> None:
    assert named_runs(None) is None
    assert named_runs("") is None


def test_named_runs_reads_json_text_and_resolves_every_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("a", "b1", "b2"):
        (tmp_path / name).mkdir()
    text = json.dumps({"base": str(tmp_path / "a"), "cand": [str(tmp_path / "b1"), "b2"]})
    monkeypatch.chdir(tmp_path)  # "b2" is relative: resolved against the working folder
    got = named_runs(text)
    assert got == {
        "base": [str((tmp_path / "a").resolve())],
        "cand": [str((tmp_path / "b1").resolve()), str((tmp_path / "b2").resolve())],
    }
    assert list(got) == ["base", "cand"]  # the order given is kept (first = baseline)


def test_named_runs_turns_labels_into_text(tmp_path: Path) -> None:
    assert named_runs({7: str(tmp_path)}) == {"7": [str(tmp_path.resolve())]}


def test_named_runs_rejects_text_that_is_not_json() -> None:
    with pytest.raises(ValueError, match="runs must be JSON like"):
        named_runs("{baseline: path}")


@pytest.mark.parametrize("value", [{}, "{}", "[]", '"a path"', "3"])
def test_named_runs_rejects_what_is_not_a_non_empty_mapping(value: object) -> None:
    with pytest.raises(ValueError, match="must map run labels to paths"):
        named_runs(value)  # type: ignore[arg-type]


@pytest.mark.parametrize("paths", [[], [""], [3], ["ok", None], 5])
def test_named_runs_rejects_a_label_without_usable_paths(paths: object, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"runs\['x'\] must be a path or a list of paths"):
        named_runs({"x": paths})  # type: ignore[dict-item]


def test_named_runs_names_every_missing_path_of_a_label(tmp_path: Path) -> None:
    (tmp_path / "here").mkdir()
    gone1, gone2 = str(tmp_path / "gone1"), str(tmp_path / "gone2")
    with pytest.raises(FileNotFoundError) as e:
        named_runs({"x": [str(tmp_path / "here"), gone1, gone2]})
    assert str(e.value) == f"runs['x']: no such path: {gone1}, {gone2}"


# --- pick_baseline ----------------------------------------------------------------------


def _tasks(**runs: str) -> pl.DataFrame:
    rows = [(r, t) for r, ts in runs.items() for t in ts]
    return pl.DataFrame(rows, schema=["run", "task_name"], orient="row")


def test_baseline_over_the_same_tasks_is_the_most_recent_earlier_one() -> None:
    t = _tasks(r1="ab", r2="ab", r3="a", cand="ab")
    base, why = pick_baseline(t, ["r1", "r2", "r3", "cand"], "cand")
    assert base == "r2"  # r3 is newer but misses task b
    assert why == "the most recent earlier run over the same 2 tasks"


def test_baseline_tie_on_shared_tasks_goes_to_the_most_recent() -> None:
    t = _tasks(r1="ax", r2="bx", cand="ab")  # each shares 1 of 2 tasks with cand
    base, why = pick_baseline(t, ["r1", "r2", "cand"], "cand")
    assert base == "r2"
    assert why == "the earlier run sharing the most tasks with it (1 of 2)"


def test_an_earlier_run_is_preferred_to_a_later_one_with_the_same_tasks() -> None:
    t = _tasks(early="a", cand="ab", late="ab")
    base, why = pick_baseline(t, ["early", "cand", "late"], "cand")
    assert base == "early" and "earlier run sharing the most tasks" in why


def test_the_oldest_run_is_compared_with_a_later_one() -> None:
    t = _tasks(cand="ab", mid="a", late="ab")
    base, why = pick_baseline(t, ["cand", "mid", "late"], "cand")
    assert base == "late" and why == "the most recent other run over the same 2 tasks"


def test_no_shared_task_gives_no_baseline() -> None:
    t = _tasks(r1="xy", cand="ab")
    assert pick_baseline(t, ["r1", "cand"], "cand") == (
        None,
        "no other run shares a task with it",
    )


def test_a_candidate_without_tasks_gets_no_baseline() -> None:
    t = pl.DataFrame({"run": ["r1", "cand"], "task_name": ["a", None]})
    # an empty task set equals no other set and shares nothing
    assert pick_baseline(t, ["r1", "cand"], "cand")[0] is None


# --- _pair_from_labels ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("labels", "candidate", "baseline", "want"),
    [
        (["a", "b", "c"], None, None, ("c", "a")),  # last = candidate, first = baseline
        (["a", "b", "c"], "b", None, ("b", None)),  # candidate asked: baseline picked later
        (["a", "b", "c"], None, "b", ("c", "b")),
        (["a", "b", "c"], "a", "c", ("a", "c")),
        (["only"], None, None, (None, None)),  # one label: nothing to pair
    ],
)
def test_pair_from_user_labels(
    labels: list[str], candidate: str | None, baseline: str | None, want: tuple
) -> None:
    assert _pair_from_labels(labels, candidate, baseline) == want


# --- detail_runs ------------------------------------------------------------------------


def test_detail_runs_counts_a_run_compared_with_itself_once() -> None:
    assert detail_runs(["r1", "r2", "r3", "r4"], ("r4", "r4"), 2) == ["r3", "r4"]


def test_detail_runs_ignores_pair_members_that_are_not_runs() -> None:
    order = ["r1", "r2", "r3", "r4"]
    assert detail_runs(order, (None, "gone"), 2) == ["r3", "r4"]  # just the newest two


@given(
    n_runs=st.integers(1, 12),
    n=st.integers(-1, 14),
    pair=st.tuples(st.integers(0, 11), st.integers(0, 11)),
)
def test_detail_runs_keeps_the_pair_and_fills_with_the_newest(
    n_runs: int, n: int, pair: tuple[int, int]
) -> None:
    order = [f"r{i:02d}" for i in range(n_runs)]
    p = tuple(order[i] if i < n_runs else None for i in pair)
    assume(p[0] is None or p[0] != p[1])  # a run compared with itself: see the report
    got = detail_runs(order, p, n)
    if n <= 0 or n_runs <= n:
        assert got == order
        return
    assert got == [r for r in order if r in got]  # in run order, no repeats
    members = {r for r in p if r is not None}
    assert members <= set(got)
    assert len(got) == max(n, len(members))
    others = [r for r in order if r not in members]
    kept = [r for r in got if r not in members]
    assert kept == others[len(others) - len(kept) :]  # the newest of the others


# --- Context views ----------------------------------------------------------------------


def _trials(rows: list[tuple]) -> pl.DataFrame:
    return pl.DataFrame(
        rows,
        schema={"trial_id": pl.String, "run": pl.String, "n_turns": pl.Int64},
        orient="row",
    )


def _errors(levels: list[str]) -> pl.DataFrame:
    return pl.DataFrame({"level": levels, "path": [f"p{i}" for i in range(len(levels))]})


def _ctx(runs: object, **kw: object) -> Context:
    return Context(runs=runs, source="s", run_by="label", choice="", **kw)  # type: ignore[arg-type]


@pytest.fixture
def split() -> Context:
    """Runs r1..r3; r2 and r3 shown in detail (their trajectories parsed), r1 only in history."""
    history = SimpleNamespace(
        trials=_trials([("t1", "r1", None), ("t2", "r2", None), ("t3", "r3", None)]),
        jobs=pl.DataFrame({"job_name": ["j1", "j2", "j3"]}),
        load_errors=_errors(["trial", "job"]),
    )
    detail = SimpleNamespace(
        trials=_trials([("t2", "r2", 4), ("t3", "r3", 7)]),
        jobs=pl.DataFrame({"job_name": ["j2", "j3"]}),
        load_errors=_errors(["trial", "trajectory", "trajectory"]),
    )
    return _ctx(detail, history=history, order=["r1", "r2", "r3"], candidate="r3", baseline="r2")


def test_detail_and_left_out_split_the_runs_in_order(split: Context) -> None:
    assert split.detail == ["r2", "r3"]
    assert split.left_out == ["r1"]


def test_all_trials_fill_the_trajectory_columns_of_the_detailed_runs(split: Context) -> None:
    t = split.all_trials
    assert t["trial_id"].to_list() == ["t1", "t2", "t3"]  # history's rows, in its order
    assert t["n_turns"].to_list() == [None, 4, 7]
    assert split.all_trials is t  # computed once per context


def test_jobs_and_load_errors_come_from_every_run(split: Context) -> None:
    assert split.jobs["job_name"].to_list() == ["j1", "j2", "j3"]
    # history's two file errors, plus the detailed runs' trajectory errors only (the
    # detailed runs' "trial" error is already in history)
    assert split.load_errors["level"].to_list() == ["trial", "job", "trajectory", "trajectory"]


def test_narrow_to_the_pair_limits_trials_and_order(split: Context) -> None:
    two = split.narrow(True)
    assert two.only == ["r2", "r3"] and two.order == ["r2", "r3"]
    assert two.trials["run"].to_list() == ["r2", "r3"]
    assert split.narrow(False) is split
    assert split.only is None  # the original is not changed


def test_detail_trials_leave_out_the_runs_not_detailed(split: Context) -> None:
    assert split.detail_trials["trial_id"].to_list() == ["t2", "t3"]
    assert split.trials.height == 3


def test_without_history_every_run_is_detailed() -> None:
    runs = SimpleNamespace(trials=_trials([("t1", "r1", 1)]), load_errors=_errors(["trial"]))
    ctx = _ctx(runs, order=["r1"], candidate="r1", baseline=None)
    assert ctx.detail == ["r1"] and ctx.left_out == []
    assert ctx.all_trials is runs.trials and ctx.load_errors is runs.load_errors


@pytest.mark.parametrize(
    ("cand", "base", "pair"),
    [("b", "a", ("a", "b")), ("a", "a", None), ("a", None, None), (None, "a", None)],
)
def test_pair_is_baseline_then_candidate_when_they_differ(
    cand: str | None, base: str | None, pair: tuple | None
) -> None:
    ctx = _ctx(None, order=[], candidate=cand, baseline=base)
    assert ctx.pair == pair
    if pair is None:
        assert ctx.narrow(True) is ctx  # nothing to narrow to


# --- load_context -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def bundled() -> Context:
    return report.load_context(RUNS)


def test_load_context_orders_the_bundled_runs_and_says_why_each_was_picked(
    bundled: Context,
) -> None:
    # runs/README.md: the skillsbench copy is oldest; the scripted candidate was run last
    assert bundled.order == [SKILLS, BASE, CAND]
    assert bundled.run_by == "label" and bundled.source == str(RUNS)
    assert bundled.choice == (
        f"candidate: the newest run ({CAND}); "
        f"baseline: the most recent earlier run over the same 12 tasks ({BASE})"
    )
    assert bundled.history is None  # 3 runs <= DETAIL_RUNS: every run detailed


def test_load_context_rejects_an_unknown_run_by() -> None:
    with pytest.raises(ValueError, match=r"run_by must be one of \('auto', 'label', 'job'\)"):
        report.load_context(RUNS, run_by="task")


def test_a_unique_prefix_names_its_run_and_the_note_says_so() -> None:
    ctx = report.load_context(RUNS, candidate="evalkit-scripted__c", baseline=SKILLS)
    assert (ctx.candidate, ctx.baseline) == (CAND, SKILLS)
    assert f"candidate 'evalkit-scripted__c' is the start of one run only: {CAND}" in ctx.choice
    assert f"baseline: {SKILLS} (as asked)" in ctx.choice


def test_an_ambiguous_prefix_is_an_error_naming_the_closest_runs() -> None:
    with pytest.raises(ValueError) as e:
        report.load_context(RUNS, baseline="evalkit-scripted__")
    msg = str(e.value)
    assert msg.startswith("baseline 'evalkit-scripted__' is not a run here; closest: ")
    assert BASE in msg and CAND in msg


def test_naming_a_job_in_auto_mode_switches_to_one_run_per_job() -> None:
    ctx = report.load_context(RUNS, candidate="scripted-candidate")
    assert ctx.run_by == "job"
    jobs = ["skillsbench-minimax-claude-code", "scripted-baseline", "scripted-candidate"]
    assert ctx.order == jobs
    assert ctx.pair == ("scripted-baseline", "scripted-candidate")
    assert ctx.choice.startswith("one run per job folder (a job was named); ")
    assert "candidate: scripted-candidate (as asked)" in ctx.choice


def test_a_job_name_with_run_by_label_is_not_a_run() -> None:
    with pytest.raises(ValueError, match="candidate 'scripted-candidate' is not a run here"):
        report.load_context(RUNS, candidate="scripted-candidate", run_by="label")


def test_detail_runs_one_still_details_the_pair(bundled: Context) -> None:
    ctx = report.load_context(RUNS, detail_runs=1)
    assert ctx.detail == [BASE, CAND] and ctx.left_out == [SKILLS]
    assert ctx.choice.endswith(
        "shown in detail: 2 of 3 runs (the compared pair and the newest others); "
        "older runs are summarised from their trials"
    )
    # runs/README.md: 60 + 60 + 17 trials; the left-out run's trials are still there
    assert ctx.trials.height == bundled.trials.height == 137
    assert ctx.detail_trials.height == 120
    assert ctx.params == {"detail_runs": 1}


def test_user_named_runs_label_every_job_and_pair_first_with_last(tmp_path: Path) -> None:
    runs = {"old": str(RUNS / "scripted-baseline"), "new": str(RUNS / "scripted-candidate")}
    ctx = report.load_context(tmp_path / "not-read", runs=runs)
    assert (ctx.baseline, ctx.candidate) == ("old", "new")
    assert ctx.run_by == "label"
    assert ctx.choice.startswith("run labels as given (runs parameter); candidate: new (as asked)")
    assert json.loads(ctx.source) == {k: [str(Path(v).resolve())] for k, v in runs.items()}
    assert ctx.trials.group_by("run").len().sort("run").rows() == [("new", 60), ("old", 60)]
