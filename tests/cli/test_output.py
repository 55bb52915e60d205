"""Every command that reads runs finds the runs folder by one rule (``load_runs``): the
``--runs`` option, else ``$EVALKIT_RUNS``, else ``runs`` here or in a folder above."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evalkit.cli import app
from tests.conftest import FIXTURES


@pytest.fixture
def project(tmp_path: Path) -> Path:
    shutil.copytree(FIXTURES / "harbor" / "skillsbench", tmp_path / "runs" / "skillsbench")
    (tmp_path / "notebooks").mkdir()
    return tmp_path


def _jobs(args: list[str], monkeypatch: pytest.MonkeyPatch, cwd: Path) -> list[str]:
    monkeypatch.chdir(cwd)
    res = CliRunner().invoke(app, ["list", *args, "--format", "json"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return sorted(r["job_name"] for r in json.loads(res.stdout))


def test_list_takes_the_runs_folder_as_argument_or_option(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("EVALKIT_RUNS", raising=False)
    by_arg = _jobs([str(project / "runs")], monkeypatch, project)
    assert by_arg and _jobs(["--runs", str(project / "runs")], monkeypatch, project) == by_arg
    assert _jobs([], monkeypatch, project / "notebooks") == by_arg  # ./runs one folder up
    monkeypatch.setenv("EVALKIT_RUNS", str(project / "runs"))
    assert _jobs([], monkeypatch, Path("/")) == by_arg


@pytest.mark.parametrize("command", [["list"], ["show", "x"], ["leaderboard"], ["export", "d"]])
def test_a_missing_runs_folder_says_where_it_looked(
    command: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("EVALKIT_RUNS", raising=False)
    res = CliRunner().invoke(app, [*command, "--runs", "runz"])
    assert res.exit_code == 2
    assert "No such folder: runz" in res.output and "--runs PATH" in res.output


def test_the_table_title_names_the_folder_read_however_it_was_found(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("EVALKIT_RUNS", raising=False)
    monkeypatch.setenv("COLUMNS", "400")
    monkeypatch.chdir(project / "notebooks")
    for args in (["--runs", str(project / "runs")], []):
        res = CliRunner().invoke(app, ["list", *args], catch_exceptions=False)
        assert res.exit_code == 0, res.output
        assert f"trials in {(project / 'runs').resolve()}" in res.output, res.output
