"""Recognising and reading a go-code rollout folder (load/gocode/folder.py).

The module reads ``<dir>/<YYYY-MM-DD>/<run_id>.jsonl`` or a folder directly holding rollout
files (rollouts-gates-qc.md §1.1), reports what it cannot read instead of skipping it, and
builds the jobs / trials / run_details frames. Checked here, beyond test_detection.py and
the end-to-end tests: misnamed date folders and unreadable ``.jsonl`` entries as load
errors, the empty cases, where the results come from, and the job row's state, times,
models and counts worked out by hand from small synthetic runs.
"""

from __future__ import annotations

import os
from pathlib import Path

import polars as pl
import pytest

from evalkit.load.gocode.folder import (
    EXTRA_TRIAL_SCHEMA,
    is_rollout_folder,
    read_rollouts,
    rollout_files,
)
from evalkit.load.jobs.columns import COLUMNS as JOB_COLUMNS
from evalkit.load.trials.columns import COLUMNS as TRIAL_COLUMNS
from tests.load.gocode.rollout_helpers import ev, write_rollout


def _run(run_id: str, *, model: str = "gpt-5-mini", start: int = 0, end: int | None = 9):
    """A run of ``run_id`` started at second ``start``, ending at second ``end`` (None: crashed)."""
    evs = [
        ev(start, "run.started", conversation_id=run_id, prompt="p"),
        ev(start + 1, "provider.resolved", provider="openai", model=model),
        ev(start + 2, "assistant.message", step=1, content="hi"),
    ]
    if end is not None:
        evs.append(ev(end, "run.completed", step=1))
    return evs


def _kinds(errors) -> list[str]:
    return sorted(e.error_type for e in errors)


# --- is_rollout_folder / rollout_files ---------------------------------------------------


def test_a_folder_with_a_harbor_result_json_is_never_a_rollout_folder(tmp_path: Path) -> None:
    write_rollout(tmp_path / "j" / "2026-01-01" / "run_a.jsonl", _run("run_a"))
    assert is_rollout_folder(tmp_path / "j")
    (tmp_path / "j" / "result.json").write_text("{}")
    assert not is_rollout_folder(tmp_path / "j")


def test_a_misnamed_date_folder_is_reported_and_not_loaded(tmp_path: Path) -> None:
    d = tmp_path / "r"
    write_rollout(d / "2026-1-5" / "run_a.jsonl", _run("run_a"))  # not YYYY-MM-DD
    (d / "notes").mkdir()  # a folder without rollouts says nothing
    (d / "notes" / "x.jsonl").write_text('{"type": "message"}\n')
    assert not is_rollout_folder(d)
    errors: list = []
    assert rollout_files(str(d), errors) == []
    assert [(e.error_type, Path(e.path).name) for e in errors] == [
        ("unrecognised_folder", "2026-1-5")
    ]
    frames = read_rollouts(d, progress=False)
    assert _kinds(frames.errors) == ["no_rollouts", "unrecognised_folder"]
    assert frames.trials.height == 0


def test_unreadable_jsonl_entries_are_reported_other_jsonl_files_are_not(tmp_path: Path) -> None:
    d = tmp_path / "r" / "2026-02-01"
    write_rollout(d / "run_a.jsonl", _run("run_a"))
    (d / "folder.jsonl").mkdir()  # not a regular file
    os.mkfifo(d / "pipe.jsonl")  # a FIFO is refused without blocking
    (d / "session.jsonl").write_text('{"type": "message", "message": {}}\n')  # another log
    (d / "results.jsonl").write_text("{}\n")
    errors: list = []
    files = rollout_files(str(tmp_path / "r"), errors)
    assert [Path(f).name for f in files] == ["run_a.jsonl"]
    assert sorted((e.error_type, Path(e.path).name) for e in errors) == [
        ("unreadable", "folder.jsonl"),
        ("unreadable", "pipe.jsonl"),
    ]
    # without an errors list the same entries are skipped quietly
    assert rollout_files(str(tmp_path / "r")) == files


def test_a_single_file_is_taken_as_given(tmp_path: Path) -> None:
    p = tmp_path / "anything.jsonl"
    p.write_text("not a rollout\n")
    assert rollout_files(str(p)) == [str(p)]


# --- read_rollouts: empty cases ----------------------------------------------------------


