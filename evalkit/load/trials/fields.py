"""Field helpers of the Harbor trial extractor (``trials/extract.py``): task ids, phase
times, rewards from result.json or from the verifier's reward files.

Reward precedence (harbor-format.md §1, §6): ``verifier_result.rewards`` of result.json
(else the last step's, for multi-step tasks); only when result.json has no rewards are the
verifier's reward files read: ``reward.json`` first for Harbor >= 0.7.0, ``reward.txt``
first before that (version guessed from the trial's own files: a ``lock.json`` or an
``environment.mounts`` key means >= 0.7, ``environment.mounts_json`` means < 0.7).
Non-numeric reward values (e.g. a "headline" string) are dropped from ``rewards`` with a
load error of type 'non_numeric_reward' for that key.
"""

from __future__ import annotations

import os
from typing import Any

from evalkit.load.errors import LoadError
from evalkit.load.shared.io import as_dict, finite_float, read_bytes, read_json


def _task_ref(task_id: Any) -> tuple[str | None, str | None]:
    """Text and kind of the three Harbor task-id shapes (no type tag: told apart by keys)."""
    t = as_dict(task_id)
    if "org" in t and "name" in t:
        ref = t.get("ref")
        return f"{t.get('org')}/{t.get('name')}" + (f"@{ref}" if ref else ""), "package"
    if t.get("git_url"):
        commit = t.get("git_commit_id")
        return f"{t.get('git_url')}" + (
            f"@{commit}" if commit else ""
        ) + f":{t.get('path') or ''}", "git"
    if "path" in t and t.get("path") is not None:
        return str(t.get("path")), "local"
    name = t.get("name")
    if isinstance(name, str) and "/" in name:  # a trial config's package task: 'org/name'
        ref = t.get("ref")
        return name + (f"@{ref}" if ref else ""), "package"
    return None, None


def _ts(v: Any) -> str | None:
    return v if isinstance(v, str) and v else None


def _numeric_rewards(
    raw: Any, path: str, trial_id: str | None, errors: list[LoadError]
) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if not isinstance(raw, dict):
        if raw is not None:
            errors.append(
                LoadError(
                    path,
                    "file",
                    "wrong_type",
                    f"rewards is {type(raw).__name__}, expected an object",
                    trial_id=trial_id,
                )
            )
        return out
    for k, v in raw.items():
        f = finite_float(v)
        if f is None:
            errors.append(
                LoadError(
                    path,
                    "file",
                    "non_numeric_reward",
                    f"reward key {k!r} has non-numeric value {str(v)[:60]!r}; key dropped",
                    trial_id=trial_id,
                )
            )
            continue
        out.append({"name": str(k), "value": f})
    return out


def primary_reward(items: list[dict[str, Any]]) -> float | None:
    """The 'reward' key, else the first numeric key."""
    for it in items:
        if it["name"] == "reward":
            return it["value"]
    return items[0]["value"] if items else None


def _reward_files(
    trial_dir: str, json_first: bool, trial_id: str | None, errors: list[LoadError]
) -> tuple[list[dict], str | None]:
    vdir = os.path.join(trial_dir, "verifier")
    order = ("reward.json", "reward.txt") if json_first else ("reward.txt", "reward.json")
    for fname in order:
        p = os.path.join(vdir, fname)
        if not os.path.lexists(p):
            continue
        if fname == "reward.txt":
            data, err = read_bytes(p, "file", limit=1024 * 1024)
            if err is not None:
                errors.append(
                    LoadError(err.path, err.level, err.error_type, err.message, trial_id=trial_id)
                )
                continue
            text = data.decode("utf-8", errors="replace").strip()
            try:
                f = float(text)
            except ValueError:
                errors.append(
                    LoadError(
                        p,
                        "file",
                        "non_numeric_reward",
                        f"reward.txt is not a number: {text[:60]!r}",
                        trial_id=trial_id,
                    )
                )
                continue
            f2 = finite_float(f)
            if f2 is None:
                errors.append(
                    LoadError(
                        p,
                        "file",
                        "non_numeric_reward",
                        f"reward.txt is not finite: {text[:60]!r}",
                        trial_id=trial_id,
                    )
                )
                continue
            return [{"name": "reward", "value": f2}], "reward.txt"
        val, err = read_json(p, "file", limit=16 * 1024 * 1024)
        if err is not None:
            errors.append(
                LoadError(err.path, err.level, err.error_type, err.message, trial_id=trial_id)
            )
            continue
        items = _numeric_rewards(val, p, trial_id, errors)
        if items:
            return items, "reward.json"
    return [], None


def _json_first(trial_dir: str, config: dict, names: set[str]) -> bool:
    """Harbor >= 0.7 reads reward.json first; guess the version from the trial's files."""
    if "lock.json" in names:  # trial lock.json: >= 0.17
        return True
    env = as_dict(config.get("environment"))
    return "mounts_json" not in env


def _span(p: Any) -> tuple[str | None, str | None]:
    """(started_at, finished_at) of a phase object, each a non-empty string or None."""
    if type(p) is not dict:
        return None, None
    a, b = p.get("started_at"), p.get("finished_at")
    return (a if type(a) is str and a else None), (b if type(b) is str and b else None)


def _str(v: Any) -> str | None:
    return v if type(v) is str else None


def _safe_list(path: str) -> list[str]:
    try:
        return os.listdir(path)
    except OSError:
        return []
