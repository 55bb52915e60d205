"""``evalkit rm`` and ``evalkit pull``: names can never reach outside the runs root, nothing
is removed without confirmation or when any name is refused, rsync gets a checked argument
list without a shell."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evalkit.cli.app import app
from evalkit.launch import manage
from tests.fuzz.corpus import JOBS, template


def _tree(p: Path) -> list[str]:
    return sorted(str(x.relative_to(p)) for x in p.rglob("*"))


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    """A runs root holding jobs and everything that is not a job directly inside it."""
    root = tmp_path / "runs"
    root.mkdir()
    for j in ("skills-job", "hermes-job", "rollouts"):
        shutil.copytree(template() / j, root / j, symlinks=True)
    trial = JOBS["hermes-job"][0]
    shutil.copytree(template() / "hermes-job" / trial, root / trial)  # a trial folder in the root
    (root / "nested").mkdir()
    shutil.copytree(template() / "exception-job", root / "nested" / "exception-job")
    outside = tmp_path / "elsewhere-job"
    shutil.copytree(template() / "atif-job", outside)
    (root / "outside-link").symlink_to(outside)
    (root / "job-link").symlink_to("skills-job")
    (root / "plain-file").write_text("x")
    (root / "empty").mkdir()
    (root / ".hidden-job").mkdir()
    return root


def _rm(args: list[str], input: str | None = None):
    return CliRunner().invoke(app, ["rm", *args], input=input)


REFUSED = [
    "../elsewhere-job", "/etc", "skills-job/3d-scan-calc__F8Fc7fn", "..", ".", ".hidden-job",
    "job-link", "outside-link", "rollouts", JOBS["hermes-job"][0], "plain-file", "empty",
    "nested", "missing", "skills-job/../hermes-job", "", "-rf", "skills-job\n",
]  # fmt: skip


@pytest.mark.parametrize("name", REFUSED)
def test_rm_refuses_what_is_not_a_job_folder_inside_the_root(runs: Path, name: str) -> None:
    before = _tree(runs.parent)
    res = _rm(["--runs", str(runs), "--yes", "--", name])
    assert res.exit_code == 2, res.output
    assert "refused" in res.output
    assert _tree(runs.parent) == before


def test_rm_removes_nothing_when_one_name_is_refused(runs: Path) -> None:
    before = _tree(runs.parent)
    res = _rm(["skills-job", "../elsewhere-job", "--runs", str(runs), "--yes"])
    assert res.exit_code == 2 and _tree(runs.parent) == before


def test_rm_asks_first(runs: Path) -> None:
    res = _rm(["skills-job", "--runs", str(runs)], input="n\n")
    assert res.exit_code == 1 and (runs / "skills-job").is_dir()
    assert "3 trials" in res.output
    res = _rm(["skills-job", "hermes-job", "--runs", str(runs)], input="y\n")
    assert res.exit_code == 0, res.output
    assert not (runs / "skills-job").exists() and not (runs / "hermes-job").exists()
    assert (runs / "job-link").is_symlink()  # the link itself is left (dangling) as it was
    assert (runs.parent / "elsewhere-job").is_dir()


def test_rm_removes_the_job_cache_too(runs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import evalkit
    from evalkit.load.shared.cache import job_cache_dir

    monkeypatch.setenv("EVALKIT_CACHE_DIR", str(runs.parent / "cache"))
    evalkit.load(runs / "skills-job", progress=False)
    assert job_cache_dir((runs / "skills-job").resolve()).is_dir()
    assert _rm(["skills-job", "--runs", str(runs), "-y"]).exit_code == 0
    assert not job_cache_dir((runs / "skills-job").resolve()).exists()


def test_rm_refuses_a_running_job_without_force(runs: Path) -> None:
    res = runs / "hermes-job" / "result.json"
    d = json.loads(res.read_text())
    d["finished_at"] = None
    d["updated_at"] = datetime.now(UTC).isoformat()
    res.write_text(json.dumps(d))  # just written, fresh content: Harbor is still at it
    out = _rm(["hermes-job", "--runs", str(runs), "--yes"])
    assert out.exit_code == 2 and "still running" in out.output and res.exists()
    assert _rm(["hermes-job", "--runs", str(runs), "--yes", "--force"]).exit_code == 0
    assert not res.exists()


BAD_REMOTES = [
    "-oProxyCommand=touch /tmp/ek-pwned:/x", "host", "host:", ":/path", "user@-host:/x",
    "us er@host:/x", "host:/path\nrm -rf ~", "-e sh host:/x", "@host:/x", "host:/x\x00y",
]  # fmt: skip


@pytest.mark.parametrize("remote", BAD_REMOTES)
def test_pull_refuses_remotes_that_could_be_options(remote: str, tmp_path: Path) -> None:
    with pytest.raises(manage.ManageError):
        manage.plan_pull(remote, tmp_path / "runs")
    res = CliRunner().invoke(app, ["pull", remote, "--runs", str(tmp_path / "runs")])
    assert res.exit_code == 2 and not (tmp_path / "runs").exists()


@pytest.mark.parametrize("job", ["../etc", "a/b", "..", ".x", "-rf", ""])
def test_pull_refuses_job_names_that_leave_the_root(job: str, tmp_path: Path) -> None:
    with pytest.raises(manage.ManageError):
        manage.plan_pull("host:/runs", tmp_path / "runs", [job])


def test_pull_passes_a_list_without_a_shell(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = []

    def fake_run(cmd, **kw):
        seen.append((cmd, kw))
        return subprocess.CompletedProcess(cmd, 0)

    monkeypatch.setattr(manage.subprocess, "run", fake_run)
    monkeypatch.setattr(manage.shutil, "which", lambda _: "/usr/bin/rsync")
    weird = "h:/srv/runs; touch /tmp/ek-pwned $(id)"
    plan = manage.plan_pull(weird, tmp_path / "runs", ["job-a", "job-b"], delete=True)
    assert manage.pull(plan) == 0
    assert len(seen) == 2
    for cmd, kw in seen:
        assert isinstance(cmd, list) and kw.get("shell") is False
        assert cmd[0] == "rsync" and "-s" in cmd and "--safe-links" in cmd and "--delete" in cmd
        assert cmd[-3] == "--" and cmd[-2].startswith("h:/srv/runs; touch /tmp/ek-pwned $(id)/job-")
        assert cmd[-1].startswith(str(tmp_path / "runs"))


@pytest.mark.skipif(
    shutil.which("rsync") is None, reason="rsync not installed (apt-get install rsync)"
)
def test_pull_end_to_end_over_a_fake_ssh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """rsync for real, its remote shell a script that runs the command here (RSYNC_RSH)."""
    remote = tmp_path / "remote runs"
    for j in ("skills-job", "hermes-job"):
        shutil.copytree(template() / j, remote / j)
    (remote / "skills-job" / "evil-link").symlink_to("/etc")
    os.mkfifo(remote / "skills-job" / "a-fifo")
    (remote / "skills-job" / "$(touch ek-pwned).txt").write_text("literal name\n")
    fake_ssh = tmp_path / "fake-ssh"
    fake_ssh.write_text('#!/bin/sh\nshift\nexec "$@"\n')
    fake_ssh.chmod(fake_ssh.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("RSYNC_RSH", str(fake_ssh))
    monkeypatch.chdir(tmp_path)
    local = tmp_path / "runs"
    res = CliRunner().invoke(
        app, ["pull", f"fakehost:{remote}", "--runs", str(local), "--jobs", "skills-job"]
    )
    assert res.exit_code == 0, res.output
    got = local / "skills-job"
    assert (got / "config.json").read_bytes() == (
        remote / "skills-job" / "config.json"
    ).read_bytes()
    assert (got / "$(touch ek-pwned).txt").read_text() == "literal name\n"
    assert not (got / "evil-link").exists() and not (got / "evil-link").is_symlink()
    assert not (got / "a-fifo").exists()
    assert not (local / "hermes-job").exists()
    assert not list(tmp_path.rglob("ek-pwned"))
    (got / "stale.txt").write_text("gone after --delete")
    res = CliRunner().invoke(app, ["pull", f"fakehost:{remote}", "--runs", str(local), "--delete"])
    assert res.exit_code == 0, res.output
    assert not (got / "stale.txt").exists() and (local / "hermes-job" / "config.json").exists()
