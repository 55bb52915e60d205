"""``evalkit rm`` and ``evalkit pull`` (evalkit.cli.manage_cmd): the shells over
evalkit.launch.manage. ``rm`` lists what it found, asks (default no) unless ``--yes``, passes
``--force`` on and says how many folders it removed; ``pull`` passes its options to the
plan, prints it with ``--dry-run`` and exits with rsync's code. A refusal prints every
problem on stderr and exits 2.

The library functions are stand-ins here; tests/security/test_manage.py runs the real ones
on hostile names."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from evalkit.cli import app, manage_cmd
from evalkit.launch.manage import JobFolder, ManageError, PullPlan


@pytest.fixture
def calls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Stand-ins for job_folders / remove_jobs that record their arguments."""
    seen: dict[str, Any] = {}
    found = [
        JobFolder("job-a", tmp_path / "runs" / "job-a", 3, "finished"),
        JobFolder("job-b", tmp_path / "runs" / "job-[b]", 12, "interrupted"),
    ]

    def job_folders(names, root):
        seen["names"], seen["root"] = list(names), Path(root)
        return found[: len(names)]

    def remove_jobs(jobs, *, force=False):
        seen["removed"], seen["force"] = list(jobs), force
        return [j.path for j in jobs]

    monkeypatch.setattr(manage_cmd, "job_folders", job_folders)
    monkeypatch.setattr(manage_cmd, "remove_jobs", remove_jobs)
    return seen


def _rm(*args: str, input: str | None = None):
    return CliRunner().invoke(app, ["rm", *args], input=input)


def test_rm_lists_each_job_with_its_trials_and_state(calls: dict, tmp_path: Path) -> None:
    res = _rm("job-a", "job-b", "--runs", str(tmp_path / "runs"), "--yes")
    assert res.exit_code == 0, res.output
    assert calls["names"] == ["job-a", "job-b"] and calls["root"] == tmp_path / "runs"
    assert f"  {tmp_path / 'runs' / 'job-a'}  (3 trials, finished)" in res.stdout
    # brackets in a path are text, not rich markup
    assert f"  {tmp_path / 'runs' / 'job-[b]'}  (12 trials, interrupted)" in res.stdout
    assert "Removed 2 job folder(s)." in res.stdout
    assert calls["force"] is False


def test_rm_asks_with_the_count_and_removes_only_on_yes(calls: dict) -> None:
    res = _rm("job-a", "job-b", input="y\n")
    assert res.exit_code == 0, res.output
    assert "Remove 2 job folder(s)? [y/N]" in res.stdout
    assert [j.name for j in calls["removed"]] == ["job-a", "job-b"]


@pytest.mark.parametrize("answer", ["n\n", "\n"])
def test_rm_answered_no_or_by_default_removes_nothing_and_exits_1(calls: dict, answer: str) -> None:
    res = _rm("job-a", input=answer)
    assert res.exit_code == 1
    assert "Nothing removed." in res.stdout and "removed" not in calls


def test_rm_default_runs_root_is_runs_and_force_is_passed_on(calls: dict) -> None:
    res = _rm("job-a", "-y", "--force")
    assert res.exit_code == 0, res.output
    assert calls["root"] == Path("runs") and calls["force"] is True
    assert "Removed 1 job folder(s)." in res.stdout


def test_rm_needs_at_least_one_job(calls: dict) -> None:
    res = _rm("--yes")
    assert res.exit_code == 2 and "names" not in calls


