"""``evalkit export`` writes no secret from the job folders (or from this machine's secret
environment values) into the dataset; ``--no-redact`` shows the check can see them."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

import evalkit
from evalkit.cli.app import app
from tests.security.hostile import ENV_NAME, ENV_SECRET, SECRETS


def _leaks(dest: Path) -> list[str]:
    ds = evalkit.scan(dest)
    text = "\n".join(
        repr(row)
        for name in ("jobs", "trials", "steps", "tool_calls", "findings", "load_errors")
        for row in getattr(ds, name).collect().iter_rows()
    )
    return [n for n, v in SECRETS.items() if v in text] + (["env"] if ENV_SECRET in text else [])


@pytest.mark.parametrize("redact", [True, False])
def test_export_writes_no_secret(hostile_runs: Path, tmp_path: Path, monkeypatch, redact) -> None:
    monkeypatch.setenv(ENV_NAME, ENV_SECRET)
    dest = tmp_path / "ds"
    args = ["export", str(dest), "--runs", str(hostile_runs)]
    res = CliRunner().invoke(app, args if redact else [*args, "--no-redact"])
    assert res.exit_code == 0, res.output
    assert "written" in res.output
    leaks = _leaks(dest)
    if redact:
        assert leaks == []
    else:
        assert leaks, "the check cannot see secrets"
