"""environment.yml lists every runtime dependency and optional extra of pyproject.toml
(conda names mapped) at the same lower bound, and installs evalkit itself with pip."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONDA_NAME = {"docker": "docker-py"}
REQ = re.compile(r"^([A-Za-z0-9_.\-]+)\s*(?:>=\s*([0-9][0-9.]*))?")


def _bounds(lines: list[str]) -> dict[str, str | None]:
    out = {}
    for line in lines:
        m = REQ.match(line.strip())
        if m:
            out[m.group(1).lower()] = m.group(2)
    return out


def _conda() -> dict[str, str | None]:
    env = (ROOT / "environment.yml").read_text()
    return _bounds(re.findall(r"^\s*-\s*([A-Za-z0-9_.\-]+[^\n#]*)", env, flags=re.M))


def test_environment_yml_covers_pyproject_dependencies() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = list(project["dependencies"])
    for extra in project.get("optional-dependencies", {}).values():
        wanted += extra
    conda = _conda()
    for name, low in _bounds(wanted).items():
        cname = CONDA_NAME.get(name, name)
        assert cname in conda, f"{name} missing from environment.yml"
        assert conda[cname] == low, f"{cname}: environment.yml >={conda[cname]}, pyproject >={low}"
    assert "-e ." in (ROOT / "environment.yml").read_text()  # evalkit itself comes from pip


def test_python_bound_agrees() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert _conda()["python"] == project["requires-python"].removeprefix(">=")
