"""evalkit.load.runs: the Runs container of one load.

``Runs`` holds the jobs, trials and load errors a load built; steps and tool calls are
parsed on first access by a trajectory builder (once), frames delivered by rollout readers
are appended, findings come from a registered provider plus recorded ones, and once
trajectories are parsed ``trials`` carries their per-trial counts. ``subset`` restricts
everything to some run labels, ``one_run_per_job`` regroups Harbor trials by job folder,
``redacted`` hides secrets in every text column but ids, paths and names, and
``run_labels`` orders runs by their first start. Checked on small frames built here (the
end-to-end subset / one_run_per_job / redaction checks on real fixtures are in
``tests/load/test_runs_subset.py``).
"""

from __future__ import annotations

from datetime import UTC, datetime

import polars as pl
import pytest

from evalkit.load import runs as runs_mod
from evalkit.load._columns import conform
from evalkit.load.errors import LoadError
from evalkit.load.findings.columns import COLUMNS as FINDING_COLUMNS
from evalkit.load.jobs.columns import COLUMNS as JOB_COLUMNS
from evalkit.load.runs import Runs, TrajectoryFrames, run_order
from evalkit.load.shared.redact import REDACTED
from evalkit.load.steps.columns import STEP_COLUMNS, TOOL_CALL_COLUMNS
from evalkit.load.trials.columns import COLUMNS as TRIAL_COLUMNS

KEY = "sk-ant-api03-abcdefghijklmnopqrstuv"  # matches the sk-ant- key pattern


def _t(hour: int | None) -> datetime | None:
    return None if hour is None else datetime(2026, 5, 1, hour, tzinfo=UTC)


def _trials(rows: list[dict]) -> pl.DataFrame:
    return conform(pl.DataFrame(rows), TRIAL_COLUMNS)


def _jobs(rows: list[dict]) -> pl.DataFrame:
    return conform(pl.DataFrame(rows), JOB_COLUMNS)


def _steps(rows: list[dict]) -> pl.DataFrame:
    return conform(pl.DataFrame(rows), STEP_COLUMNS)


def _findings(rows: list[dict]) -> pl.DataFrame:
    return conform(pl.DataFrame(rows), FINDING_COLUMNS)


@pytest.fixture()
def runs() -> Runs:
    """Two runs: A (trials a1, a2 in job J1) and B (trial b1 in job J2)."""
    trials = _trials(
        [
            {"trial_id": "a1", "job_id": "J1", "run": "A", "started_at": _t(10), "n_steps": 9},
            {"trial_id": "a2", "job_id": "J1", "run": "A", "started_at": _t(12), "n_steps": None},
            {"trial_id": "b1", "job_id": "J2", "run": "B", "started_at": _t(8), "n_steps": 4},
        ]
    )
    jobs = _jobs([{"job_id": "J1", "run": "A"}, {"job_id": "J2", "run": "B"}])
    errors = [
        LoadError("/j1/a1", "trial", "json_decode", "m", "J1", "a1"),
        LoadError("/j2", "job", "wrong_type", "m", "J2", None),
        LoadError("/j1", "job", "wrong_type", "m", "J1", None),
        LoadError("/x", "discover", "unreadable", "m", None, None),
    ]
    return Runs(jobs=jobs, _trials=trials, _load_errors=errors, options={"cache": False})


def _builder(calls: list[int], summary: pl.DataFrame | None = None):
    """A trajectory builder that records each call and gives one step per trial."""

    def build(trials: pl.DataFrame) -> TrajectoryFrames:
        calls.append(trials.height)
        ids = trials["trial_id"].to_list()
        steps = _steps([{"trial_id": i, "step_index": 0, "message": f"hi {KEY}"} for i in ids])
        summ = summary if summary is not None else pl.DataFrame({"trial_id": ids})
        errs = [LoadError(f"/{i}/agent", "trajectory", "not_atif", KEY, None, i) for i in ids]
        return TrajectoryFrames(steps, conform(pl.DataFrame(), TOOL_CALL_COLUMNS), summ, errs)

    return build


# -- frames ------------------------------------------------------------------------------


def test_without_a_builder_steps_and_tool_calls_are_empty_frames_of_their_columns(
    runs: Runs,
) -> None:
    assert runs.steps.height == 0 and runs.tool_calls.height == 0
    assert runs.steps.columns == [c.name for c in STEP_COLUMNS]
    assert runs.tool_calls.columns == [c.name for c in TOOL_CALL_COLUMNS]
    assert runs.trials.equals(runs._trials)  # nothing parsed: trials unchanged


def test_trajectories_are_built_once_for_every_trial(runs: Runs) -> None:
    calls: list[int] = []
    runs._trajectory_builder = _builder(calls)
    assert runs.steps["trial_id"].to_list() == ["a1", "a2", "b1"]
    _ = runs.tool_calls, runs.steps
    assert calls == [3]