def test_an_empty_folder_gives_empty_frames_and_a_no_rollouts_error(tmp_path: Path) -> None:
    (tmp_path / "r").mkdir()
    f = read_rollouts(tmp_path / "r", progress=False)
    assert [e.error_type for e in f.errors] == ["no_rollouts"]
    assert f.trials.height == 0 and f.trials.columns == [c.name for c in TRIAL_COLUMNS]
    assert f.steps.height == f.tool_calls.height == f.findings.height == 0
    assert f.run_details.columns == ["trial_id", "run_status"]
    j = f.jobs.row(0, named=True)
    assert (j["state"], j["n_trials_found"], j["n_trials_with_result"]) == ("unknown", 0, 0)
    assert (j["started_at"], j["finished_at"], j["model_name"]) == (None, None, None)
    assert (j["source_format"], j["format"], j["agent_name"]) == (
        "go-code",
        "go-code-rollout",
        "go-code",
    )


def test_a_single_empty_rollout_file_is_an_empty_error(tmp_path: Path) -> None:
    p = tmp_path / "run_a.jsonl"
    p.write_text("\n\n")
    f = read_rollouts(p, progress=False)
    assert [e.error_type for e in f.errors] == ["empty"]
    assert f.trials.height == 0


# --- read_rollouts: trials, run_details, jobs --------------------------------------------


def test_trials_have_the_declared_columns_and_run_details_the_rollout_only_ones(
    tmp_path: Path,
) -> None:
    write_rollout(tmp_path / "r" / "2026-02-01" / "a.jsonl", _run("run_a", start=0, end=9))
    f = read_rollouts(tmp_path / "r", progress=False)
    assert f.trials.columns == [c.name for c in TRIAL_COLUMNS]
    hidden = {"_started", "_finished"}
    assert f.run_details.columns == [
        "trial_id",
        *[c for c in EXTRA_TRIAL_SCHEMA if c not in hidden],
    ]
    t = f.trials.row(0, named=True)
    # started at second 0, run.completed at second 9
    assert t["duration_s"] == 9.0
    assert t["started_at"].isoformat() == "2026-02-01T00:00:00+00:00"
    assert t["finished_at"].isoformat() == "2026-02-01T00:00:09+00:00"
    assert (t["reward"], t["naive_timestamps"], t["outcome"]) == (None, False, "no-reward")


def test_the_job_of_finished_runs_is_complete_with_their_first_start_and_last_end(
    tmp_path: Path,
) -> None:
    d = tmp_path / "r" / "2026-02-01"
    write_rollout(d / "a.jsonl", _run("run_a", model="m-b", start=5, end=20))
    write_rollout(d / "b.jsonl", _run("run_b", model="m-a", start=0, end=30))
    write_rollout(d / "c.jsonl", _run("run_c", model="m-b", start=10, end=15))
    j = read_rollouts(tmp_path / "r", progress=False).jobs
    assert j.columns == [c.name for c in JOB_COLUMNS]
    r = j.row(0, named=True)
    assert r["state"] == "complete"
    assert (r["started_at"].second, r["finished_at"].second) == (0, 30)  # min start, max end
    assert r["model_name"] == "openai/m-a, openai/m-b"  # distinct, sorted
    assert (r["n_trials_found"], r["n_trials_with_result"], r["n_trials_declared"]) == (3, 3, None)


def test_a_job_with_a_crashed_run_is_unknown_and_has_no_end(tmp_path: Path) -> None:
    d = tmp_path / "r" / "2026-02-01"
    write_rollout(d / "a.jsonl", _run("run_a", end=9))
    write_rollout(d / "b.jsonl", _run("run_b", end=None))  # no terminal event
    f = read_rollouts(tmp_path / "r", progress=False)
    r = f.jobs.row(0, named=True)
    assert (r["state"], r["finished_at"], r["n_trials_with_result"]) == ("unknown", None, 1)
    assert _kinds(f.errors) == ["missing_terminal_event"]


def test_the_job_is_the_resolved_folder_or_the_folder_of_a_single_file(tmp_path: Path) -> None:
    p = write_rollout(tmp_path / "r" / "2026-02-01" / "a.jsonl", _run("run_a"))
    (tmp_path / "link").symlink_to(tmp_path / "r")
    via_link = read_rollouts(tmp_path / "link", progress=False).jobs.row(0, named=True)
    assert (via_link["job_name"], via_link["job_dir"]) == ("r", str((tmp_path / "r").resolve()))
    one = read_rollouts(p, progress=False)
    assert one.jobs["job_dir"].to_list() == [str(p.parent.resolve())]
    assert one.trials["job_id"].to_list() == one.jobs["job_id"].to_list()


