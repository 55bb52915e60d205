"""evalkit: analysis of AI-agent benchmark runs (Harbor jobs, ATIF trajectories, rollouts).

``evalkit.load(paths)`` returns a :class:`Runs` with Polars frames (jobs, trials, steps,
tool_calls, findings, load_errors); ``evalkit.scan(path)`` the same frames as LazyFrames
over a dataset written by ``evalkit export`` (docs/dataset.md). ``evalkit.find_runs()`` is
where every notebook finds its runs folder ($EVALKIT_RUNS, else ``runs`` here or above).
Analysis lives in ``evalkit.stats``, ``evalkit.compare`` and ``evalkit.patterns``;
presentation in ``evalkit.charts``, ``evalkit.widgets`` and ``evalkit.report``. See
docs/architecture.md.

``evalkit.load`` is the loader package and is callable: ``evalkit.load(paths)`` loads, and
``evalkit.load.trials.columns`` is where the trials frame's columns are declared.
"""

from __future__ import annotations

__version__ = "0.1.0"

from evalkit import compare as compare
from evalkit import load as load  # a callable module: evalkit.load(paths)
from evalkit import patterns as patterns
from evalkit import stats as stats
from evalkit.load import Runs as Runs
from evalkit.load.dataset import scan as scan
from evalkit.load.locate import find_path as find_path
from evalkit.load.locate import find_runs as find_runs
from evalkit.load.locate import runs_root as runs_root
from evalkit.load.runs import register_findings_provider

# runs.findings: the load layer computes it with the detectors of evalkit.patterns, handed
# over here, the one place that knows both layers (the load layer never imports patterns).
register_findings_provider(patterns.findings_provider)

__all__ = [
    "Runs",
    "__version__",
    "compare",
    "find_path",
    "find_runs",
    "load",
    "patterns",
    "runs_root",
    "scan",
    "stats",
]
