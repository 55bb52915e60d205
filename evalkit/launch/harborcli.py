"""Finding and calling Harbor's CLI. evalkit never imports harbor: Harbor needs
Python >= 3.12 and lives in its own environment; we only run its executable.

Lookup order: an explicit setting (argument), ``$EVALKIT_HARBOR``, then ``harbor`` on PATH.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

HARBOR_ENV_VAR = "EVALKIT_HARBOR"
MIN_HARBOR = (0, 26)


class HarborNotFound(Exception):
    """No usable Harbor executable."""


def find_harbor(
    setting: str | os.PathLike[str] | None = None, environ: Mapping[str, str] | None = None
) -> str:
    """Absolute path of the Harbor executable, or HarborNotFound saying where we looked."""
    env = os.environ if environ is None else environ
    tried = []
    for how, cand in (("setting", setting), (f"${HARBOR_ENV_VAR}", env.get(HARBOR_ENV_VAR))):
        if cand:
            path = shutil.which(str(cand)) or (str(cand) if os.access(str(cand), os.X_OK) else None)
            if path:
                return str(Path(path).absolute())
            tried.append(f"{how}={cand} (not an executable)")
    on_path = shutil.which("harbor", path=env.get("PATH"))
    if on_path:
        return on_path
    tried.append("'harbor' on PATH (not found)")
    raise HarborNotFound(
        "Harbor CLI not found: tried "
        + "; ".join(tried)
        + ". Install it in its own Python >= 3.12 "
        f"environment (e.g. `uv tool install harbor`) and put it on PATH or set ${HARBOR_ENV_VAR}."
    )


@lru_cache(maxsize=8)
def harbor_version(harbor: str) -> str | None:
    """``harbor --version`` (e.g. "0.26.0"), or None when it cannot be run."""
    try:
        out = subprocess.run(
            [harbor, "--version"],
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = (out.stdout or "").strip().splitlines()
    return text[-1].strip() if out.returncode == 0 and text else None


def version_tuple(version: str | None) -> tuple[int, ...]:
    """The leading numbers of a version (``0.26.0rc1`` -> (0, 26, 0)): each part's leading
    digits; a part with anything after them (a pre-release) is the last one."""
    nums = []
    for part in (version or "").split("."):
        m = re.match(r"\d+", part)
        if m is None:
            break
        nums.append(int(m.group()))
        if m.end() < len(part):
            break
    return tuple(nums)


def bundled_agents_dir() -> Path | None:
    """``agents/`` of a source checkout (where evalkit_scripted lives), if present."""
    cand = Path(__file__).resolve().parents[2] / "agents"
    return cand if (cand / "evalkit_scripted").is_dir() else None


def harbor_env(
    extra_pythonpath: Sequence[Path] = (), base: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Environment for Harbor's process: ours, plus PYTHONPATH entries for custom agents and
    a local LiteLLM cost map (no network fetch on every run). Values are never logged."""
    env = dict(os.environ if base is None else base)
    parts = [str(Path(p).resolve()) for p in extra_pythonpath]
    if env.get("PYTHONPATH"):
        parts.append(env["PYTHONPATH"])
    if parts:
        env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(parts))
    env.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    return env


def print_config(
    harbor: str, config: dict[str, Any], env: Mapping[str, str], timeout: float = 120
) -> dict[str, Any]:
    """Harbor's resolved JobConfig for ``config`` (validates it against Harbor's schema)."""
    with tempfile.TemporaryDirectory(prefix="evalkit-cfg-") as tmp:
        path = Path(tmp) / "config.json"
        path.write_text(json.dumps(config, indent=2))
        out = subprocess.run(
            [harbor, "run", "-c", str(path), "--print-config"],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=dict(env),
            stdin=subprocess.DEVNULL,
        )
    text = out.stdout or ""
    start = text.find("{")
    if out.returncode != 0 or start < 0:
        tail = "\n".join(((out.stderr or "") + text).strip().splitlines()[-15:])
        raise ValueError(f"Harbor rejected the job config (exit {out.returncode}):\n{tail}")
    return json.loads(text[start:])


def job_schema(harbor: str, env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """``harbor job schema``: the JSON Schema of Harbor's JobConfig."""
    out = subprocess.run(
        [harbor, "job", "schema"],
        capture_output=True,
        text=True,
        timeout=120,
        env=None if env is None else dict(env),
        stdin=subprocess.DEVNULL,
    )
    out.check_returncode()
    return json.loads(out.stdout[out.stdout.find("{") :])
