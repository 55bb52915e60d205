"""The ship gate: SAGE's accept-or-abstain rule extended to three verdicts.

SAGE (Wang et al. 2026, arXiv 2609.36043, Eqs. 7-11) compares an incumbent A and a candidate
B on the same items with a binary verifier. Over the tasks both runs have:

* ``wins``     W = tasks A did not solve and B solved (fixed);
* ``losses``   L = tasks A solved and B did not (broken, "breaks");
* ``a_solved`` n = tasks A solved (the denominator of the break rate);
* ``net``      = W - lam * L: a break costs ``lam`` fixes (default 2);
* ``q``        = lam / (1 + lam): the break-even probability that a discordant task is a win;
* ``p``        = P[Binomial(W + L, q) >= W], the one-sided exact binomial p-value of "B wins
  more than break-even" conditional on the W + L discordant tasks (p = 1 when W + L = 0).
  At lam = 1 this is the one-sided exact McNemar test;
* ``rho``      = L / n (0 when n = 0): the share of A's solved tasks that B breaks.

Verdict (api-contract.md, exact): "Don't ship" iff rho > tau or net < 0; "Ship it" iff
net > 0 and p < alpha; otherwise "Hold: not enough evidence". rho > tau is decided on the
exact ratio: a 1e-9 tolerance absorbs float rounding, so L / n equal to tau (2 breaks of 20
solved at tau = 0.10) is *not* over the cap.

Wins and losses come from a per-task pass: with one attempt per task, that attempt's pass
(reward >= 1); with K > 1 attempts, a strict majority of attempts passing (a 1-1 tie is not
a pass), see ``evalkit.compare.core``.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

from evalkit._lazy import scipy_stats

SHIP = "Ship it"
HOLD = "Hold: not enough evidence"
DONT_SHIP = "Don't ship"
#: Exit codes of ``evalkit compare --gate``.
EXIT_CODES = {SHIP: 0, HOLD: 1, DONT_SHIP: 2}

#: Tolerance for ratio comparisons (rho vs tau).
TOL = 1e-9


def binom_upper_tail(wins: int, losses: int, q: float) -> float:
    """P[Binomial(wins + losses, q) >= wins]; 1 when there are no discordant tasks."""
    m = wins + losses
    if m == 0 or wins <= 0:
        return 1.0
    return float(min(1.0, max(0.0, scipy_stats.binom.sf(wins - 1, m, q))))


def mcnemar_two_sided(wins: int, losses: int) -> float:
    """Two-sided exact McNemar p: min(1, 2 * P[Binomial(W + L, 1/2) >= max(W, L)])."""
    m = wins + losses
    if m == 0:
        return 1.0
    return float(min(1.0, 2.0 * scipy_stats.binom.sf(max(wins, losses) - 1, m, 0.5)))


@dataclass(frozen=True)
class GateResult:
    """A ship-gate verdict with every number it was decided on.

    ``verdict`` is "Ship it", "Hold: not enough evidence" or "Don't ship"; ``reasons`` says
    which rule decided. ``min_wins_to_ship`` is the smallest number of wins that would ship
    with the same losses and a_solved (None when no number of wins can: breaks over the
    cap). ``max_possible_wins`` (when ``n_tasks`` was given) is n_tasks - a_solved, the
    tasks A did not solve; ``ship_reachable`` says whether min_wins_to_ship fits in it.
    ``mcnemar_p`` is the two-sided exact McNemar p on the same W and L (reported, not used).
    """

    verdict: str
    wins: int
    losses: int
    a_solved: int
    net: float
    rho: float
    q: float
    p_value: float
    lam: float
    alpha: float
    tau: float
    min_wins_to_ship: int | None
    mcnemar_p: float
    n_tasks: int | None = None
    max_possible_wins: int | None = None
    ship_reachable: bool | None = None
    reasons: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        return self.verdict

    @property
    def exit_code(self) -> int:
        """0 Ship it, 1 Hold, 2 Don't ship."""
        return EXIT_CODES[self.verdict]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def line(self) -> str:
        """One line for a terminal: the verdict and the numbers it rests on."""
        return f"{self.verdict} ({self.numbers()})"

    def numbers(self) -> str:
        """wins, losses, net, p and the break rate, as text."""
        return (
            f"wins {self.wins}, losses {self.losses}, net {self.net:g} "
            f"(lam={self.lam:g}), p={self.p_value:.4g} (alpha={self.alpha:g}), "
            f"breaks {self.losses}/{self.a_solved} = {100 * self.rho:.1f}% (tau={100 * self.tau:g}%)"
        )


def _verdict(w: int, l_: int, n: int, lam: float, alpha: float, tau: float) -> str:
    net = w - lam * l_
    rho = l_ / n if n > 0 else 0.0
    p = binom_upper_tail(w, l_, lam / (1 + lam))
    if rho > tau + TOL or net < 0:
        return DONT_SHIP
    if net > 0 and p < alpha:
        return SHIP
    return HOLD


def min_wins_to_ship(
    losses: int, a_solved: int, lam: float = 2.0, alpha: float = 0.05, tau: float = 0.10
) -> int | None:
    """Smallest W for which ``ship_gate(W, losses, a_solved)`` says "Ship it" (None: never).

    With no losses at lam = 2, alpha = 0.05 this is 8: (2/3)^8 = 0.039 < 0.05 but
    (2/3)^7 = 0.059. The p-value falls as W grows with L fixed, so the search is linear
    from the smallest W with a positive net.
    """
    rho = losses / a_solved if a_solved > 0 else 0.0
    if rho > tau + TOL:
        return None
    q = lam / (1 + lam)
    w = max(1, math.floor(lam * losses) + 1)
    while w < 100_000:
        if w - lam * losses > 0 and binom_upper_tail(w, losses, q) < alpha:
            return w
        w += 1
    return None


