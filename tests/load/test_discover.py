"""Discovery rules that decide which folders load (evalkit/load/discover.py, SECURITY.md):
folder names that are not UTF-8, symlinks in and out of the runs root, loops."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import polars as pl
import pytest

import evalkit
from tests.conftest import SKILLSBENCH_JOB
from tests.fuzz.deny import denied

N = 17  # trials of the skillsbench job


def _runs(tmp_path: Path, jobs: tuple[str, ...] = ("a",)) -> Path:
    root = tmp_path / "runs"
    for j in jobs:
        shutil.copytree(SKILLSBENCH_JOB, root / j)
    return root


def _trials(job: Path) -> list[Path]:
    return sorted(p for p in job.iterdir() if "__" in p.name)


def _errors(runs: evalkit.Runs, kind: str) -> list[str]:
    return runs.load_errors.filter(pl.col("error_type") == kind)["path"].to_list()


def _load(path: Path, cache: bool = False) -> evalkit.Runs:
    runs = evalkit.load(path, cache=cache, progress=False)
    _ = runs.steps, runs.tool_calls, runs.findings
    return runs


@pytest.mark.parametrize("where", ["trial", "job"])
def test_a_folder_name_that_is_not_utf8_is_a_load_error_not_a_crash(
    tmp_path: Path, where: str
) -> None:
    root = _runs(tmp_path, ("a", "b"))
    src = _trials(root / "a")[0] if where == "trial" else root / "b"
    bad = os.fsencode(src.parent) + b"/bad\xff__X2abcde"
    os.rename(src, bad)
    for cache in (False, True, True):
        runs = _load(root, cache)
        assert runs.trials.height == (2 * N - 1 if where == "trial" else N)
        assert _errors(runs, "undecodable_name") == [os.fsdecode(src.parent) + "/bad\\xff__X2abcde"]
        assert runs.trials["trial_id"].is_unique().all()


def test_a_runs_root_whose_name_is_not_utf8_is_a_load_error(tmp_path: Path) -> None:
    root = os.fsdecode(os.fsencode(tmp_path) + b"/r\xe9")
    shutil.copytree(SKILLSBENCH_JOB, os.path.join(root, "a"))
    runs = evalkit.load(root, cache=False, progress=False)
    assert runs.trials.height == 0
    assert _errors(runs, "undecodable_name") == [str(tmp_path) + "/r\\xe9"]


@pytest.mark.parametrize("where", ["same_job", "other_job"])
def test_a_symlink_to_another_trial_loads_that_trial_once(tmp_path: Path, where: str) -> None:
    root = _runs(tmp_path, ("a", "b"))
    attempts = _load(root).trials.group_by("run", "task_name").len().sort("task_name")
    target = _trials(root / "a")[0]
    link = root / ("a" if where == "same_job" else "b") / "copy-of__Zz9Zz9Z"
    link.symlink_to(target)
    for cache in (False, True):
        runs = _load(root, cache)
        assert runs.trials.height == 2 * N
        assert runs.trials["trial_id"].is_unique().all()
        assert runs.trials["trial_dir"].is_unique().all()
        assert runs.trials.group_by("run", "task_name").len().sort("task_name").equals(attempts)
        assert _errors(runs, "duplicate_link") == [str(link)]


def test_two_symlinks_to_one_trial_of_another_folder_count_it_once(tmp_path: Path) -> None:
    root = _runs(tmp_path)
    spare = root / "spare" / "x__Spare00"
    shutil.copytree(_trials(root / "a")[0], spare)
    (root / "a" / "l1__Lnk0001").symlink_to(spare)
    (root / "a" / "l2__Lnk0002").symlink_to(spare)
    runs = _load(root / "a")  # spare/ is outside the job given: both links not followed
    assert runs.trials.height == N
    assert len(_errors(runs, "symlink_not_followed")) == 2
    runs = _load(root)  # inside the runs root: spare/ is a job of its own, loaded once
    assert runs.trials.height == N + 1
    assert runs.trials["trial_id"].is_unique().all()
    assert sorted(_errors(runs, "duplicate_link")) == [
        str(root / "a" / "l1__Lnk0001"),
        str(root / "a" / "l2__Lnk0002"),
    ]
    shutil.move(spare.parent, root / ".hidden")  # not discovered itself: the first link counts
    (root / "a" / "l1__Lnk0001").unlink()
    (root / "a" / "l2__Lnk0002").unlink()
    (root / "a" / "l1__Lnk0001").symlink_to(root / ".hidden" / "x__Spare00")
    (root / "a" / "l2__Lnk0002").symlink_to(root / ".hidden" / "x__Spare00")
    runs = _load(root)
    assert runs.trials.height == N + 1
    assert _errors(runs, "duplicate_link") == [str(root / "a" / "l2__Lnk0002")]


@pytest.mark.parametrize("target", ["/etc", "/usr", ".."])
def test_a_trial_named_symlink_out_of_the_root_or_to_an_ancestor_is_not_followed(
    tmp_path: Path, target: str
) -> None:
    root = _runs(tmp_path)
    link = root / "a" / "sys__Etc0000"
    link.symlink_to(target)
    runs = _load(root)
    assert runs.trials.height == N
    assert not runs.trials["trial_dir"].str.starts_with("/etc").any()
    assert _errors(runs, "symlink_not_followed") == [str(link)]


def test_a_job_symlink_out_of_the_root_is_not_followed(tmp_path: Path) -> None:
    root = _runs(tmp_path)
    shutil.copytree(SKILLSBENCH_JOB, tmp_path / "elsewhere")
    (root / "ext").symlink_to(tmp_path / "elsewhere")
    (root / "alias").symlink_to(root / "a")  # inside: the same job, counted once
    runs = _load(root)
    assert runs.trials.height == N
    assert _errors(runs, "symlink_not_followed") == [str(root / "ext")]
    assert _load(root / "ext").trials.height == N  # given directly, it loads


@pytest.mark.parametrize("how", ["self", "pair", "dangling"])
def test_a_root_level_symlink_loop_is_a_load_error(tmp_path: Path, how: str) -> None:
    root = _runs(tmp_path)
    if how == "self":
        (root / "loop").symlink_to("loop")
    elif how == "pair":
        (root / "loop").symlink_to("loop2")
        (root / "loop2").symlink_to("loop")
    else:
        (root / "loop").symlink_to("/nonexistent/x")
    runs = _load(root)
    assert runs.trials.height == N
    assert str(root / "loop") in _errors(runs, "unreadable")


def test_an_unreadable_verifier_folder_is_a_load_error(tmp_path: Path) -> None:
    root = _runs(tmp_path)
    vdir = _trials(root / "a")[0] / "verifier"
    assert vdir.is_dir()
    with denied([(str(vdir), "read")]):
        runs = _load(root)
    assert runs.trials.height == N
    errs = runs.load_errors.filter(pl.col("path") == str(vdir))
    assert errs["error_type"].to_list() == ["unreadable"]
    assert errs["trial_id"].item() is not None
