"""Layer 5: trigger Harbor runs end to end (docs/launch.md).

``RunSpec`` -> checks (``preflight``) -> Harbor job config (``config``) -> frozen manifest
(``manifest``) -> Harbor's CLI in its own environment (``runner``) with live progress
(``progress``) -> ``evalkit.load`` of the job. evalkit never imports harbor.
"""

from __future__ import annotations

from evalkit.launch.execute import STATE_FILE, HarborRunError, execute
from evalkit.launch.harborcli import HarborNotFound, find_harbor
from evalkit.launch.manifest import MANIFEST_FILE, ManifestMismatch
from evalkit.launch.plan import LaunchPlan, prepare
from evalkit.launch.preflight import PreflightError, PreflightReport, preflight
from evalkit.launch.runner import dry_run, run
from evalkit.launch.spec import SCRIPTED_AGENT, Problem, RunSpec, validate

__all__ = [
    "MANIFEST_FILE",
    "SCRIPTED_AGENT",
    "STATE_FILE",
    "HarborNotFound",
    "HarborRunError",
    "LaunchPlan",
    "ManifestMismatch",
    "PreflightError",
    "PreflightReport",
    "Problem",
    "RunSpec",
    "dry_run",
    "execute",
    "find_harbor",
    "preflight",
    "prepare",
    "run",
    "validate",
]
