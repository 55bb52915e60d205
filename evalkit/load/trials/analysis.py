"""``harbor analyze`` results of a trial: its ``analysis.json``.

``harbor analyze <job|trial>`` runs an LLM judge over a finished trial's files with a rubric
(default criteria: ``reward_hacking``, ``task_specification``) and writes Harbor's
AnalyzeResult as ``analysis.json`` into the trial folder (and, for a job, one over the
whole job into the job folder: the jobs columns ``analysis_summary`` / ``analysis_checks``): a ``summary`` text and ``checks``
keyed by criterion name, each ``{outcome: pass | fail | not_applicable, explanation}``.
Absent file -> null columns (not analysed is not "passed"); an unreadable file is a load
error and null columns.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from evalkit.load.errors import LoadError
from evalkit.load.shared.io import read_json

#: One rubric check of a trial: criterion name, the judge's verdict, its explanation.
CHECK_ITEM = pl.Struct({"name": pl.String, "verdict": pl.String, "explanation": pl.String})


def _text(v: Any) -> str | None:
    return v if isinstance(v, str) else None


def read_analysis(
    path: str, trial_id: str | None, errors: list[LoadError], *, job_id: str | None = None
) -> tuple[list[dict[str, str | None]] | None, str | None]:
    """(checks, summary) of a trial's or (``trial_id`` None) a job's analysis.json (None,
    None when unreadable)."""
    val, err = read_json(path, "file", limit=16 * 1024 * 1024)
    ids = {"trial_id": trial_id, "job_id": job_id}
    if err is not None:
        errors.append(LoadError(err.path, err.level, err.error_type, err.message, **ids))
        return None, None
    if not isinstance(val, dict):
        errors.append(
            LoadError(path, "file", "wrong_type", "analysis.json is not an object", **ids)
        )
        return None, None
    raw = val.get("checks")
    checks: list[dict[str, str | None]] = []
    if isinstance(raw, dict):
        for name, c in raw.items():
            c = c if isinstance(c, dict) else {}
            verdict = _text(c.get("outcome"))
            checks.append(
                {
                    "name": str(name),
                    "verdict": verdict.lower() if verdict else None,
                    "explanation": _text(c.get("explanation")),
                }
            )
    return checks, _text(val.get("summary"))
