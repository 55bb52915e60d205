"""Edges of real Harbor data (issue 20): each test loads a constructed job folder from
``tests/fixtures/harbor-edges/`` (SOURCES.md there says which shape each reproduces)."""

from __future__ import annotations

import json
import os
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest

import evalkit as ek
from tests.conftest import FIXTURES

EDGES = FIXTURES / "harbor-edges"


@pytest.fixture
def edge(tmp_path: Path):
    """Copy of one edge fixture (loads may write nothing into the repository)."""

    def copy(name: str) -> Path:
        dst = tmp_path / name
        shutil.copytree(EDGES / name, dst)
        return dst

    return copy


def test_unfinished_trial_takes_the_recorded_task_name(edge) -> None:
    runs = ek.load(edge("task-identity"), cache=False)
    t = runs.trials
    assert t["task_name"].n_unique() == 2
    hb = t.filter(pl.col("task_name") == "harbor/heartbeat-status-watcher").sort("attempt")
    assert hb["attempt"].to_list() == [1, 2]
    assert hb["outcome"].to_list() == ["pass", "incomplete"]


@pytest.mark.parametrize("machine_zone", ["UTC", "Asia/Tokyo"])
def test_trial_pins_its_naive_exception_zone_when_the_job_cannot(
    edge, monkeypatch, machine_zone: str
) -> None:
    monkeypatch.setenv("TZ", machine_zone)
    t = ek.load(edge("zones"), cache=False).trials.sort("trial_name")
    pinned, stray = t.row(0, named=True), t.row(1, named=True)
    # the exception was written in UTC-5, right when the agent phase ended (15:10Z)
    assert pinned["exception_at"].isoformat() == "2026-05-08T15:10:00.000412+00:00"
    assert pinned["timestamp_out_of_window"] is False
    # a naive time no offset can put inside its trial stays as read, and is flagged
    assert stray["timestamp_out_of_window"] is True


@pytest.mark.parametrize("machine_zone", ["UTC", "Asia/Tokyo"])
def test_sibling_jobs_of_the_run_folder_pin_a_zone_no_trial_can(
    edge, monkeypatch, machine_zone: str
) -> None:
    monkeypatch.setenv("TZ", machine_zone)
    root = edge("zones-siblings")
    runs = ek.load(root, cache=False)
    notes = dict(runs.jobs.select("job_name", "naive_tz").iter_rows())
    assert notes == {
        "2026-05-08__09-00-00": "-05:00 (inferred)",
        "2026-05-08__10-00-00": "-05:00 (inferred from sibling jobs)",
    }
    # the trial wrote only naive times, in UTC-5 like its sibling job
    naive = runs.trials.filter(pl.col("naive_timestamps")).row(0, named=True)
    assert naive["started_at"].isoformat() == "2026-05-08T15:00:05+00:00"
    assert naive["exception_at"].isoformat() == "2026-05-08T15:10:00.000412+00:00"


def test_a_zone_from_siblings_is_chosen_again_with_the_jobs_loaded(edge, monkeypatch) -> None:
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    root = edge("zones-siblings")
    done = {"started_at": "2026-05-08T10:00:00", "finished_at": "2026-05-08T10:12:00"}
    (root / "2026-05-08__10-00-00" / "result.json").write_text(json.dumps(done))  # complete
    alone = ek.load(root / "2026-05-08__10-00-00", cache=True)  # cached with no sibling
    assert alone.jobs["naive_tz"].to_list() == ["Asia/Tokyo (local; could not infer)"]
    both = ek.load(root, cache=True).trials.filter(pl.col("naive_timestamps"))
    assert both["started_at"].dt.hour().to_list() == [15]
    again = ek.load(root / "2026-05-08__10-00-00", cache=True)
    assert again.trials["started_at"].dt.hour().to_list() == [1]  # 10:00 read in Tokyo


def test_out_of_window_is_null_without_both_trial_ends(edge) -> None:
    t = ek.load(edge("task-identity"), cache=False).trials
    unfinished = t.filter(~pl.col("result_present"))
    assert unfinished["timestamp_out_of_window"].to_list() == [None]
    assert t.filter(pl.col("result_present"))["timestamp_out_of_window"].to_list() == [False, False]


def test_unfinished_trials_read_exception_txt_and_trial_log(edge) -> None:
    t = ek.load(edge("no-result-evidence"), cache=False).trials.sort("trial_name")
    _, cancelled, crashed = (t.row(i, named=True) for i in range(3))
    assert (cancelled["exception_type"], cancelled["error_kind"]) == ("CancelledError", "cancelled")
    assert cancelled["outcome"] == "incomplete"
    assert crashed["exception_type"] == "RuntimeError"
    assert crashed["exception_message"] == "Command timed out after 450 seconds"


