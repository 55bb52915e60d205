"""evalkit.find_runs / find_path / runs_root: one rule for where a notebook's inputs are."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from evalkit.load.locate import RUNS_ENV, RunsFolderProblem, find_path, find_runs, runs_root

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """repo/runs/<one real job>, repo/notebooks/, repo/tasks/t1."""
    repo = tmp_path / "repo"
    job = ROOT / "runs" / "scripted-baseline"
    dst = repo / "runs" / "job-a"
    dst.mkdir(parents=True)
    for name in ("config.json", "result.json"):
        shutil.copy(job / name, dst / name)
    trial = next(p for p in sorted(job.iterdir()) if (p / "result.json").exists())
    shutil.copytree(trial, dst / trial.name)
    (repo / "notebooks").mkdir()
    (repo / "tasks" / "t1").mkdir(parents=True)
    return repo


def test_found_from_the_root_and_from_a_subfolder(tree: Path, monkeypatch) -> None:
    monkeypatch.delenv(RUNS_ENV, raising=False)
    assert find_runs(start=tree) == tree / "runs"
    assert find_runs(start=tree / "notebooks") == tree / "runs"
    assert find_runs("runs", start=tree / "notebooks") == tree / "runs"


def test_env_applies_only_without_an_argument(tree: Path, tmp_path: Path, monkeypatch) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.setenv(RUNS_ENV, str(tree / "runs"))
    assert find_runs(start=elsewhere) == tree / "runs"
    with pytest.raises(RunsFolderProblem, match="runs_dir parameter"):
        find_runs("nothing-here", start=elsewhere)


def test_missing_says_what_where_and_how(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv(RUNS_ENV, raising=False)
    with pytest.raises(RunsFolderProblem) as e:
        find_runs(start=tmp_path)
    msg = str(e.value)
    assert "'runs'" in msg and str(tmp_path) in msg and RUNS_ENV in msg and "runs_dir" in msg
    assert e.value._render_traceback_() == msg.splitlines()  # IPython: message, no traceback
    assert isinstance(e.value, FileNotFoundError)


def test_empty_folder_is_a_problem_too(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "README.md").write_text("nothing")
    monkeypatch.setenv(RUNS_ENV, str(tmp_path / "runs"))
    with pytest.raises(RunsFolderProblem, match=r"\(\$EVALKIT_RUNS\) holds no Harbor job"):
        find_runs(start=tmp_path)


def test_a_folder_of_symlinks_leading_out_says_why_nothing_was_read(
    tree: Path, tmp_path: Path
) -> None:
    links = tmp_path / "links"
    links.mkdir()
    job = tree / "runs" / "job-a"
    (links / "job").symlink_to(job)
    with pytest.raises(RunsFolderProblem) as e:
        find_runs(links)
    msg = str(e.value)
    assert "holds no Harbor job" in msg
    assert "1 load error: 1 symlink_not_followed" in msg and str(links / "job") in msg
    assert "point at the folder they lead to" in msg
    assert find_runs(job.parent) == job.parent.resolve()  # the folder they lead to loads


def test_an_empty_folder_names_no_load_errors(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(RunsFolderProblem) as e:
        find_runs(tmp_path / "empty")
    assert "load error" not in str(e.value)


def test_input_paths_and_new_runs_root(tree: Path, monkeypatch) -> None:
    monkeypatch.delenv(RUNS_ENV, raising=False)
    assert find_path("tasks/t1", start=tree / "notebooks") == tree / "tasks" / "t1"
    assert find_path("no/such", start=tree / "notebooks") == tree / "notebooks" / "no" / "such"
    assert runs_root(start=tree / "notebooks") == tree / "runs"
    assert runs_root("new-runs", start=tree) == tree / "new-runs"
