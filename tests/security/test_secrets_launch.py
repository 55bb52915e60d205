"""Secrets never reach what evalkit writes or prints when it launches Harbor, even when
Harbor itself is careless (``leaky_harbor.py``): the manifest, the Harbor config evalkit
writes, the log (Harbor's own output goes through a redacting pump), the launch state file,
``--dry-run`` and the command's output."""

from __future__ import annotations

import stat
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evalkit.cli.app import app
from evalkit.launch import RunSpec, prepare, run
from evalkit.launch.execute import STATE_FILE
from evalkit.launch.manifest import MANIFEST_FILE
from evalkit.launch.plan import CONFIG_FILE, LOG_FILE

HERE = Path(__file__).parent
VALUES = {
    "ANTHROPIC_API_KEY": "plain-anthropic-value-0000aaaa",  # no key pattern: known by name
    "EK_PASSED": "passed-value-1234abcd",  # an ordinary name, passed to the run
    "EK_OTHER_TOKEN": "other-token-value-999xyz",  # not passed, but secret-looking
}


@pytest.fixture
def leaky(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    exe = tmp_path / "bin" / "harbor"
    exe.parent.mkdir()
    exe.write_text(
        f"#!{sys.executable}\nimport runpy, sys\nsys.argv[0] = 'harbor'\n"
        f"runpy.run_path({str(HERE / 'leaky_harbor.py')!r}, run_name='__main__')\n"
    )
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("EVALKIT_HARBOR", str(exe))
    monkeypatch.setenv("FAKE_HARBOR_MODE", "ok")
    for k, v in VALUES.items():
        monkeypatch.setenv(k, v)
    from evalkit.launch import harborcli

    harborcli.harbor_version.cache_clear()
    return exe


def _leaks(text: str) -> list[str]:
    return [k for k, v in VALUES.items() if v in text]


def _spec(dataset: Path, root: Path, **kw) -> RunSpec:
    return RunSpec(agent="claude-code", model="anthropic/claude-x", paths=[dataset],
                   pass_env=["EK_PASSED"], runs_root=root, **kw)  # fmt: skip


def test_plan_and_run_write_no_secret(dataset: Path, tmp_path: Path, leaky: Path) -> None:
    spec = _spec(dataset, tmp_path / "runs")
    plan = prepare(spec, check_environment=False)
    assert plan.problems == [], plan.problems
    assert _leaks(plan.render()) == []
    assert "[REDACTED]" in plan.render()  # Harbor's resolved view did hold them
    runs = run(spec, check_environment=False, progress=False)
    job = Path(runs.options["launch"]["job_dir"])
    for name in (MANIFEST_FILE, CONFIG_FILE, LOG_FILE, STATE_FILE):
        text = (job / name).read_text()
        assert _leaks(text) == [], f"{name} leaks {_leaks(text)}"
    log = (job / LOG_FILE).read_text()
    assert "debug env:" in log and "EK_PASSED=[REDACTED]" in log  # Harbor's lines, redacted
    assert "Authorization: Bearer [REDACTED]" in log
    assert runs.trials.height == 3  # one attempt at each of the three tasks


def test_secret_values_in_agent_settings_are_refused(
    dataset: Path, tmp_path: Path, leaky: Path
) -> None:
    spec = _spec(
        dataset, tmp_path / "runs", agent_kwargs={"base_url": f"https://u:{VALUES['EK_PASSED']}@h"}
    )
    plan = prepare(spec, check_environment=False)
    msgs = [str(p) for p in plan.problems]
    assert any("agent_kwargs.base_url holds the value of a secret" in m for m in msgs), msgs
    assert _leaks("\n".join(msgs)) == []


def test_cli_dry_run_and_run_print_no_secret(dataset: Path, tmp_path: Path, leaky: Path) -> None:
    base = ["run", "--agent", "claude-code", "--model", "anthropic/claude-x", "--path", str(dataset),
            "--pass-env", "EK_PASSED", "--runs", str(tmp_path / "runs"), "--env", "modal"]  # fmt: skip
    res = CliRunner().invoke(app, [*base, "--dry-run"])
    assert res.exit_code == 0, res.output
    assert _leaks(res.output) == [] and "[REDACTED]" in res.output
    res = CliRunner().invoke(app, [*base, "--no-progress"])
    assert res.exit_code == 0, res.output
    assert _leaks(res.output) == []


KEY = "sk-ant-api03-" + "Q" * 40  # a key pattern, in no variable of the machine


@pytest.mark.parametrize("kwarg", [f"note={KEY}", f"base_url=https://u:{VALUES['EK_PASSED']}@h"])
def test_cli_dry_run_refuses_like_a_launch_and_shows_no_secret(
    dataset: Path, tmp_path: Path, leaky: Path, kwarg: str
) -> None:
    base = ["run", "--agent", "claude-code", "--model", "anthropic/claude-x", "--path", str(dataset),
            "--pass-env", "EK_PASSED", "--runs", str(tmp_path / "runs"), "--env", "modal",
            "--ak", kwarg]  # fmt: skip
    dry = CliRunner().invoke(app, [*base, "--dry-run"])
    assert dry.exit_code == 2, dry.output
    assert KEY not in dry.output and _leaks(dry.output) == []
    first = dry.output.splitlines()[0]
    assert "PROBLEM" in first and "refused" in first  # before the long JSON
    problems = [ln for ln in dry.output.splitlines() if ln.startswith("# PROBLEM: ")]
    real = CliRunner().invoke(app, [*base, "--no-progress"])
    assert real.exit_code == 2 and not (tmp_path / "runs").exists()
    for p in problems:  # the dry run lists exactly what the launch refuses with
        assert p.removeprefix("# PROBLEM: ") in real.output
    assert KEY not in real.output and _leaks(real.output) == []