def test_rollout_steps_are_appended_to_the_parsed_ones(runs: Runs) -> None:
    calls: list[int] = []
    runs._trajectory_builder = _builder(calls)
    runs._pre_steps = pl.DataFrame({"trial_id": ["r1"], "step_index": [5]})  # a partial frame
    steps = runs.steps
    assert steps["trial_id"].to_list() == ["a1", "a2", "b1", "r1"]
    assert steps.columns == [c.name for c in STEP_COLUMNS]  # conformed to the declaration


def test_parsed_trajectory_counts_fill_the_trials_and_keep_the_others(runs: Runs) -> None:
    summary = pl.DataFrame(
        {"trial_id": ["a2", "b1"], "n_steps": [3, None], "n_tool_calls": [2, 1]},
        schema_overrides={"n_steps": pl.Int64, "n_tool_calls": pl.Int64},
    )
    runs._trajectory_builder = _builder([], summary)
    _ = runs.steps
    t = runs.trials.sort("trial_id")
    # a1: not in the summary, keeps 9; a2: 3 from the summary; b1: summary null, keeps 4
    assert t["n_steps"].to_list() == [9, 3, 4]
    assert t["n_tool_calls"].to_list() == [None, 2, 1]
    assert t.columns == runs._trials.columns


def test_load_errors_include_the_trajectory_errors_once_parsed(runs: Runs) -> None:
    runs._trajectory_builder = _builder([])
    assert runs.load_errors.height == 4
    _ = runs.steps
    errs = runs.load_errors
    assert errs.height == 4 + 3
    assert errs.filter(pl.col("level") == "trajectory")["trial_id"].to_list() == ["a1", "a2", "b1"]


