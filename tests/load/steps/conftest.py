"""Fixtures for the trajectory tests."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest


@pytest.fixture
def make_trial(tmp_path: Path) -> Callable[..., Path]:
    """make_trial(name, {agent-relative name: dict | Path | bytes}, job='job') -> trial dir."""

    def make(name: str, files: dict, job: str = "job") -> Path:
        td = tmp_path / job / name
        for rel, content in files.items():
            p = td / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, Path):
                shutil.copy(content, p)
            elif isinstance(content, bytes):
                p.write_bytes(content)
            else:
                p.write_bytes(orjson.dumps(content))
        td.mkdir(parents=True, exist_ok=True)
        return td

    return make
