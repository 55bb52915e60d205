"""``render(name, runs, out)``: parameters -> papermill -> HTML, executed notebook, summary.json."""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date as _date
from pathlib import Path
from typing import Any

from evalkit.compare.select import closest
from evalkit.load.locate import find_runs
from evalkit.report.export import BUNDLE_MARKER, external_resources, to_html
from evalkit.report.nbrun import execute

REPORTS = ("nightly", "compare")
#: A report given by name: one plain file name (the output files are named after it).
REPORT_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_TRUE, _FALSE = {"1", "true", "yes", "on"}, {"0", "false", "no", "off"}


def notebooks_dir() -> Path:
    """Where the report notebooks are: $EVALKIT_NOTEBOOKS, else the repository's notebooks/."""
    env = os.environ.get("EVALKIT_NOTEBOOKS")
    return Path(env) if env else Path(__file__).resolve().parents[2] / "notebooks"


def notebook_path(name: str) -> Path:
    """``nightly`` / ``compare`` (or any name in notebooks/), or a path to an .ipynb."""
    p = Path(name)
    if p.suffix == ".ipynb":
        if not p.exists():
            raise FileNotFoundError(f"no notebook {p}")
        return p
    if not REPORT_NAME_RE.match(name):  # it names the output files: no path in it
        raise ValueError(
            f"report name {name!r} is not a plain name ({REPORT_NAME_RE.pattern}); "
            f"give a notebook path ending in .ipynb instead"
        )
    q = notebooks_dir() / f"{name}.ipynb"
    if not q.exists():
        near = closest(name, REPORTS, n=1)
        hint = f"did you mean {near[0]!r}? " if near else ""
        raise FileNotFoundError(
            f"no report named {name!r} (looked for {q}); {hint}reports: {', '.join(REPORTS)}"
        )
    return q


def notebook_parameters(path: str | Path) -> dict[str, Any]:
    """Parameter name -> default value, read from the cell tagged ``parameters``."""
    nb = json.loads(Path(path).read_text(encoding="utf-8"))
    for c in nb.get("cells", []):
        if c.get("cell_type") == "code" and "parameters" in c.get("metadata", {}).get("tags", []):
            src = c["source"] if isinstance(c["source"], str) else "".join(c["source"])
            out: dict[str, Any] = {}
            for node in ast.parse(src).body:
                target = (
                    node.targets[0]
                    if isinstance(node, ast.Assign) and len(node.targets) == 1
                    else getattr(node, "target", None)
                )
                if isinstance(target, ast.Name) and getattr(node, "value", None) is not None:
                    try:
                        out[target.id] = ast.literal_eval(node.value)
                    except ValueError:
                        out[target.id] = None
            return out
    raise ValueError(f"{path} has no cell tagged 'parameters'")


def coerce(name: str, value: str, default: Any) -> Any:
    """A command-line value as the type of the parameter's default (text stays text)."""
    try:
        if isinstance(default, bool):
            v = value.strip().lower()
            if v in _TRUE | _FALSE:
                return v in _TRUE
            raise ValueError("expected true or false")
        if isinstance(default, int):
            return int(value)
        if isinstance(default, float):
            return float(value)
    except ValueError as e:
        raise ValueError(
            f"parameter {name}: {value!r} is not a valid {type(default).__name__} ({e})"
        ) from None
    return value


def parameters(path: str | Path, raw: dict[str, str] | list[tuple[str, str]]) -> dict[str, Any]:
    """Check names against the notebook's parameters cell and convert values by type."""
    known = notebook_parameters(path)
    out = {}
    for k, v in raw.items() if isinstance(raw, dict) else raw:
        if k not in known:
            raise ValueError(f"unknown parameter {k!r}; this report takes: {', '.join(known)}")
        out[k] = coerce(k, v, known[k]) if isinstance(v, str) else v
    return out


@dataclass
class ReportFiles:
    html: Path
    notebook: Path
    summary: Path
    seconds: dict[str, float] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    pdf: Path | None = None
    markdown: Path | None = None

    def path(self, fmt: str) -> Path | None:
        """The file of one format of :data:`evalkit.report.formats.FORMATS`."""
        return {"html": self.html, "ipynb": self.notebook, "pdf": self.pdf, "md": self.markdown}[
            fmt
        ]


def write_formats(files: ReportFiles, nb: Any, formats: Sequence[str]) -> None:
    """The PDF and / or Markdown forms of a rendered report, when asked for."""
    from evalkit.report.formats import to_markdown, to_pdf

    if "pdf" in formats:
        files.pdf = to_pdf(files.html, files.html.with_suffix(".pdf"))
    if "md" in formats:
        files.markdown = to_markdown(nb, files.html.with_suffix(".md"))


def check_formats(formats: Sequence[str]) -> None:
    from evalkit.report.formats import FORMATS

    bad = [f for f in formats if f not in FORMATS]
    if bad:
        raise ValueError(f"unknown format {', '.join(bad)}; formats: {', '.join(FORMATS)}")


