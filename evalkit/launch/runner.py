"""Plan and run a Harbor job: preflight, frozen manifest, Harbor's CLI as a subprocess,
live progress from result.json files, and the loaded frames at the end.

Repeating the same call resumes the job (``harbor job resume``) instead of starting a
duplicate, and does nothing once every trial has a result. Ctrl-C stops Harbor (SIGINT to
its process group, then SIGTERM, then SIGKILL) and leaves an interrupted job that loads;
run the same call again to finish it.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from evalkit.launch.execute import execute
from evalkit.launch.plan import LaunchPlan, prepare
from evalkit.launch.spec import RunSpec


def dry_run(spec: RunSpec, **kwargs: Any) -> LaunchPlan:
    """Plan without running or writing anything (print ``plan.render()``)."""
    return prepare(spec, **kwargs)


def run(
    spec: RunSpec,
    *,
    harbor: str | os.PathLike[str] | None = None,
    progress: bool = True,
    load: bool = True,
    environ: dict[str, str] | None = None,
    check_environment: bool = True,
) -> Any:
    """Check, freeze, run (or resume) and load. Returns ``evalkit.load(job_dir)`` (a Runs
    whose ``options["launch"]`` has the job folder, action, digest and counts).
    ``check_environment=False`` skips the Docker checks (the engine is someone else's)."""
    plan = prepare(spec, harbor=harbor, environ=environ, check_environment=check_environment)
    plan.report.raise_if_failed()
    try:
        summary = execute(plan, progress=progress, environ=environ)
    except KeyboardInterrupt:
        print(
            f"\nInterrupted: {plan.job_dir} is an interrupted job (it loads). Run the same command again to resume.",
            file=sys.stderr,
        )
        raise
    if not load:
        return summary
    import evalkit

    runs = evalkit.load(plan.job_dir, progress=False)
    runs.options["launch"] = summary
    return runs
