"""The hostile runs folder and the nightly report rendered from it, once per session."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.security.hostile import ENV_NAME, ENV_SECRET, build


@pytest.fixture(scope="session")
def hostile_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(tmp_path_factory.mktemp("hostile") / "runs")


@pytest.fixture(scope="session")
def hostile_report(hostile_runs: Path, tmp_path_factory: pytest.TempPathFactory):
    """The nightly report of the hostile runs, rendered (redacted, the default) while this
    machine's environment holds ENV_SECRET in a secret-looking variable."""
    from evalkit.report import render

    out = tmp_path_factory.mktemp("hostile-report")
    old = os.environ.get(ENV_NAME)
    os.environ[ENV_NAME] = ENV_SECRET
    try:
        return render("nightly", hostile_runs, out, {"run_by": "job"})
    finally:
        if old is None:
            os.environ.pop(ENV_NAME, None)
        else:
            os.environ[ENV_NAME] = old


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    """Three minimal Harbor tasks (as tests/launch/conftest.py's)."""
    root = tmp_path / "ds"
    for name in ("alpha", "beta", "gamma-x"):
        d = root / name
        (d / "solution").mkdir(parents=True)
        (d / "task.toml").write_text('schema_version = "1.4"\n')
        (d / "instruction.md").write_text(f"Do {name}.\n")
        (d / "solution" / "solve.sh").write_text("#!/bin/bash\necho hi > /app/out.txt\n")
    return root
