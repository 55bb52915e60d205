"""Preflight: every problem that would stop a launch, found at once.

Spec checks (``spec.validate``: job name, model form, API keys, tasks), Harbor's CLI, and,
for the docker environment, the engine (through the docker SDK), the compose v2 plugin
Harbor shells out to, and free disk. Other environment types (daytona, modal, e2b, ...)
are passed through to Harbor, which checks its own cloud credentials.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from evalkit.launch.harborcli import (
    MIN_HARBOR,
    HarborNotFound,
    find_harbor,
    harbor_version,
    version_tuple,
)
from evalkit.launch.spec import Problem, RunSpec, validate

MIN_FREE_GB = 2.0


class PreflightError(Exception):
    """Raised with every problem found; ``.problems`` lists them."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        lines = "\n".join(f"  - {p}" for p in problems)
        super().__init__(f"cannot launch: {len(problems)} problem(s)\n{lines}")


@dataclass
class PreflightReport:
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    harbor: str | None = None
    harbor_version: str | None = None
    docker: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.problems

    def raise_if_failed(self) -> None:
        if self.problems:
            raise PreflightError(self.problems)


def check_harbor(
    report: PreflightReport, setting: str | os.PathLike[str] | None, environ: Mapping[str, str]
) -> None:
    try:
        report.harbor = find_harbor(setting, environ)
    except HarborNotFound as exc:
        report.problems.append(Problem("harbor", str(exc)))
        return
    report.harbor_version = harbor_version(report.harbor)
    if report.harbor_version is None:
        report.problems.append(
            Problem("harbor", f"{report.harbor} --version failed: is its environment intact?")
        )
    elif version_tuple(report.harbor_version) < MIN_HARBOR:
        want = ".".join(map(str, MIN_HARBOR))
        report.notes.append(
            f"Harbor {report.harbor_version} is older than {want}; configs are written for {want}"
        )


def check_docker(
    report: PreflightReport, runs_root: Path, min_free_gb: float = MIN_FREE_GB
) -> None:
    """Engine reachable (docker SDK), docker CLI + compose v2 plugin, free disk."""
    try:
        import docker  # the SDK; evalkit's own dependency
    except ImportError:  # pragma: no cover - declared dependency
        report.problems.append(Problem("docker", "the docker Python SDK is not installed"))
        return
    root_dir = None
    try:
        client = docker.from_env(timeout=10)
        client.ping()
        info = client.info()
        root_dir = info.get("DockerRootDir")
        report.docker["server_version"] = str(info.get("ServerVersion"))
        client.close()
    except Exception as exc:
        host = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
        report.problems.append(
            Problem(
                "docker",
                f"Docker engine not reachable at {host} ({type(exc).__name__}: {_short(exc)}); start dockerd or set DOCKER_HOST",
            )
        )
    cli = shutil.which("docker")
    if cli is None:
        report.problems.append(
            Problem("docker", "the docker CLI is not on PATH (Harbor runs `docker compose`)")
        )
    else:
        compose = _compose_version(cli)
        if compose is None:
            report.problems.append(
                Problem(
                    "docker",
                    "Docker Compose v2 not available (`docker compose version` failed); install the compose plugin into $DOCKER_CONFIG/cli-plugins",
                )
            )
        elif not compose.lstrip("v").startswith("2"):
            report.problems.append(
                Problem("docker", f"Harbor needs Docker Compose v2, found {compose}")
            )
        else:
            report.docker["compose_version"] = compose
    for label, path in (("Docker data root", root_dir), ("runs root", _existing_parent(runs_root))):
        if not path or not Path(path).exists():
            continue
        free = shutil.disk_usage(path).free / 1e9
        if free < min_free_gb:
            report.problems.append(
                Problem(
                    "disk",
                    f"only {free:.1f} GB free for the {label} ({path}); need {min_free_gb:g} GB",
                )
            )


def _compose_version(cli: str) -> str | None:
    try:
        out = subprocess.run(
            [cli, "compose", "version", "--short"],
            capture_output=True,
            text=True,
            timeout=30,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = re.search(r"v?\d+\.\d+[\w.+-]*", out.stdout or "")
    return m.group(0) if out.returncode == 0 and m else None


def _existing_parent(path: Path) -> Path | None:
    p = path.absolute()
    while not p.exists():
        if p.parent == p:
            return None
        p = p.parent
    return p


def _short(exc: BaseException, n: int = 160) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= n else text[: n - 3] + "..."


def preflight(
    spec: RunSpec,
    *,
    harbor: str | os.PathLike[str] | None = None,
    environ: Mapping[str, str] | None = None,
    check_environment: bool = True,
    min_free_gb: float = MIN_FREE_GB,
) -> PreflightReport:
    """Run every check and return the report (never raises for a failed check)."""
    env = os.environ if environ is None else environ
    report = PreflightReport(problems=list(validate(spec, env)))
    check_harbor(report, harbor, env)
    if spec.env == "docker":
        if check_environment:
            check_docker(report, spec.runs_root, min_free_gb)
    else:
        report.notes.append(
            f"environment {spec.env!r}: passed through to Harbor (its own checks apply)"
        )
    return report