def test_missing_result_is_a_load_error_unless_the_job_runs(edge) -> None:
    done = ek.load(edge("no-result-evidence"), cache=False)
    errs = done.load_errors
    assert errs["error_type"].to_list() == ["missing_result", "missing_result"]
    incomplete = done.trials.filter(pl.col("outcome") == "incomplete")
    assert sorted(errs["trial_id"].to_list()) == sorted(incomplete["trial_id"].to_list())

    job = edge("unfinished-job")
    stopped = ek.load(job, cache=False)  # no finished_at, content weeks old: not running
    assert stopped.jobs["state"].to_list() == ["interrupted"]
    assert stopped.load_errors["error_type"].to_list() == ["missing_result"]
    running = ek.load(job, cache=False, running_window_s=10**10)
    assert running.jobs["state"].to_list() == ["running"]
    assert running.load_errors.height == 0
    assert running.trials["outcome"].sort().to_list() == ["incomplete", "pass"]


def test_zero_tokens_of_an_agent_that_ran_are_flagged_not_measured(edge) -> None:
    t = ek.load(edge("tokens-not-recorded"), cache=False).trials.sort("trial_name")
    ran, oracle = t.row(0, named=True), t.row(1, named=True)
    assert (ran["n_input_tokens"], ran["n_output_tokens"]) == (0, 0)  # kept as recorded
    assert ran["tokens_not_recorded"] is True
    assert oracle["tokens_not_recorded"] is False  # no trajectory: its 0 tokens are true


def test_tokens_in_the_trajectory_final_metrics_are_recorded(edge) -> None:
    runs = ek.load(edge("tokens-in-trajectory"), cache=False)
    # at load only the trajectory's presence is known: the 0s count as not recorded
    assert runs.trials["tokens_not_recorded"].to_list() == [True]
    _ = runs.steps  # final_metrics has prompt / completion totals: the tokens ARE recorded
    t = runs.trials.row(0, named=True)
    assert t["tokens_not_recorded"] is False
    assert t["metrics_mismatch"].startswith("prompt_tokens: atif 1200 vs result 0")
    # ... while the agent that recorded no totals anywhere stays flagged after the read
    other = ek.load(edge("tokens-not-recorded"), cache=False)
    _ = other.steps
    flags = dict(other.trials.select("trial_name", "tokens_not_recorded").iter_rows())
    assert flags == {"clarify-meeting__Tk1aaaa": True, "clarify-meeting__Tk2bbbb": False}


def test_real_hermes_trials_record_no_tokens() -> None:
    t = ek.load(FIXTURES / "harbor" / "openclaw-dev-jobs", cache=False).trials
    flagged = t.filter(pl.col("tokens_not_recorded"))
    assert flagged.height > 0
    assert set(flagged["agent_name"]) == {"hermes-gateway"}


def test_a_fresh_copy_of_an_old_job_is_not_running(edge) -> None:
    job = edge("copied-job") / "2026-02-03__09-00-00"  # copied just now: fresh file times
    runs = ek.load(job, cache=False)
    assert runs.jobs["state"].to_list() == ["unknown"]
    assert set(runs.load_errors["error_type"]) == {"missing_result"}
    # Harbor's own record of a job that started a minute ago agrees with the fresh writes
    now = datetime.now(UTC) - timedelta(minutes=1)
    (job / "lock.json").write_text(json.dumps({"created_at": now.isoformat()}))
    runs = ek.load(job, cache=False)
    assert runs.jobs["state"].to_list() == ["running"]
    assert runs.load_errors.height == 0


def test_a_default_folder_name_dates_a_job_with_no_time_inside(edge, monkeypatch) -> None:
    monkeypatch.setenv("TZ", "UTC")
    old = edge("copied-job") / "2026-02-03__09-00-00"
    # the same files in a folder Harbor named a minute ago: a job just started, not a copy
    fresh = old.parent / (datetime.now(UTC) - timedelta(minutes=1)).strftime("%Y-%m-%d__%H-%M-%S")
    old.rename(fresh)
    os.utime(fresh)  # written just now
    runs = ek.load(fresh, cache=False)
    assert runs.jobs["state"].to_list() == ["running"]
    assert runs.load_errors.height == 0
    # a name that is not Harbor's default (or not a date) says nothing
    custom = fresh.rename(fresh.parent / f"{fresh.name}-rerun")
    os.utime(custom)
    assert ek.load(custom, cache=False).jobs["state"].to_list() == ["unknown"]


def test_named_start_reads_only_harbors_default_job_names() -> None:
    from evalkit.load.jobs.extract import named_start

    assert named_start("2025-11-04__10-22-31") == "2025-11-04T10:22:31"
    assert named_start("2025-13-04__10-22-31") is None  # no 13th month
    assert named_start("my-job") is None and named_start("2025-11-04__10-22-31x") is None


