"""Layer 4: Altair charts from Polars frames (``runs.trials`` and the analysis frames).

Every function takes a Polars DataFrame or LazyFrame plus column names and returns an
Altair chart with titles, axis labels, tooltips (task, attempts, reward, cost where they
apply) and the colour-blind-safe, print-readable colours of ``_style.py``: the same outcome,
error kind or run always has the same colour.

Call :func:`enable_offline` once at the top of a notebook: charts then render without a
network, and the Vega bundle appears once per notebook / report (``offline.py``).
"""

from __future__ import annotations

from evalkit.charts._style import (
    ERROR_KIND_COLORS,
    OUTCOME_COLORS,
    OUTCOME_ORDER,
    RUN_COLORS,
    Chart,
)
from evalkit.charts.dists import (
    distribution,
    duration_dist,
    pass_at_k_curves,
    pass_at_k_frame,
    turns_dist,
)
from evalkit.charts.leaderboard import (
    leaderboard_charts,
    leaderboard_scores,
    rank_probabilities_chart,
)
from evalkit.charts.offline import bundle_html, chart_html, enable_offline
from evalkit.charts.patterns import antipattern_rates
from evalkit.charts.runs import (
    cost_vs_pass,
    error_kind_bars,
    outcome_bars,
    pareto_front,
    pass_rate_ci,
    run_summary,
)
from evalkit.charts.tasks import ab_scatter, ab_tasks, task_cells, task_heatmap, transitions_chart

__all__ = [
    "ERROR_KIND_COLORS",
    "OUTCOME_COLORS",
    "OUTCOME_ORDER",
    "RUN_COLORS",
    "Chart",
    "ab_scatter",
    "ab_tasks",
    "antipattern_rates",
    "bundle_html",
    "chart_html",
    "cost_vs_pass",
    "distribution",
    "duration_dist",
    "enable_offline",
    "error_kind_bars",
    "leaderboard_charts",
    "leaderboard_scores",
    "outcome_bars",
    "pareto_front",
    "pass_at_k_curves",
    "pass_at_k_frame",
    "pass_rate_ci",
    "rank_probabilities_chart",
    "run_summary",
    "task_cells",
    "task_heatmap",
    "transitions_chart",
    "turns_dist",
]
