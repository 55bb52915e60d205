"""Every notebook runs where users open it: papermill from the repository root and with
notebooks/ as the working folder (JupyterLab's kernel), with no runs_dir given, on the
repository's runs/; its outputs carry numbers and no empty table. A missing or empty runs
folder is a clear first output, not a traceback."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from evalkit.load.locate import RUNS_ENV
from evalkit.report import ReportError, execute

ROOT = Path(__file__).resolve().parents[1]
#: Notebooks that really launch Harbor jobs: the integration tier runs them.
LAUNCHING = {"nightly_loop"}
NOTEBOOKS = sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb") if p.stem not in LAUNCHING)
WHERE = {"root": ROOT, "notebooks": ROOT / "notebooks"}

pytestmark = pytest.mark.slow


def outputs(nb) -> list[dict]:
    return [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]


def shown_text(nb) -> str:
    """Everything a reader sees: HTML, plain text and stream outputs."""
    parts = []
    for o in outputs(nb):
        data = o.get("data", {})
        parts.append(str(data.get("text/html", data.get("text/plain", ""))))
        parts.append(str(o.get("text", "")))
    return "\n".join(parts)


def empty_tables(html: str) -> list[str]:
    """Tables without a single data cell."""
    tables = re.findall(r"<table\b.*?</table>", html, flags=re.S | re.I)
    return [t[:200] for t in tables if not re.search(r"<td\b[^>]*>\s*[^<\s]", t, flags=re.I)]


def check_outputs(name: str, nb) -> None:
    errors = [o for o in outputs(nb) if o.get("output_type") == "error"]
    assert not errors, f"{name}: {errors[0].get('ename')}: {errors[0].get('evalue')}"
    text = shown_text(nb)
    assert not empty_tables(text), f"{name}: empty table(s): {empty_tables(text)[:2]}"
    if name in ("nightly", "compare"):
        assert re.search(r"\d+(\.\d+)?\s*%", text), f"{name}: no pass rate shown"
        assert "scripted" in text, f"{name}: the repository's runs are not shown"
    elif name == "explore":
        m = re.search(r"Runs\((\d+) jobs, (\d+) trials", text)
        assert m and int(m.group(1)) > 0 and int(m.group(2)) > 0, text[:500]
    elif name == "launch":
        assert f"job folder: {ROOT / 'runs'}" in text, text[:500]
        assert str(ROOT / "benchmarks" / "smoke-tasks") in text
        assert "PROBLEM" not in text or "harbor" in text.lower()  # Harbor may be absent


WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def check_static_fallbacks(name: str, nb) -> None:
    """What a viewer without JavaScript or a kernel shows: every chart has a PNG beside its
    interactive HTML (and inside it); every evalkit widget a text/html table."""
    datas = [o.get("data", {}) for o in outputs(nb)]
    charts = [d for d in datas if 'class="evalkit-chart"' in str(d.get("text/html", ""))]
    for d in charts:
        assert d.get("image/png"), f"{name}: a chart without its static image"
        assert "evalkit-chart-static" in d["text/html"]
    mine = ("TrialBrowser(", "CompareExplorer(")
    ours = [d for d in datas if WIDGET_VIEW in d and d.get("text/plain", "").startswith(mine)]
    for d in ours:
        assert "<table" in d.get("text/html", ""), f"{name}: a widget without a static table"
    if name in ("nightly", "compare"):
        assert len(charts) >= 3, f"{name}: {len(charts)} charts"
    if name == "explore":
        assert len(ours) == 2


@pytest.mark.parametrize("where", list(WHERE))
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_runs_where_users_open_it(
    name: str, where: str, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.delenv(RUNS_ENV, raising=False)
    nb = execute(ROOT / "notebooks" / f"{name}.ipynb", tmp_path / f"{name}.ipynb", {},
                 cwd=WHERE[where])  # fmt: skip
    check_outputs(name, nb)
    check_static_fallbacks(name, nb)


@pytest.mark.parametrize("name", ["explore", "nightly"])
def test_missing_or_empty_runs_is_the_first_output(name: str, tmp_path: Path, monkeypatch) -> None:
    empty = tmp_path / "empty-runs"
    empty.mkdir()
    monkeypatch.setenv(RUNS_ENV, str(empty))
    with pytest.raises(ReportError) as e:
        execute(ROOT / "notebooks" / f"{name}.ipynb", tmp_path / "out.ipynb", {}, cwd=tmp_path)
    first = next(o for o in outputs(e.value.notebook) if o.get("output_type") != "stream")
    assert first["output_type"] == "error" and first["ename"] == "RunsFolderProblem"
    shown = "\n".join(first["traceback"])
    assert str(empty) in shown and RUNS_ENV in shown and "runs_dir" in shown
    assert "Traceback" not in shown and "File " not in shown  # the message, not a traceback
