"""Layer 4: papermill reports (nightly, compare) and the sections their notebooks call.

A report notebook stays thin: a ``parameters`` cell, then ``ctx = report.setup(...)`` and
one call per section (``report.header(ctx)``, ``report.runs_table(ctx)``, ...); every
section returns :class:`Parts` (HTML fragments and Altair charts) that display themselves.
``render(name, runs, out, params)`` executes a notebook with papermill in this Python
environment and writes the offline HTML, the executed notebook and summary.json
(docs/report.md).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

#: public name -> module (imported on first use: the CLI needs render without Altair, the
#: notebooks need the sections without papermill)
_LAZY = {
    "Context": "context", "load_context": "context", "pick_baseline": "context",
    "ReportError": "nbrun", "execute": "nbrun",
    "external_resources": "export", "make_offline": "export", "to_html": "export",
    "antipatterns": "failures", "cost_efficiency": "failures", "heatmap": "failures",
    "taxonomy": "failures",
    "data_quality": "overview", "header": "overview", "runs_frame": "overview",
    "runs_table": "overview",
    "Parts": "parts",
    "REPORTS": "build", "ReportFiles": "build", "notebook_parameters": "build",
    "render": "build", "parameters": "build", "notebook_path": "build",
    "summary": "summary_json", "write_summary": "summary_json",
    "answer": "first_screen", "warnings": "first_screen",
    "badges": "versus", "figures_table": "versus",
    "comparison": "versus", "config_diff": "versus", "gate": "versus",
    "tasks_changed": "versus", "transitions": "versus",
}  # fmt: skip

_MODULES = {"build", "first_screen", "context", "export", "failures", "html", "kernel", "nbrun", "overview",
            "parts", "summary_json", "versus"}  # fmt: skip

if TYPE_CHECKING:
    from evalkit.report.context import Context


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(f"evalkit.report.{_LAZY[name]}"), name)
    if name in _MODULES:
        return importlib.import_module(f"evalkit.report.{name}")
    raise AttributeError(f"module 'evalkit.report' has no attribute {name!r}")


def setup(
    runs_dir: str | None = None,
    candidate: str | None = None,
    baseline: str | None = None,
    run_by: str = "auto",
    redact: bool = True,
    **params: Any,
) -> Context:
    """Start a report: offline charts (the Vega bundle is shown once, here), the report's
    CSS, then load ``runs_dir`` (found by :func:`evalkit.find_runs`) and pick the runs to
    compare (:func:`load_context`; ``redact``: hide API-key-like values, on by default)."""
    from evalkit.charts import enable_offline
    from evalkit.load.locate import find_runs
    from evalkit.report.html import CSS

    if params.get("runs") in (None, ""):
        runs_dir = str(find_runs(runs_dir))  # a missing folder is the first thing shown
    enable_offline()
    try:
        from IPython import get_ipython
        from IPython.display import display

        if get_ipython() is not None:
            display({"text/html": CSS, "text/plain": ""}, raw=True)
    except ImportError:  # pragma: no cover
        pass
    from evalkit.report.context import load_context

    return load_context(runs_dir, candidate, baseline, run_by, redact=redact, **params)


__all__ = [
    "REPORTS",
    "Context",
    "Parts",
    "ReportError",
    "ReportFiles",
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
