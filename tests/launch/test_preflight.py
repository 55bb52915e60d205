"""evalkit.launch.preflight collects every problem that would stop a launch: the spec's own,
Harbor's CLI (found, runs, recent enough) and, for the docker environment, the engine
(docker SDK), the compose v2 plugin and free disk. Checked here without Docker: the docker
SDK's client and the ``docker`` CLI are stand-ins (a fake client object, a shell script),
Harbor is a shell script; what each failure reports, that nothing raises, and that the
report's error lists every problem."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import docker
import pytest

from evalkit.launch import harborcli
from evalkit.launch.preflight import (
    PreflightError,
    PreflightReport,
    _compose_version,
    _existing_parent,
    _short,
    check_docker,
    check_harbor,
    preflight,
)
from evalkit.launch.spec import Problem, RunSpec
from tests.launch.executables import sh_script as script

checks = sys.modules["evalkit.launch.preflight"]  # the module (``preflight`` is also a function)


@pytest.fixture(autouse=True)
def _fresh_version_cache() -> None:
    harborcli.harbor_version.cache_clear()


class FakeClient:
    """The docker SDK client's calls that check_docker makes."""

    def __init__(self, info: dict | None = None, fail: Exception | None = None) -> None:
        self._info, self._fail, self.closed = info or {}, fail, False

    def ping(self) -> bool:
        if self._fail:
            raise self._fail
        return True

    def info(self) -> dict:
        return self._info

    def close(self) -> None:
        self.closed = True


@pytest.fixture
def engine(monkeypatch: pytest.MonkeyPatch):
    """Install a fake docker client; returns a setter for what it answers."""

    def use(client: FakeClient) -> FakeClient:
        monkeypatch.setattr(docker, "from_env", lambda **kw: client)
        return client

    return use


@pytest.fixture
def docker_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A fake ``docker`` CLI found by check_docker's PATH lookup; returns a setter for the
    script's body (None: no docker CLI at all)."""

    def use(body: str | None) -> None:
        exe = None if body is None else str(script(tmp_path / "dockerbin" / "docker", body))
        real_which = shutil.which
        monkeypatch.setattr(
            checks.shutil,
            "which",
            lambda name, *a, **k: exe if name == "docker" else real_which(name, *a, **k),
        )

    return use


COMPOSE_V2 = '[ "$1 $2 $3" = "compose version --short" ] && echo "2.24.5" || exit 1'


def kinds(report: PreflightReport) -> list[str]:
    return [p.kind for p in report.problems]


# -- the report ------------------------------------------------------------------------------


def test_an_empty_report_is_ok_and_raises_nothing() -> None:
    report = PreflightReport()
    assert report.ok
    report.raise_if_failed()


def test_the_error_lists_every_problem_with_its_kind() -> None:
    report = PreflightReport(problems=[Problem("harbor", "not found"), Problem("disk", "full")])
    assert not report.ok
    with pytest.raises(PreflightError) as err:
        report.raise_if_failed()
    assert err.value.problems == report.problems
    assert str(err.value) == "cannot launch: 2 problem(s)\n  - [harbor] not found\n  - [disk] full"


# -- Harbor ----------------------------------------------------------------------------------


def test_a_working_recent_harbor_is_recorded_without_note(tmp_path: Path) -> None:
    exe = script(tmp_path / "harbor", "echo 0.26.0")
    report = PreflightReport()
    check_harbor(report, exe, {})
    assert report.problems == [] and report.notes == []
    assert report.harbor == str(exe) and report.harbor_version == "0.26.0"


def test_an_older_harbor_is_a_note_not_a_problem(tmp_path: Path) -> None:
    report = PreflightReport()
    check_harbor(report, script(tmp_path / "harbor", "echo 0.9.3"), {})
    assert report.problems == []
    assert report.notes == ["Harbor 0.9.3 is older than 0.26; configs are written for 0.26"]


def test_a_harbor_whose_version_fails_is_a_problem(tmp_path: Path) -> None:
    exe = script(tmp_path / "harbor", "exit 1")
    report = PreflightReport()
    check_harbor(report, exe, {})
    assert kinds(report) == ["harbor"] and "--version failed" in report.problems[0].message
    assert report.harbor == str(exe) and report.harbor_version is None


def test_no_harbor_is_a_problem_naming_where_it_looked(tmp_path: Path) -> None:
    report = PreflightReport()
    check_harbor(report, None, {"PATH": str(tmp_path)})
    assert kinds(report) == ["harbor"] and "Harbor CLI not found" in report.problems[0].message
    assert report.harbor is None


# -- Docker ----------------------------------------------------------------------------------


def test_a_reachable_engine_with_compose_v2_and_room_passes(
    tmp_path: Path, engine, docker_cli
) -> None:
    client = engine(FakeClient({"DockerRootDir": str(tmp_path), "ServerVersion": "27.1.1"}))
    docker_cli(COMPOSE_V2)
    report = PreflightReport()
    check_docker(report, tmp_path / "runs", min_free_gb=0)
    assert report.problems == []
    assert report.docker == {"server_version": "27.1.1", "compose_version": "2.24.5"}
    assert client.closed


