"""Plan a launch without running anything: checks, Harbor config, frozen manifest, action.

``prepare(spec)`` collects every problem (it never raises for one) and decides the action:
``start`` a new job, ``resume`` an existing one (Harbor's own resume), or ``complete``
(every trial already has a result: nothing to run).
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalkit import __version__ as EVALKIT_VERSION
from evalkit.launch import config as cfgmod
from evalkit.launch import manifest as man
from evalkit.launch.harborcli import bundled_agents_dir, harbor_env, print_config
from evalkit.launch.preflight import PreflightReport, preflight
from evalkit.launch.progress import JobWatcher
from evalkit.launch.spec import (
    PROVIDER_KEYS,
    SCRIPTED_AGENT,
    Problem,
    RunSpec,
    job_dir_for,
    resolve_tasks,
    task_digest,
)
from evalkit.load.shared.redact import env_secret_values, redact_text

CONFIG_FILE = "evalkit-harbor-config.json"
LOG_FILE = "evalkit-harbor.log"
SETTINGS_NOT_IN_MANIFEST = {
    "job_name",
    "jobs_dir",
    "datasets",
    "tasks",
    "agents",
    "environment",
    "retry",
    "n_attempts",
    "n_concurrent_trials",
    *cfgmod.TIMEOUT_KEYS,
}


@dataclass
class LaunchPlan:
    spec: RunSpec
    job_name: str
    job_dir: Path
    config: dict[str, Any]
    resolved_config: dict[str, Any] | None
    manifest: dict[str, Any]
    action: str  # "start" | "resume" | "complete"
    command: list[str]
    report: PreflightReport
    pythonpath: list[Path] = field(default_factory=list)
    secrets: tuple[str, ...] = ()  # values no output may show (``launch_secrets``)

    @property
    def problems(self) -> list[Problem]:
        return self.report.problems

    def render(self) -> str:
        """What --dry-run prints: the problems that would stop the launch (first), the
        Harbor config, the manifest and the exact command. Everything shown is scrubbed
        as the files a launch writes are (a refused setting shows as ``[REDACTED]``)."""
        shown = scrub([self.resolved_config or self.config, self.manifest], self.secrets)
        parts = []
        if self.report.problems:
            parts.append(f"# {len(self.report.problems)} PROBLEM(S): the launch would be refused")
            parts.extend(f"# PROBLEM: {p}" for p in self.report.problems)
        parts += [
            "# Harbor job config ("
            + (
                "as Harbor resolved it"
                if self.resolved_config
                else "Harbor not run: evalkit's config"
            )
            + ")",
            json.dumps(shown[0], indent=2),
            "# evalkit manifest (" + str(self.job_dir / man.MANIFEST_FILE) + ")",
            json.dumps(shown[1], indent=2),
            f"# action: {self.action}",
            "# command:",
            command_line(self.command, self.pythonpath),
        ]
        for note in self.report.notes:
            parts.append(f"# note: {note}")
        return "\n".join(parts)


def launch_secrets(spec: RunSpec, environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """Values that must never be written anywhere: those of the variables passed to the run
    (``pass_env``), of the provider's key variables and of every secret-looking variable."""
    names = [
        *spec.pass_env,
        *(n for req in PROVIDER_KEYS.values() for r in req for n in r.split("|")),
    ]
    return env_secret_values(os.environ if environ is None else environ, names=names)


def scrub(obj: Any, secrets: tuple[str, ...]) -> Any:
    """A copy of a JSON-like object whose strings hold no secret value and no key-like text."""
    if isinstance(obj, dict):
        return {k: scrub(v, secrets) for k, v in obj.items()}
    if isinstance(obj, list):
        return [scrub(v, secrets) for v in obj]
    return redact_text(obj, secrets) if isinstance(obj, str) else obj


def _holding_secrets(obj: Any, secrets: tuple[str, ...], where: str = "") -> list[str]:
    if isinstance(obj, dict):
        return [
            p
            for k, v in obj.items()
            for p in _holding_secrets(v, secrets, f"{where}.{k}" if where else str(k))
        ]
    if isinstance(obj, list):
        return [p for i, v in enumerate(obj) for p in _holding_secrets(v, secrets, f"{where}[{i}]")]
    return [where] if isinstance(obj, str) and any(s in obj for s in secrets) else []


