"""scripts/setup.sh finds uv instead of reinstalling it, ignores an active venv (whose
Python has no pip) and pyenv shims of versions that are not installed, works from any
folder, and says one line when there is nothing to do. Run against a copy of the script
in a skeleton checkout with a stand-in uv that records its arguments."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _exe(path: Path, body: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(0o755)
    return path


@pytest.fixture
def sandbox(tmp_path: Path) -> dict[str, Path]:
    repo = tmp_path / "repo"
    (repo / "scripts").mkdir(parents=True)
    shutil.copy(ROOT / "scripts" / "setup.sh", repo / "scripts" / "setup.sh")
    _exe(repo / "scripts" / "build_native.sh", "exit 0")
    _exe(repo / ".venv" / "bin" / "python", 'echo "Python 3.11.0"')
    log = tmp_path / "uv.log"
    _exe(tmp_path / "bin" / "uv", f'echo "$@" >> {log}')
    # an active venv whose python has no pip, and a pyenv shim of a version not installed
    venv = tmp_path / "venv"
    _exe(venv / "bin" / "python3", 'echo "No module named pip" >&2; exit 1')
    _exe(tmp_path / "shims" / "python3.11", 'echo "pyenv: python3.11: not installed" >&2; exit 127')
    return {"repo": repo, "log": log, "venv": venv, "tmp": tmp_path}


def _run(sb: dict[str, Path], with_uv: bool = True) -> subprocess.CompletedProcess[str]:
    base = Path(sys.base_prefix) / "bin"
    path = [sb["venv"] / "bin", sb["tmp"] / "shims", base, Path("/usr/bin"), Path("/bin")]
    if with_uv:
        path.insert(1, sb["tmp"] / "bin")
    env = {
        "PATH": os.pathsep.join(map(str, path)),
        "HOME": str(sb["tmp"]),
        "VIRTUAL_ENV": str(sb["venv"]),
        "PIP_NO_INDEX": "1",  # never reach PyPI from a test
    }
    elsewhere = sb["tmp"] / "elsewhere"
    elsewhere.mkdir(exist_ok=True)
    return subprocess.run(
        ["bash", str(sb["repo"] / "scripts" / "setup.sh")],
        cwd=elsewhere, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def test_found_uv_one_line_from_any_folder_with_a_venv_active(sandbox) -> None:
    for _ in range(2):
        res = _run(sandbox)
        assert res.returncode == 0, res.stderr
        assert (res.stdout + res.stderr).strip().splitlines() == [
            "setup: ready (.venv, Python 3.11.0)"
        ]
    calls = sandbox["log"].read_text().splitlines()
    assert len(calls) == 2 and all(c.startswith("sync --locked") for c in calls)
    assert str(sandbox["venv"]) not in calls[0]  # the venv's python is not the one used