def test_an_unreachable_engine_says_where_and_how_to_fix(
    tmp_path: Path, engine, docker_cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DOCKER_HOST", "tcp://nowhere.invalid:2375")
    engine(FakeClient(fail=ConnectionError("connection\n   refused")))
    docker_cli(COMPOSE_V2)
    report = PreflightReport()
    check_docker(report, tmp_path, min_free_gb=0)
    assert kinds(report) == ["docker"]
    assert report.problems[0].message.startswith(
        "Docker engine not reachable at tcp://nowhere.invalid:2375 "
        "(ConnectionError: connection refused); start dockerd"
    )
    assert "server_version" not in report.docker


def test_a_missing_docker_cli_is_a_problem(tmp_path: Path, engine, docker_cli) -> None:
    engine(FakeClient({}))
    docker_cli(None)
    report = PreflightReport()
    check_docker(report, tmp_path, min_free_gb=0)
    assert kinds(report) == ["docker"] and "docker CLI is not on PATH" in report.problems[0].message


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ("exit 1", "Docker Compose v2 not available"),
        ("echo 'docker: compose is not a docker command'", "Docker Compose v2 not available"),
        ("echo 1.29.2", "Harbor needs Docker Compose v2, found 1.29.2"),
        ("echo v5.0.1", "Harbor needs Docker Compose v2, found v5.0.1"),
    ],
    ids=["fails", "no-version", "v1", "v5"],
)
def test_compose_must_be_v2(tmp_path: Path, engine, docker_cli, body: str, needle: str) -> None:
    engine(FakeClient({}))
    docker_cli(body)
    report = PreflightReport()
    check_docker(report, tmp_path, min_free_gb=0)
    assert kinds(report) == ["docker"] and needle in report.problems[0].message
    assert "compose_version" not in report.docker


def test_too_little_disk_is_reported_for_the_data_root_and_the_runs_root(
    tmp_path: Path, engine, docker_cli
) -> None:
    data_root = tmp_path / "docker-data"
    data_root.mkdir()
    engine(FakeClient({"DockerRootDir": str(data_root)}))
    docker_cli(COMPOSE_V2)
    report = PreflightReport()
    check_docker(report, tmp_path / "runs" / "not" / "yet", min_free_gb=1e12)  # 1 ZB: never free
    assert kinds(report) == ["disk", "disk"]
    first, second = (p.message for p in report.problems)
    assert f"for the Docker data root ({data_root}); need 1e+12 GB" in first
    # the runs root does not exist yet: the nearest folder above it is measured
    assert f"for the runs root ({tmp_path}); need 1e+12 GB" in second


def test_a_data_root_this_machine_cannot_see_is_not_measured(
    tmp_path: Path, engine, docker_cli
) -> None:
    engine(FakeClient({"DockerRootDir": "/no/such/docker/root"}))
    docker_cli(COMPOSE_V2)
    report = PreflightReport()
    check_docker(report, tmp_path, min_free_gb=1e12)
    assert [p.message for p in report.problems if "Docker data root" in p.message] == []
    assert kinds(report) == ["disk"]  # the runs root only


def test_compose_version_reads_the_version_out_of_the_output(tmp_path: Path) -> None:
    assert (
        _compose_version(
            str(script(tmp_path / "d1", "echo 'Docker Compose version v2.29.1-desktop.1'"))
        )
        == "v2.29.1-desktop.1"
    )
    assert _compose_version(str(script(tmp_path / "d2", "echo 2.24.5; exit 3"))) is None
    assert _compose_version(str(tmp_path / "missing")) is None


def test_existing_parent_is_the_nearest_folder_that_exists(tmp_path: Path) -> None:
    assert _existing_parent(tmp_path / "a" / "b" / "c") == tmp_path
    assert _existing_parent(tmp_path) == tmp_path


def test_short_collapses_whitespace_and_cuts_long_messages() -> None:
    assert _short(ValueError("a\n  b\tc")) == "a b c"
    cut = _short(ValueError("x" * 200), n=20)
    assert cut == "x" * 17 + "..." and len(cut) == 20
    assert _short(ValueError("y" * 20), n=20) == "y" * 20


# -- preflight -------------------------------------------------------------------------------


def test_preflight_gathers_spec_and_harbor_problems_together(tmp_path: Path) -> None:
    spec = RunSpec(agent="claude-code", model="anthropic/x", paths=[tmp_path / "none"], env="modal")
    report = preflight(spec, environ={"PATH": str(tmp_path)})
    assert sorted(set(kinds(report))) == ["harbor", "keys", "tasks"]
    assert report.notes == ["environment 'modal': passed through to Harbor (its own checks apply)"]


def test_preflight_reads_keys_from_the_given_environment(dataset: Path, tmp_path: Path) -> None:
    exe = script(tmp_path / "harbor", "echo 0.26.0")
    spec = RunSpec(agent="claude-code", model="anthropic/x", paths=[dataset], env="modal")
    assert preflight(spec, harbor=exe, environ={"ANTHROPIC_API_KEY": "k" * 20}).ok
    assert kinds(preflight(spec, harbor=exe, environ={})) == ["keys"]


def test_preflight_skips_the_docker_checks_when_asked(
    dataset: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def boom(*a, **k):
        raise AssertionError("check_docker must not run")

    monkeypatch.setattr(checks, "check_docker", boom)
    exe = script(tmp_path / "harbor", "echo 0.26.0")
    spec = RunSpec(agent="oracle", paths=[dataset], runs_root=tmp_path / "runs")
    report = preflight(spec, harbor=exe, environ={}, check_environment=False)
    assert report.ok and report.notes == []


def test_preflight_runs_the_docker_checks_for_docker_with_its_threshold(
    dataset: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = []
    monkeypatch.setattr(checks, "check_docker", lambda report, root, gb: seen.append((root, gb)))
    exe = script(tmp_path / "harbor", "echo 0.26.0")
    spec = RunSpec(agent="oracle", paths=[dataset], runs_root=tmp_path / "runs")
    preflight(spec, harbor=exe, environ={}, min_free_gb=7.5)
    assert seen == [(tmp_path / "runs", 7.5)]