def _check_int(name: str, v: Any) -> int:
    if isinstance(v, bool) or not float(v).is_integer() or v < 0:
        raise ValueError(f"{name} must be a non-negative whole number, got {v!r}")
    return int(v)


def _check_inputs(
    wins: Any, losses: Any, a_solved: Any, lam: float, alpha: float, tau: float, n_tasks: Any
) -> tuple[int, int, int, int | None]:
    """The counts as whole numbers, checked against each other and the parameters' ranges."""
    w = _check_int("wins", wins)
    l_ = _check_int("losses", losses)
    n = _check_int("a_solved", a_solved)
    if l_ > n:
        raise ValueError(f"losses ({l_}) cannot exceed a_solved ({n}): a loss is a task A solved")
    if not lam > 0:
        raise ValueError(f"lam must be > 0, got {lam}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    if not tau >= 0:
        raise ValueError(f"tau must be >= 0, got {tau}")
    if n_tasks is not None:
        n_tasks = _check_int("n_tasks", n_tasks)
        if w + n > n_tasks:
            raise ValueError(f"wins + a_solved ({w + n}) cannot exceed n_tasks ({n_tasks})")
    return w, l_, n, n_tasks


def _verdict_reasons(
    verdict: str, w: int, l_: int, n: int, lam: float, alpha: float, tau: float
) -> list[str]:
    """Why the gate says ``verdict``: the rules that fired, with their numbers."""
    net = w - lam * l_
    rho = l_ / n if n > 0 else 0.0
    p = binom_upper_tail(w, l_, lam / (1 + lam))
    reasons: list[str] = []
    if rho > tau + TOL:
        reasons.append(
            f"breaks {l_} of A's {n} solved tasks = {100 * rho:.1f}% > tau {100 * tau:g}%"
        )
    if net < 0:
        reasons.append(f"net = {w} - {lam:g} x {l_} = {net:g} < 0: B breaks more than it fixes")
    if verdict == SHIP:
        reasons.append(
            f"net {net:g} > 0 and p = {p:.4g} < alpha {alpha:g}, breaks within tau "
            f"({l_}/{n} <= {100 * tau:g}%)"
        )
    elif verdict == HOLD:
        if w + l_ == 0:
            reasons.append("no discordant tasks (no task fixed or broken): p = 1")
        elif net == 0:
            reasons.append(f"net = {w} - {lam:g} x {l_} = 0: fixes only pay for the breaks")
        else:
            reasons.append(f"net {net:g} > 0 but p = {p:.4g} >= alpha {alpha:g}")
    return reasons


def _ship_reachable(verdict: str, need: int | None, max_w: int | None) -> bool | None:
    """Whether enough wins are possible at this size (None: size or the need unknown)."""
    if max_w is None or (verdict != SHIP and need is None):
        return None
    return verdict == SHIP or need <= max_w


def _wins_needed_reason(
    need: int | None, l_: int, lam: float, alpha: float, max_w: int | None
) -> str:
    """What it would take to ship, and whether the tasks A did not solve allow it."""
    if need is None:
        return "no number of wins can ship: breaks already exceed tau"
    msg = f"shipping needs >= {need} wins with {l_} loss(es) at lam={lam:g}, alpha={alpha:g}"
    if max_w is not None:
        msg += f"; {max_w} task(s) A did not solve" + (
            "" if need <= max_w else ", so 'Ship it' is impossible at this size"
        )
    return msg


def ship_gate(
    wins: int,
    losses: int,
    a_solved: int,
    lam: float = 2.0,
    alpha: float = 0.05,
    tau: float = 0.10,
    *,
    n_tasks: int | None = None,
) -> GateResult:
    """Decide "Ship it" / "Hold: not enough evidence" / "Don't ship" (module docstring).

    Args:
        wins: tasks B solved that A did not.
        losses: tasks A solved that B did not (so ``losses <= a_solved``).
        a_solved: tasks A solved, over the same paired tasks.
        lam: how many fixes one break costs (> 0; SAGE uses lam >= 1).
        alpha: significance level of the one-sided exact binomial test (0 < alpha < 1).
        tau: the largest allowed share of A's solved tasks that B may break (>= 0).
        n_tasks: paired tasks compared (optional): lets the result say whether shipping is
            reachable at this size (wins can only come from the n_tasks - a_solved tasks A
            did not solve).
    """
    w, l_, n, n_tasks = _check_inputs(wins, losses, a_solved, lam, alpha, tau, n_tasks)
    q = lam / (1 + lam)
    net = w - lam * l_
    rho = l_ / n if n > 0 else 0.0
    p = binom_upper_tail(w, l_, q)
    verdict = _verdict(w, l_, n, lam, alpha, tau)
    need = min_wins_to_ship(l_, n, lam, alpha, tau)
    reasons = _verdict_reasons(verdict, w, l_, n, lam, alpha, tau)
    max_w = None if n_tasks is None else n_tasks - n
    reachable = _ship_reachable(verdict, need, max_w)
    if verdict != SHIP:
        reasons.append(_wins_needed_reason(need, l_, lam, alpha, max_w))
    return GateResult(
        verdict=verdict,
        wins=w,
        losses=l_,
        a_solved=n,
        net=float(net),
        rho=float(rho),
        q=float(q),
        p_value=p,
        lam=float(lam),
        alpha=float(alpha),
        tau=float(tau),
        min_wins_to_ship=need,
        mcnemar_p=mcnemar_two_sided(w, l_),
        n_tasks=n_tasks,
        max_possible_wins=max_w,
        ship_reachable=reachable,
        reasons=reasons,
    )
