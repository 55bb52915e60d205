"""evalkit.launch.manage, the library behind ``evalkit rm`` and ``evalkit pull``: which job
folders may be removed (checked all at once, from what ``evalkit.load`` finds), removing
them, and the rsync argument lists of a pull and running them.

tests/security/test_manage.py drives the commands with hostile names; this module checks
the functions themselves on copies of real fixture jobs (harbor-edges/partial-credit,
unfinished-job): what a JobFolder holds, every refusal reported together, duplicates,
the exact rsync commands, and the exit code of the first failing rsync (a stand-in
script, no network)."""

from __future__ import annotations

import shutil
import stat
from pathlib import Path

import pytest

from evalkit.launch.manage import (
    REMOTE_RE,
    JobFolder,
    ManageError,
    job_folders,
    plan_pull,
    pull,
    remove_jobs,
)
from tests.conftest import FIXTURES

EDGES = FIXTURES / "harbor-edges"
BASE = ["-rlt", "-s", "--safe-links", "--partial", "--itemize-changes"]


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    """A runs root: run-a and run-b (5 finished trials each) and an interrupted job
    (2 trials, one without result.json)."""
    root = tmp_path / "runs"
    for job in ("run-a", "run-b"):
        shutil.copytree(EDGES / "partial-credit" / job, root / job)
    shutil.copytree(EDGES / "unfinished-job" / "2026-05-21__08-00-00", root / "stopped")
    return root


# -- ManageError -----------------------------------------------------------------------------


def test_manage_error_keeps_every_problem_and_joins_them() -> None:
    err = ManageError(["first", "second"])
    assert err.problems == ["first", "second"] and str(err) == "first; second"
    assert isinstance(err, ValueError)


# -- job_folders -----------------------------------------------------------------------------


def test_job_folders_describe_each_job_from_its_files(runs: Path) -> None:
    found = job_folders(["run-a", "stopped"], runs)
    assert found == [
        JobFolder("run-a", (runs / "run-a").resolve(), 5, "complete"),
        # result.json without finished_at, one trial with result.json and one without
        JobFolder("stopped", (runs / "stopped").resolve(), 2, "interrupted"),
    ]


def test_a_name_given_twice_is_one_job(runs: Path) -> None:
    assert [j.name for j in job_folders(["run-b", "run-a", "run-b"], runs)] == ["run-b", "run-a"]


def test_every_refused_name_is_reported_at_once(runs: Path) -> None:
    (runs / "a-file").write_text("x")
    (runs / "not-a-job").mkdir()
    (runs / "link").symlink_to(runs / "run-a")
    with pytest.raises(ManageError) as err:
        job_folders(["run-a", "../x", "missing", "a-file", "not-a-job", "link"], runs)
    root = runs.resolve()
    assert err.value.problems == [
        "'../x' is not a job folder name (one folder name: no '/', no '..', no leading dot)",
        f"{root / 'missing'} does not exist",
        f"{root / 'a-file'} is not a folder",
        f"{root / 'not-a-job'} is not a Harbor job folder (no job or trial files found)",
        f"{root / 'link'} is a symlink; evalkit rm only removes real job folders",
    ]


def test_a_trial_folder_is_not_a_job_folder(runs: Path) -> None:
    shutil.copytree(runs / "run-a" / "alpha__a0aaaaa", runs / "alpha__a0aaaaa")
    with pytest.raises(ManageError, match="is not a Harbor job folder"):
        job_folders(["alpha__a0aaaaa"], runs)


def test_a_runs_root_that_is_not_a_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ManageError) as err:
        job_folders(["x"], tmp_path / "nowhere")
    assert err.value.problems == [f"runs root {tmp_path / 'nowhere'} is not a folder"]


def test_a_runs_root_given_through_a_symlink_is_read_at_its_target(
    runs: Path, tmp_path: Path
) -> None:
    (tmp_path / "alias").symlink_to(runs)
    (found,) = job_folders(["run-a"], tmp_path / "alias")
    assert found.path == (runs / "run-a").resolve()


# -- remove_jobs -----------------------------------------------------------------------------


def test_remove_jobs_deletes_the_folders_and_returns_them(runs: Path) -> None:
    found = job_folders(["run-a", "run-b"], runs)
    assert remove_jobs(found) == [j.path for j in found]
    assert sorted(p.name for p in runs.iterdir()) == ["stopped"]


def test_a_running_job_is_refused_unless_forced_and_nothing_is_removed(runs: Path) -> None:
    a = JobFolder("run-a", (runs / "run-a").resolve(), 5, "complete")
    live = JobFolder("run-b", (runs / "run-b").resolve(), 5, "running")
    with pytest.raises(ManageError) as err:
        remove_jobs([a, live])
    assert err.value.problems == [f"{live.path} is still running (use --force to remove it anyway)"]
    assert (runs / "run-a").is_dir() and (runs / "run-b").is_dir()
    assert remove_jobs([a, live], force=True) == [a.path, live.path]
    assert not (runs / "run-a").exists() and not (runs / "run-b").exists()


