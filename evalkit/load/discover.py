"""Find Harbor job folders, their trial folders, and rollout folders under given paths.

Rules (harbor-format.md §6):

* A **job folder** holds ``config.json`` and/or ``result.json`` of a job, or trial folders.
  It is still a job when its result.json is missing (state 'unknown' / 'running').
* A **trial folder** is a sub-folder of a job folder holding ``config.json`` /
  ``result.json``, or named like a trial (``<task prefix>__<7 chars>``), or holding
  ``agent/`` / ``verifier/``. One without result.json is still a trial (outcome
  'incomplete').
* A **rollout folder** (go-code) is recognised by ``evalkit.load.gocode``.
* Anything else is a container: searched up to ``max_depth`` levels down. Folders whose
  name starts with a dot are skipped, except a container's ``.sources`` (``HUB_SOURCES``):
  the hub jobs Harbor downloaded to regrade them, loaded as the jobs they are so each
  regrade pairs with its source. A job folder's own ``.sources`` holds per-trial seeds,
  scratch copies Harbor deletes when a regrade finishes, and is never searched.

The same folder reached through overlapping paths is kept once (resolved path).
Unreadable folders become load errors, never exceptions.

Symlinks (SECURITY.md): a symlink below a given path is followed only when it resolves
inside that path (the runs root), and a resolved folder counts once. A symlinked trial that
leads outside the root, to a folder holding it, or to a trial already loaded, and a symlink
that leads nowhere (a loop, a dangling link), are load errors. A folder whose name is not
valid UTF-8 is a load error (``undecodable_name``, the name shown with ``\\xNN`` escapes).

With ``cache=True`` (a load with the cache on) a job folder's trial list is remembered in
its cache folder (``discover.json``) together with the size + mtime of the folder and of
its config.json / result.json; while those are unchanged the folder is not listed again
(adding, removing or renaming a trial folder changes the folder's mtime). Only lists that
depend on names alone are remembered: every sub-folder named like a trial, no symlinks,
and a folder not modified in the last few seconds (coarse mtime clocks).
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import orjson

from evalkit.load.errors import LoadError, path_text
from evalkit.load.gocode import is_rollout_folder
from evalkit.load.shared import cache as _cache
from evalkit.load.shared.io import read_head

TRIAL_NAME_RE = re.compile(r"^.+__[A-Za-z0-9]{7}$")
JOB_FILES = ("config.json", "result.json")
#: Folder names that are never trials or jobs (agent logs, verifier output, caches).
SKIP_DIRS = {"agent", "verifier", "artifacts", "steps", "user-agent", "__pycache__", "node_modules"}
#: Harbor's local copies of hub jobs a regrade re-verified (``<jobs_dir>/.sources/<job uuid>/
#: <job name>``, ``harbor/trial/regrade.py: resolve_source_job_dir``): searched like any folder.
HUB_SOURCES = ".sources"
CACHE_ENTRY = "discover"
#: Changes with the rules that decide a trial list from names.
_CACHE_KEY = f"1|{TRIAL_NAME_RE.pattern}|{','.join(sorted(SKIP_DIRS))}"
#: A folder modified this recently (seconds) is not remembered: it may still be changing
#: within the mtime clock's granularity.
CACHE_SETTLE_S = 5.0


@dataclass
class JobRef:
    """A job folder to load, with the run label the user attached to it (if any)."""

    job_dir: str
    label: str | None = None
    trials: list[str] = field(default_factory=list)
    only: set[str] | None = None  # restrict to these trial folders (a trial path was given)
    links: dict[str, str] = field(default_factory=dict)  # resolved trial -> the symlink to it
    # (trials reached through a symlink join ``trials`` once discovery has seen every folder)


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


def _undecodable(name: str) -> bool:
    return path_text(name) != name


def _inside(real: str, root: str) -> bool:
    return real == root or real.startswith(root.rstrip("/") + "/")


def _name_errors(entries: list[os.DirEntry], level: str, out: Discovery) -> list[os.DirEntry]:
    """The entries whose names are valid UTF-8; a folder (or symlink) with another name is a
    load error, never loaded (its path could not be a text column)."""
    kept = []
    for e in entries:
        if not _undecodable(e.name):
            kept.append(e)
        elif e.is_symlink() or _is_dir(e):
            out.errors.append(
                LoadError(
                    path_text(e.path),
                    level,
                    "undecodable_name",
                    "folder name is not valid UTF-8 (shown with \\x escapes); not loaded: rename it",
                )
            )
    return kept


def _followed_link(e: os.DirEntry, root: str, level: str, out: Discovery) -> str | None:
    """The resolved path of a symlinked folder, or None (a load error) when it leads outside
    the runs root or to a folder that holds the link (a loop)."""
    real = os.path.realpath(e.path)
    why = None
    if not _inside(real, root):
        why = f"a symlink that leads outside the runs folder {path_text(root)}; not followed"
    elif _inside(os.path.dirname(e.path), real):
        why = "a symlink to a folder that holds it (a loop); not followed"
    if why is None:
        return real
    out.errors.append(LoadError(e.path, level, "symlink_not_followed", why))
    return None


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
            raw = read_head(p, 4 * 1024 * 1024)  # never blocks on a FIFO
            if raw is None:
                continue
            data = orjson.loads(raw)
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
        return bool(is_rollout_folder(path))
    except Exception:
        return False


def _trial_list(
    real: str, subdirs: list[os.DirEntry], out: Discovery, root: str
) -> tuple[list[str], bool, dict[str, str]]:
    """Trial folders of a job folder, whether the list depends on names alone, and the
    symlinked ones (resolved path -> link; not in the list yet)."""
    trials = []
    links: dict[str, str] = {}
    by_name = True
    for e in sorted(subdirs, key=lambda e: e.name):
        if TRIAL_NAME_RE.match(e.name) is None:
            by_name = False
            if not _looks_like_trial(e.path, e.name):
                out.errors.append(
                    LoadError(
                        e.path,
                        "job",
                        "unrecognised_folder",
                        "sub-folder of a job folder that does not look like a trial; not loaded",
                    )
                )
                continue
        # children of an already resolved folder: only a symlinked child needs resolving
        # (e.path is os.path.join(real, e.name): the folder was listed by its real path)
        if e.is_symlink():
            by_name = False
            target = _followed_link(e, root, "trial", out)
            if target is not None and target not in links:
                links[target] = e.path
            elif target is not None:
                _duplicate(e.path, target, out)
        else:
            trials.append(e.path)
    return trials, by_name, links


def _duplicate(link: str, target: str, out: Discovery) -> None:
    out.errors.append(
        LoadError(
            link,
            "trial",
            "duplicate_link",
            f"a symlink to the trial folder {path_text(target)}, which is loaded once as itself",
        )
    )


def _drop_duplicate_links(jobs: list[JobRef], out: Discovery) -> None:
    """A trial folder reached directly and through symlinks (or through two symlinks) is
    loaded once: the links beyond the first path are load errors."""
    taken = {t for ref in jobs for t in ref.trials}
    for ref in jobs:
        for target, link in ref.links.items():
            if target in taken:
                _duplicate(link, target, out)
            else:
                ref.trials.append(target)
            taken.add(target)


def _broken_trial_links(entries: list[os.DirEntry], out: Discovery) -> bool:
    """Trial-named symlinks that lead to no folder (a loop, a dangling link) are load
    errors, not silently skipped; True when there is one (the list is then not remembered,
    so the error shows on every load)."""
    found = False
    for e in entries:
        try:
            broken = bool(TRIAL_NAME_RE.match(e.name)) and e.is_symlink() and not _is_dir(e)
        except OSError:
            broken = False
        if broken:
            found = True
            out.errors.append(
                LoadError(
                    e.path,
                    "trial",
                    "unreadable",
                    "a trial-named symlink that leads to no folder (a loop or a dangling link)",
                )
            )
    return found


def _folder_sig(real: str) -> tuple[str, float]:
    """(signature of the folder, config.json, result.json; the folder's mtime)."""
    j = os.path.join
    try:
        st = os.stat(real)
    except OSError:
        return "-", 0.0
    rest = (_cache.file_sig(j(real, f)) for f in ("config.json", "result.json"))
    return "|".join((_cache.stat_sig(st), *rest)), st.st_mtime


def _cached_trial_list(real: str, sig: str) -> list[str] | None:
    """The remembered trial list of a job folder, if its signature still matches."""
    m = _cache.read_entry(real, CACHE_ENTRY)
    if not isinstance(m, dict) or m.get("v") != _CACHE_KEY or m.get("sig") != sig:
        return None
    names = m.get("trials")
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        return None
    base = real if real.endswith("/") else real + "/"
    return [base + n for n in names]


def _cache_trial_list(real: str, trials: list[str], sig: str, mtime: float) -> None:
    """Remember a trial list read after ``sig`` was taken (so a later change shows)."""
    if sig != "-" and time.time() - mtime > CACHE_SETTLE_S:
        names = [os.path.basename(t) for t in trials]
        _cache.write_entry(real, CACHE_ENTRY, {"v": _CACHE_KEY, "sig": sig, "trials": names})


def _broken_links(entries: list[os.DirEntry], out: Discovery) -> None:
    """Symlinks in a runs folder that lead nowhere (a loop, a dangling link)."""
    for e in entries:
        if e.is_symlink() and not os.path.exists(e.path):
            out.errors.append(
                LoadError(
                    e.path,
                    "discover",
                    "unreadable",
                    "a symlink that leads nowhere (a loop or a dangling link)",
                )
            )


def _visit(
    path: str,
    label: str | None,
    depth: int,
    max_depth: int,
    out: Discovery,
    seen: set[str],
    cache: bool = False,
    root: str | None = None,
) -> None:
    """Add the folder ``path`` to ``out`` as a job, a trial or a rollout folder, or visit
    its subfolders when it only holds such folders (down to ``max_depth``)."""
    real = os.path.realpath(path)
    if real in seen:
        return
    seen.add(real)
    root = real if root is None else root
    sig, mtime = _folder_sig(real) if cache else ("-", 0.0)
    if cache:
        known = _cached_trial_list(real, sig)
        if known is not None:
            out.jobs.append(JobRef(real, label, known))
            return
    entries = _scandir(real, out.errors, "discover")
    if entries is None:
        return
    entries = _name_errors(entries, "discover", out)
    names = {e.name for e in entries}
    subdirs = [
        e for e in entries if not e.name.startswith(".") and e.name not in SKIP_DIRS and _is_dir(e)
    ]
    if names & set(JOB_FILES):
        kind, sniffed = _job_files_kind(real, names, subdirs)
        if kind == "trial":
            # a trial folder given directly: load its job, restricted to this trial
            out.jobs.append(JobRef(os.path.dirname(real), label, [real], only={real}))
        else:
            trials, by_name, broken = _add_job(real, label, entries, subdirs, out, root)
            if cache and sniffed and by_name and not broken:
                _cache_trial_list(real, trials, sig, mtime)
        return
    # no job files: a rollout folder (its .jsonl files decide, whatever its subfolders are
    # called), a job that crashed before writing them, or a container (a folder holding job
    # folders stays a container even next to a trial-named folder)
    if _rollout_check(real):
        out.rollouts.append((real, label))
        return
    if _holds_trials_only(subdirs):
        _add_job(real, label, entries, subdirs, out, root)
        return
    _broken_links(entries, out)
    if depth >= max_depth:
        return
    sources = [e for e in entries if e.name == HUB_SOURCES and _is_dir(e)]
    for e in sorted(subdirs, key=lambda e: e.name) + sources:
        if e.is_symlink() and _followed_link(e, root, "discover", out) is None:
            continue
        _visit(e.path, label, depth + 1, max_depth, out, seen, cache, root)


def _job_files_kind(real: str, names: set[str], subdirs: list[os.DirEntry]) -> tuple[str, bool]:
    """('trial' or 'job', whether config/result said so) of a folder with job files; an
    unreadable config/result is decided by the folder's shape."""
    kind = _sniff_kind(real)
    sniffed = kind is not None
    if kind is None:
        own_trial = bool(TRIAL_NAME_RE.match(os.path.basename(real))) or bool(
            names & {"agent", "verifier"}
        )
        kind = (
            "trial"
            if own_trial and not any(TRIAL_NAME_RE.match(e.name) for e in subdirs)
            else "job"
        )
    if kind == "trial" and any(TRIAL_NAME_RE.match(e.name) for e in subdirs):
        kind = "job"  # trials never hold trial folders: a job with an odd config/result
    return kind, sniffed


def _holds_trials_only(subdirs: list[os.DirEntry]) -> bool:
    """A folder without job files that is a job all the same (it crashed before writing
    them): a trial-named subfolder that is no job, and no other subfolder that is a job."""
    trial = any(TRIAL_NAME_RE.match(e.name) and _sniff_kind(e.path) != "job" for e in subdirs)
    return trial and not any(
        not TRIAL_NAME_RE.match(e.name) and _sniff_kind(e.path) == "job" for e in subdirs
    )


def _add_job(
    real: str,
    label: str | None,
    entries: list[os.DirEntry],
    subdirs: list[os.DirEntry],
    out: Discovery,
    root: str,
) -> tuple[list[str], bool, bool]:
    """Add the job folder ``real`` with its trial folders; returns (trials, whether they
    were found by name alone, whether a trial-named symlink is broken)."""
    trials, by_name, links = _trial_list(real, subdirs, out, root)
    out.jobs.append(JobRef(real, label, trials, links=links))
    broken = _broken_trial_links(entries, out)
    return trials, by_name, broken


def discover(
    paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | Mapping[str, object],
    max_depth: int = 6,
    *,
    cache: bool = False,
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
        if _undecodable(os.path.realpath(p)):
            out.errors.append(
                LoadError(
                    path_text(p),
                    "discover",
                    "undecodable_name",
                    "the path is not valid UTF-8 (shown with \\x escapes); not loaded",
                )
            )
            continue
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
        _visit(p, label, 0, max_depth, out, seen, cache)
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
    _drop_duplicate_links(out.jobs, out)
    return out