# --- read_rollouts: results --------------------------------------------------------------


def _two_runs(tmp_path: Path) -> Path:
    d = tmp_path / "r"
    write_rollout(d / "2026-02-01" / "a.jsonl", _run("run_a"))
    write_rollout(d / "2026-02-01" / "b.jsonl", _run("run_b"))
    return d


def test_results_given_as_a_frame_are_joined_by_run_id(tmp_path: Path) -> None:
    res = pl.DataFrame({"run_id": ["run_a"], "task_id": ["t1"], "is_resolved": [True]})
    f = read_rollouts(_two_runs(tmp_path), progress=False, results=res)
    t = f.trials.sort("trial_id")
    assert t.select("trial_id", "task_name", "reward", "outcome").rows() == [
        ("run_a", "t1", 1.0, "pass"),
        ("run_b", None, None, "no-reward"),
    ]
    assert f.run_details.sort("trial_id")["is_resolved"].to_list() == [True, None]


def test_results_given_as_a_path_replace_the_folders_own(tmp_path: Path) -> None:
    d = _two_runs(tmp_path)
    (d / "results.jsonl").write_text('{"run_id": "run_a", "task_id": "own", "is_resolved": true}\n')
    other = tmp_path / "other.jsonl"
    other.write_text('{"run_id": "run_b", "task_id": "given", "is_resolved": false}\n')
    t = read_rollouts(d, progress=False, results=str(other)).trials.sort("trial_id")
    assert t.select("task_name", "reward").rows() == [(None, None), ("given", 0.0)]
    own = read_rollouts(d, progress=False).trials.sort("trial_id")
    assert own.select("task_name", "reward").rows() == [("own", 1.0), (None, None)]


def test_a_missing_results_path_is_a_load_error(tmp_path: Path) -> None:
    f = read_rollouts(_two_runs(tmp_path), progress=False, results=str(tmp_path / "nope.jsonl"))
    assert [e.error_type for e in f.errors] == ["missing"]
    assert f.trials["reward"].to_list() == [None, None]


@pytest.mark.parametrize("layout", ["dated", "flat"])
def test_steps_and_calls_of_every_run_are_concatenated(tmp_path: Path, layout: str) -> None:
    d = tmp_path / "r" / ("2026-02-01" if layout == "dated" else "")
    for rid in ("run_a", "run_b"):
        write_rollout(
            d / f"{rid}.jsonl",
            [
                *_run(rid),
                ev(3, "tool.call.started", call_id="c", tool="bash", arguments="{}", step=1),
                ev(4, "tool.call.completed", call_id="c", tool="bash", output="ok", step=1),
            ],
        )
    f = read_rollouts(tmp_path / "r", progress=False)
    # per run: a user step and one agent step, one call
    assert f.steps.group_by("trial_id").len().sort("trial_id").rows() == [
        ("run_a", 2),
        ("run_b", 2),
    ]
    assert sorted(f.tool_calls["trial_id"].to_list()) == ["run_a", "run_b"]
    expected_date = "2026-02-01" if layout == "dated" else None
    assert f.run_details["rollout_date"].to_list() == [expected_date] * 2


def test_a_rollout_after_other_jsonl_files_is_found(tmp_path: Path) -> None:
    # the go-code folder's own non-rollout files sort before run_*.jsonl
    d = tmp_path / "out"
    for name in ("audit.jsonl", "baseline.jsonl", "events.jsonl", "results.jsonl"):
        (d / name).parent.mkdir(parents=True, exist_ok=True)
        (d / name).write_bytes(b'{"task": "t", "passed": true}\n')
    write_rollout(d / "run_x.jsonl", _run("run_x"))
    assert is_rollout_folder(d)
    assert [os.path.basename(p) for p in rollout_files(d)] == ["run_x.jsonl"]
    assert read_rollouts(d).trials.height == 1


def test_only_a_calendar_date_folder_is_a_rollout_date(tmp_path: Path) -> None:
    # 10 characters with dashes in place are not enough: digits, and a real date
    for name in ("runs-v2-ok", "2026-13-45"):
        write_rollout(tmp_path / name / "r.jsonl", _run("r"))
        got = read_rollouts(tmp_path / name).run_details["rollout_date"].to_list()
        assert got == [None], name
    write_rollout(tmp_path / "top" / "2026-02-28" / "r.jsonl", _run("r"))
    assert read_rollouts(tmp_path / "top").run_details["rollout_date"].to_list() == ["2026-02-28"]
