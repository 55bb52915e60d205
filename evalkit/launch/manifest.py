"""The frozen run manifest (Kedi's rules), written before any result exists.

It records the Harbor and evalkit versions, agent, model, settings, the exact task list
(with content digests of local tasks), attempts, concurrency, all five timeout
multipliers and the retry policy as Harbor resolved them. ``digest`` is a sha256 over the
canonical JSON of everything except ``created_at``, ``digest`` and ``location`` (where
the files are on this machine, so a moved checkout still resumes). Writing a manifest with
a different digest over an existing one is refused; credential-like keys and token-like
values are rejected (credentials travel by environment variable *name*, see pass_env).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

MANIFEST_FILE = "evalkit-manifest.json"
SCHEMA = "evalkit.launch.manifest/v1"
NOT_DIGESTED = ("created_at", "digest", "location")

_CRED_WORDS = {
    "secret",
    "password",
    "passwd",
    "token",
    "credential",
    "credentials",
    "auth",
    "authorization",
    "bearer",
    "cookie",
    "apikey",
}
_CRED_PAIRS = {
    ("api", "key"),
    ("access", "key"),
    ("private", "key"),
    ("secret", "key"),
    ("session", "key"),
}
_SECRET_VALUE = re.compile(
    r"(^|\s)(sk-[A-Za-z0-9_-]{8,}|sk_[A-Za-z0-9]{8,}|gh[pousr]_[A-Za-z0-9]{16,}|github_pat_\w{16,}|xox[abpr]-[\w-]{8,}"
    r"|AKIA[0-9A-Z]{16}|ASIA[0-9A-Z]{16}|AIza[\w-]{20,}|hf_[A-Za-z0-9]{16,}|glpat-[\w-]{16,})|-----BEGIN [A-Z ]*PRIVATE KEY"
)
_TEMPLATE = re.compile(r"^\$\{[A-Za-z_][A-Za-z0-9_]*\}$")


class ManifestMismatch(Exception):
    """An existing manifest has different settings; ``.differences`` lists the keys."""

    def __init__(self, path: Path, differences: list[str]) -> None:
        self.path = path
        self.differences = differences
        shown = ", ".join(differences[:12]) + (" ..." if len(differences) > 12 else "")
        super().__init__(
            f"{path} was frozen with different settings ({shown}); refusing to change it. "
            "Use another job name for a different run, or repeat the original command to resume."
        )


def _words(key: str) -> list[str]:
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", key)
    return [w for w in re.split(r"[\s_.\-/]+", spaced.lower()) if w]


def is_credential_key(key: str) -> bool:
    """``api_key``, ``apiKey``, ``auth_token``, ``password`` ... (but not ``max_tokens``)."""
    words = _words(key)
    return any(w in _CRED_WORDS for w in words) or any(
        pair in _CRED_PAIRS for pair in itertools.pairwise(words)
    )


def credential_problems(obj: Any, where: str = "", *, check_keys: bool = True) -> list[str]:
    """Paths of credential-like keys and token-like values (never the values themselves)."""
    found: list[str] = []
    if isinstance(obj, dict):
        for k, v in obj.items():
            path = f"{where}.{k}" if where else str(k)
            if (
                check_keys
                and is_credential_key(str(k))
                and not (isinstance(v, str) and _TEMPLATE.match(v))
            ):
                found.append(f"credential-like key {path}")
            found += credential_problems(v, path, check_keys=check_keys)
    elif isinstance(obj, list | tuple):
        for i, v in enumerate(obj):
            found += credential_problems(v, f"{where}[{i}]", check_keys=check_keys)
    elif isinstance(obj, str) and _SECRET_VALUE.search(obj):
        found.append(f"token-like value at {where or 'top level'}")
    return found


def canonical(obj: Any) -> bytes:
    return json.dumps(
        obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
    ).encode()


def digest_of(manifest: dict[str, Any]) -> str:
    body = {k: v for k, v in manifest.items() if k not in NOT_DIGESTED}
    return "sha256:" + hashlib.sha256(canonical(body)).hexdigest()


def _sorted_lists(obj: Any) -> Any:
    """Harbor serializes sets as lists in arbitrary order: sort lists of strings."""
    if isinstance(obj, dict):
        return {k: _sorted_lists(v) for k, v in obj.items()}
    if isinstance(obj, list):
        items = [_sorted_lists(v) for v in obj]
        return sorted(items) if all(isinstance(v, str) for v in items) else items
    return obj


def build_manifest(
    *,
    job_name: str,
    versions: dict[str, str | None],
    agent: dict[str, Any],
    model: str | None,
    environment: dict[str, Any],
    tasks: dict[str, Any],
    attempts: int,
    concurrency: int,
    timeouts: dict[str, float],
    retry: dict[str, Any],
    harbor_settings: dict[str, Any],
    location: dict[str, Any],
    created_at: datetime | None = None,
) -> dict[str, Any]:
    names = tasks.get("names")
    m: dict[str, Any] = {
        "schema": SCHEMA,
        "created_at": (created_at or datetime.now(UTC))
        .isoformat(timespec="seconds")
        .replace("+00:00", "Z"),
        "digest": None,
        "job_name": job_name,
        "versions": versions,
        "agent": agent,
        "model": model,
        "environment": _sorted_lists(environment),
        "tasks": tasks,
        "attempts": attempts,
        "concurrency": concurrency,
        "n_trials": None if names is None else len(names) * attempts,
        "timeouts": timeouts,
        "retry": _sorted_lists(retry),
        "harbor_settings": _sorted_lists(harbor_settings),
        "location": location,
    }
    m["digest"] = digest_of(m)
    return m


def differences(a: dict[str, Any], b: dict[str, Any], where: str = "") -> list[str]:
    """Dotted keys whose values differ (ignoring the not-digested keys at the top)."""
    out: list[str] = []
    for k in sorted(set(a) | set(b)):
        if not where and k in NOT_DIGESTED:
            continue
        path = f"{where}.{k}" if where else k
        va, vb = a.get(k), b.get(k)
        if isinstance(va, dict) and isinstance(vb, dict):
            out += differences(va, vb, path)
        elif canonical(va) != canonical(vb):
            out.append(path)
    return out


def read_manifest(job_dir: Path) -> dict[str, Any] | None:
    path = job_dir / MANIFEST_FILE
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        return None


def check_existing(job_dir: Path, manifest: dict[str, Any]) -> dict[str, Any] | None:
    """The existing manifest if it has the same digest, None if there is none; raises
    ManifestMismatch when it differs."""
    old = read_manifest(job_dir)
    if old is None:
        return None
    if digest_of(old) != manifest["digest"]:
        raise ManifestMismatch(job_dir / MANIFEST_FILE, differences(old, manifest) or ["digest"])
    return old


def write_manifest(job_dir: Path, manifest: dict[str, Any]) -> Path:
    """Write once (atomically); an existing file is only ever confirmed, never replaced."""
    path = job_dir / MANIFEST_FILE
    if check_existing(job_dir, manifest) is not None:
        return path
    problems = credential_problems(
        {k: v for k, v in manifest.items() if k != "location"}, check_keys=False
    )
    if problems:
        raise ValueError("manifest rejected: " + "; ".join(problems))
    job_dir.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(manifest, indent=2, sort_keys=False) + "\n")
    os.replace(tmp, path)
    return path
