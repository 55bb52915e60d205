"""Run one fuzz case and check the loader's guarantees.

``run_case(ops, workdir)`` copies the touched parts of the seed tree into ``workdir``,
applies the ops, loads the result through ``evalkit.load`` and reads every frame (jobs,
trials, load_errors, steps, tool_calls, findings). It returns a :class:`Result`:

* ``crash``: an exception escaped (the traceback is kept);
* ``violation``: the load finished but broke a guarantee: a trial folder that is neither a
  trials row nor covered by a load_errors row; a job folder missing from jobs; a duplicate
  trial_id; an outcome / error_kind outside the declared sets; a frame whose declared
  column has another dtype; steps, tool calls or findings of an unknown trial; with the
  cache on, a warm load that differs from the cold one;
* ``ok`` otherwise.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from unittest import mock

import polars as pl

from tests.fuzz.corpus import JOBS, ROLLOUT_DIR, template
from tests.fuzz.deny import denied
from tests.fuzz.mutate import Op, apply, tops

OUTCOMES = {"pass", "partial", "fail", "timeout", "error", "no-reward", "incomplete"}
ERROR_KINDS = {"none", "agent", "infra", "provider", "verifier", "config", "cancelled", "unknown"}


@dataclass
class Result:
    status: str  # ok | crash | violation
    seconds: float
    problems: list[str] = field(default_factory=list)
    trace: str = ""
    n_trials: int = 0
    n_errors: int = 0


def prepare(ops: list[Op], workdir: Path) -> Path:
    """Copy what the ops touch (the whole tree when they touch its root) and apply them."""
    seed = template()
    root = workdir / "runs"
    touched = tops(ops)
    parts = [*JOBS, ROLLOUT_DIR] if "" in touched or not touched else sorted(touched)
    root.mkdir(parents=True)
    for p in parts:
        shutil.copytree(seed / p, root / p, symlinks=True)
    return root


def _frames(runs: Any, findings: bool = True) -> dict[str, pl.DataFrame]:
    from evalkit.load._columns import empty
    from evalkit.load.findings.columns import COLUMNS as FIND_COLS

    out = {"jobs": runs.jobs, "trials": runs.trials, "load_errors": runs.load_errors}
    out["steps"], out["tool_calls"] = runs.steps, runs.tool_calls
    out["findings"] = runs.findings if findings else empty(FIND_COLS)
    out["trials"] = runs.trials  # again: now with the trajectory columns
    out["load_errors"] = runs.load_errors
    return out


def _load(
    root: Path, cache: bool, env: dict[str, str], deny: list[tuple[str, str]], findings: bool = True
) -> dict[str, pl.DataFrame]:
    import evalkit

    with mock.patch.dict(os.environ, env), denied(deny):
        runs = evalkit.load(root, cache=cache, progress=False)
        return _frames(runs, findings)


def _covered(p: str, error_paths: list[str]) -> bool:
    """A load error about ``p``, something inside it, or a folder containing it."""
    pref = p + os.sep
    return any(
        e == p or e.startswith(pref) or p.startswith(e.rstrip(os.sep) + os.sep) for e in error_paths
    )


def _exists_dir(p: Path) -> bool:
    try:
        return p.is_dir()
    except OSError:
        return False


def _file_system_rules(root: Path, dirs: set[str], err_paths: list[str]) -> list[str]:
    """No trial loaded from outside the tree (symlinks out are not followed), and every
    folder with a name that is not UTF-8, in the tree's root or a job folder, is a load
    error (its path shown with escapes)."""
    from evalkit.load.errors import path_text

    real_root = os.path.realpath(root) + os.sep
    probs = [
        f"trial loaded from outside the tree: {d}" for d in dirs if not d.startswith(real_root)
    ]
    for parent in (root, *(root / j for j in JOBS)):
        try:
            names = os.listdir(os.fsencode(parent))
        except OSError:
            continue
        for raw in names:
            try:
                raw.decode("utf-8")
                continue
            except UnicodeDecodeError:
                pass
            p = os.path.join(os.fsencode(parent), raw)
            if os.path.isdir(p) and path_text(os.fsdecode(p)) not in err_paths:
                probs.append(f"folder with an undecodable name is not a load error: {p!r}")
    return probs


def check_frames(root: Path, f: dict[str, pl.DataFrame]) -> list[str]:
    """The guarantees (module docstring) for the frames of one load of ``root``."""
    from evalkit.load.errors import COLUMNS as ERR_COLS
    from evalkit.load.findings.columns import COLUMNS as FIND_COLS
    from evalkit.load.jobs.columns import COLUMNS as JOB_COLS
    from evalkit.load.steps.columns import STEP_COLUMNS, TOOL_CALL_COLUMNS
    from evalkit.load.trials.columns import COLUMNS as TRIAL_COLS

    probs: list[str] = []
    decl = {"jobs": JOB_COLS, "trials": TRIAL_COLS, "load_errors": ERR_COLS, "steps": STEP_COLUMNS,
            "tool_calls": TOOL_CALL_COLUMNS, "findings": FIND_COLS}  # fmt: skip
    for name, cols in decl.items():
        sch = f[name].schema
        for c in cols:
            if c.name not in sch:
                probs.append(f"{name}: column {c.name} missing")
            elif sch[c.name] != c.dtype:
                probs.append(f"{name}.{c.name}: dtype {sch[c.name]} != {c.dtype}")
    t, errs = f["trials"], f["load_errors"]
    if t["trial_id"].is_duplicated().any():
        probs.append(
            f"duplicate trial_id: {t.filter(pl.col('trial_id').is_duplicated())['trial_id'].unique().to_list()}"
        )
    if t["trial_id"].null_count():
        probs.append("null trial_id")
    bad = set(t["outcome"].to_list()) - OUTCOMES
    if bad:
        probs.append(f"outcomes outside the set: {bad}")
    bad = set(t["error_kind"].to_list()) - ERROR_KINDS
    if bad:
        probs.append(f"error kinds outside the set: {bad}")
    ids = set(t["trial_id"].to_list())
    for name in ("steps", "tool_calls", "findings"):
        unknown = set(f[name]["trial_id"].to_list()) - ids
        if unknown:
            probs.append(f"{name} of unknown trials: {sorted(unknown)[:3]}")
    dirs = set(t["trial_dir"].drop_nulls().to_list())
    # a simulated EACCES must itself show as a load error: the denied paths cover nothing
    err_paths = [os.path.abspath(p) for p in errs["path"].drop_nulls().to_list()]
    for job, trial_names in JOBS.items():
        jd = root / job
        if not _exists_dir(jd):
            continue
        jreal = os.path.realpath(jd)
        if jreal not in set(f["jobs"]["job_dir"].to_list()) and not _covered(str(jd), err_paths):
            probs.append(f"job folder {job} is neither a jobs row nor a load error")
        for name in trial_names:
            td = jd / name
            if not (td.exists() or td.is_symlink()) or (td.is_file() and not td.is_symlink()):
                continue  # gone, or a plain file now (not a trial folder)
            real = os.path.realpath(td)
            if real in dirs or _covered(str(td), err_paths) or _covered(real, err_paths):
                continue
            what = "folder" if _exists_dir(td) else "entry (not a folder)"
            probs.append(f"trial {what} {job}/{name} is neither a trials row nor a load error")
    probs += _file_system_rules(root, dirs, err_paths)
    from evalkit.load.errors import path_text

    rd = root / ROLLOUT_DIR
    if _exists_dir(rd):
        for dirpath, _, files in os.walk(rd):
            for fn in files:
                p = os.path.join(dirpath, fn)
                if not fn.endswith(".jsonl") or fn == "results.jsonl" or not os.path.isfile(p):
                    continue
                if (
                    os.path.realpath(p) not in dirs
                    and p not in dirs
                    and not _covered(p, err_paths)
                    and not _covered(path_text(p), err_paths)  # an odd name, shown escaped
                ):
                    # a file that is not a rollout (mutated beyond recognition) may be skipped
                    # silently only when it no longer looks like one
                    from evalkit.load.gocode.events import looks_like_rollout_file

                    with contextlib.suppress(OSError):
                        if looks_like_rollout_file(p):
                            probs.append(
                                f"rollout {os.path.relpath(p, root)} is neither a trials row nor a load error"
                            )
    return probs


def _same(a: pl.DataFrame, b: pl.DataFrame, keys: list[str]) -> bool:
    if a.columns != b.columns or a.height != b.height:
        return False
    return a.sort(keys, maintain_order=True).equals(b.sort(keys, maintain_order=True))


def run_case(ops: list[Op], workdir: Path, *, cache: bool = False, findings: bool = True) -> Result:
    """Apply ``ops`` to a copy of the seed tree in ``workdir`` and check one (cache=False) or
    three loads (cold with the cache, warm, and without the cache) of it. ``findings=False``
    skips the anti-pattern detectors (most of a case's time) on the first load."""
    t0 = time.perf_counter()
    root = prepare(ops, workdir)
    env, deny = apply(ops, root)
    try:
        first = _load(root, cache, env, deny, findings)
        frames = [first]
        if cache:
            frames.append(_load(root, True, env, deny))
            frames.append(_load(root, False, env, deny))
    except Exception:
        return Result("crash", time.perf_counter() - t0, trace=traceback.format_exc())
    probs = check_frames(root, first)
    if cache:
        for label, other in (("warm", frames[1]), ("uncached", frames[2])):
            for name, keys in (("trials", ["trial_id"]), ("steps", ["trial_id", "step_index"])):
                if not _same(first[name], other[name], keys):
                    probs.append(f"{label} load: {name} differ from the cold cached load")
    t = first["trials"]
    return Result(
        "violation" if probs else "ok",
        time.perf_counter() - t0,
        problems=probs,
        n_trials=t.height,
        n_errors=first["load_errors"].height,
    )
