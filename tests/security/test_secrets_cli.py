"""The inspection and comparison commands print no secret from the job folders, in any
format (the hostile runs carry keys in exception messages, verifier output, trajectories)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from evalkit.cli.app import app
from tests.security.hostile import CONFIG_SECRET, ENV_NAME, ENV_SECRET, EVIL_TASK, SECRETS


def _leaks(text: str) -> list[str]:
    found = [n for n, v in SECRETS.items() if v in text]
    return found + [n for n, v in (("env", ENV_SECRET), ("config", CONFIG_SECRET)) if v in text]


COMMANDS = [
    ["list", "{runs}"],
    ["list", "{runs}", "--format", "json"],
    ["show", "cand-night", "--runs", "{runs}"],
    ["show", "cand-night", "--runs", "{runs}", "--format", "json"],
    ["show", "cand-night", "--runs", "{runs}", "--format", "csv"],
    ["task", "cand-night", EVIL_TASK, "--runs", "{runs}"],
    ["task", "cand-night", EVIL_TASK, "--runs", "{runs}", "--format", "json"],
    ["task", "cand-night", EVIL_TASK, "--runs", "{runs}", "--format", "csv"],
    ["compare", "base-night", "cand-night", "--runs", "{runs}", "-v"],
    ["compare", "base-night", "cand-night", "--runs", "{runs}", "--json", "-"],
    ["bundle", "base-night", "cand-night", EVIL_TASK, "--runs", "{runs}"],
]


@pytest.mark.parametrize("cmd", COMMANDS, ids=lambda c: " ".join(c[:1] + c[-2:]))
def test_command_prints_no_secret(hostile_runs: Path, monkeypatch, cmd: list[str]) -> None:
    monkeypatch.setenv(ENV_NAME, ENV_SECRET)
    monkeypatch.setenv("COLUMNS", "400")
    args = [a.replace("{runs}", str(hostile_runs)) for a in cmd]
    res = CliRunner().invoke(app, args)
    assert res.exception is None or isinstance(res.exception, SystemExit), res.output
    assert res.output.strip(), "no output"
    assert _leaks(res.output) == [], f"{' '.join(cmd[:2])} prints {_leaks(res.output)}"