def render(
    name: str,
    runs: str | Path | None = None,
    out: str | Path = "reports",
    params: dict[str, Any] | list[tuple[str, str]] | None = None,
    *,
    day: _date | None = None,
    cwd: str | Path | None = None,
    redact: bool = True,
    formats: Sequence[str] = ("html", "ipynb"),
) -> ReportFiles:
    """Execute report ``name`` on ``runs`` and write, in ``out``: ``<day>-<name>.html`` (the
    report, offline), ``<day>-<name>.ipynb`` (the executed notebook),
    ``<day>-<name>.summary.json`` and a copy as ``summary.json``; with ``"pdf"`` / ``"md"``
    in ``formats`` also ``<day>-<name>.pdf`` (Chromium) / ``<day>-<name>.md`` with its
    charts in ``<day>-<name>_files/`` (:mod:`evalkit.report.formats`). ``redact`` (default on)
    sets the notebook's ``redact`` parameter: API-key-like values and secret env values are
    replaced with [REDACTED] in everything the report shows and writes.

    A notebook with a ``static_charts`` parameter draws each chart's static PNG only when
    ``formats`` shows the notebook's outputs as they are (ipynb, md), unless the parameter
    is given: the HTML page and the PDF draw every chart from its script.

    ``runs`` is found by :func:`evalkit.load.locate.find_runs` (None: ``$EVALKIT_RUNS``,
    else ``runs`` in the working folder or above); a missing or empty folder raises
    :class:`evalkit.load.locate.RunsFolderProblem` before anything runs.

    Raises :class:`evalkit.report.nbrun.ReportError` when a cell fails.
    """
    t0 = time.perf_counter()
    check_formats(formats)
    nb_path = notebook_path(name)
    stem_name = Path(name).stem if name.endswith(".ipynb") else name
    outd = Path(out)
    outd.mkdir(parents=True, exist_ok=True)
    stem = f"{(day or _date.today()).isoformat()}-{stem_name}"
    files = ReportFiles(outd / f"{stem}.html", outd / f"{stem}.ipynb", outd / "summary.json")
    own_summary = outd / f"{stem}.summary.json"
    p = _run_parameters(nb_path, params or {}, runs, redact, own_summary, formats)
    t1 = time.perf_counter()
    nb = execute(nb_path, files.notebook, p, cwd=cwd or os.getcwd())
    t2 = time.perf_counter()
    title = f"evalkit {stem_name} report {stem[:10]}"
    page = to_html(nb, title)
    files.html.write_text(page, encoding="utf-8")
    write_formats(files, nb, formats)
    t3 = time.perf_counter()
    if own_summary.exists():
        shutil.copyfile(own_summary, files.summary)
    files.warnings.extend(_page_warnings(page))
    files.seconds = {"prepare": t1 - t0, "execute": t2 - t1, "export": t3 - t2, "total": t3 - t0}
    for w in files.warnings:
        print(f"warning: {w}", file=sys.stderr)
    return files


#: Formats that show the executed notebook's outputs as they are, so its charts need their
#: static PNG there (the HTML page and the PDF draw every chart from its script).
STATIC_FORMATS = frozenset({"ipynb", "md"})


def _run_parameters(
    nb_path: Path,
    params: dict[str, Any] | list[tuple[str, str]],
    runs: str | Path | None,
    redact: bool,
    own_summary: Path,
    formats: Sequence[str] = (),
) -> dict[str, Any]:
    """The notebook's parameters for one render: the given ones checked and typed, then
    ``redact``, the runs folder found, the summary path and ``static_charts`` (on for
    ``formats`` that show the notebook as it is), where the notebook takes them."""
    p = parameters(nb_path, params)
    known = notebook_parameters(nb_path)
    if "redact" in known:
        p.setdefault("redact", redact)
    elif not redact:
        raise ValueError(f"{nb_path} has no 'redact' parameter: it cannot be rendered unredacted")
    if "runs_dir" in known and p.get("runs") in (None, ""):
        p["runs_dir"] = str(find_runs(runs))
    if "summary_path" in known:
        p["summary_path"] = str(own_summary.resolve())
    if "static_charts" in known:
        p.setdefault("static_charts", bool(STATIC_FORMATS & set(formats)))
    return p


def _page_warnings(page: str) -> list[str]:
    """What is wrong with a rendered page: network resources it references, a Vega bundle
    included more than once."""
    warnings = []
    ext = external_resources(page)
    if ext:
        warnings.append(
            f"the report references {len(ext)} network resource(s): {', '.join(ext[:5])}"
        )
    n_bundle = page.count(BUNDLE_MARKER)
    if n_bundle > 1:
        warnings.append(f"the Vega bundle appears {n_bundle} times (expected once)")
    return warnings
