"""prepare / execute / run against a fake Harbor CLI (no Docker): actions start, resume,
complete; the manifest written before results; refusals; success read from result.json."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from evalkit.launch import (
    MANIFEST_FILE,
    STATE_FILE,
    HarborRunError,
    PreflightError,
    RunSpec,
    dry_run,
    prepare,
    run,
)
from evalkit.launch.plan import CONFIG_FILE, LOG_FILE


def spec_for(dataset: Path, root: Path, **kw: object) -> RunSpec:
    return RunSpec(
        **{"agent": "oracle", "paths": [dataset], "attempts": 2, "runs_root": root, **kw}
    )  # type: ignore[arg-type]


def test_dry_run_writes_nothing_and_shows_everything(
    dataset: Path, tmp_path: Path, fake_harbor: Path
) -> None:
    plan = dry_run(spec_for(dataset, tmp_path / "runs"), check_environment=False)
    assert plan.problems == [] and plan.action == "start"
    assert plan.resolved_config is not None and plan.manifest["versions"]["harbor"] == "0.26.0"
    assert (
        plan.manifest["tasks"]["names"] == ["alpha", "beta", "gamma-x"]
        and plan.manifest["n_trials"] == 6
    )
    assert plan.manifest["retry"]["exclude_exceptions"] == sorted(
        plan.manifest["retry"]["exclude_exceptions"]
    )
    text = plan.render()
    assert '"n_attempts": 2' in text and MANIFEST_FILE in text and f"{fake_harbor} run -c " in text
    assert not (tmp_path / "runs").exists()
    assert plan.job_name.startswith("oracle__nomodel__")
    assert (
        dry_run(spec_for(dataset, tmp_path / "runs"), check_environment=False).job_name
        == plan.job_name
    )


def test_run_start_then_repeat_is_complete(
    dataset: Path, tmp_path: Path, fake_harbor: Path
) -> None:
    spec = spec_for(dataset, tmp_path / "runs", job_name="j1")
    plan = prepare(spec, check_environment=False)
    runs = run(spec, progress=False, check_environment=False)  # the fake Harbor needs no Docker
    summary = runs.options["launch"]
    job = tmp_path / "runs" / "j1"
    assert summary["action"] == "start" and summary["harbor_returncode"] == 0
    assert summary["finished"] == 6 and summary["passed"] == 3 and summary["failed"] == 3
    assert runs.trials.height == 6 and sorted(set(runs.trials["outcome"])) == ["fail", "pass"]
    assert json.loads((job / MANIFEST_FILE).read_text())["digest"] == plan.manifest["digest"]
    assert json.loads((job / CONFIG_FILE).read_text()) == plan.config
    assert json.loads((job / STATE_FILE).read_text())["state"] == "finished"
    assert "fake harbor: ok" in (job / LOG_FILE).read_text()
    again = run(spec, progress=False, check_environment=False)
    assert again.options["launch"]["action"] == "complete"
    assert again.options["launch"]["harbor_returncode"] is None
    assert again.options["launch"]["manifest_digest"] == plan.manifest["digest"]


def test_interrupted_job_resumes_without_duplicates(
    dataset: Path, tmp_path: Path, fake_harbor: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evalkit.launch.execute import execute

    spec = spec_for(dataset, tmp_path / "runs", job_name="j2")
    monkeypatch.setenv("FAKE_HARBOR_MODE", "half")
    execute(prepare(spec, check_environment=False), progress=False)
    job = tmp_path / "runs" / "j2"
    assert len(list(job.glob("*/result.json"))) == 3
    monkeypatch.setenv("FAKE_HARBOR_MODE", "ok")
    plan = prepare(spec, check_environment=False)
    assert plan.action == "resume" and plan.command[1:3] == ["job", "resume"]
    summary = execute(plan, progress=False)
    assert summary["finished"] == 6
    tasks = sorted(json.loads(p.read_text())["task_name"] for p in job.glob("*/result.json"))
    assert tasks == sorted(["alpha", "beta", "gamma-x"] * 2)


def test_changed_settings_and_foreign_jobs_are_refused(
    dataset: Path, tmp_path: Path, fake_harbor: Path
) -> None:
    from evalkit.launch.execute import execute

    root = tmp_path / "runs"
    execute(
        prepare(spec_for(dataset, root, job_name="j3"), check_environment=False), progress=False
    )
    plan = prepare(spec_for(dataset, root, job_name="j3", attempts=3), check_environment=False)
    assert [p.kind for p in plan.problems] == ["manifest"] and "attempts" in plan.problems[
        0
    ].message
    with pytest.raises(PreflightError):
        plan.report.raise_if_failed()
    (root / "foreign" / "t__1").mkdir(parents=True)
    plan = prepare(spec_for(dataset, root, job_name="foreign"), check_environment=False)
    assert "without an evalkit manifest" in plan.problems[0].message


def test_no_result_at_all_is_an_error_with_the_log_tail(
    dataset: Path, tmp_path: Path, fake_harbor: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evalkit.launch.execute import execute

    monkeypatch.setenv("FAKE_HARBOR_MODE", "nothing")
    with pytest.raises(HarborRunError, match="fake harbor: nothing"):
        execute(
            prepare(spec_for(dataset, tmp_path / "runs", job_name="j4"), check_environment=False),
            progress=False,
        )


def test_credentials_in_settings_and_missing_harbor_are_reported_together(
    dataset: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVALKIT_HARBOR", str(tmp_path / "no-harbor"))
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no.sock")
    spec = spec_for(
        dataset,
        tmp_path / "runs",
        agent_kwargs={"api_key": "x"},
        pass_env=["EVALKIT_TEST_UNSET_VAR"],
    )
    with pytest.raises(PreflightError) as err:
        run(spec, progress=False)
    kinds = {p.kind for p in err.value.problems}
    assert kinds == {"harbor", "docker", "manifest", "keys"}
    assert "EVALKIT_TEST_UNSET_VAR" in str(err.value)


def test_non_docker_environments_pass_through(
    dataset: Path, tmp_path: Path, fake_harbor: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no.sock")
    plan = prepare(spec_for(dataset, tmp_path / "runs", env="modal"))
    assert plan.problems == [] and any("passed through" in n for n in plan.report.notes)
    assert plan.config["environment"] == {"type": "modal"}


def test_ctrl_c_stops_harbor_and_leaves_an_interrupted_job(
    dataset: Path, tmp_path: Path, fake_harbor: Path
) -> None:
    root = tmp_path / "runs"
    code = (
        "import sys; from pathlib import Path; from evalkit.launch import RunSpec, prepare; from evalkit.launch.execute import execute\n"
        f"spec = RunSpec(agent='oracle', paths=[Path({str(dataset)!r})], attempts=20, runs_root=Path({str(root)!r}), job_name='j5')\n"
        "execute(prepare(spec, check_environment=False), progress=False)\n"
    )
    env = {**os.environ, "FAKE_HARBOR_MODE": "slow"}
    proc = subprocess.Popen(
        [sys.executable, "-c", code], env=env, stderr=subprocess.PIPE, text=True
    )
    job = root / "j5"
    deadline = time.monotonic() + 60
    while len(list(job.glob("*/result.json"))) < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode != 0 and "KeyboardInterrupt" in err
    state = json.loads((job / STATE_FILE).read_text())
    assert state["state"] == "interrupted" and state["counts"]["finished"] < 60
    assert "interrupted (Ctrl-C)" in (job / LOG_FILE).read_text()
    import evalkit

    runs = evalkit.load(job, progress=False, cache=False)
    assert runs.trials.height >= 2 and runs.jobs["finished_at"].to_list() == [None]
