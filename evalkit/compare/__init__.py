"""Run-vs-run comparison and gates (layer 3: uses evalkit.stats and evalkit.patterns).

The gates: :func:`ship_gate` (SAGE's accept-or-abstain rule with three verdicts) and
:func:`regression_guard` (trainerd's RegressionGuard). See docs/compare.md.
"""

from __future__ import annotations

from evalkit.compare.gates import DONT_SHIP, HOLD, SHIP, GateResult, min_wins_to_ship, ship_gate
from evalkit.compare.guard import GuardMetrics, GuardResult, guard_metrics, regression_guard

__all__ = [
    "DONT_SHIP",
    "HOLD",
    "SHIP",
    "GateResult",
    "GuardMetrics",
    "GuardResult",
    "guard_metrics",
    "min_wins_to_ship",
    "regression_guard",
    "ship_gate",
]