def test_findings_are_the_providers_plus_the_recorded_ones_computed_once(
    runs: Runs, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[int] = []

    def provider(r: Runs) -> pl.DataFrame:
        calls.append(r._trials.height)
        return _findings([{"trial_id": "a1", "detector": "retry_loop"}])

    monkeypatch.setattr(runs_mod, "_findings_provider", None)
    runs_mod.register_findings_provider(provider)
    runs._recorded_findings = _findings([{"trial_id": "b1", "detector": "recorded"}])
    assert runs.findings["detector"].to_list() == ["retry_loop", "recorded"]
    _ = runs.findings
    assert calls == [3]
    runs_mod.register_findings_provider(None)
    fresh = Runs(jobs=runs.jobs, _trials=runs._trials, _load_errors=[])
    assert fresh.findings.height == 0
    assert fresh.findings.columns == [c.name for c in FINDING_COLUMNS]


# -- subset ------------------------------------------------------------------------------


def test_subset_keeps_the_runs_trials_jobs_and_their_errors(runs: Runs) -> None:
    part = runs.subset(["B"])
    assert part.trials["trial_id"].to_list() == ["b1"]
    assert part.jobs["job_id"].to_list() == ["J2"]
    # the trial error of a1 and the job error of J1 go; J2's and the job-less one stay
    assert [(e.path, e.job_id) for e in part._load_errors] == [("/j2", "J2"), ("/x", None)]
    assert part.options == {"cache": False, "runs": ["B"]}


def test_subset_filters_parsed_frames_and_findings_instead_of_parsing_again(runs: Runs) -> None:
    calls: list[int] = []
    runs._trajectory_builder = _builder(calls)
    runs._findings = _findings([{"trial_id": "a1"}, {"trial_id": "b1"}])
    _ = runs.steps
    part = runs.subset({"A"})
    assert part.steps["trial_id"].to_list() == ["a1", "a2"]
    assert calls == [3]  # not parsed again
    assert part.findings["trial_id"].to_list() == ["a1"]
    assert [e.trial_id for e in part._traj.errors] == ["a1", "a2"]


def test_subset_before_parsing_parses_only_its_trials(runs: Runs) -> None:
    calls: list[int] = []
    runs._trajectory_builder = _builder(calls)
    part = runs.subset(["A"])
    assert part.steps["trial_id"].to_list() == ["a1", "a2"]
    assert calls == [2] and runs._traj is None


def test_subset_of_an_unknown_run_is_empty(runs: Runs) -> None:
    part = runs.subset(["nope"])
    assert part.trials.height == 0 and part.jobs.height == 0
    assert [e.path for e in part._load_errors] == ["/x"]


# -- one_run_per_job ---------------------------------------------------------------------


def test_one_run_per_job_names_harbor_runs_after_their_job_and_keeps_rollout_runs() -> None:
    trials = _trials(
        [
            {"trial_id": "1", "job_id": "J1", "job_name": "j1", "run": "R", "task_name": "t",
             "started_at": _t(9), "trial_name": "x", "attempt": 1, "source_format": "harbor"},
            {"trial_id": "2", "job_id": "J2", "job_name": "j2", "run": "R", "task_name": "t",
             "started_at": _t(8), "trial_name": "y", "attempt": 2, "source_format": "harbor"},
            {"trial_id": "3", "job_id": "G", "job_name": "g", "run": "roll", "task_name": "t",
             "started_at": _t(7), "trial_name": "z", "attempt": 7, "source_format": "go-code"},
        ]
    )  # fmt: skip
    jobs = _jobs(
        [
            {"job_id": "J1", "run": "R", "source_format": "harbor"},
            {"job_id": "J2", "run": "R", "source_format": "harbor"},
            {"job_id": "G", "run": "roll", "source_format": "go-code"},
        ]
    )
    r = Runs(jobs=jobs, _trials=trials, _load_errors=[], options={"paths": ["/runs"]})
    out = r.one_run_per_job()
    assert out.trials["run"].to_list() == ["j1", "j2", "roll"]
    # each Harbor trial is now alone in its run+task: attempt 1; the rollout keeps 7
    assert out.trials["attempt"].to_list() == [1, 1, 7]
    assert out.jobs["run"].to_list() == ["j1", "j2", "roll"]
    assert r.trials["run"].to_list() == ["R", "R", "roll"]  # the original is unchanged


# -- redaction ---------------------------------------------------------------------------


def test_redacted_hides_secrets_in_text_but_keeps_ids_paths_and_names() -> None:
    trials = _trials(
        [
            {
                "trial_id": f"id-{KEY}",
                "trial_dir": f"/runs/{KEY}",
                "trial_name": f"name-{KEY}",
                "run": f"run-{KEY}",
                "exception_message": f"auth failed for {KEY}",
                "task_name": f"task {KEY}",
            }
        ]
    )
    errors = [LoadError(f"/p/{KEY}", "trial", "x", f"bad {KEY}", None, None)]
    r = Runs(jobs=_jobs([]), _trials=trials, _load_errors=errors)
    red = r.redacted(trajectories=False)
    row = red.trials.row(0, named=True)
    assert row["exception_message"] == f"auth failed for {REDACTED}"
    assert row["task_name"] == f"task {REDACTED}"
    for kept in ("trial_id", "trial_dir", "trial_name", "run"):
        assert row[kept] == trials[kept][0]  # in _KEEP or with a kept suffix
    err = red.load_errors.row(0, named=True)
    assert (err["message"], err["path"]) == (f"bad {REDACTED}", f"/p/{KEY}")
    assert red.options == {"redacted": True, "trajectories": False}


def test_redacted_with_extra_values_and_trajectories_parses_from_the_original(
    runs: Runs, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(runs_mod, "_findings_provider", None)
    calls: list[int] = []
    runs._trajectory_builder = _builder(calls)
    red = runs.redacted(("hi ",))  # shorter than 6 characters: not a value to hide
    assert calls == [3]
    assert red.steps["message"].to_list() == [f"hi {REDACTED}"] * 3
    traj_errors = red.load_errors.filter(pl.col("level") == "trajectory")
    assert traj_errors["message"].to_list() == [REDACTED] * 3
    assert runs.steps["message"][0] == f"hi {KEY}"  # the original keeps its text
    red2 = runs.redacted(("hi sk-",))  # a literal value is replaced before the patterns
    assert red2.steps["message"][0].startswith(REDACTED)


# -- conveniences ------------------------------------------------------------------------


def test_run_labels_are_oldest_first_by_latest_start_with_unstarted_runs_first() -> None:
    trials = _trials(
        [
            {"trial_id": "1", "run": "late", "started_at": _t(12)},
            {"trial_id": "2", "run": "late", "started_at": _t(6)},  # late's latest start: 12
            {"trial_id": "3", "run": "early", "started_at": _t(7)},
            {"trial_id": "4", "run": "never", "started_at": None},
            {"trial_id": "5", "run": "first", "started_at": _t(5)},
        ]
    )
    r = Runs(jobs=_jobs([]), _trials=trials, _load_errors=[])
    assert r.run_labels == ["never", "first", "early", "late"]
    assert Runs(jobs=_jobs([]), _trials=Runs.empty_trials(), _load_errors=[]).run_labels == []


def test_repr_counts_jobs_trials_runs_and_errors(runs: Runs) -> None:
    assert repr(runs) == "Runs(2 jobs, 3 trials, 2 runs, 4 load errors)"


def test_empty_frames_have_the_declared_columns() -> None:
    assert Runs.empty_jobs().columns == [c.name for c in JOB_COLUMNS]
    assert Runs.empty_trials().schema == pl.Schema({c.name: c.dtype for c in TRIAL_COLUMNS})


# --- run_order (the one order of runs) --------------------------------------------------------------------------


def test_run_order_is_by_latest_trial_start_then_name() -> None:
    t = pl.DataFrame(
        {
            # b: latest 03:00; a and c tie at 05:00 (a first by name); d: no start at all
            "run": ["b", "a", "a", "c", "d", None],
            "started_at": [_t(3), _t(1), _t(5), _t(5), None, _t(9)],
        }
    )
    # a run without any start sorts first (unknown is not "newest"); a null run is dropped
    assert run_order(t) == ["d", "b", "a", "c"]


def test_run_order_of_no_trials_is_empty() -> None:
    t = pl.DataFrame(schema={"run": pl.String, "started_at": pl.Datetime("us", "UTC")})
    assert run_order(t) == []
    assert run_order(pl.DataFrame({"run": ["b", "a", None, "b"]})) == ["a", "b"]  # no starts
