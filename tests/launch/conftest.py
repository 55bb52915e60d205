"""Fixtures for evalkit.launch unit tests: a tiny local dataset and a fake Harbor CLI."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
AGENTS = HERE.parents[1] / "agents"
SMOKE = HERE.parents[1] / "benchmarks" / "smoke-tasks"


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    """Three minimal Harbor tasks: alpha, beta, gamma-x."""
    root = tmp_path / "ds"
    for name in ("alpha", "beta", "gamma-x"):
        d = root / name
        (d / "solution").mkdir(parents=True)
        (d / "task.toml").write_text('schema_version = "1.4"\n')
        (d / "instruction.md").write_text(f"Do {name}.\n")
        (d / "solution" / "solve.sh").write_text("#!/bin/bash\necho hi > /app/out.txt\n")
    (root / "README.md").write_text("not a task\n")
    return root


@pytest.fixture
def fake_harbor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An executable fake `harbor` (tests/launch/fake_harbor.py) as $EVALKIT_HARBOR."""
    exe = tmp_path / "bin" / "harbor"
    exe.parent.mkdir()
    exe.write_text(
        f"#!{sys.executable}\nimport runpy, sys\nsys.argv[0] = 'harbor'\nrunpy.run_path({str(HERE / 'fake_harbor.py')!r}, run_name='__main__')\n"
    )
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("EVALKIT_HARBOR", str(exe))
    monkeypatch.setenv("FAKE_HARBOR_MODE", "ok")
    from evalkit.launch import harborcli

    harborcli.harbor_version.cache_clear()
    return exe


@pytest.fixture
def no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.endswith(("_API_KEY", "_TOKEN")):
            monkeypatch.delenv(name, raising=False)
