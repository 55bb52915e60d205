"""CSV output neutralises cells a spreadsheet would run as formulas (OWASP); csv-raw does not."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evalkit.cli.app import app
from tests.load.factory import job, trial_result

FORMULAS = ['=HYPERLINK("http://x.invalid","click")', "+1+cmd|' /C calc'!A0", "-2+3", "@SUM(A1)",
            "\tstarts-with-tab", "\rstarts-with-cr"]  # fmt: skip


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    trials = [
        trial_result(
            "=cmd|' /C calc'!A0",
            f"t{i}__abcdef{i}",
            rewards={"reward": 0.0},
            exc={"exception_type": f, "exception_message": f, "traceback": f},
        )
        for i, f in enumerate(FORMULAS)
    ]
    job(tmp_path / "runs", "=evil-job", trials)
    return tmp_path / "runs"


def _cells(text: str) -> list[str]:
    return [c for row in csv.reader(io.StringIO(text)) for c in row]


@pytest.mark.parametrize(
    "args",
    [
        ["list", "{runs}"],
        ["show", "=evil-job", "--runs", "{runs}"],
        ["task", "=evil-job", "=cmd|' /C calc'!A0", "--runs", "{runs}"],
    ],
    ids=lambda a: a[0],
)
def test_csv_cells_never_start_a_formula_and_csv_raw_keeps_them(
    runs: Path, args: list[str]
) -> None:
    argv = [a.replace("{runs}", str(runs)) for a in args]
    res = CliRunner().invoke(app, [*argv, "--format", "csv"])
    assert res.exit_code == 0, res.output
    cells = _cells(res.stdout)
    assert any(c.startswith("'=") for c in cells), res.stdout  # the job or task name
    assert [c for c in cells if c[:1] in ("=", "+", "@", "\t", "\r")] == []
    assert [c for c in cells if c.startswith("-") and not _number(c)] == []
    raw = CliRunner().invoke(app, [*argv, "--format", "csv-raw"])
    assert raw.exit_code == 0, raw.output
    assert any(c.startswith("=") for c in _cells(raw.stdout))


def _number(c: str) -> bool:
    try:
        float(c)
    except ValueError:
        return False
    return True
