"""Run Harbor's CLI for a prepared plan: a subprocess in its own session, its output in
``<job>/evalkit-harbor.log``, live progress from result.json files, and a small state
file (``<job>/evalkit-launch.json``: running / finished / interrupted) next to the job.
Success is read from the trial result files, never from Harbor's exit code.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from evalkit import __version__ as EVALKIT_VERSION
from evalkit.launch import manifest as man
from evalkit.launch.harborcli import harbor_env
from evalkit.launch.plan import CONFIG_FILE, LOG_FILE, LaunchPlan, command_line, launch_secrets
from evalkit.launch.progress import JobWatcher, ProgressBar
from evalkit.launch.spec import PROVIDER_KEYS
from evalkit.load.shared.redact import redact_text

STATE_FILE = "evalkit-launch.json"


class HarborRunError(Exception):
    """Harbor produced no trial result at all; the message carries the log's tail."""


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def write_state(job_dir: Path, **fields: Any) -> None:
    """Merge ``fields`` into the launch state file (atomic replace)."""
    path = job_dir / STATE_FILE
    try:
        state = json.loads(path.read_text())
    except (OSError, ValueError):
        state = {}
    state.update(fields, updated_at=_now())
    tmp = path.with_name(f".{STATE_FILE}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(state, indent=2) + "\n")
    os.replace(tmp, path)


def _wait_pump(pump: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    """Let the log pump copy Harbor's last lines (it stops at EOF, when Harbor exits)."""
    with contextlib.suppress(subprocess.TimeoutExpired):  # a Harbor child holds the pipe
        pump.wait(timeout=timeout)


def _stop(proc: subprocess.Popen[bytes], grace: tuple[float, float] = (90.0, 20.0)) -> None:
    """SIGINT Harbor's process group (it cancels trials and tears containers down), then
    SIGTERM, then SIGKILL. A second Ctrl-C skips to the next step."""
    for sig, wait in (
        (signal.SIGINT, grace[0]),
        (signal.SIGTERM, grace[1]),
        (signal.SIGKILL, 10.0),
    ):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
        try:
            proc.wait(timeout=wait)
            return
        except (subprocess.TimeoutExpired, KeyboardInterrupt):
            continue


def execute(
    plan: LaunchPlan,
    *,
    progress: bool = True,
    poll_interval: float = 0.5,
    environ: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Run Harbor for a prepared plan (no checks here); returns a summary dict."""
    job_dir = plan.job_dir
    man.write_manifest(job_dir, plan.manifest)  # frozen before any result exists
    if plan.action == "start":
        (job_dir / CONFIG_FILE).write_text(json.dumps(plan.config, indent=2) + "\n")
    watcher = JobWatcher(job_dir)
    summary: dict[str, Any] = {
        "job_dir": str(job_dir),
        "action": plan.action,
        "manifest_digest": plan.manifest["digest"],
        "harbor_returncode": None,
        "interrupted": False,
    }
    if plan.action == "complete":
        watcher.poll()
        summary.update(watcher.counts.as_dict())
        return summary
    log_path = job_dir / LOG_FILE
    _run_logged(plan, log_path, watcher, summary, progress, poll_interval, environ)
    if watcher.counts.finished == 0 and (plan.manifest.get("n_trials") or 1) > 0:
        tail = "\n".join(log_path.read_text(errors="replace").splitlines()[-30:])
        raise HarborRunError(
            f"Harbor (exit code {summary['harbor_returncode']}) produced no trial result in "
            f"{job_dir}; log {log_path}:\n{tail}"
        )
    return summary


def _run_logged(
    plan: LaunchPlan,
    log_path: Path,
    watcher: JobWatcher,
    summary: dict[str, Any],
    progress: bool,
    poll_interval: float,
    environ: dict[str, str] | None,
) -> None:
    """Run Harbor to its end (or Ctrl-C), its output appended to ``log_path``, progress
    shown, and the launch state and ``summary`` updated when it ends."""
    cmd = redact_text(
        command_line(plan.command, plan.pythonpath), launch_secrets(plan.spec, environ)
    )
    env = harbor_env(plan.pythonpath, environ)
    with open(log_path, "a", encoding="utf-8") as log:
        log.write(f"\n=== evalkit {EVALKIT_VERSION} {_now()} {plan.action}: {cmd}\n")
        log.flush()
        pump, proc = _start_harbor(plan, log_path, env)
        write_state(
            plan.job_dir,
            state="running",
            action=plan.action,
            command=cmd,
            pid=proc.pid,
            started_at=_now(),
        )
        bar = ProgressBar(watcher, plan.manifest.get("n_trials"), plan.job_name, enabled=progress)
        try:
            while proc.poll() is None:
                time.sleep(poll_interval)
                bar.update()
        except KeyboardInterrupt:
            summary["interrupted"] = True
            _stop(proc)
            _wait_pump(pump)
            log.write(f"=== interrupted (Ctrl-C); Harbor exit code {proc.returncode}\n")
            raise
        finally:
            bar.close()
            if not summary["interrupted"]:
                _wait_pump(pump)
                log.write(f"=== Harbor exit code {proc.returncode}\n")
            summary["harbor_returncode"] = proc.returncode
            summary.update(watcher.counts.as_dict())
            write_state(
                plan.job_dir,
                state="interrupted" if summary["interrupted"] else "finished",
                harbor_returncode=proc.returncode,
                ended_at=_now(),
                counts=watcher.counts.as_dict(),
            )


def _start_harbor(
    plan: LaunchPlan, log_path: Path, env: dict[str, str]
) -> tuple[subprocess.Popen[bytes], subprocess.Popen[bytes]]:
    """The log pump (its own process, redacting Harbor's output into the log) and Harbor
    writing into it, each in its own session."""
    names = [
        *plan.spec.pass_env,
        *(n for r in PROVIDER_KEYS.values() for a in r for n in a.split("|")),
    ]
    pump = subprocess.Popen(
        [sys.executable, "-m", "evalkit.launch.logpump", str(log_path), *names],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        env=env,
        start_new_session=True,
    )
    try:
        proc = subprocess.Popen(
            plan.command,
            stdout=pump.stdin,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
        )
    finally:
        pump.stdin.close()  # Harbor holds the only writer: the pump ends when Harbor does
    return pump, proc