def test_every_refusal_is_printed_on_stderr_and_exits_2(
    calls: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(names, root):
        raise ManageError(["'..' is not a job folder name", "runs/[bold]x[/bold] does not exist"])

    monkeypatch.setattr(manage_cmd, "job_folders", refuse)
    res = _rm("..", "[bold]x[/bold]", "--yes")
    assert res.exit_code == 2
    assert "refused: '..' is not a job folder name" in res.stderr
    assert "refused: runs/[bold]x[/bold] does not exist" in res.stderr  # escaped, kept as text
    assert "refused" not in res.stdout and "removed" not in calls


def test_a_refusal_while_removing_exits_2(calls: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    def still_running(jobs, *, force=False):
        raise ManageError(["runs/job-a is still running (use --force)"])

    monkeypatch.setattr(manage_cmd, "remove_jobs", still_running)
    res = _rm("job-a", "--yes")
    assert res.exit_code == 2
    assert "refused: runs/job-a is still running (use --force)" in res.stderr
    assert "Removed" not in res.stdout


@pytest.fixture
def pulls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Stand-ins for plan_pull / pull: a two-command plan; pull returns $rc (default 0)."""
    seen: dict[str, Any] = {"rc": 0}

    def plan_pull(remote, runs_root, jobs, *, delete=False):
        seen.update(remote=remote, root=Path(runs_root), jobs=jobs, delete=delete)
        cmds = [
            ["rsync", "-a", "--", "h:/r/job a", "loc/"],
            ["rsync", "-a", "--", "h:/r/b", "loc/"],
        ]
        return PullPlan(remote, Path(runs_root), cmds)

    def pull(plan):
        seen["pulled"] = plan
        return seen["rc"]

    monkeypatch.setattr(manage_cmd, "plan_pull", plan_pull)
    monkeypatch.setattr(manage_cmd, "pull", pull)
    return seen


def _pull(*args: str):
    return CliRunner().invoke(app, ["pull", *args])


def test_pull_passes_remote_jobs_delete_and_root_to_the_plan(pulls: dict, tmp_path: Path) -> None:
    res = _pull("me@h:/r", "-j", "job a", "--jobs", "b", "--delete", "--runs", str(tmp_path))
    assert res.exit_code == 0, res.output
    assert (pulls["remote"], pulls["root"]) == ("me@h:/r", tmp_path)
    assert list(pulls["jobs"]) == ["job a", "b"] and pulls["delete"] is True
    assert "pulled" in pulls and "failed" not in res.output


def test_pull_defaults_to_every_job_without_delete_into_runs(pulls: dict) -> None:
    assert _pull("h:/r").exit_code == 0
    assert list(pulls["jobs"]) == [] and pulls["delete"] is False and pulls["root"] == Path("runs")


def test_pull_dry_run_prints_the_commands_shell_quoted_and_runs_nothing(pulls: dict) -> None:
    res = _pull("h:/r", "--dry-run")
    assert res.exit_code == 0, res.output
    # one line per command; the argument with a space is quoted as a shell would need it
    assert res.stdout == "rsync -a -- 'h:/r/job a' loc/\nrsync -a -- h:/r/b loc/\n"
    assert "pulled" not in pulls


@pytest.mark.parametrize("rc", [23, 255])
def test_pull_exits_with_rsyncs_code_and_says_it_failed(pulls: dict, rc: int) -> None:
    pulls["rc"] = rc
    res = _pull("h:/r")
    assert res.exit_code == rc
    assert f"rsync failed with exit code {rc}" in res.output


def test_pull_refusals_exit_2_before_and_while_pulling(
    pulls: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_rsync(plan):
        raise ManageError(["rsync is not installed"])

    monkeypatch.setattr(manage_cmd, "pull", no_rsync)
    res = _pull("h:/r")
    assert res.exit_code == 2 and "refused: rsync is not installed" in res.stderr

    def bad_remote(remote, runs_root, jobs, *, delete=False):
        raise ManageError(["'host' is not [USER@]HOST:PATH", "'-x' is not a job folder name"])

    monkeypatch.setattr(manage_cmd, "plan_pull", bad_remote)
    res = _pull("host", "-j", "-x", "--dry-run")
    assert res.exit_code == 2 and res.stdout == ""
    assert "refused: 'host' is not [USER@]HOST:PATH" in res.stderr
    assert "refused: '-x' is not a job folder name" in res.stderr


def test_pull_needs_a_remote(pulls: dict) -> None:
    assert _pull().exit_code == 2 and "remote" not in pulls
