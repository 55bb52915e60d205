"""The nightly loop: launch the candidate, wait, report against the baseline, gate.

``nightly_loop(spec, baseline)`` runs (or resumes) the candidate job (:func:`run`, the
manifest rules: the same settings resume instead of duplicating), renders the nightly
report of the candidate (its job plus any follow-up jobs of an earlier plan) against the
baseline, writes summary.json, and returns the gate's exit code: 0 Ship it, 1 Hold (also
when nothing could be compared), 2 Don't ship. With ``follow_plan=True`` a Hold's plan is
run at once (``evalkit run --plan``) and the report is made again with its trials.

Ctrl-C stops Harbor and re-raises: the job is left interrupted and loadable, and calling
the loop again with the same settings resumes it. ``evalkit loop`` and
notebooks/nightly_loop.ipynb are thin shells over this function.

papermill cannot make a notebook's process exit with a chosen code (a cell's
``sys.exit`` is caught by the kernel), so :func:`notebook_loop` (``evalkit loop --notebook``)
executes the loop notebook with papermill and returns the gate's code read from the
summary.json the notebook wrote.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from evalkit.compare.gates import EXIT_CODES, HOLD
from evalkit.launch.followup import followup_specs
from evalkit.launch.runner import run
from evalkit.launch.spec import RunSpec, job_dir_for
from evalkit.report.build import render

__all__ = ["LoopResult", "interactive", "nightly_loop", "notebook_loop"]


@dataclass
class LoopResult:
    """What one loop did: the verdict and exit code, the report files, the candidate jobs,
    each launch's summary and each look's summary.json (two when a plan was followed)."""

    verdict: str
    exit_code: int
    candidate_jobs: list[Path]
    baseline: list[Path]
    html: Path
    summary_path: Path
    summary: dict[str, Any]
    launches: list[dict[str, Any]] = field(default_factory=list)
    looks: list[dict[str, Any]] = field(default_factory=list)

    @property
    def plan(self) -> dict[str, Any] | None:
        return self.summary.get("plan")


def interactive() -> bool:
    """A terminal or a notebook kernel: where a live progress bar is worth drawing."""
    return sys.stderr.isatty() or "ipykernel" in sys.modules


def _paths(root: Path, where: str | Path | list[str | Path]) -> list[Path]:
    """Job folders (or folders of jobs) as given; a bare name is a job in the runs root."""
    items = where if isinstance(where, list) else [where]
    out = []
    for w in items:
        p = Path(w)
        out.append(p if p.exists() or p.is_absolute() else job_dir_for(root, str(w)))
    return out


def candidate_jobs(spec_job: Path) -> list[Path]:
    """The candidate job and its follow-up jobs (``<job>__plan-*``), oldest name first."""
    extra = sorted(p for p in spec_job.parent.glob(f"{spec_job.name}__plan-*") if p.is_dir())
    return [spec_job, *extra]


def _report(
    cand: list[Path], base: list[Path], out: Path, params: dict[str, Any], day: date | None
) -> tuple[Path, Path, dict[str, Any]]:
    runs = {"baseline": [str(p) for p in base], "candidate": [str(p) for p in cand]}
    p = {"runs": runs, "baseline": "baseline", "candidate": "candidate", **params}
    files = render("nightly", cand[0].parent, out, p, day=day)
    return files.html, files.summary, json.loads(files.summary.read_text())


def verdict_of(summary: dict[str, Any]) -> str:
    """The ship gate's verdict in a summary.json (Hold when nothing was compared)."""
    return ((summary.get("gates") or {}).get("ship") or {}).get("verdict") or HOLD


def nightly_loop(
    spec: RunSpec,
    baseline: str | Path | list[str | Path],
    *,
    out: str | Path = "reports",
    follow_plan: bool = False,
    harbor: str | os.PathLike[str] | None = None,
    progress: bool | None = None,
    check_environment: bool = True,
    report_params: dict[str, Any] | None = None,
    day: date | None = None,
) -> LoopResult:
    """Launch or resume ``spec``, report it against ``baseline``, return the gate's verdict.

    Args:
        spec: the candidate's launch settings (a repeat with the same settings resumes).
        baseline: the baseline job folder(s), folder(s) of jobs, or job names in the runs root.
        out: where the report, its notebook and summary.json go.
        follow_plan: on a Hold, run the plan's extra attempts and report again.
        harbor, check_environment: as for :func:`evalkit.launch.run`.
        progress: the live bar (trials done / running / failed, elapsed, ETA); default only
            on a terminal or in a notebook.
        report_params: more parameters of the nightly report (gate_lambda, gate_alpha, ...).
    """
    progress = interactive() if progress is None else progress
    base = _paths(spec.runs_root, baseline)
    first = run(
        spec, harbor=harbor, progress=progress, load=False, check_environment=check_environment
    )
    launches = [first]
    cand = candidate_jobs(Path(first["job_dir"]))
    params = dict(report_params or {})
    html, spath, summary = _report(cand, base, Path(out), params, day)
    looks = [summary]
    if follow_plan and verdict_of(summary) == HOLD and (summary.get("plan") or {}).get("tasks"):
        for s in followup_specs({**summary, "candidate": {"jobs": [p.name for p in cand]}},
                                spec.runs_root):  # fmt: skip
            launches.append(
                run(s, harbor=harbor, progress=progress, load=False,
                    check_environment=check_environment)
            )  # fmt: skip
        cand = candidate_jobs(Path(first["job_dir"]))
        html, spath, summary = _report(cand, base, Path(out), params, day)
        looks.append(summary)
    verdict = verdict_of(summary)
    return LoopResult(
        verdict, EXIT_CODES[verdict], cand, base, html, spath, summary, launches, looks
    )


def notebook_loop(
    notebook: str | Path, parameters: dict[str, Any], out: str | Path, *, cwd: Path | None = None
) -> tuple[int, Path]:
    """Execute the loop notebook with papermill; the gate's exit code and its summary.json.

    ``parameters`` are the notebook's (``out_dir`` is set to ``out``); the executed copy is
    written to ``out/<notebook name>.ipynb``. A stale ``out/summary.json`` is removed first,
    so the code is always this run's. A failing cell raises :class:`evalkit.report.ReportError`.
    """
    from evalkit.report import execute

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    summary = out / "summary.json"
    summary.unlink(missing_ok=True)
    params = {**parameters, "out_dir": str(out.resolve())}
    execute(notebook, out / Path(notebook).name, params, cwd=cwd, timeout=None)
    return EXIT_CODES[verdict_of(json.loads(summary.read_text()))], summary