def command_line(command: list[str], pythonpath: list[Path]) -> str:
    prefix = (
        f"PYTHONPATH={shlex.quote(os.pathsep.join(str(p) for p in pythonpath))} "
        if pythonpath
        else ""
    )
    return prefix + shlex.join(command)


def _pythonpath(spec: RunSpec) -> list[Path]:
    paths = [Path(p).resolve() for p in spec.agent_pythonpath]
    bundled = bundled_agents_dir()
    if (
        bundled
        and (spec.agent_import_path or "").startswith(SCRIPTED_AGENT.split(".")[0])
        and bundled not in paths
    ):
        paths.append(bundled)
    return paths


def _task_section(
    spec: RunSpec, per_path: dict[Path, list[str]]
) -> tuple[dict[str, Any], list[str]]:
    locs = [str(p) for p in per_path]
    if spec.dataset:
        explicit = spec.tasks and not any(ch in t for t in spec.tasks for ch in "*?[")
        return {
            "source": "registry",
            "dataset": spec.dataset,
            "names": sorted(spec.tasks) if explicit and not spec.exclude_tasks else None,
            "include": list(spec.tasks),
            "exclude": list(spec.exclude_tasks),
        }, locs
    names: list[str] = []
    digests: dict[str, str] = {}
    for path, chosen in per_path.items():
        for name in chosen:
            names.append(name)
            tdir = path if (path / "task.toml").is_file() else path / name
            digests[name] = task_digest(tdir)
    return {
        "source": "local",
        "names": sorted(names),
        "include": list(spec.tasks),
        "exclude": list(spec.exclude_tasks),
        "digests": dict(sorted(digests.items())),
    }, locs


def prepare(
    spec: RunSpec,
    *,
    harbor: str | os.PathLike[str] | None = None,
    environ: dict[str, str] | None = None,
    check_environment: bool = True,
    resolve: bool = True,
) -> LaunchPlan:
    """Everything short of running: checks, config, manifest, action and command.

    Problems are collected in ``plan.problems`` (all of them), never raised here.
    """
    report = preflight(spec, harbor=harbor, environ=environ, check_environment=check_environment)
    secrets = launch_secrets(spec, environ)
    report.problems.extend(_settings_problems(spec, secrets))
    per_path, _ = resolve_tasks(spec) if spec.paths else ({}, [])
    tasks, locations = _task_section(spec, per_path)
    agent = {
        "name": spec.agent,
        "import_path": spec.agent_import_path,
        "kwargs": dict(spec.agent_kwargs),
        "pass_env": sorted(spec.pass_env),
    }
    job_name, job_dir = _job_location(spec, agent, tasks, report)
    config = cfgmod.build_job_config(spec, job_name, job_dir.parent, per_path)
    pythonpath = _pythonpath(spec)
    resolved = None
    if resolve and report.harbor and not any(p.kind in ("spec", "tasks") for p in report.problems):
        resolved = _harbor_view(report, config, pythonpath, environ, secrets)
    manifest = _manifest(spec, report, job_name, job_dir, agent, tasks, locations, config, resolved)
    action = _action(job_dir, manifest, report)
    harbor_cmd = report.harbor or "harbor"
    command = (
        cfgmod.harbor_start_command(harbor_cmd, job_dir / CONFIG_FILE)
        if action == "start"
        else cfgmod.harbor_resume_command(harbor_cmd, job_dir)
    )
    return LaunchPlan(
        spec, job_name, job_dir, config, resolved, manifest, action, command, report, pythonpath,
        secrets,
    )  # fmt: skip


def _manifest(
    spec: RunSpec,
    report: PreflightReport,
    job_name: str,
    job_dir: Path,
    agent: dict[str, Any],
    tasks: dict[str, Any],
    locations: list[str],
    config: dict[str, Any],
    resolved: dict[str, Any] | None,
) -> dict[str, Any]:
    """The launch manifest: the settings as asked, completed by Harbor's resolved view of
    them when there is one (retry, environment, the agent as Harbor sees it)."""
    retry = dict(resolved["retry"]) if resolved else {**config["retry"], "resolved": False}
    env_section: dict[str, Any] = {"type": spec.env}
    if resolved:
        env_section = {k: v for k, v in resolved["environment"].items() if k != "mounts"}
        agent = {
            **agent,
            "resolved": {
                k: v for k, v in resolved["agents"][0].items() if k not in ("kwargs", "env")
            },
        }
    return man.build_manifest(
        job_name=job_name,
        versions={"harbor": report.harbor_version, "evalkit": EVALKIT_VERSION},
        agent=agent,
        model=spec.model,
        environment=env_section,
        tasks=tasks,
        attempts=spec.attempts,
        concurrency=spec.concurrency,
        timeouts=spec.effective_timeouts(),
        retry=retry,
        harbor_settings={
            k: v for k, v in (resolved or {}).items() if k not in SETTINGS_NOT_IN_MANIFEST
        },
        location={
            "runs_root": str(job_dir.parent),
            "job_dir": str(job_dir),
            "task_paths": locations,
        },
    )


