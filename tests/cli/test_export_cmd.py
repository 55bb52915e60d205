"""``evalkit export DEST`` (evalkit.cli.export_cmd): loads the runs folder found by the
``--runs`` rule, hands it to ``export_dataset`` with DEST and the ``--redact/--no-redact``
choice, and prints the result as text (never as rich markup).

``export_dataset`` is a stand-in here; real exports (incremental updates, a missing runs
folder) are in tests/load/dataset/test_write.py and the redaction in
tests/security/test_secrets_export.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from evalkit.cli import app, export_cmd
from tests.conftest import FIXTURES

#: One job folder with one trial whose agent/trajectory.json has 4 steps.
JOB = FIXTURES / "harbor" / "openclaw-dev-jobs" / "2026-05-15__05-26-37"


class _Result:
    def __init__(self, text: str) -> None:
        self.text = text

    def __str__(self) -> str:
        return self.text


@pytest.fixture
def seen(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    got: dict[str, Any] = {"text": "3 file(s) written, 0 unchanged, 0 removed in ds"}

    def export_dataset(runs, dest, *, redact=True):
        got.update(runs=runs, dest=dest, redact=redact, steps=runs.steps.height)
        return _Result(got["text"])

    monkeypatch.setattr(export_cmd, "export_dataset", export_dataset)
    return got


def test_the_loaded_runs_and_dest_reach_the_export_redacted_by_default(
    seen: dict, tmp_path: Path
) -> None:
    res = CliRunner().invoke(app, ["export", str(tmp_path / "ds"), "--runs", str(JOB)])
    assert res.exit_code == 0, res.output
    assert seen["dest"] == tmp_path / "ds" and seen["redact"] is True
    runs = seen["runs"]
    assert runs.jobs.height == 1 and runs.trials["trial_name"].to_list() == [
        "hermes-telegram-clarify-mis-rout__7pYNGtk"
    ]
    assert seen["steps"] == 4  # the trajectory's 4 steps are there to export
    assert "3 file(s) written, 0 unchanged, 0 removed in ds" in res.stdout


def test_no_redact_is_passed_on(seen: dict, tmp_path: Path) -> None:
    res = CliRunner().invoke(
        app, ["export", str(tmp_path / "ds"), "--runs", str(JOB), "--no-redact"]
    )
    assert res.exit_code == 0, res.output
    assert seen["redact"] is False


def test_the_runs_folder_comes_from_evalkit_runs_without_the_option(
    seen: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVALKIT_RUNS", str(JOB))
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(app, ["export", "ds"])
    assert res.exit_code == 0, res.output
    assert seen["dest"] == Path("ds") and seen["runs"].jobs.height == 1


def test_the_result_is_printed_as_text_not_markup(seen: dict, tmp_path: Path) -> None:
    seen["text"] = "1 file(s) written, 0 unchanged, 0 removed in /d/[bold]x[/bold]\x1b[31m"
    res = CliRunner().invoke(app, ["export", str(tmp_path / "ds"), "--runs", str(JOB)])
    assert res.exit_code == 0, res.output
    assert "in /d/[bold]x[/bold]" in res.stdout  # the brackets survive as text
    assert "\x1b" not in res.stdout  # a terminal escape from a path is not passed through


def test_dest_is_required(seen: dict) -> None:
    res = CliRunner().invoke(app, ["export", "--runs", str(JOB)])
    assert res.exit_code == 2 and "runs" not in seen
