"""An anytime-valid version of the ship gate's test: look after every batch, stay at alpha.

The ship gate (evalkit.compare.gates) tests, over the W + L discordant tasks, whether a
discordant task is a win with probability above the break-even ``q = lam / (1 + lam)``,
with a one-sided exact binomial p-value. That p-value is valid for ONE look at a size
fixed in advance: "run a few more, look again, ship as soon as p < alpha" rejects a true
null far more often than alpha (tests/stats/test_sequential.py measures it).

This module gives the same test as a mixture e-value (a test martingale; Robbins 1970,
"Statistical methods related to the law of the iterated logarithm"; Ramdas, Grünwald,
Vovk & Shafer 2023, "Game-theoretic statistics and safe anytime-valid inference",
Statistical Science 38(4)):

    E(W, L) = ∫_q^1 p^W (1 - p)^L dπ(p) / (q^W (1 - q)^L)

with π the uniform prior on (q, 1) (the alternatives "B wins more than break-even"). For
every p' <= q, E is a non-negative supermartingale with E[E] <= 1 as discordant tasks
arrive, so by Ville's inequality P[E ever reaches 1/alpha] <= alpha: the rule "ship once
E >= 1/alpha" keeps its false Ship-it rate at alpha however often one looks. The price is
power at any one fixed size (measured by the same tests; docs/statistics.md).

Assumption: discordant tasks arrive as independent draws (new tasks each look). Extra
attempts on the same tasks change per-task majorities rather than adding fresh tasks; the
e-value is then computed on the counts of the latest look, which is the same statistic
but not covered by the martingale argument.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from evalkit._lazy import scipy_special

__all__ = ["SequentialResult", "mixture_e_value", "sequential_ship"]


def mixture_e_value(wins: int, losses: int, q: float) -> float:
    """The mixture e-value E(W, L) of "P(win | discordant) > q" (module docstring).

    1 with no discordant task; grows with wins, shrinks with losses.
    """
    if not 0 < q < 1:
        raise ValueError(f"q must be in (0, 1), got {q}")
    if wins < 0 or losses < 0:
        raise ValueError("wins and losses must be >= 0")
    a, b = wins + 1.0, losses + 1.0
    # ∫_q^1 p^W (1-p)^L dp / (1 - q) for the uniform prior on (q, 1), in logs.
    tail = float(scipy_special.betaincc(a, b, q))  # P[Beta(a, b) > q]
    if tail <= 0:
        return 0.0
    log_num = float(scipy_special.betaln(a, b)) + math.log(tail) - math.log1p(-q)
    log_den = wins * math.log(q) + losses * math.log1p(-q)
    return float(math.exp(min(log_num - log_den, 700.0)))


@dataclass(frozen=True)
class SequentialResult:
    """The anytime-valid ship test on one look's counts.

    ``e_value`` is E(W, L); ``threshold`` is 1 / alpha; ``ship`` says whether the
    sequential rule ships (net > 0, E >= 1/alpha and breaks within tau, the same break
    and net rules as the gate); ``reason`` says why in one line.
    """

    wins: int
    losses: int
    e_value: float
    threshold: float
    ship: bool
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def sequential_ship(
    wins: int,
    losses: int,
    a_solved: int,
    lam: float = 2.0,
    alpha: float = 0.05,
    tau: float = 0.10,
) -> SequentialResult:
    """Whether the anytime-valid rule ships on these counts (valid under repeated looks)."""
    q = lam / (1 + lam)
    e = mixture_e_value(wins, losses, q)
    threshold = 1.0 / alpha
    net = wins - lam * losses
    rho = losses / a_solved if a_solved > 0 else 0.0
    within = rho <= tau + 1e-9
    ship = net > 0 and e >= threshold and within
    if not within:
        reason = f"breaks {losses}/{a_solved} exceed tau {100 * tau:g}%"
    elif net <= 0:
        reason = f"net {net:g} <= 0"
    else:
        cmp_ = ">=" if e >= threshold else "<"
        reason = f"e-value {e:.3g} {cmp_} 1/alpha = {threshold:g} (valid under repeated looks)"
    return SequentialResult(wins, losses, e, threshold, ship, reason)
