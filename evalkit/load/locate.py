"""Where a notebook's runs folder (and any other relative input path) is.

One rule for every notebook, the report and the CLI, wherever the kernel starts (the
repository root, ``notebooks/``, papermill's ``--cwd``, a copy of a notebook elsewhere):

1. the path the caller gives (a notebook's ``runs_dir`` parameter), else ``$EVALKIT_RUNS``,
   else ``runs``;
2. an absolute path is used as it is; a relative one is looked up in the working folder,
   then in each folder above it (the way git finds ``.git``): from ``notebooks/`` the
   repository's ``runs/`` is found;
3. a folder that is missing or holds no job / trial / rollout folder is a
   :class:`RunsFolderProblem` whose message says what was looked for, where, and how to
   point elsewhere (in a notebook it shows as that message, without a traceback).
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from evalkit.load.discover import discover
from evalkit.load.errors import LoadError

#: Environment variable naming the runs folder when a notebook is not given one.
RUNS_ENV = "EVALKIT_RUNS"
DEFAULT_RUNS = "runs"


class RunsFolderProblem(FileNotFoundError):
    """No usable runs folder. IPython shows only the message (no traceback)."""

    def _render_traceback_(self) -> list[str]:
        return str(self).splitlines()


def search_folders(start: str | Path | None = None) -> list[Path]:
    """The working folder (or ``start``) and every folder above it, nearest first."""
    here = Path(start or os.getcwd()).resolve()
    return [here, *here.parents]


def locate(path: str | Path, start: str | Path | None = None) -> Path | None:
    """``path`` if absolute and present; a relative ``path`` in the first folder of
    :func:`search_folders` that has it; None when nowhere."""
    p = Path(path).expanduser()
    if p.is_absolute():
        return p if p.exists() else None
    for folder in search_folders(start):
        if (folder / p).exists():
            return folder / p
    return None


def requested_runs(runs_dir: str | Path | None = None) -> tuple[str, str]:
    """The runs folder asked for and who asked: the argument, ``$EVALKIT_RUNS`` or the
    default ``runs``."""
    if runs_dir not in (None, ""):
        return str(runs_dir), "the runs_dir parameter"
    env = os.environ.get(RUNS_ENV)
    if env:
        return env, f"${RUNS_ENV}"
    return DEFAULT_RUNS, "the default"


def _how_to_point() -> str:
    return (
        f"Point elsewhere: set runs_dir in the notebook's parameters cell, pass "
        f"-p runs_dir PATH to papermill / `evalkit report --runs PATH`, or set {RUNS_ENV}=PATH "
        "before starting Jupyter."
    )


def _what_was_met(errors: Sequence[LoadError]) -> str:
    """What discovery met instead of runs (symlinks not followed, unreadable folders), as
    lines for the message; '' when it met nothing."""
    if not errors:
        return ""
    kinds = Counter(e.error_type for e in errors)
    counts = ", ".join(f"{n} {kind}" for kind, n in kinds.most_common())
    first = errors[0]
    n = len(errors)
    plural = "s" * (n > 1)
    lines = (
        f"Instead it met {n} load error{plural}: {counts} (e.g. {first.path}: {first.message}).\n"
    )
    if "symlink_not_followed" in kinds:
        lines += (
            "Symlinks are followed only when they stay inside the runs folder (SECURITY.md): "
            "point at the folder they lead to, or copy the job folders in.\n"
        )
    return lines


def find_runs(runs_dir: str | Path | None = None, start: str | Path | None = None) -> Path:
    """The runs folder by the module's rule, as an absolute path.

    Raises :class:`RunsFolderProblem` when it is missing or holds no job, trial or rollout
    folder.
    """
    asked, source = requested_runs(runs_dir)
    found = locate(asked, start)
    if found is None:
        where = (
            str(Path(asked).expanduser())
            if Path(asked).expanduser().is_absolute()
            else f"{asked!r} in {search_folders(start)[0]} and every folder above it"
        )
        raise RunsFolderProblem(
            f"No runs folder: looked for {where} ({source}).\n{_how_to_point()}"
        )
    found = found.resolve()
    seen = discover(str(found))
    if not seen.jobs and not seen.rollouts:
        raise RunsFolderProblem(
            f"The runs folder {found} ({source}) holds no Harbor job, trial or rollout "
            f"folder, so there is nothing to show.\n{_what_was_met(seen.errors)}"
            f"{_how_to_point()}"
        )
    return found


def find_path(path: str | Path, start: str | Path | None = None) -> Path:
    """An input path (a task folder, a dataset) by the same rule; a relative path that
    exists nowhere stays as given, resolved against the working folder."""
    found = locate(path, start)
    return (found or Path(start or os.getcwd()) / path).resolve()


def runs_root(runs_dir: str | Path | None = None, start: str | Path | None = None) -> Path:
    """The runs folder a new job is written into: found as :func:`find_runs` finds it, but
    it may be empty or not exist yet (then it is made relative to the working folder)."""
    return find_path(requested_runs(runs_dir)[0], start)
