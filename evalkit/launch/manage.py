"""Managing the runs folder: remove job folders (``evalkit rm``) and copy jobs from another
machine (``evalkit pull``). Every name given is checked before anything changes:

* a job name is a single folder name (``JOB_NAME_RE``: no ``/``, no ``..``, no leading dot)
  naming a folder *directly* inside the runs root, which is not a symlink and is a job folder
  as ``evalkit.load`` sees it (not a trial, a rollout folder, a container or the root itself);
* a remote is ``[USER@]HOST:PATH`` with a user and host that cannot be read as an option
  (no leading ``-``) and a path without control characters; rsync gets its arguments as a
  list (no shell on this side) with ``-s`` (secluded args: no word splitting or globbing on the
  remote side) and ``--`` before the paths; received symlinks that leave the tree, devices
  and FIFOs are not created.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from evalkit.launch.spec import JOB_NAME_RE

_USER = r"[A-Za-z0-9._][A-Za-z0-9._-]*"
_HOST = r"(?:[A-Za-z0-9][A-Za-z0-9.-]*|\[[0-9A-Fa-f:.]+\])"
REMOTE_RE = re.compile(rf"^(?:(?P<user>{_USER})@)?(?P<host>{_HOST}):(?P<path>[^\x00-\x1f\x7f]+)$")


class ManageError(ValueError):
    """A name or remote that is refused; ``problems`` lists every one found."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("; ".join(problems))


@dataclass
class JobFolder:
    """A job folder that may be removed: its path, trial count and state."""

    name: str
    path: Path
    n_trials: int
    state: str


def _problem_with(root: Path, name: str) -> str | None:
    if not JOB_NAME_RE.match(name) or name in (".", ".."):
        return (
            f"{name!r} is not a job folder name (one folder name: no '/', no '..', no leading dot)"
        )
    p = root / name
    if p.is_symlink():
        return f"{p} is a symlink; evalkit rm only removes real job folders"
    if not p.exists():
        return f"{p} does not exist"
    if not p.is_dir():
        return f"{p} is not a folder"
    real = p.resolve()
    if real.parent != root:
        return f"{p} is not directly inside the runs root {root}"
    return None


def job_folders(names: Sequence[str], runs_root: str | os.PathLike[str]) -> list[JobFolder]:
    """The job folders ``names`` inside ``runs_root``, or ManageError listing every name
    that is refused (outside the root, a symlink, missing, not a job folder, ...)."""
    import evalkit

    root = Path(runs_root).resolve()
    problems: list[str] = []
    found: list[JobFolder] = []
    if not root.is_dir():
        raise ManageError([f"runs root {runs_root} is not a folder"])
    for name in dict.fromkeys(names):
        why = _problem_with(root, name)
        if why:
            problems.append(why)
            continue
        path = root / name
        runs = evalkit.load(path, cache=False, progress=False)
        jobs = runs.jobs.filter(runs.jobs["job_dir"] == str(path))
        if jobs.height != 1 or runs.jobs.height != 1 or jobs["source_format"][0] == "go-code":
            problems.append(f"{path} is not a Harbor job folder (no job or trial files found)")
            continue
        found.append(JobFolder(name, path, runs.trials.height, str(jobs["state"][0])))
    if problems:
        raise ManageError(problems)
    return found


def remove_jobs(jobs: Sequence[JobFolder], *, force: bool = False) -> list[Path]:
    """Delete the job folders (and their evalkit cache entries). A job that is still
    running is refused unless ``force``. Returns the folders removed."""
    from evalkit.load.shared import cache

    running = [j for j in jobs if j.state == "running"]
    if running and not force:
        raise ManageError(
            [f"{j.path} is still running (use --force to remove it anyway)" for j in running]
        )
    removed = []
    for j in jobs:
        if j.path.is_symlink() or j.path.resolve() != j.path:  # changed since it was checked
            raise ManageError([f"{j.path} changed since it was checked; nothing more removed"])
        shutil.rmtree(j.path)
        shutil.rmtree(cache.job_cache_dir(j.path), ignore_errors=True)
        removed.append(j.path)
    return removed


@dataclass
class PullPlan:
    """rsync invocations (argument lists) that copy a remote runs folder or some of its jobs."""

    remote: str
    runs_root: Path
    commands: list[list[str]] = field(default_factory=list)

    def render(self) -> str:
        return "\n".join(shlex.join(c) for c in self.commands)


def plan_pull(
    remote: str,
    runs_root: str | os.PathLike[str] = "runs",
    jobs: Sequence[str] = (),
    *,
    delete: bool = False,
    rsync: str = "rsync",
) -> PullPlan:
    """The rsync commands of ``evalkit pull`` (nothing runs here); ManageError when the
    remote or a job name is refused."""
    problems = []
    m = REMOTE_RE.match(remote)
    if m is None:
        problems.append(
            f"remote {remote!r} is not of the form [USER@]HOST:PATH (user and host of letters, "
            "digits, '.', '_', '-', not starting with '-'; no control characters in the path)"
        )
    bad = [j for j in jobs if not JOB_NAME_RE.match(j) or j in (".", "..")]
    problems += [f"{j!r} is not a job folder name" for j in bad]
    root = Path(runs_root)
    if root.exists() and not root.is_dir():
        problems.append(f"runs root {root} is not a folder")
    if problems:
        raise ManageError(problems)
    assert m is not None
    # -s: --secluded-args (--protect-args before rsync 3.2.4): no remote word splitting
    base = [rsync, "-rlt", "-s", "--safe-links", "--partial", "--itemize-changes"]
    base += ["--delete"] if delete else []
    src = remote.rstrip("/")
    plan = PullPlan(remote, root.absolute())
    if jobs:
        for j in dict.fromkeys(jobs):
            plan.commands.append([*base, "--", f"{src}/{j}/", f"{plan.runs_root / j}/"])
    else:
        plan.commands.append([*base, "--", f"{src}/", f"{plan.runs_root}/"])
    return plan


def pull(plan: PullPlan) -> int:
    """Run the plan's rsync commands (argument lists, no shell); the first non-zero exit
    code stops it and is returned."""
    if shutil.which(plan.commands[0][0]) is None:
        raise ManageError([f"{plan.commands[0][0]} not found (apt-get install rsync)"])
    plan.runs_root.mkdir(parents=True, exist_ok=True)
    for cmd in plan.commands:
        Path(cmd[-1]).mkdir(parents=True, exist_ok=True)
        rc = subprocess.run(cmd, shell=False, check=False, stdin=subprocess.DEVNULL).returncode
        if rc:
            return rc
    return 0
