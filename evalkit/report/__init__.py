"""Layer 4: papermill reports (nightly, compare) and the sections their notebooks call.

A report notebook stays thin: a ``parameters`` cell, then ``ctx = report.setup(...)`` and
one call per section (``report.header(ctx)``, ``report.runs_table(ctx)``, ...); every
section returns :class:`SectionOutput` (HTML fragments and Altair charts) that display themselves.
``render(name, runs, out, params)`` executes a notebook with papermill in this Python
environment and writes the offline HTML, the executed notebook and summary.json
(docs/report.md).
"""

from __future__ import annotations

from typing import Any

from IPython import get_ipython
from IPython.display import display

from evalkit.charts import enable_offline
from evalkit.load.locate import find_runs
from evalkit.report.build import (
    REPORTS,
    ReportFiles,
    notebook_parameters,
    notebook_path,
    parameters,
    render,
)
from evalkit.report.context import Context, load_context, pick_baseline
from evalkit.report.export import external_resources, make_offline, to_html
from evalkit.report.failures import antipatterns, cost_efficiency, heatmap, taxonomy
from evalkit.report.first_screen import answer, warnings
from evalkit.report.html import CSS
from evalkit.report.many_runs import leaderboard
from evalkit.report.nbrun import ReportError, execute
from evalkit.report.overview import data_quality, header, runs_frame, runs_table
from evalkit.report.run_comparison import (
    badges,
    comparison,
    config_diff,
    figures_table,
    gate,
    tasks_changed,
    transitions,
)
from evalkit.report.section_output import SectionOutput
from evalkit.report.summary_json import summary, write_summary


def setup(
    runs_dir: str | None = None,
    candidate: str | None = None,
    baseline: str | None = None,
    run_by: str = "auto",
    redact: bool = True,
    static_charts: bool = True,
    **params: Any,
) -> Context:
    """Start a report: offline charts (the Vega bundle is shown once, here; ``static_charts``:
    each chart also as a PNG, for viewers of the notebook that run no script), the report's
    CSS, then load ``runs_dir`` (found by :func:`evalkit.find_runs`) and pick the runs to
    compare (:func:`load_context`; ``redact``: hide API-key-like values, on by default)."""
    if params.get("runs") in (None, ""):
        runs_dir = str(find_runs(runs_dir))  # a missing folder is the first thing shown
    enable_offline(static_images=static_charts)
    if get_ipython() is not None:
        display({"text/html": CSS, "text/plain": ""}, raw=True)
    return load_context(runs_dir, candidate, baseline, run_by, redact=redact, **params)


__all__ = [
    "REPORTS",
    "Context",
    "ReportError",
    "ReportFiles",
    "SectionOutput",
    "answer",
    "antipatterns",
    "badges",
    "comparison",
    "config_diff",
    "cost_efficiency",
    "data_quality",
    "execute",
    "external_resources",
    "figures_table",
    "gate",
    "header",
    "heatmap",
    "leaderboard",
    "load_context",
    "make_offline",
    "notebook_parameters",
    "notebook_path",
    "parameters",
    "pick_baseline",
    "render",
    "runs_frame",
    "runs_table",
    "setup",
    "summary",
    "tasks_changed",
    "taxonomy",
    "to_html",
    "transitions",
    "warnings",
    "write_summary",
]
