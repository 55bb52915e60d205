"""evalkit: analysis of AI-agent benchmark runs (Harbor jobs, ATIF trajectories, rollouts).

``evalkit.load(paths)`` returns a :class:`Runs` with Polars frames (jobs, trials, steps,
tool_calls, findings, load_errors). Analysis lives in ``evalkit.stats``,
``evalkit.compare`` and ``evalkit.patterns``; presentation in ``evalkit.charts``,
``evalkit.widgets`` and ``evalkit.report``. See docs/architecture.md.

Note: ``evalkit.load`` is the loading *function*; the loader package is importable as
``import evalkit.load.<module>`` (e.g. ``evalkit.load.trials.columns``).
"""

from __future__ import annotations

__version__ = "0.1.0"

from evalkit.load import Runs  # noqa: E402
from evalkit.load import load as _load  # noqa: E402

load = _load

__all__ = ["Runs", "__version__", "load"]
