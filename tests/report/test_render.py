"""``evalkit report`` end to end (papermill in this environment): files written, offline
HTML, Vega bundle once, parameters arrive as data, a failing cell fails the command."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from typer.testing import CliRunner

from evalkit.cli.app import app
from evalkit.report import ReportError, external_resources, parameters, render
from evalkit.report.export import BUNDLE_MARKER
from tests.report.conftest import DAY

pytestmark = pytest.mark.slow

TRICKY = 'a "quoted" \'value\'\nsecond line\n"""; import os; os._exit(3) #\\ {x}'


def _notebook(path: Path, body: str) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(
            'text = "default"\nn = 1\nx = 0.5\nflag = False\nout_path = None',
            metadata={"tags": ["parameters"]},
        ),
        nbformat.v4.new_code_cell(body),
    ]
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nbformat.write(nb, str(path))
    return path


def test_nightly_files_offline_and_bundle_once(nightly_report) -> None:
    f = nightly_report
    assert f.html.name == f"{DAY.isoformat()}-nightly.html"
    assert f.notebook.exists() and f.summary.exists() and f.warnings == []
    page = f.html.read_text()
    assert external_resources(page) == []
    assert page.count(BUNDLE_MARKER) == 1
    assert 'id="evalkit-gate"' in page
    assert "<script>alert(1)</script>" not in page  # hostile task name stays text
    nb = nbformat.read(str(f.notebook), as_version=4)
    assert not [
        o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"
    ]
    s = json.loads(f.summary.read_text())
    assert (
        s["report"]["candidate"] == "nightly-2026-06-03"
        and "decision" in s
        and "meanRewardDelta" in s
    )


def test_parameters_arrive_as_data(tmp_path: Path) -> None:
    out_json = tmp_path / "seen.json"
    nb = _notebook(
        tmp_path / "p.ipynb",
        "import json\njson.dump({'text': text, 'n': n, 'x': x, 'flag': flag}, open(out_path, 'w'))",
    )
    p = parameters(
        nb,
        [
            ("text", TRICKY),
            ("n", "7"),
            ("x", "1e-3"),
            ("flag", "true"),
            ("out_path", str(out_json)),
        ],
    )
    assert p == {"text": TRICKY, "n": 7, "x": 0.001, "flag": True, "out_path": str(out_json)}
    render(str(nb), tmp_path, tmp_path / "out", p, day=DAY)
    assert json.loads(out_json.read_text()) == {"text": TRICKY, "n": 7, "x": 0.001, "flag": True}
    with pytest.raises(ValueError, match="unknown parameter"):
        parameters(nb, [("nope", "1")])
    with pytest.raises(ValueError, match="is not a valid int"):
        parameters(nb, [("n", "seven")])


def test_failing_cell_fails_with_its_error(tmp_path: Path) -> None:
    nb = _notebook(tmp_path / "bad.ipynb", "raise ValueError('boom: ' + text)")
    with pytest.raises(ReportError) as ei:
        render(str(nb), tmp_path, tmp_path / "out", {"text": "here"}, day=DAY)
    assert ei.value.ename == "ValueError" and "boom: here" in ei.value.evalue
    assert "raise ValueError" in ei.value.source
    res = CliRunner().invoke(
        app,
        [
            "report",
            str(nb),
            "--runs",
            str(tmp_path),
            "--out",
            str(tmp_path / "o2"),
            "-p",
            "text",
            "cli",
        ],
    )
    assert res.exit_code == 1
    assert "ValueError: boom: cli" in res.output


def test_user_kernelspecs_cannot_hijack_the_kernel(tmp_path: Path) -> None:
    bogus = tmp_path / "jup" / "kernels" / "python3"
    bogus.mkdir(parents=True)
    (bogus / "kernel.json").write_text(
        json.dumps(
            {
                "argv": ["/bin/false", "{connection_file}"],
                "display_name": "bogus",
                "language": "python",
            }
        )
    )
    out = tmp_path / "seen.json"
    nb = _notebook(
        tmp_path / "k.ipynb", "import json, sys\njson.dump(sys.executable, open(out_path, 'w'))"
    )
    code = (
        "import sys; from evalkit.report import render; "
        f"render({str(nb)!r}, {str(tmp_path)!r}, {str(tmp_path / 'o')!r}, {{'out_path': {str(out)!r}}})"
    )
    env = {
        "JUPYTER_PATH": str(tmp_path / "jup"),
        "JUPYTER_DATA_DIR": str(tmp_path / "jup"),
        "PATH": "/usr/bin:/bin",
    }
    subprocess.run(
        [sys.executable, "-c", code],
        check=True,
        env=env,
        cwd=Path(__file__).resolve().parents[2],
        timeout=300,
    )
    assert json.loads(out.read_text()) == sys.executable


def test_cli_compare_report(nightly_runs: Path, tmp_path: Path) -> None:
    res = CliRunner().invoke(app, [
        "report", "compare", "--runs", str(nightly_runs), "--out", str(tmp_path),
        "-p", "a", "nightly-2026-06-01", "-p", "b", "nightly-2026-06-03", "-p", "gate_alpha", "0.1",
        "--format", "html", "--format", "md", "--format", "ipynb",
    ])  # fmt: skip
    assert res.exit_code == 0, res.output
    html, md, ipynb = map(Path, res.stdout.strip().splitlines()[-3:])
    assert html.exists() and html.name.endswith("-compare.html")
    assert md.suffix == ".md" and "![" in md.read_text() and ipynb.suffix == ".ipynb"
    s = json.loads((tmp_path / "summary.json").read_text())
    assert (
        s["report"]["baseline"] == "nightly-2026-06-01"
        and s["report"]["params"]["gate_alpha"] == 0.1
    )
    assert external_resources(html.read_text()) == []


def test_explore_notebook_runs(nightly_runs: Path, tmp_path: Path) -> None:
    from evalkit.report import execute

    nb = execute(
        Path(__file__).resolve().parents[2] / "notebooks" / "explore.ipynb",
        tmp_path / "explore.ipynb",
        {"runs_dir": str(nightly_runs), "run_by": "job"},
    )
    outs = [o for c in nb.cells for o in c.get("outputs", [])]
    assert not [o for o in outs if o.get("output_type") == "error"]
    assert "application/vnd.jupyter.widget-state+json" in nb.metadata.get("widgets", {})
