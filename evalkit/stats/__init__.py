"""evalkit.stats: pure functions over Polars frames (any frame + column names).

Public surface (see docs/statistics.md):

* :func:`leaderboard` — many runs: scores with CIs, rank intervals, P(rank = k), tiers,
  P(on the cost/time Pareto frontier) from one joint task bootstrap.
* :func:`noise_floor`, :func:`flaky_tasks`, :func:`dead_tasks`, :func:`informative_tasks` —
  which tasks carry the signal (A -> A flips, coin-flip tasks, tasks no run separates).
* :func:`fit_irt` — 1PL / 2PL item-response fit: run ability with an interval, task
  difficulty and discrimination (which tasks separate the runs).
* :func:`summarize` — per-run pass rate / mean reward with an interval, its method and estimand.
* :func:`paired` — run B vs run A on common tasks: bootstrap CI, sign-flip p, McNemar, per-task.
* :func:`pass_at_k`, :func:`pass_hat_k`, :func:`pass_k_curve` — pass@k (Chen 2021), pass^k.
* :func:`proportion_ci`, :func:`clustered_proportion_ci`, :func:`clustered_mean_ci` — intervals.
* :func:`mcnemar`, :func:`sign_flip_pvalue` — paired tests.
* :func:`minimum_detectable_effect`, :func:`sample_size`, :class:`PowerInputs`,
  :func:`power_inputs_from_tasks`, :func:`design_effect` — power (Miller 2024).
* :func:`plan` — after a Hold, how many more candidate attempts on which tasks decide it.
* :func:`regrade_pairs`, :func:`verifier_instability` — regraded trials' rewards before and
  after, and how often the verifier alone changed a reward (per run or task).
* :func:`sequential_ship`, :func:`mixture_e_value` — the gate's test, valid under repeated looks.

Coverage evidence: docs/coverage.md (``python -m evalkit.stats.simulate --out docs/coverage.md``).
"""

from evalkit.stats.intervals import ESTIMANDS, clustered_proportion_ci, proportion_ci
from evalkit.stats.irt import IrtFit, fit_irt
from evalkit.stats.leaderboard import LEADERBOARD_COLUMNS, leaderboard
from evalkit.stats.means import clustered_mean_ci
from evalkit.stats.paired import PairedResult, paired
from evalkit.stats.passk import pass_at_k, pass_hat_k, pass_k_curve
from evalkit.stats.plan import Plan, majority_pass, plan
from evalkit.stats.power import (
    PowerInputs,
    design_effect,
    minimum_detectable_effect,
    power_inputs_from_tasks,
    sample_size,
)
from evalkit.stats.regrades import (
    INSTABILITY_COLUMNS,
    REGRADE_PAIR_COLUMNS,
    regrade_pairs,
    verifier_instability,
)
from evalkit.stats.sequential import SequentialResult, mixture_e_value, sequential_ship
from evalkit.stats.significance import mcnemar, sign_flip_pvalue
from evalkit.stats.summarize import SUMMARY_COLUMNS, summarize
from evalkit.stats.taskquality import (
    NoiseFloor,
    dead_tasks,
    flaky_tasks,
    informative_tasks,
    noise_floor,
    noise_floor_detail,
)

__all__ = [
    "ESTIMANDS",
    "INSTABILITY_COLUMNS",
    "LEADERBOARD_COLUMNS",
    "REGRADE_PAIR_COLUMNS",
    "SUMMARY_COLUMNS",
    "IrtFit",
    "NoiseFloor",
    "PairedResult",
    "Plan",
    "PowerInputs",
    "SequentialResult",
    "clustered_mean_ci",
    "clustered_proportion_ci",
    "dead_tasks",
    "design_effect",
    "fit_irt",
    "flaky_tasks",
    "informative_tasks",
    "leaderboard",
    "majority_pass",
    "mcnemar",
    "minimum_detectable_effect",
    "mixture_e_value",
    "noise_floor",
    "noise_floor_detail",
    "paired",
    "pass_at_k",
    "pass_hat_k",
    "pass_k_curve",
    "plan",
    "power_inputs_from_tasks",
    "proportion_ci",
    "regrade_pairs",
    "sample_size",
    "sequential_ship",
    "sign_flip_pvalue",
    "summarize",
    "verifier_instability",
]
