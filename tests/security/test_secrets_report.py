"""API keys in trajectories, exceptions and verifier output never reach a report's files
(HTML, executed notebook, summary.json) or the command's output; ``--no-redact`` shows them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evalkit.cli.app import app
from tests.security.hostile import CONFIG_SECRET, ENV_NAME, ENV_SECRET, SECRETS

pytestmark = pytest.mark.slow


def _leaks(text: str) -> list[str]:
    found = [name for name, v in SECRETS.items() if v in text]
    found += ["config value"] if CONFIG_SECRET in text else []
    return found + (["env value"] if ENV_SECRET in text else [])


def test_report_files_hold_no_secret(hostile_report) -> None:
    files = [hostile_report.html, hostile_report.notebook, hostile_report.summary]
    files += list(hostile_report.html.parent.glob("*.summary.json"))
    for f in files:
        text = f.read_text(encoding="utf-8")
        assert _leaks(text) == [], f"{f.name} leaks {_leaks(text)}"
    page = hostile_report.html.read_text(encoding="utf-8")
    assert "[REDACTED]" in page
    s = json.loads(hostile_report.summary.read_text())
    assert s["report"]["redacted"] is True


def test_no_redact_shows_them(hostile_runs: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv(ENV_NAME, ENV_SECRET)
    res = CliRunner().invoke(
        app,
        ["report", "nightly", "--runs", str(hostile_runs), "--out", str(tmp_path), "-p", "run_by", "job", "--no-redact"],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    page = Path(res.stdout.strip().splitlines()[-1]).read_text(encoding="utf-8")
    assert "anthropic" in _leaks(page)  # the exception message, as recorded
    assert json.loads((tmp_path / "summary.json").read_text())["report"]["redacted"] is False


def test_cli_report_output_holds_no_secret(hostile_runs: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv(ENV_NAME, ENV_SECRET)
    res = CliRunner().invoke(
        app, ["report", "compare", "--runs", str(hostile_runs), "--out", str(tmp_path), "-p", "run_by", "job"]
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    assert _leaks(res.output) == []
    for f in tmp_path.iterdir():
        assert _leaks(f.read_text(encoding="utf-8")) == [], f.name
