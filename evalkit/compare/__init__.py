"""Run-vs-run comparison and gates (layer 3: uses evalkit.stats and evalkit.patterns).

``compare(runs_or_trials, a, b)`` -> :class:`Comparison` (``.tasks``, ``.transitions``,
``.stats``, ``.gate()``, ``.regression_guard()``, ``.to_json()``); the gates
:func:`ship_gate` and :func:`regression_guard`; :func:`config_diff`;
:func:`first_divergence`; :func:`evidence_bundle`; :func:`against_baseline` (N runs vs one
baseline in one table). See docs/compare.md.
"""

from __future__ import annotations

from evalkit.compare.baseline import against_baseline
from evalkit.compare.bundle import evidence_bundle
from evalkit.compare.config_diff import ConfigDiff, config_diff
from evalkit.compare.core import Comparison, compare
from evalkit.compare.divergence import Divergence, first_divergence
from evalkit.compare.gates import DONT_SHIP, HOLD, SHIP, GateResult, min_wins_to_ship, ship_gate
from evalkit.compare.guard import GuardMetrics, GuardResult, guard_metrics, regression_guard
from evalkit.compare.json_output import compare_json, promotion_decision

__all__ = [
    "DONT_SHIP",
    "HOLD",
    "SHIP",
    "Comparison",
    "ConfigDiff",
    "Divergence",
    "GateResult",
    "GuardMetrics",
    "GuardResult",
    "against_baseline",
    "compare",
    "compare_json",
    "config_diff",
    "evidence_bundle",
    "first_divergence",
    "guard_metrics",
    "min_wins_to_ship",
    "promotion_decision",
    "regression_guard",
    "ship_gate",
]
