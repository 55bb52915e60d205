"""The jobs frame from job records and trials (load/jobs/table.py).

The state rule is the one load/jobs/extract.py documents: ``complete`` with a finished_at;
``interrupted`` at once when evalkit's launch record says so; ``running`` only when the
folder changed within the window *and* Harbor's newest recorded time (job start / update,
lock created_at, trial times, the default folder name) is within a day (or the window, if
longer); else ``interrupted`` with a result.json, ``unknown`` without. Checked here: each
branch of that rule on one synthetic record (``now`` and the folder mtime set by hand), the
naive job times read in the job's zone, the per-job trial counts and run labels, and the
'missing_result' errors for settled jobs.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace

import polars as pl
import pytest

from evalkit.load.jobs.columns import COLUMNS as JOB_COLUMNS
from evalkit.load.jobs.table import jobs_frame, missing_results, run_names

NOW_DT = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)
NOW = NOW_DT.timestamp()
WINDOW = 900.0  # the default 15 minutes


def _iso(dt: datetime) -> str:
    """A naive ISO time (Harbor writes job times naive)."""
    return dt.replace(tzinfo=None).isoformat()


def _rec(job_dir: Path, *, mtime_age: float = 60.0, **fields) -> dict:
    """A job record as extract_job + load/api.py make it; the folder's mtime is
    ``mtime_age`` seconds before NOW."""
    job_dir.mkdir(parents=True, exist_ok=True)
    os.utime(job_dir, (NOW - mtime_age, NOW - mtime_age))
    rec = dict.fromkeys(
        ["harbor_job_id", "ts_started", "ts_updated", "ts_finished", "n_trials_declared",
         "stats_completed", "stats_errored", "agent_name", "model_name", "dataset", "n_attempts",
         "n_concurrent", "timeout_multiplier", "environment_type", "harbor_version", "format",
         "config_json", "analysis_summary", "analysis_checks", "ts_lock", "ts_named",
         "launch_state"]
    )  # fmt: skip
    rec.update(
        job_id=fields.pop("job_id", "J"),
        job_name=job_dir.name,
        job_dir=str(job_dir),
        result_present=True,
        _ref=SimpleNamespace(trials=[]),
    )
    rec.update(fields)
    return rec


_TRIALS = {
    "job_id": pl.String,
    "started_at": pl.Datetime("us", "UTC"),
    "finished_at": pl.Datetime("us", "UTC"),
    "outcome": pl.String,
    "run": pl.String,
}


def _trials(*rows) -> pl.DataFrame:
    return pl.DataFrame(list(rows), schema=_TRIALS, orient="row")


NO_TRIALS = _trials()


def _frame(recs, trials=NO_TRIALS, zone_note=None, window=WINDOW) -> pl.DataFrame:
    return jobs_frame(recs, trials, zone_note or {}, "auto", NOW, window)


def _state(rec, trials=NO_TRIALS, window=WINDOW) -> str:
    return _frame([rec], trials, window=window)["state"].item()


# --- state -------------------------------------------------------------------------------

HOUR_AGO = NOW_DT - timedelta(hours=1)
TWO_DAYS_AGO = NOW_DT - timedelta(days=2)


def test_a_job_with_a_finished_at_is_complete_whatever_its_activity(tmp_path: Path) -> None:
    rec = _rec(tmp_path / "j", ts_started=_iso(HOUR_AGO), ts_finished=_iso(NOW_DT))
    assert _state(rec) == "complete"


def test_the_launch_record_interrupts_a_job_at_once(tmp_path: Path) -> None:
    rec = _rec(tmp_path / "j", ts_started=_iso(HOUR_AGO), launch_state="interrupted")
    assert _state(rec) == "interrupted"  # fresh files and a start an hour ago
    # ... but a finished job stays complete
    rec["ts_finished"] = _iso(NOW_DT)
    assert _state(rec) == "complete"


def test_recent_files_and_a_recent_recorded_time_make_a_job_running(tmp_path: Path) -> None:
    assert _state(_rec(tmp_path / "j", ts_started=_iso(HOUR_AGO))) == "running"


@pytest.mark.parametrize("present,expected", [(True, "interrupted"), (False, "unknown")])
def test_recent_files_with_old_content_are_not_running(tmp_path: Path, present, expected) -> None:
    # a cp -r of an old job: fresh mtimes, a start two days ago
    rec = _rec(tmp_path / "j", ts_started=_iso(TWO_DAYS_AGO), result_present=present)
    assert _state(rec) == expected


@pytest.mark.parametrize("present,expected", [(True, "interrupted"), (False, "unknown")])
def test_old_files_with_recent_content_are_not_running(tmp_path: Path, present, expected) -> None:
    # the folder last changed 16 minutes ago: outside the 15-minute window
    rec = _rec(tmp_path / "j", mtime_age=960, ts_started=_iso(HOUR_AGO), result_present=present)
    assert _state(rec) == expected


def test_a_job_with_no_recorded_time_at_all_is_not_running(tmp_path: Path) -> None:
    assert _state(_rec(tmp_path / "j", result_present=False)) == "unknown"


def test_a_fresh_result_json_counts_as_activity(tmp_path: Path) -> None:
    rec = _rec(tmp_path / "j", mtime_age=3600, ts_started=_iso(HOUR_AGO))
    assert _state(rec) == "interrupted"
    res = tmp_path / "j" / "result.json"
    res.write_text("{}")
    os.utime(res, (NOW - 30, NOW - 30))
    os.utime(tmp_path / "j", (NOW - 3600, NOW - 3600))  # writing the file touched the folder
    assert _state(rec) == "running"


def test_a_fresh_trial_folder_counts_as_activity(tmp_path: Path) -> None:
    trial = tmp_path / "j" / "task__abc"
    trial.mkdir(parents=True)
    os.utime(trial, (NOW - 30, NOW - 30))
    rec = _rec(tmp_path / "j", mtime_age=3600, ts_started=_iso(HOUR_AGO))
    assert _state(rec) == "interrupted"  # the record names no trial folders yet
    rec["_ref"] = SimpleNamespace(trials=[str(trial)])
    assert _state(rec) == "running"


@pytest.mark.parametrize(
    "field,value",
    [
        ("ts_updated", _iso(HOUR_AGO)),
        ("ts_lock", HOUR_AGO.isoformat()),  # lock.json created_at is UTC, aware
        ("ts_named", _iso(HOUR_AGO)),  # the start a default folder name carries
    ],
)
def test_each_recorded_time_can_show_the_job_is_recent(tmp_path: Path, field, value) -> None:
    rec = _rec(tmp_path / "j", ts_started=_iso(TWO_DAYS_AGO), **{field: value})
    assert _state(rec) == "running"


def test_a_recent_trial_time_shows_the_job_is_recent(tmp_path: Path) -> None:
    rec = _rec(tmp_path / "j", ts_started=_iso(TWO_DAYS_AGO))
    old = _trials(("J", TWO_DAYS_AGO, TWO_DAYS_AGO, "pass", "r"))
    assert _state(rec, old) == "interrupted"
    started_now = _trials(
        ("J", TWO_DAYS_AGO, None, "pass", "r"), ("J", HOUR_AGO, None, "incomplete", "r")
    )
    assert _state(rec, started_now) == "running"
    # a recent trial of another job says nothing about this one
    assert _state(rec, _trials(("other", HOUR_AGO, None, "pass", "r"))) == "interrupted"


def test_a_window_longer_than_a_day_also_widens_the_content_check(tmp_path: Path) -> None:
    # files and start two days old; window three days: both are recent
    rec = _rec(tmp_path / "j", mtime_age=2 * 86400, ts_started=_iso(TWO_DAYS_AGO))
    assert _state(rec, window=3 * 86400) == "running"
    assert _state(rec, window=86400) == "interrupted"


# --- times, counts, columns --------------------------------------------------------------


def test_naive_job_times_are_read_in_the_jobs_zone(tmp_path: Path) -> None:
    recs = [
        _rec(tmp_path / "a", job_id="A", ts_started="2026-01-05T18:00:00"),  # Shanghai, +8
        _rec(tmp_path / "b", job_id="B", ts_started="2026-01-05T15:30:00"),  # +05:30
        _rec(tmp_path / "c", job_id="C", ts_started="2026-01-05T10:00:00"),  # no note: UTC
        _rec(tmp_path / "d", job_id="D", ts_started="2026-01-05T10:00:00Z"),  # aware: as is
    ]
    note = {"A": "Asia/Shanghai (given)", "B": "+05:30 (inferred)", "D": "Asia/Tokyo (given)"}
    df = _frame(recs, zone_note=note).sort("job_id")
    assert df["started_at"].to_list() == [datetime(2026, 1, 5, 10, tzinfo=UTC)] * 4
    assert df["naive_tz"].to_list() == ["Asia/Shanghai (given)", "+05:30 (inferred)", None,
                                        "Asia/Tokyo (given)"]  # fmt: skip


def test_updated_and_finished_are_converted_too(tmp_path: Path) -> None:
    rec = _rec(tmp_path / "j", ts_updated="2026-01-05T19:00:00", ts_finished="2026-01-05T19:30:00")
    r = _frame([rec], zone_note={"J": "+08:00 (given)"}).row(0, named=True)
    # 19:00 and 19:30 at +8 are 11:00 and 11:30 UTC
    assert (r["updated_at"].hour, r["finished_at"].hour, r["finished_at"].minute) == (11, 11, 30)


def test_trial_counts_and_run_labels_per_job(tmp_path: Path) -> None:
    trials = _trials(
        ("A", None, None, "pass", "r2"),
        ("A", None, None, "incomplete", "r1"),
        ("A", None, None, "fail", "r2"),
        ("ROLLOUTS", None, None, "pass", "x"),  # trials of a job without a record
    )
    df = _frame([_rec(tmp_path / "a", job_id="A"), _rec(tmp_path / "b", job_id="B")], trials)
    got = df.sort("job_id").select("job_id", "n_trials_found", "n_trials_with_result", "run")
    # A: 3 trials, 2 not incomplete; runs r1, r2 sorted. B: no trials.
    assert got.rows() == [("A", 3, 2, "r1, r2"), ("B", 0, 0, None)]


def test_the_frame_has_exactly_the_declared_columns(tmp_path: Path) -> None:
    checks = [{"name": "reward_hacking", "verdict": "pass", "explanation": "ok"}]
    rec = _rec(tmp_path / "j", format="counters", analysis_checks=checks, n_attempts=2)
    df = _frame([rec])
    assert df.columns == [c.name for c in JOB_COLUMNS]
    assert df.schema == pl.Schema({c.name: c.dtype for c in JOB_COLUMNS})
    r = df.row(0, named=True)
    assert (r["source_format"], r["format"], r["n_attempts"], r["job_name"]) == (
        "harbor",
        "counters",
        2,
        "j",
    )
    assert r["analysis_checks"] == checks
    assert _frame([]).columns == [c.name for c in JOB_COLUMNS] and _frame([]).height == 0


def test_run_names_are_the_distinct_sorted_labels() -> None:
    df = pl.DataFrame({"g": [1, 1, 1, 1, 2], "run": ["b", "a", "b", None, "c"]})
    got = df.group_by("g").agg(run_names().alias("runs")).sort("g")
    assert got["runs"].to_list() == ["a, b", "c"]  # a missing label is left out


def test_a_job_with_no_run_label_has_a_null_run_not_an_empty_one() -> None:
    df = pl.DataFrame(
        {"g": [1, 1, 2], "run": [None, None, "c"]}, schema={"g": pl.Int64, "run": pl.String}
    )
    got = df.group_by("g").agg(run_names().alias("runs")).sort("g")
    assert got["runs"].to_list() == [None, "c"]  # unknown stays null


# --- missing_results ---------------------------------------------------------------------


def test_missing_results_are_errors_of_settled_jobs_only(tmp_path: Path) -> None:
    def trial(name: str, *, make: bool = True, result: bool = False) -> str:
        d = tmp_path / name
        if make:
            d.mkdir()
        if result:
            (d / "result.json").write_text("{broken")
        return str(d)

    jobs = pl.DataFrame(
        {"job_id": ["C", "R", "I", "U"], "state": ["complete", "running", "interrupted", "unknown"]}
    )
    rows = [
        ("C", "t1", trial("t1"), False),  # error
        ("C", "t2", trial("t2", result=True), False),  # unreadable result.json: its own error
        ("C", "t3", trial("t3", make=False), False),  # folder gone
        ("C", "t4", trial("t4"), True),  # has a result
        ("R", "t5", trial("t5"), False),  # running: in progress, no error
        ("I", "t6", trial("t6"), False),  # error
        ("U", "t7", trial("t7"), False),  # error
        ("Z", "t8", trial("t8"), False),  # no job row
    ]
    trials = pl.DataFrame(
        rows, schema=["job_id", "trial_id", "trial_dir", "result_present"], orient="row"
    )
    errs = sorted(missing_results(jobs, trials), key=lambda e: e.trial_id)
    assert [(e.trial_id, e.job_id, e.level, e.error_type) for e in errs] == [
        ("t1", "C", "trial", "missing_result"),
        ("t6", "I", "trial", "missing_result"),
        ("t7", "U", "trial", "missing_result"),
    ]
    assert errs[0].path == os.path.join(tmp_path / "t1", "result.json")
    assert errs[0].message.startswith("no result.json in a finished job:")
    assert errs[1].message.startswith("no result.json in an interrupted job:")
    assert errs[2].message.startswith(
        "no result.json in a job that is not running (its state is unknown):"
    )
