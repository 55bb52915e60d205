"""Generate docs/schemas.md from the column declarations: ``python -m evalkit.load.schema_doc``."""

from __future__ import annotations

import sys
from pathlib import Path

from evalkit.load._columns import docs_table
from evalkit.load.errors import COLUMNS as ERROR_COLUMNS
from evalkit.load.findings.columns import COLUMNS as FINDING_COLUMNS
from evalkit.load.jobs.columns import COLUMNS as JOB_COLUMNS
from evalkit.load.steps.columns import STEP_COLUMNS, TOOL_CALL_COLUMNS
from evalkit.load.trials.columns import COLUMNS as TRIAL_COLUMNS

FRAMES = (
    ("runs.jobs", "evalkit/load/jobs/columns.py", JOB_COLUMNS),
    ("runs.trials", "evalkit/load/trials/columns.py", TRIAL_COLUMNS),
    ("runs.steps", "evalkit/load/steps/columns.py", STEP_COLUMNS),
    ("runs.tool_calls", "evalkit/load/steps/columns.py", TOOL_CALL_COLUMNS),
    ("runs.findings", "evalkit/load/findings/columns.py", FINDING_COLUMNS),
    ("runs.load_errors", "evalkit/load/errors.py", ERROR_COLUMNS),
)


def render() -> str:
    parts = [
        "# Frame schemas",
        "",
        "Generated from the column declarations by `python -m evalkit.load.schema_doc > docs/schemas.md`;",
        "a test fails when this file is out of date. *(contract)* marks columns listed in",
        "the public API contract.",
        "",
    ]
    for title, src, cols in FRAMES:
        parts += [f"## `{title}`", "", f"Declared in `{src}`.", "", docs_table(cols), ""]
    return "\n".join(parts)


if __name__ == "__main__":
    out = render()
    if len(sys.argv) > 1:
        Path(sys.argv[1]).write_text(out)
    else:
        sys.stdout.write(out)
