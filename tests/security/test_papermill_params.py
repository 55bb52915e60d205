"""Report parameters arrive as data through the command line (``evalkit report ... -p NAME
VALUE``), never as code: quotes, newlines, triple quotes and code-like text in values, and a
runs folder whose own name is code, are received verbatim and nothing they spell runs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import nbformat
import pytest
from typer.testing import CliRunner

from evalkit.cli.app import app
from tests.conftest import SKILLSBENCH_JOB

pytestmark = pytest.mark.slow

VALUES = [
    "a \"quoted\" 'value'",
    "two\nlines\r\nand a tab\t",
    '"""; open("PWNED-1", "w"); """',
    "'''; open('PWNED-2', 'w'); '''",
    "\"); open('PWNED-3', 'w'); (\"",
    "__import__('os').system('touch PWNED-4')",
    "{open('PWNED-5','w')} %s %(x)s {0} $(touch PWNED-6) `touch PWNED-7`",
    "\\\\ trailing backslash \\",
    "\u2028\u2029 line separators \x00 nul",
]


def _notebook(path: Path) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(
            "text = 'default'\nn = 1\nruns_dir = 'runs'\nout_path = None",
            metadata={"tags": ["parameters"]},
        ),
        nbformat.v4.new_code_cell(
            "import json\njson.dump({'text': text, 'n': n, 'runs_dir': runs_dir}, open(out_path, 'w'))"
        ),
    ]
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nbformat.write(nb, str(path))
    return path


def test_cli_parameters_are_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # where an injected open('PWNED-…') would land
    nb = _notebook(tmp_path / "params.ipynb")
    runs = tmp_path / "runs\"); open('PWNED-8', 'w'); (\"\nx"  # a folder named like code
    runs.mkdir()
    shutil.copytree(SKILLSBENCH_JOB, runs / SKILLSBENCH_JOB.name)  # a runs folder with a job
    for i, value in enumerate(VALUES):
        seen = tmp_path / f"seen-{i}.json"
        args = ["report", str(nb), "--runs", str(runs), "--out", str(tmp_path / "out"),
                "-p", "text", value, "-p", "n", "7", "-p", "out_path", str(seen)]  # fmt: skip
        res = CliRunner().invoke(app, args)
        assert res.exit_code == 0, res.output
        got = json.loads(seen.read_text())
        assert got == {"text": value, "n": 7, "runs_dir": str(runs.resolve())}
    assert not list(tmp_path.rglob("PWNED*"))


def test_code_in_a_typed_parameter_is_refused(tmp_path: Path) -> None:
    nb = _notebook(tmp_path / "params.ipynb")
    res = CliRunner().invoke(app, ["report", str(nb), "--runs", str(tmp_path), "--out",
                                   str(tmp_path / "o"), "-p", "n", "1; import os"])  # fmt: skip
    assert res.exit_code == 2 and "not a valid int" in res.output
    res = CliRunner().invoke(app, ["report", str(nb), "--runs", str(tmp_path), "--out",
                                   str(tmp_path / "o"), "-p", "x=1;import os;y", "1"])  # fmt: skip
    assert res.exit_code == 2 and "unknown parameter" in res.output