def test_harbor_analyze_checks_are_trial_columns(edge) -> None:
    t = ek.load(edge("analyzed"), cache=False).trials.sort("trial_name")
    hacked, honest, plain = (t.row(i, named=True) for i in range(3))
    assert hacked["analysis_failed"] == "reward_hacking"
    assert {c["name"]: c["verdict"] for c in hacked["analysis_checks"]} == {
        "reward_hacking": "fail",
        "task_specification": "pass",
    }
    assert honest["analysis_failed"] == ""
    assert "not_applicable" in {c["verdict"] for c in honest["analysis_checks"]}
    # not analysed is unknown, never a pass
    assert plain["analysis_checks"] is None and plain["analysis_failed"] is None
    assert plain["analysis_summary"] is None


def test_a_job_level_analysis_is_a_jobs_column(edge) -> None:
    root = edge("analyzed")
    job = ek.load(root, cache=False).jobs.row(0, named=True)
    assert job["analysis_summary"] == "1 of 2 analysed trials shows reward hacking."
    assert job["analysis_checks"] == []
    assert ek.load(edge("zones"), cache=False).jobs["analysis_summary"].to_list() == [None]
    # an unreadable job analysis.json is a load error and unknown columns, not a crash
    (root / "2026-05-24__08-00-00" / "analysis.json").write_text("{not json")
    runs = ek.load(root, cache=False)
    assert runs.jobs["analysis_summary"].to_list() == [None]
    err = runs.load_errors.row(0, named=True)
    assert err["path"].endswith("2026-05-24__08-00-00/analysis.json") and err["job_id"]


def test_a_regrade_names_its_source_and_is_not_another_attempt(edge) -> None:
    t = ek.load(edge("regraded"), cache=False).trials
    regrades = t.filter(pl.col("regrade_of").is_not_null())
    sources = t.filter(pl.col("regrade_of").is_null())
    assert regrades.height == 3 and sources.height == 3
    # each regrade names its source by the source's result.json id
    assert set(regrades["regrade_of"]) == set(sources["result_id"])
    # same agent and model (carried from the source), but its own run: not attempt 2
    assert regrades["run"].unique().to_list() == [sources["run"][0] + "__regrade"]
    assert t["attempt"].to_list() == [1] * 6


def _as_hub_regrade(job: Path, source_job_id: str) -> None:
    """Rewrite a regrade job's configs the way a regrade of a hub job records them: the
    source job and trials by id only (``type: "hub"``, no paths)."""
    cfg = job / "config.json"
    c = json.loads(cfg.read_text())
    c["source_jobs"] = [{"action": "regrade", "type": "hub", "job_id": source_job_id}]
    cfg.write_text(json.dumps(c))
    for cfg in job.glob("*/config.json"):
        c = json.loads(cfg.read_text())
        src = {"action": "regrade", "type": "hub", "trial_id": c["source_trial"]["trial_id"]}
        c["source_trial"] = src
        cfg.write_text(json.dumps(c))


def test_a_hub_regrade_pairs_with_the_source_job_harbor_downloaded(tmp_path: Path) -> None:
    # `harbor job regrade <hub job uuid>` keeps the downloaded source job in
    # <jobs_dir>/.sources/<uuid>/<job name> (harbor/trial/regrade.py: resolve_source_job_dir)
    hub_id, src, regrade = "aaaaaaaa-0000-4000-8000-000000000001", "2026-05-25__09-00-00", "2026-05-25__11-00-00"  # fmt: skip
    shutil.copytree(EDGES / "regraded" / regrade, tmp_path / regrade)
    shutil.copytree(EDGES / "regraded" / src, tmp_path / ".sources" / hub_id / src)
    _as_hub_regrade(tmp_path / regrade, hub_id)
    # an interrupted regrade leaves per-trial seeds in its own .sources: scratch, not trials
    seed = tmp_path / regrade / ".sources" / "00000000-0000-4000-8000-000000000011"
    shutil.copytree(EDGES / "regraded" / src / "fix-parser__Sr1aaaa", seed / "fix-parser__Sr1aaaa")
    runs = ek.load(tmp_path, cache=False)
    assert runs.trials.height == 6 and runs.load_errors.height == 0
    pairs = ek.stats.regrade_pairs(runs.trials).sort("task_name")
    assert pairs["source_trial_id"].null_count() == 0
    assert pairs["reward_before"].to_list() == [0.0, 1.0, 1.0]  # add-cache, fix-parser, sort-logs
    assert pairs["reward_after"].to_list() == [0.0, 0.0, 0.0]
    unstable = ek.stats.verifier_instability(runs.trials).row(0, named=True)
    assert (unstable["n_unstable"], unstable["n_task_changed"], unstable["n_unpaired"]) == (1, 1, 0)
