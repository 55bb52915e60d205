"""Find Harbor job folders, their trial folders, and rollout folders under given paths.

Rules (harbor-format.md §6):

* A **job folder** holds ``config.json`` and/or ``result.json`` of a job, or trial folders.
  It is still a job when its result.json is missing (state 'unknown' / 'running').
* A **trial folder** is a sub-folder of a job folder holding ``config.json`` /
  ``result.json``, or named like a trial (``<task prefix>__<7 chars>``), or holding
  ``agent/`` / ``verifier/``. One without result.json is still a trial (outcome
  'incomplete').
* A **rollout folder** (go-code) is recognised by ``evalkit.load.rollouts``.
* Anything else is a container: searched up to ``max_depth`` levels down.

The same folder reached through overlapping paths is kept once (resolved path).
Unreadable folders become load errors, never exceptions.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import orjson

from evalkit.load.errors import LoadError

TRIAL_NAME_RE = re.compile(r"^.+__[A-Za-z0-9]{7}$")
JOB_FILES = ("config.json", "result.json")
#: Folder names that are never trials or jobs (agent logs, verifier output, caches).
SKIP_DIRS = {"agent", "verifier", "artifacts", "steps", "user-agent", "__pycache__", "node_modules"}


@dataclass
class JobRef:
    """A job folder to load, with the run label the user attached to it (if any)."""

    job_dir: str
    label: str | None = None
    trials: list[str] = field(default_factory=list)
    only: set[str] | None = None  # restrict to these trial folders (a trial path was given)


@dataclass
class Discovery:
    jobs: list[JobRef] = field(default_factory=list)
    rollouts: list[tuple[str, str | None]] = field(default_factory=list)
    errors: list[LoadError] = field(default_factory=list)


def _scandir(path: str, errors: list[LoadError], level: str) -> list[os.DirEntry] | None:
    try:
        with os.scandir(path) as it:
            return list(it)
    except OSError as e:
        errors.append(
            LoadError(path, level, "unreadable", f"cannot list folder: {type(e).__name__}: {e}")
        )
        return None


def _is_dir(entry: os.DirEntry) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def _looks_like_trial(path: str, name: str) -> bool:
    if TRIAL_NAME_RE.match(name):
        return True
    return any(os.path.lexists(os.path.join(path, f)) for f in (*JOB_FILES, "agent", "verifier"))


def _sniff_kind(path: str) -> str | None:
    """'trial' or 'job' from the keys of a small config.json / result.json, else None."""
    for fname in JOB_FILES:
        p = os.path.join(path, fname)
        try:
            if os.path.getsize(p) > 4 * 1024 * 1024:
                continue
            with open(p, "rb") as fh:
                data = orjson.loads(fh.read())
        except (OSError, orjson.JSONDecodeError, ValueError):
            continue
        if not isinstance(data, dict):
            continue
        if "trial_name" in data or "task_name" in data or "trials_dir" in data:
            return "trial"
        if {
            "job_name",
            "jobs_dir",
            "n_attempts",
            "n_total_trials",
            "stats",
            "orchestrator",
        } & data.keys():
            return "job"
    return None


def _rollout_check(path: str) -> bool:
    try:
        from evalkit.load.rollouts import is_rollout_folder
    except ImportError:  # rollout reader not available
        return False
    try:
        return bool(is_rollout_folder(path))
    except Exception:
        return False


def _trial_list(real: str, subdirs: list[os.DirEntry], out: Discovery) -> list[str]:
    trials = []
    for e in sorted(subdirs, key=lambda e: e.name):
        if _looks_like_trial(e.path, e.name):
            # children of an already resolved folder: only a symlinked child needs resolving
            trials.append(
                os.path.realpath(e.path) if e.is_symlink() else os.path.join(real, e.name)
            )
        else:
            out.errors.append(
                LoadError(
                    e.path,
                    "job",
                    "unrecognised_folder",
                    "sub-folder of a job folder that does not look like a trial; not loaded",
                )
            )
    return trials


def _visit(
    path: str, label: str | None, depth: int, max_depth: int, out: Discovery, seen: set[str]
) -> None:
    real = os.path.realpath(path)
    if real in seen:
        return
    seen.add(real)
    entries = _scandir(real, out.errors, "discover")
    if entries is None:
        return
    names = {e.name for e in entries}
    subdirs = [
        e for e in entries if not e.name.startswith(".") and e.name not in SKIP_DIRS and _is_dir(e)
    ]
    if names & set(JOB_FILES):
        kind = _sniff_kind(real)
        if kind is None:  # unreadable config/result: decide by shape
            own_trial = bool(TRIAL_NAME_RE.match(os.path.basename(real))) or bool(
                names & {"agent", "verifier"}
            )
            kind = (
                "trial"
                if own_trial and not any(TRIAL_NAME_RE.match(e.name) for e in subdirs)
                else "job"
            )
        if kind == "trial":
            # a trial folder given directly: load its job, restricted to this trial
            out.jobs.append(JobRef(os.path.dirname(real), label, [real], only={real}))
        else:
            out.jobs.append(JobRef(real, label, _trial_list(real, subdirs, out)))
        return
    # no job files: a job that crashed before writing them, a rollout folder, or a container
    if any(TRIAL_NAME_RE.match(e.name) and _sniff_kind(e.path) != "job" for e in subdirs):
        out.jobs.append(JobRef(real, label, _trial_list(real, subdirs, out)))
        return
    if _rollout_check(real):
        out.rollouts.append((real, label))
        return
    if depth >= max_depth:
        return
    for e in sorted(subdirs, key=lambda e: e.name):
        _visit(e.path, label, depth + 1, max_depth, out, seen)


def discover(
    paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | Mapping[str, object],
    max_depth: int = 6,
) -> Discovery:
    """Find every job / rollout folder under ``paths`` (see the module docstring)."""
    out = Discovery()
    seen: set[str] = set()
    items: list[tuple[str, str | None]] = []
    if isinstance(paths, Mapping):
        for label, v in paths.items():
            vs = v if isinstance(v, (list, tuple)) else [v]
            items.extend((os.fspath(p), str(label)) for p in vs)  # type: ignore[arg-type]
    elif isinstance(paths, (str, os.PathLike)):
        items.append((os.fspath(paths), None))
    else:
        items.extend((os.fspath(p), None) for p in paths)
    for p, label in items:
        if not os.path.exists(p):
            out.errors.append(LoadError(p, "discover", "missing", "path does not exist"))
            continue
        if not os.path.isdir(p):
            if p.endswith(".jsonl") and _rollout_check(p):
                out.rollouts.append((os.path.realpath(p), label))
            else:
                out.errors.append(
                    LoadError(
                        p, "discover", "not_a_folder", "expected a runs, job or rollout folder"
                    )
                )
            continue
        _visit(p, label, 0, max_depth, out, seen)
    # merge refs to the same job (e.g. two trial paths of one job)
    merged: dict[str, JobRef] = {}
    for ref in out.jobs:
        cur = merged.get(ref.job_dir)
        if cur is None:
            merged[ref.job_dir] = ref
        elif cur.only is not None:
            if ref.only is None:
                merged[ref.job_dir] = ref
            else:
                cur.only |= ref.only
                cur.trials = sorted(set(cur.trials) | set(ref.trials))
    out.jobs = list(merged.values())
    return out
