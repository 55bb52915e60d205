"""Edges of real Harbor data (issue 20): each test loads a constructed job folder from
``tests/fixtures/harbor/edges/`` (SOURCES.md there says which shape each reproduces)."""

from __future__ import annotations

import shutil
from pathlib import Path

import polars as pl
import pytest

import evalkit as ek
from tests.conftest import FIXTURES

EDGES = FIXTURES / "harbor" / "edges"


@pytest.fixture
def edge(tmp_path: Path):
    """Copy of one edge fixture (loads may write nothing into the repository)."""

    def copy(name: str) -> Path:
        dst = tmp_path / name
        shutil.copytree(EDGES / name, dst)
        return dst

    return copy


def test_unfinished_trial_takes_the_recorded_task_name(edge) -> None:
    runs = ek.load(edge("task-identity"), cache=False)
    t = runs.trials
    assert t["task_name"].n_unique() == 2
    hb = t.filter(pl.col("task_name") == "harbor/heartbeat-status-watcher").sort("attempt")
    assert hb["attempt"].to_list() == [1, 2]
    assert hb["outcome"].to_list() == ["pass", "incomplete"]
