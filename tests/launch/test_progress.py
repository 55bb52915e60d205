"""Progress is read from trial result.json files as they appear (and disappear)."""

from __future__ import annotations

import json
from pathlib import Path

from evalkit.launch.progress import JobWatcher, ProgressBar, trial_reward


def put(job: Path, name: str, rewards: dict | None, task: str = "t") -> Path:
    d = job / name
    d.mkdir(parents=True)
    p = d / "result.json"
    p.write_text(
        json.dumps(
            {
                "task_name": task,
                "verifier_result": None if rewards is None else {"rewards": rewards},
            }
        )
    )
    return p


def test_trial_reward_rules() -> None:
    assert trial_reward({"verifier_result": {"rewards": {"reward": 1}}}) == 1.0
    assert trial_reward({"verifier_result": {"rewards": {"acc": 0.5, "x": 1}}}) == 0.5
    assert trial_reward({"verifier_result": None}) is None
    assert trial_reward({"verifier_result": {"rewards": {"reward": "high"}}}) is None


def test_watcher_counts_appearing_and_vanishing_results(tmp_path: Path) -> None:
    job = tmp_path / "job"
    w = JobWatcher(job)
    assert w.poll() == 0  # no folder yet
    put(job, "a__1", {"reward": 1.0}, "a")
    put(job, "a__2", {"reward": 0.0}, "a")
    gone = put(job, "b__1", None, "b")
    t = put(job, "d__1", {"reward": 0.0}, "d")
    t.write_text(
        json.dumps(
            {
                "task_name": "d",
                "verifier_result": {"rewards": {"reward": 0}},
                "exception_info": {"exception_type": "AgentTimeoutError"},
            }
        )
    )
    (job / "c__1").mkdir()
    (job / "c__1" / "result.json").write_text('{"task_na')  # being written
    assert w.poll() == 4
    assert w.counts.as_dict() == {
        "finished": 4,
        "passed": 1,
        "failed": 1,
        "timeouts": 1,
        "errored": 1,
    }
    assert w.counts.tasks == {"a": 2, "b": 1, "d": 1}
    assert w.poll() == 0
    gone.unlink()  # e.g. Harbor's resume deletes a cancelled trial
    (job / "c__1" / "result.json").write_text(
        json.dumps({"task_name": "c", "verifier_result": {"rewards": {"reward": 1}}})
    )
    assert w.poll() == 2
    assert w.counts.as_dict() == {
        "finished": 4,
        "passed": 2,
        "failed": 1,
        "timeouts": 1,
        "errored": 0,
    }


def test_bar_takes_the_total_from_harbors_job_result(tmp_path: Path) -> None:
    job = tmp_path / "job"
    job.mkdir()
    bar = ProgressBar(JobWatcher(job), None, "job", enabled=False)
    assert bar.bar.total is None
    (job / "result.json").write_text(json.dumps({"n_total_trials": 6}))
    put(job, "x__1", {"reward": 1})
    bar.update()
    assert bar.bar.total == 6 and bar.bar.n == 1
    bar.close()
