"""``evalkit run`` (typer) over evalkit.launch, with a fake Harbor CLI."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from evalkit.launch.cli import parse_kwargs, run_command


@pytest.fixture
def app() -> typer.Typer:
    a = typer.Typer()
    a.command("run")(run_command)
    a.command("noop")(lambda: None)  # keep "run" a subcommand
    return a


def test_parse_kwargs() -> None:
    assert parse_kwargs(["variant=candidate", "seed=3", "x=true", "s=a=b"]) == {
        "variant": "candidate",
        "seed": 3,
        "x": True,
        "s": "a=b",
    }
    with pytest.raises(typer.BadParameter):
        parse_kwargs(["novalue"])


def test_dry_run(app: typer.Typer, dataset: Path, tmp_path: Path, fake_harbor: Path) -> None:
    res = CliRunner().invoke(
        app,
        [
            "run",
            "--agent",
            "oracle",
            "--path",
            str(dataset),
            "-k",
            "2",
            "--runs",
            str(tmp_path / "r"),
            "--dry-run",
            "--ak",
            "seed=1",
            "--env",
            "modal",  # no docker check: nothing would stop this launch
        ],
    )
    assert res.exit_code == 0, res.output
    assert (
        '"n_attempts": 2' in res.output
        and "evalkit-manifest.json" in res.output
        and " run -c " in res.output
    )
    assert '"seed": 1' in res.output and not (tmp_path / "r").exists()


def test_problems_exit_2_and_list_everything(
    app: typer.Typer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVALKIT_HARBOR", str(tmp_path / "nope"))
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    res = CliRunner().invoke(
        app,
        [
            "run",
            "--agent",
            "claude-code",
            "--model",
            "anthropic/claude-x",
            "--path",
            str(tmp_path / "missing"),
            "--job-name",
            "../x",
            "--env",
            "modal",
        ],
    )
    assert res.exit_code == 2
    for needle in (
        "ANTHROPIC_API_KEY",
        "Harbor CLI not found",
        "does not exist",
        "invalid job name",
    ):
        assert needle in res.output
