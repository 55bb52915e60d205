"""Text from job folders printed by the CLI is text: rich markup in a task name (``[/]``
made ``evalkit show`` / ``task`` raise MarkupError; ``[bug]`` vanished) and terminal escape
sequences (an ESC that retitles the window or rewrites the screen) are shown inert."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evalkit.cli.app import app
from tests.fuzz.corpus import JOBS, template

TASK = "fix [bug] x [/] y [bold]z[link=http://ek-evil.invalid]w"
ESC = "\x1b]0;PWNED-TITLE\x07\x1b[2J\x1b[31m"


@pytest.fixture
def job(tmp_path: Path) -> Path:
    root = tmp_path / "runs"
    shutil.copytree(template() / "exception-job", root / "exception-job")
    p = root / "exception-job" / JOBS["exception-job"][0] / "result.json"
    d = json.loads(p.read_text())
    d["task_name"] = TASK + ESC
    d["exception_info"]["exception_message"] = f"boom [/] {ESC} [red]x"
    p.write_text(json.dumps(d))
    (p.parent / "agent").mkdir(exist_ok=True)
    (p.parent / "agent" / f"log[bold]{chr(27)}.txt").write_text(f"agent said {ESC}\n")
    return root


@pytest.mark.parametrize(
    "args",
    [
        ["list", "{root}"],
        ["show", "exception-job", "--runs", "{root}"],
        ["task", "exception-job", TASK + ESC, "--runs", "{root}"],
        ["compare", "exception-job", "exception-job", "--runs", "{root}", "-v"],
    ],
    ids=["list", "show", "task", "compare"],
)
def test_markup_and_escape_sequences_are_inert(job: Path, args: list[str]) -> None:
    res = CliRunner().invoke(app, [a.replace("{root}", str(job)) for a in args])
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    assert "\x1b" not in res.output and "\x07" not in res.output
    if args[0] in ("show", "task"):
        assert res.exit_code == 0, res.output
        assert "[bug]" in res.output or "[/]" in res.output  # shown, not swallowed as markup
