"""summary.json: compare.json of the compared pair with what
the report was about under ``"report"``."""

from __future__ import annotations

import json
import math
from datetime import date, datetime
from pathlib import Path
from typing import Any

from evalkit.report.context import Context
from evalkit.report.overview import runs_frame
from evalkit.report.run_comparison import comparison


def _jsonable(v: Any) -> Any:
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, list | tuple | set):
        return [_jsonable(x) for x in v]
    if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
        return None
    if isinstance(v, datetime | date):
        return v.isoformat()
    if isinstance(v, str | int | float | bool) or v is None:
        return v
    if hasattr(v, "to_dict"):
        return _jsonable(v.to_dict())
    return str(v)


def summary(ctx: Context, name: str = "nightly") -> dict[str, Any]:
    """The summary of a report: compare.json content at the top level (null decision and a
    note when there is no comparison), plus ``report``: name, time, source, runs, choice."""
    cmp = comparison(ctx)
    if cmp is not None:
        out = dict(cmp.to_json())
    else:
        why = (
            "only one run" if ctx.pair is None else "evalkit.compare is not available in this build"
        )
        out = {"decision": None, "note": f"no comparison: {why}"}
    out["report"] = {
        "name": name,
        "generatedAt": ctx.generated_at,
        "runsDir": ctx.source,
        "runBy": ctx.run_by,
        "baseline": ctx.baseline,
        "candidate": ctx.candidate,
        "choice": ctx.choice,
        "params": ctx.params,
        "loadErrors": ctx.load_errors.height,
        "runsNotDetailed": ctx.left_out,
        "runs": runs_frame(ctx).to_dicts(),
        "redacted": ctx.redact,
    }
    out = _jsonable(out)
    return _redact_strings(out) if ctx.redact else out


def _redact_strings(v: Any) -> Any:
    """Every string (values and keys) through redact_text: task names, reasons and params
    come from job folders and the command line."""
    from evalkit.load.shared.redact import env_secret_values, redact_text

    extra = env_secret_values()

    def walk(x: Any) -> Any:
        if isinstance(x, str):
            return redact_text(x, extra)
        if isinstance(x, dict):
            return {walk(k): walk(y) for k, y in x.items()}
        if isinstance(x, list):
            return [walk(y) for y in x]
        return x

    return walk(v)


def write_summary(ctx: Context, path: str | Path | None, name: str = "nightly") -> dict[str, Any]:
    """Compute the summary and write it to ``path`` (when given); returns it."""
    s = summary(ctx, name)
    if path:
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp = p.with_suffix(p.suffix + ".tmp")
        tmp.write_text(json.dumps(s, indent=2, ensure_ascii=False) + "\n")
        tmp.replace(p)
    return s
