"""evalkit.launch.execute runs Harbor's CLI for a prepared plan: the manifest frozen first,
the Harbor config written for a start, Harbor in its own session with its output (through
the redacting log pump) in ``<job>/evalkit-harbor.log``, a launch state file, and success
read from the trial result files rather than Harbor's exit code.

tests/launch/test_runner.py covers whole launches with the fake Harbor (start, resume,
complete, Ctrl-C); here Harbor is replaced by small scripts set as the plan's command, to
check the state file's merging, the signal ladder of ``_stop`` (a stand-in process), the
log's framing lines, the exit code recorded next to the results, the environment Harbor
gets, what a resume leaves alone, and the log tail of a run without any result."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from evalkit import __version__
from evalkit.launch import harborcli
from evalkit.launch import manifest as man
from evalkit.launch.execute import (
    STATE_FILE,
    HarborRunError,
    _stop,
    _wait_pump,
    execute,
    write_state,
)
from evalkit.launch.plan import CONFIG_FILE, LOG_FILE, LaunchPlan, prepare
from evalkit.launch.spec import RunSpec

SECRET = "s3cret-value-0123456789"


@pytest.fixture
def plan(dataset: Path, tmp_path: Path) -> LaunchPlan:
    """A start plan for the three-task dataset, one attempt each (3 trials), job "j"."""
    harborcli.harbor_version.cache_clear()
    exe = tmp_path / "bin" / "harbor"
    exe.parent.mkdir()
    exe.write_text("#!/bin/sh\necho 0.26.0\n")
    exe.chmod(0o755)
    spec = RunSpec(
        agent="oracle", paths=[dataset], env="modal", runs_root=tmp_path / "runs", job_name="j"
    )
    p = prepare(spec, harbor=exe, environ={}, resolve=False)
    assert p.problems == [] and p.action == "start" and p.manifest["n_trials"] == 3
    return p


def harbor_script(tmp_path: Path, body: str) -> list[str]:
    """A command running ``body`` (Python, with ``job`` the job folder and ``trial(task,
    reward)`` writing a trial result) in place of Harbor."""
    path = tmp_path / "stand_in_harbor.py"
    path.write_text(
        "import json, os, sys\nfrom pathlib import Path\njob = Path(sys.argv[1])\n"
        "def trial(task, reward):\n"
        "    d = job / f'{task}__x{reward}'\n    d.mkdir(parents=True, exist_ok=True)\n"
        "    (d / 'result.json').write_text(json.dumps({'task_name': task,\n"
        "        'verifier_result': {'rewards': {'reward': reward}}}))\n" + body + "\n"
    )
    return [sys.executable, str(path)]


def with_command(plan: LaunchPlan, tmp_path: Path, body: str, **kw: object) -> LaunchPlan:
    return dataclasses.replace(
        plan, command=[*harbor_script(tmp_path, body), str(plan.job_dir)], **kw
    )


# -- write_state -----------------------------------------------------------------------------


def test_write_state_merges_fields_and_stamps_the_update(tmp_path: Path) -> None:
    write_state(tmp_path, state="running", pid=12)
    write_state(tmp_path, state="finished", harbor_returncode=0)
    state = json.loads((tmp_path / STATE_FILE).read_text())
    assert {k: state[k] for k in ("state", "pid", "harbor_returncode")} == {
        "state": "finished",
        "pid": 12,
        "harbor_returncode": 0,
    }
    assert state["updated_at"].endswith("Z") and len(state["updated_at"]) == len(
        "2026-01-01T00:00:00Z"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == [STATE_FILE]  # no temporary file left


def test_a_damaged_state_file_is_started_afresh(tmp_path: Path) -> None:
    (tmp_path / STATE_FILE).write_text("{not json")
    write_state(tmp_path, state="running")
    assert set(json.loads((tmp_path / STATE_FILE).read_text())) == {"state", "updated_at"}


# -- _stop / _wait_pump ------------------------------------------------------------------------


class StandInProcess:
    """Exits after the ``exits_after``-th signal (never when None); a wait may raise
    KeyboardInterrupt (a second Ctrl-C)."""

    pid = 4242

    def __init__(self, exits_after: int | None, interrupt_on: int | None = None) -> None:
        self.exits_after, self.interrupt_on = exits_after, interrupt_on
        self.signals: list[int] = []
        self.waits: list[float] = []

    def wait(self, timeout: float) -> int:
        self.waits.append(timeout)
        n = len(self.signals)
        if self.interrupt_on == n:
            raise KeyboardInterrupt
        if self.exits_after is not None and n >= self.exits_after:
            return 0
        raise subprocess.TimeoutExpired("harbor", timeout)


@pytest.fixture
def killpg(monkeypatch: pytest.MonkeyPatch):
    def use(proc: StandInProcess, missing: bool = False) -> None:
        def fake(pid: int, sig: int) -> None:
            assert pid == proc.pid
            proc.signals.append(sig)
            if missing:
                raise ProcessLookupError

        monkeypatch.setattr(os, "killpg", fake)

    return use


def test_stop_sends_sigint_first_and_stops_when_harbor_exits(killpg) -> None:
    proc = StandInProcess(exits_after=1)
    killpg(proc)
    _stop(proc, grace=(5.0, 2.0))  # type: ignore[arg-type]
    assert proc.signals == [signal.SIGINT] and proc.waits == [5.0]


def test_stop_escalates_to_sigterm_then_sigkill(killpg) -> None:
    proc = StandInProcess(exits_after=None)
    killpg(proc)
    _stop(proc, grace=(5.0, 2.0))  # type: ignore[arg-type]
    assert proc.signals == [signal.SIGINT, signal.SIGTERM, signal.SIGKILL]
    assert proc.waits == [5.0, 2.0, 10.0]


def test_a_second_ctrl_c_skips_to_the_next_signal(killpg) -> None:
    proc = StandInProcess(exits_after=2, interrupt_on=1)  # Ctrl-C while waiting after SIGINT
    killpg(proc)
    _stop(proc, grace=(90.0, 20.0))  # type: ignore[arg-type]
    assert proc.signals == [signal.SIGINT, signal.SIGTERM]


def test_a_process_group_already_gone_is_not_an_error(killpg) -> None:
    proc = StandInProcess(exits_after=0)
    killpg(proc, missing=True)
    _stop(proc)  # type: ignore[arg-type]
    assert proc.signals == [signal.SIGINT]


def test_wait_pump_gives_up_quietly_when_a_child_holds_the_pipe() -> None:
    waited = []

    class Pump:
        def wait(self, timeout: float) -> int:
            waited.append(timeout)
            raise subprocess.TimeoutExpired("pump", timeout)

    _wait_pump(Pump(), timeout=0.5)  # type: ignore[arg-type]
    assert waited == [0.5]


# -- execute -----------------------------------------------------------------------------------


def test_a_start_freezes_the_manifest_writes_the_config_and_frames_the_log(
    plan: LaunchPlan, tmp_path: Path
) -> None:
    p = with_command(plan, tmp_path, "print('harbor says hi')\ntrial('alpha', 1.0)")
    summary = execute(p, progress=False, poll_interval=0.01)
    job = plan.job_dir
    assert json.loads((job / man.MANIFEST_FILE).read_text())["digest"] == plan.manifest["digest"]
    assert json.loads((job / CONFIG_FILE).read_text()) == plan.config
    log = (job / LOG_FILE).read_text().splitlines()
    assert log[0] == "" and log[1].startswith(f"=== evalkit {__version__} ")
    assert log[1].endswith(" start: " + " ".join(p.command))
    assert log[2:] == ["harbor says hi", "=== Harbor exit code 0"]
    assert summary == {
        "job_dir": str(job),
        "action": "start",
        "manifest_digest": plan.manifest["digest"],
        "harbor_returncode": 0,
        "interrupted": False,
        "finished": 1,
        "passed": 1,
        "failed": 0,
        "timeouts": 0,
        "errored": 0,
    }


def test_success_is_read_from_results_not_from_harbors_exit_code(
    plan: LaunchPlan, tmp_path: Path
) -> None:
    p = with_command(plan, tmp_path, "trial('alpha', 1.0)\ntrial('beta', 0.0)\nsys.exit(3)")
    summary = execute(p, progress=False, poll_interval=0.01)  # no error: results exist
    assert summary["harbor_returncode"] == 3
    assert (summary["finished"], summary["passed"], summary["failed"]) == (2, 1, 1)
    state = json.loads((plan.job_dir / STATE_FILE).read_text())
    assert state["state"] == "finished" and state["harbor_returncode"] == 3
    assert state["action"] == "start" and state["command"] == " ".join(p.command)
    assert isinstance(state["pid"], int) and state["started_at"] <= state["ended_at"]
    assert state["counts"] == {"finished": 2, "passed": 1, "failed": 1, "timeouts": 0, "errored": 0}
    assert (plan.job_dir / LOG_FILE).read_text().endswith("=== Harbor exit code 3\n")


def test_harbor_gets_the_given_environment_and_the_agent_paths(
    plan: LaunchPlan, tmp_path: Path
) -> None:
    body = (
        "(job / 'env.json').write_text(json.dumps({k: os.environ.get(k) for k in "
        "('EK_PROBE', 'PYTHONPATH', 'LITELLM_LOCAL_MODEL_COST_MAP')}))\ntrial('alpha', 1.0)"
    )
    p = with_command(plan, tmp_path, body, pythonpath=[tmp_path / "agents"])
    execute(p, progress=False, poll_interval=0.01, environ={"EK_PROBE": "yes"})
    env = json.loads((plan.job_dir / "env.json").read_text())
    assert env == {
        "EK_PROBE": "yes",
        "PYTHONPATH": str(tmp_path / "agents"),
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    }


def test_secret_values_in_the_command_are_redacted_in_the_log_and_state(
    plan: LaunchPlan, tmp_path: Path
) -> None:
    p = with_command(plan, tmp_path, "trial('alpha', 1.0)")
    p = dataclasses.replace(p, command=[*p.command, f"--header=x-{SECRET}"])
    execute(p, progress=False, poll_interval=0.01, environ={"EK_HEADER_TOKEN": SECRET})
    for name in (LOG_FILE, STATE_FILE):
        text = (plan.job_dir / name).read_text()
        assert SECRET not in text and "--header=x-[REDACTED]" in text


def test_a_resume_keeps_the_config_harbor_started_with(plan: LaunchPlan, tmp_path: Path) -> None:
    plan.job_dir.mkdir(parents=True)
    (plan.job_dir / CONFIG_FILE).write_text('{"original": true}\n')
    p = with_command(plan, tmp_path, "trial('alpha', 1.0)", action="resume")
    summary = execute(p, progress=False, poll_interval=0.01)
    assert summary["action"] == "resume"
    assert (plan.job_dir / CONFIG_FILE).read_text() == '{"original": true}\n'
    assert " resume: " in (plan.job_dir / LOG_FILE).read_text()


def test_a_second_run_appends_to_the_log(plan: LaunchPlan, tmp_path: Path) -> None:
    execute(
        with_command(plan, tmp_path, "print('OUTPUT-ONE')\ntrial('alpha', 1.0)"),
        progress=False,
        poll_interval=0.01,
    )
    execute(
        with_command(plan, tmp_path, "print('OUTPUT-TWO')\ntrial('beta', 1.0)", action="resume"),
        progress=False,
        poll_interval=0.01,
    )
    log = (plan.job_dir / LOG_FILE).read_text()
    assert log.index("OUTPUT-ONE") < log.index(" resume: ") < log.index("OUTPUT-TWO")
    assert log.count("=== Harbor exit code 0") == 2


def test_a_complete_job_runs_nothing_and_reports_its_counts(
    plan: LaunchPlan, tmp_path: Path
) -> None:
    job = plan.job_dir
    for task, reward in (("alpha", 1.0), ("beta", 0.0), ("gamma-x", 1.0)):
        (job / f"{task}__1").mkdir(parents=True)
        (job / f"{task}__1" / "result.json").write_text(
            json.dumps({"task_name": task, "verifier_result": {"rewards": {"reward": reward}}})
        )
    p = dataclasses.replace(plan, action="complete", command=[str(tmp_path / "never-run")])
    summary = execute(p, progress=False)
    assert summary["harbor_returncode"] is None and summary["interrupted"] is False
    assert (summary["finished"], summary["passed"], summary["failed"]) == (3, 2, 1)
    assert (job / man.MANIFEST_FILE).is_file()
    assert not (job / CONFIG_FILE).exists() and not (job / LOG_FILE).exists()
    assert not (job / STATE_FILE).exists()


def test_no_result_at_all_raises_with_the_exit_code_and_the_last_30_log_lines(
    plan: LaunchPlan, tmp_path: Path
) -> None:
    p = with_command(
        plan, tmp_path, "for i in range(1, 41):\n    print(f'line-{i:02d}')\nsys.exit(7)"
    )
    with pytest.raises(HarborRunError) as err:
        execute(p, progress=False, poll_interval=0.01)
    msg = str(err.value)
    assert msg.startswith(f"Harbor (exit code 7) produced no trial result in {plan.job_dir}; log ")
    # the log: a blank line, the header, line-01..line-40, the exit line; the last 30 lines
    # are line-12..line-40 (29) and the exit line
    assert "line-12" in msg and "line-40" in msg and "line-11" not in msg
    assert msg.endswith("=== Harbor exit code 7")
    assert json.loads((plan.job_dir / STATE_FILE).read_text())["state"] == "finished"
