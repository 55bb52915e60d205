"""Format versions the real fixtures lack, built from the documented shapes (harbor-format.md)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import polars as pl

import evalkit
from tests.load.factory import job, trial_result, write


def _load(p: Path, **kw) -> evalkit.Runs:
    return evalkit.load(p, cache=False, progress=False, **kw)


def test_harbor_026_schema_and_policy(tmp_path: Path) -> None:
    t = trial_result(
        "org/pkg-task",
        "pkg-task__AAAAAAA",
        rewards={"reward": 0.0},
        exc={
            "exception_type": "ApiRateLimitError",
            "exception_message": "429",
            "exception_traceback": "",
            "occurred_at": "2026-05-01T10:04:00Z",
            "policy": {"should_retry": True, "should_grade": True, "has_valid_reward": False},
        },
        task_id={"org": "org", "name": "pkg-task", "ref": "v2"},
        extra={"schema_version": 1, "reward_valid": False, "verifier_environment_mode": "shared"},
    )
    res = {
        "schema_version": 1,
        "id": "j",
        "started_at": "2026-05-01T09:59:59",
        "updated_at": "2026-05-01T10:06:00",
        "finished_at": "2026-05-01T10:06:00",
        "n_total_trials": 1,
        "stats": {
            "n_completed_trials": 1,
            "n_errored_trials": 1,
            "n_running_trials": 0,
            "n_pending_trials": 0,
            "n_cancelled_trials": 0,
            "n_retries": 0,
            "evals": {},
        },
    }
    runs = _load(job(tmp_path, "j026", [t], result=res))
    r = runs.trials.row(0, named=True)
    assert (r["task_ref"], r["task_ref_kind"]) == ("org/pkg-task@v2", "package")
    assert r["error_kind"] == "provider" and r["outcome"] == "error" and r["reward_valid"] is False
    assert r["harbor_schema"] == "v1"
    j = runs.jobs.row(0, named=True)
    assert j["format"] == "v1" and j["stats_completed"] == 1 and j["stats_errored"] == 1
    # job naive times: offset inferred from the aware trial times (UTC here)
    assert j["naive_tz"].startswith("UTC") and j["finished_at"] == datetime(
        2026, 5, 1, 10, 6, tzinfo=UTC
    )


def test_git_task_id_and_no_model(tmp_path: Path) -> None:
    t = trial_result(
        "t",
        "t__BBBBBBB",
        rewards={"reward": 1},
        task_id={"git_url": "https://g/x.git", "git_commit_id": "c0ffee", "path": "tasks/t"},
        model=None,
    )
    r = _load(job(tmp_path, "jg", [t])).trials.row(0, named=True)
    assert (r["task_ref"], r["task_ref_kind"]) == ("https://g/x.git@c0ffee:tasks/t", "git")
    assert r["model_name"] is None and r["run"] == "oracle__no-model__ds"
    assert r["reward"] == 1.0 and r["outcome"] == "pass"


def test_old_naive_trial_times_with_given_zone(tmp_path: Path) -> None:
    # <= 0.1.35: trial times naive local too; nothing aware to infer from -> the policy decides
    t = trial_result(
        "t",
        "t__CCCCCCC",
        rewards={"reward": 1.0},
        started="2026-01-01T18:00:00.5",
        finished="2026-01-01T18:10:00",
    )
    jd = job(tmp_path, "jold", [t])
    r = _load(jd, naive_tz="+08:00").trials.row(0, named=True)
    assert r["started_at"] == datetime(2026, 1, 1, 10, 0, 0, 500000, tzinfo=UTC)
    assert r["naive_timestamps"] is True and r["duration_s"] == 599.5
    r2 = _load(jd, naive_tz="Asia/Shanghai").trials.row(0, named=True)
    assert r2["started_at"] == r["started_at"]
    r3 = _load(jd, naive_tz="UTC").trials.row(0, named=True)
    assert r3["started_at"] == datetime(2026, 1, 1, 18, 0, 0, 500000, tzinfo=UTC)


def test_naive_exception_time_next_to_aware_times(tmp_path: Path) -> None:
    # <= 0.20: occurred_at naive local (UTC+8) while trial times are aware UTC
    exc = {
        "exception_type": "AgentTimeoutError",
        "exception_message": "timed out",
        "exception_traceback": "",
        "occurred_at": "2026-05-01T18:04:30",
    }
    t = trial_result("t", "t__DDDDDDD", rewards={"reward": 0.0}, exc=exc)
    res = {
        "id": "j",
        "started_at": "2026-05-01T17:59:58",
        "finished_at": "2026-05-01T18:10:00",
        "n_total_trials": 1,
        "stats": {"n_trials": 1, "n_errors": 1, "evals": {}},
    }
    runs = _load(job(tmp_path, "jx", [t], result=res))
    r = runs.trials.row(0, named=True)
    assert r["exception_at"] == datetime(2026, 5, 1, 10, 4, 30, tzinfo=UTC)
    assert runs.jobs["naive_tz"].item().startswith("+08:00")
    assert r["outcome"] == "timeout" and r["error_kind"] == "agent"


def test_multi_step_results(tmp_path: Path) -> None:
    steps = [
        {
            "step_name": "s1",
            "agent_result": {
                "n_input_tokens": 10,
                "n_cache_tokens": 0,
                "n_output_tokens": 5,
                "cost_usd": 0.5,
            },
            "verifier_result": {"rewards": {"reward": 0.0}},
        },
        {
            "step_name": "s2",
            "agent_result": {
                "n_input_tokens": 20,
                "n_cache_tokens": 2,
                "n_output_tokens": 7,
                "cost_usd": None,
            },
            "verifier_result": {"rewards": {"reward": 1.0}},
        },
    ]
    t = trial_result(
        "ms",
        "ms__EEEEEEE",
        extra={"step_results": steps, "agent_result": None, "verifier_result": None},
    )
    r = _load(job(tmp_path, "jm", [t])).trials.row(0, named=True)
    assert r["reward"] == 1.0 and r["outcome"] == "pass"
    assert (r["n_input_tokens"], r["n_cache_tokens"], r["n_output_tokens"]) == (30, 2, 12)
    assert r["cost_usd"] is None  # one step unpriced: the total is unknown, not 0.5


def test_reward_file_precedence_by_version(tmp_path: Path) -> None:
    def mk(name: str, env: dict, lock: bool) -> None:
        t = trial_result("rf", f"{name}__FFFFFFF", rewards=None)
        t["config"]["environment"] = env
        jd = job(tmp_path / name, name, [t])
        v = jd / t["trial_name"] / "verifier"
        v.mkdir()
        (v / "reward.txt").write_text("0.25\n")
        write(v / "reward.json", {"reward": 0.75, "headline": "PARTIAL"})
        if lock:
            write(jd / t["trial_name"] / "lock.json", {"schema_version": 2})

    mk("old", {"type": "docker", "mounts_json": None}, False)  # < 0.7.0: reward.txt first
    mk("new", {"type": "docker", "mounts": None}, False)  # >= 0.7.0: reward.json first
    mk("locked", {"type": "docker"}, True)  # trial lock.json: >= 0.17
    runs = _load(tmp_path)
    got = {
        r["job_name"]: (r["reward"], r["reward_source"]) for r in runs.trials.iter_rows(named=True)
    }
    assert got == {
        "old": (0.25, "reward.txt"),
        "new": (0.75, "reward.json"),
        "locked": (0.75, "reward.json"),
    }
    errs = runs.load_errors.filter(pl.col("error_type") == "non_numeric_reward")
    assert errs.height == 2 and all("headline" in m for m in errs["message"])


def test_midrun_job_with_empty_trial_results_is_interrupted(tmp_path: Path) -> None:
    t = trial_result(
        "t",
        "t__GGGGGGG",
        rewards={"reward": 1.0},
        started="2020-01-01T00:00:00Z",
        finished="2020-01-01T00:01:00Z",
    )
    res = {
        "id": "j",
        "started_at": "2020-01-01T00:00:00",
        "finished_at": None,
        "n_total_trials": 3,
        "stats": {"n_trials": 1, "n_errors": 0, "evals": {}},
        "trial_results": [],
    }
    jd = job(tmp_path, "jr", [t], result=res)
    (jd / "t__HHHHHHH").mkdir()  # a trial that never finished
    (jd / "t__HHHHHHH" / "config.json").write_text(
        '{"trial_name": "t__HHHHHHH", "task": {"path": "tasks/t"}}'
    )
    runs = _load(jd)
    j = runs.jobs.row(0, named=True)
    assert j["state"] == "interrupted" and j["n_trials_declared"] == 3 and j["n_trials_found"] == 2
    assert sorted(runs.trials["outcome"]) == ["incomplete", "pass"]
    inc = runs.trials.filter(pl.col("outcome") == "incomplete").row(0, named=True)
    assert inc["task_name"] == "t"  # from the trial config when result.json is absent
    # a fresh, recently written running job
    res2 = dict(res, started_at=datetime.now().strftime("%Y-%m-%dT%H:%M:%S"))
    jd2 = job(tmp_path, "jr2", [], result=res2)
    assert _load(jd2, naive_tz="local").jobs["state"].item() == "running"


def test_job_interrupted_by_evalkit_run_is_interrupted_at_once(tmp_path: Path) -> None:
    # written just now (inside the activity window) but evalkit run recorded the Ctrl-C
    res = {
        "id": "j",
        "started_at": datetime.now().strftime("%Y-%m-%dT%H:%M:%S"),
        "finished_at": None,
        "n_total_trials": 2,
        "stats": {"n_trials": 0, "n_errors": 0, "evals": {}},
    }
    jd = job(tmp_path, "jc", [], result=res)
    assert _load(jd, naive_tz="local").jobs["state"].item() == "running"
    write(jd / "evalkit-launch.json", {"state": "interrupted"})
    assert _load(jd, naive_tz="local").jobs["state"].item() == "interrupted"