def _settings_problems(spec: RunSpec, secrets: Any) -> list[Problem]:
    """Credentials written into the agent settings (by key name, or by a secret's value)."""
    kwargs = dict(spec.agent_kwargs)
    problems = [
        Problem(
            "manifest",
            f"{where}: pass credentials by environment variable name (pass_env), never in settings",
        )
        for where in man.credential_problems(kwargs, "agent_kwargs")
    ]
    problems.extend(
        Problem(
            "manifest",
            f"{where} holds the value of a secret environment variable: pass the variable "
            "by name (pass_env), never its value",
        )
        for where in _holding_secrets(kwargs, secrets, "agent_kwargs")
    )
    return problems


def _job_location(
    spec: RunSpec, agent: dict[str, Any], tasks: Any, report: PreflightReport
) -> tuple[str, Path]:
    """Job name and folder. The default name comes from the settings, so the same command
    finds the same job; an unusable name is a problem in ``report``.
    """
    settings = {
        "agent": agent,
        "model": spec.model,
        "env": spec.env,
        "tasks": tasks,
        "attempts": spec.attempts,
        "concurrency": spec.concurrency,
        "timeouts": spec.effective_timeouts(),
        "max_retries": spec.max_retries,
        "retry_include": spec.retry_include,
        "retry_exclude": spec.retry_exclude,
    }
    job_name = spec.job_name or cfgmod.default_job_name(spec, man.digest_of(settings))
    try:
        return job_name, job_dir_for(spec.runs_root, job_name)
    except ValueError as exc:
        if spec.job_name is None:  # a given name was already reported by validate()
            report.problems.append(Problem("spec", str(exc)))
        return job_name, spec.runs_root.absolute() / "invalid-job-name"


def _harbor_view(
    report: PreflightReport, config: dict[str, Any], pythonpath: Any, environ: Any, secrets: Any
) -> dict[str, Any] | None:
    """Harbor's own reading of the config, scrubbed (None with a problem when it fails).

    Harbor may resolve ${NAME} templates (or echo its environment) in what it prints: its
    view goes into the manifest and --dry-run, so values are scrubbed.
    """
    try:
        return scrub(print_config(report.harbor, config, harbor_env(pythonpath, environ)), secrets)
    except (ValueError, OSError, subprocess.TimeoutExpired) as exc:
        report.problems.append(Problem("harbor", redact_text(str(exc), secrets)))
        return None


def _action(job_dir: Path, manifest: dict[str, Any], report: PreflightReport) -> str:
    """'start', 'resume' or 'complete' for the job folder; a folder holding another job is a
    problem in ``report``.
    """
    try:
        existing = man.check_existing(job_dir, manifest)
    except man.ManifestMismatch as exc:
        report.problems.append(Problem("manifest", str(exc)))
        existing = None
    started = (job_dir / "config.json").exists()
    if existing is None and (started or any(p.is_dir() for p in job_dir.glob("*"))):
        if not any(p.kind == "manifest" for p in report.problems):
            report.problems.append(
                Problem(
                    "manifest",
                    f"{job_dir} already holds a job without an evalkit manifest; choose another job name",
                )
            )
        return "start"
    if started:
        return "complete" if _all_done(job_dir, manifest) else "resume"
    return "start"


def _all_done(job_dir: Path, manifest: dict[str, Any]) -> bool:
    watcher = JobWatcher(job_dir)
    watcher.poll()
    expected = manifest.get("n_trials") or watcher.declared_total()
    try:
        finished_at = json.loads((job_dir / "result.json").read_text()).get("finished_at")
    except (OSError, ValueError):
        finished_at = None
    return bool(expected) and watcher.counts.finished >= expected and bool(finished_at)