def test_a_folder_swapped_for_a_symlink_after_the_check_stops_the_removal(
    runs: Path, tmp_path: Path
) -> None:
    first, second = job_folders(["run-a", "run-b"], runs)
    keep = tmp_path / "precious"
    shutil.move(runs / "run-b", keep)
    (runs / "run-b").symlink_to(keep)  # changed between the check and the removal
    with pytest.raises(ManageError, match="changed since it was checked; nothing more removed"):
        remove_jobs([first, second])
    assert not (runs / "run-a").exists()  # removed before the changed one was reached
    assert (keep / "result.json").is_file() and (runs / "run-b").is_symlink()


# -- plan_pull -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "remote",
    [
        "host:/srv/runs",
        "me@host:runs",
        "u.s_er-1@build-01.example.org:/a b/c",
        "[::1]:/r",
        "[10.0.0.1]:x",
    ],
)
def test_ordinary_remotes_are_accepted(remote: str) -> None:
    assert REMOTE_RE.match(remote)


def test_pull_of_a_whole_runs_folder_is_one_rsync(tmp_path: Path) -> None:
    plan = plan_pull("me@host:/srv/runs/", tmp_path / "runs")
    assert (plan.remote, plan.runs_root) == ("me@host:/srv/runs/", tmp_path / "runs")
    assert plan.commands == [["rsync", *BASE, "--", "me@host:/srv/runs/", f"{tmp_path}/runs/"]]


def test_pull_of_some_jobs_is_one_rsync_per_job_each_name_once(tmp_path: Path) -> None:
    plan = plan_pull("h:/r", tmp_path, ["b", "a", "b"], delete=True, rsync="/opt/rsync")
    flags = ["/opt/rsync", *BASE, "--delete", "--"]
    assert plan.commands == [
        [*flags, "h:/r/b/", f"{tmp_path}/b/"],
        [*flags, "h:/r/a/", f"{tmp_path}/a/"],
    ]


def test_a_relative_runs_root_is_made_absolute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    plan = plan_pull("h:/r", "runs")
    assert plan.runs_root == tmp_path / "runs" and plan.commands[0][-1] == f"{tmp_path}/runs/"


def test_every_pull_problem_is_reported_at_once(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(ManageError) as err:
        plan_pull("-e sh", tmp_path / "file", ["ok", "../up", ".hidden"])
    p = err.value.problems
    assert len(p) == 4 and p[0].startswith("remote '-e sh' is not of the form [USER@]HOST:PATH")
    assert p[1:] == [
        "'../up' is not a job folder name",
        "'.hidden' is not a job folder name",
        f"runs root {tmp_path / 'file'} is not a folder",
    ]


def test_render_shows_each_command_quoted_for_a_shell(tmp_path: Path) -> None:
    plan = plan_pull("h:/my runs", tmp_path / "r", ["j"])
    assert plan.render() == (
        f"rsync -rlt -s --safe-links --partial --itemize-changes -- 'h:/my runs/j/' {tmp_path}/r/j/"
    )
    two = plan_pull("h:/r", tmp_path / "r", ["a", "b"])
    assert len(two.render().splitlines()) == 2


# -- pull ------------------------------------------------------------------------------------


def fake_rsync(tmp_path: Path, fail_on: str | None = None, code: int = 23) -> Path:
    """An rsync stand-in: records its arguments, exits ``code`` when the source contains
    ``fail_on``."""
    exe = tmp_path / "bin" / "rsync"
    exe.parent.mkdir(parents=True, exist_ok=True)
    fail = f'case "$*" in *{fail_on}*) exit {code};; esac\n' if fail_on else ""
    exe.write_text(f'#!/bin/sh\necho "$@" >> {tmp_path / "calls.txt"}\n{fail}exit 0\n')
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return exe


def test_pull_runs_every_command_and_makes_the_target_folders(tmp_path: Path) -> None:
    exe = fake_rsync(tmp_path)
    plan = plan_pull("h:/r", tmp_path / "local", ["a", "b"], rsync=str(exe))
    assert pull(plan) == 0
    calls = (tmp_path / "calls.txt").read_text().splitlines()
    assert [c.split(" -- ")[1] for c in calls] == [
        f"h:/r/a/ {tmp_path}/local/a/",
        f"h:/r/b/ {tmp_path}/local/b/",
    ]
    assert (tmp_path / "local" / "a").is_dir() and (tmp_path / "local" / "b").is_dir()


def test_the_first_failing_rsync_stops_the_pull_with_its_exit_code(tmp_path: Path) -> None:
    exe = fake_rsync(tmp_path, fail_on="/b/", code=23)
    plan = plan_pull("h:/r", tmp_path / "local", ["a", "b", "c"], rsync=str(exe))
    assert pull(plan) == 23
    calls = (tmp_path / "calls.txt").read_text().splitlines()
    assert len(calls) == 2 and "h:/r/c/" not in "".join(calls)  # c never started


def test_pull_without_rsync_is_refused_before_anything_is_made(tmp_path: Path) -> None:
    plan = plan_pull("h:/r", tmp_path / "local", rsync=str(tmp_path / "no-rsync"))
    with pytest.raises(ManageError, match="no-rsync not found"):
        pull(plan)
    assert not (tmp_path / "local").exists()
