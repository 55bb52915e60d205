"""environment.yml lists every runtime dependency of pyproject.toml (conda names mapped)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONDA_NAME = {"docker": "docker-py"}


def test_environment_yml_covers_pyproject_dependencies() -> None:
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    env = (ROOT / "environment.yml").read_text()
    listed = set(re.findall(r"^\s*-\s*([A-Za-z0-9_.\-]+)", env, flags=re.M))
    for dep in deps:
        name = re.split(r"[<>=!~\[ ]", dep, maxsplit=1)[0].lower()
        assert CONDA_NAME.get(name, name) in listed, f"{name} missing from environment.yml"
    assert "-e ." in env  # the package itself comes from pip
