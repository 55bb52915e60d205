"""``plan(cmp)``: after a Hold, how many more candidate attempts on which tasks most likely decide.

Model (the assumptions a plan states in ``Plan.assumptions``):

* the baseline A is fixed: extra attempts go to the candidate B only, on the comparable
  tasks it already ran (the follow-up job joins B's attempts in the next analysis);
* task i has its own per-attempt pass probability p_i for B; attempts are independent
  given p_i; before seeing data p_i ~ Beta(a0, b0) (``prior``, default Jeffreys' (1/2, 1/2):
  most tasks are mostly solved or mostly not), so after s passes in k attempts
  p_i ~ Beta(a0 + s, b0 + k - s), independently across tasks;
* a task's extra attempts make its total odd, so the strict-majority rule never meets a
  tie (one more attempt after one pass could only turn it into "not a pass");
* the next analysis uses the same rules: per-task pass = strict majority (``majority_pass``)
  and the ship gate at the comparison's lam / alpha / tau (``cmp.gate_on``).

Search: for e = 1 .. ``max_per_task`` extra attempts per task (plus one where needed for an
odd total), the tasks are ranked by the
posterior predictive chance that e more attempts flip B's per-task pass; plans "e more on
the top m tasks" are scored by Monte Carlo (draws of p_i, then of the extra attempts) on
one set of draws, and the cheapest plan reaching ``target`` (else the most decisive one) is
re-scored on an independent set, so the reported chance of a decision is not biased by the
search. Cost and time scale B's observed mean cost and duration per attempt.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import polars as pl

from evalkit._lazy import scipy_stats
from evalkit.stats.sequential import mixture_e_value, sequential_ship

__all__ = ["ASSUMPTIONS", "Plan", "majority_pass", "plan"]

ASSUMPTIONS = (
    "only the candidate (B) runs more attempts, on tasks both runs already have; "
    "the baseline's per-task passes stay as they are",
    "each task has its own pass probability for B, attempts are independent given it; "
    "prior Beta(1/2, 1/2), updated with B's observed passes on that task",
    "extra attempts per task make the task's total odd (no strict-majority ties)",
    "the next analysis uses the same per-task strict-majority pass and the same gate "
    "(lam, alpha, tau)",
    "cost and duration per extra attempt = B's observed mean per attempt",
)


def majority_pass(n_pass: Any, attempts: Any) -> Any:
    """The per-task pass: a strict majority of passing attempts (the one attempt when K = 1).

    Works on numbers, numpy arrays and Polars expressions alike (compare uses it too).
    """
    return n_pass * 2 > attempts


@dataclass(frozen=True)
class Plan:
    """What to run next after a Hold (module docstring).

    ``extra_attempts``: total extra candidate attempts; ``tasks``: the tasks to re-run;
    ``attempts_per_task``: extra attempts per task; ``p_decide`` / ``p_ship`` /
    ``p_dont_ship``: predicted chance that the gate decides / ships / says Don't ship after
    them; ``p_ship_sequential``: chance the anytime-valid rule ships
    (evalkit.stats.sequential); ``e_value``: that rule's e-value now; ``cost_usd`` and
    ``attempt_seconds`` (sum over attempts; divide by the job's concurrency for wall
    time): expected, None when B's cost / duration is unknown.
    """

    verdict: str
    extra_attempts: int
    tasks: list[str]
    attempts_per_task: dict[str, int]
    p_decide: float
    p_ship: float
    p_dont_ship: float
    p_ship_sequential: float
    e_value: float
    cost_usd: float | None
    attempt_seconds: float | None
    lam: float
    alpha: float
    tau: float
    target: float
    candidate: str | None = None
    baseline: str | None = None
    reasons: list[str] = field(default_factory=list)
    assumptions: list[str] = field(default_factory=lambda: list(ASSUMPTIONS))

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def line(self) -> str:
        """One line for a terminal."""
        if not self.extra_attempts:
            return f"Plan: {self.reasons[0] if self.reasons else 'nothing to run'}"
        return (
            f"Plan: {self.extra_attempts} more attempt(s) of the candidate on "
            f"{len(self.tasks)} task(s): {100 * self.p_decide:.0f}% chance of a decision "
            f"(Ship it {100 * self.p_ship:.0f}%, Don't ship {100 * self.p_dont_ship:.0f}%)"
            + _cost_text(self.cost_usd, self.attempt_seconds)
        )


def _cost_text(cost: float | None, seconds: float | None) -> str:
    parts = []
    if cost is not None:
        parts.append(f"~${cost:.2f}")
    if seconds is not None:
        parts.append(f"~{seconds / 60:.0f} attempt-minutes")
    return f"; expected {', '.join(parts)}" if parts else ""


@dataclass(frozen=True)
class _Tasks:
    names: list[str]
    a_pass: np.ndarray  # bool
    s: np.ndarray  # B passes
    k: np.ndarray  # B finished attempts
    cost: np.ndarray  # B mean cost per attempt (nan unknown)
    seconds: np.ndarray  # B mean duration per attempt (nan unknown)


def _task_arrays(tasks: pl.DataFrame) -> _Tasks:
    t = tasks.filter(pl.col("comparable")).sort("task_name")

    def arr(c: str) -> np.ndarray:
        return t[c].cast(pl.Float64).fill_null(float("nan")).to_numpy()

    return _Tasks(
        t["task_name"].to_list(),
        t["pass_majority_a"].fill_null(False).to_numpy().astype(bool),
        t["n_pass_b"].fill_null(0).to_numpy().astype(np.int64),
        t["attempts_b"].fill_null(0).to_numpy().astype(np.int64),
        arr("cost_usd_b"),
        arr("duration_s_b"),
    )


def _odd_total(k: np.ndarray, e: int) -> np.ndarray:
    """e extra attempts per task, plus one where k + e would be even."""
    return e + ((k + e) % 2 == 0)


def _flip_chance(t: _Tasks, extra: np.ndarray, prior: tuple[float, float]) -> np.ndarray:
    """Posterior predictive chance that ``extra`` more attempts flip each task's B pass."""
    x = np.arange(int(extra.max()) + 1)[:, None]
    pmf = scipy_stats.betabinom.pmf(x, extra, prior[0] + t.s, prior[1] + t.k - t.s)
    now = majority_pass(t.s, t.k)
    after = majority_pass(t.s + x, t.k + extra)
    return (pmf * (after != now)).sum(axis=0)


class _Scorer:
    """Monte Carlo chances of each verdict for a plan, with memoised gate calls."""

    def __init__(
        self, t: _Tasks, decide: Any, draws: int, max_e: int, prior: tuple[float, float], rng: Any
    ) -> None:
        self.t, self.decide, self.memo = t, decide, {}
        p = rng.beta(prior[0] + t.s, prior[1] + t.k - t.s, size=(draws, t.s.size))
        # passes among the first j extra attempts, j = 0 .. max_e + 1, as int16 (at most
        # max_e + 1): a quarter of int64's memory to gather from. The uniforms are drawn a
        # block of draws at a time (the same stream as one draw of them all).
        n, k = t.s.size, max_e + 1
        self.extra_passes = np.zeros((draws, n, k + 1), dtype=np.int16)
        rows = max(1, (1 << 20) // max(n * k, 1))
        for d in range(0, draws, rows):
            u = rng.random((min(rows, draws - d), n, k))
            np.cumsum(
                u < p[d : d + rows, :, None], axis=2, out=self.extra_passes[d : d + rows, :, 1:]
            )

    def codes(self, extra: np.ndarray) -> np.ndarray:
        """Per draw: (gate exit code 0 ship / 1 hold / 2 don't ship, sequential ship)."""
        t = self.t
        got = np.take_along_axis(self.extra_passes, extra[None, :, None], axis=2)[:, :, 0]
        b = majority_pass(t.s + got, t.k + extra)
        w = (~t.a_pass & b).sum(axis=1)
        l_ = (t.a_pass & ~b).sum(axis=1)
        keys, inv = np.unique(w * (t.s.size + 1) + l_, return_inverse=True)
        out = np.array([self._code(*divmod(int(key), t.s.size + 1)) for key in keys])
        return out[inv.reshape(-1)]

    def _code(self, w: int, l_: int) -> tuple[int, bool]:
        if (w, l_) not in self.memo:
            self.memo[(w, l_)] = self.decide(w, l_)
        return self.memo[(w, l_)]


def _candidates(t: _Tasks, max_e: int, prior: tuple[float, float]) -> list[np.ndarray]:
    """Plans "e more attempts on the m tasks most likely to flip", for every e and m."""
    out = []
    n = t.s.size
    ms = range(1, n + 1) if n <= 40 else sorted({*np.geomspace(1, n, 30).astype(int), n})
    for e in range(1, max_e + 1):
        per_task = _odd_total(t.k, e)
        order = np.argsort(-_flip_chance(t, per_task, prior), kind="stable")
        for m in ms:
            extra = np.zeros(n, dtype=np.int64)
            extra[order[:m]] = per_task[order[:m]]
            out.append(extra)
    return out


def _choose(scorer: _Scorer, cands: list[np.ndarray], target: float) -> np.ndarray:
    scored = []
    for extra in cands:
        codes = scorer.codes(extra)[:, 0]
        scored.append((float(np.mean(codes != 1)), int(extra.sum()), extra))
    ok = [s for s in scored if s[0] >= target]
    if ok:
        return min(ok, key=lambda s: (s[1], -s[0]))[2]
    return max(scored, key=lambda s: (s[0], -s[1]))[2]


def _per_attempt(values: np.ndarray, extra: np.ndarray, everyone: np.ndarray) -> float | None:
    """Expected total over the planned attempts; B's overall mean fills unknown tasks."""
    known = ~np.isnan(everyone)
    if not known.any():
        return None
    fill = float(np.average(everyone[known]))
    v = np.where(np.isnan(values), fill, values)
    return float((v * extra).sum())


def plan(
    cmp: Any,
    *,
    target: float = 0.8,
    max_per_task: int = 4,
    draws: int = 2000,
    seed: int = 0,
    prior: tuple[float, float] = (0.5, 0.5),
) -> Plan:
    """How many more candidate attempts, on which tasks, most likely decide a Hold.

    Args:
        cmp: an :class:`evalkit.compare.Comparison` (read through ``cmp.tasks``,
            ``cmp.gate()`` and ``cmp.gate_on(wins, losses)``).
        target: the chance of a decision to aim for: the cheapest plan reaching it is
            chosen; when none does, the most decisive one.
        max_per_task: the most extra attempts on one task (one more where needed for an
            odd total).
        draws: Monte Carlo draws per scoring (two independent sets).
        seed: random seed (the plan is reproducible).
        prior: Beta(a0, b0) prior of a task's pass probability for the candidate.
    """
    if not 0 < target < 1:
        raise ValueError(f"target must be in (0, 1), got {target}")
    g = cmp.gate()
    t = _task_arrays(cmp.tasks)
    base = {"lam": g.lam, "alpha": g.alpha, "tau": g.tau, "target": target}
    labels = {"candidate": str(cmp.b), "baseline": str(cmp.a)}
    e_now = mixture_e_value(g.wins, g.losses, g.q)
    if g.exit_code != 1 or not t.names:
        why = (
            f"the gate already says {g.verdict}: nothing to plan"
            if g.exit_code != 1
            else "no comparable task: more attempts cannot decide"
        )
        return Plan(g.verdict, 0, [], {}, 0.0, 0.0, 0.0, 0.0, e_now, None, None, **base,
                    **labels, reasons=[why])  # fmt: skip

    def decide(w: int, l_: int) -> tuple[int, bool]:
        return (
            cmp.gate_on(w, l_).exit_code,
            sequential_ship(w, l_, g.a_solved, g.lam, g.alpha, g.tau).ship,
        )

    rng = np.random.default_rng(seed)
    select = _Scorer(t, decide, draws, max_per_task, prior, rng)
    extra = _choose(select, _candidates(t, max_per_task, prior), target)
    check = _Scorer(t, decide, draws, max_per_task, prior, rng)
    check.memo = select.memo
    codes = check.codes(extra)
    verdicts, seq = codes[:, 0], codes[:, 1]
    p = {c: float(np.mean(verdicts == c)) for c in (0, 1, 2)}
    chosen = [i for i in np.flatnonzero(extra)]
    tasks = [t.names[i] for i in chosen]
    p_decide = p[0] + p[2]
    reasons = _reasons(g, p_decide, target, extra, len(t.names))
    return Plan(
        verdict=g.verdict,
        extra_attempts=int(extra.sum()) if p_decide > 0 else 0,
        tasks=tasks if p_decide > 0 else [],
        attempts_per_task={t.names[i]: int(extra[i]) for i in chosen} if p_decide > 0 else {},
        p_decide=p_decide,
        p_ship=p[0],
        p_dont_ship=p[2],
        p_ship_sequential=float(np.mean(seq)),
        e_value=e_now,
        cost_usd=_per_attempt(t.cost, extra, t.cost) if p_decide > 0 else None,
        attempt_seconds=_per_attempt(t.seconds, extra, t.seconds) if p_decide > 0 else None,
        **base,
        **labels,
        reasons=reasons,
    )


def _reasons(g: Any, p_decide: float, target: float, extra: np.ndarray, n: int) -> list[str]:
    out = [f"the gate holds: {g.reasons[0]}" if g.reasons else "the gate holds"]
    if p_decide == 0:
        out.append(
            f"no plan of up to {int(extra.max())} more attempt(s) per task on these {n} "
            "task(s) changes the verdict: it needs more tasks"
        )
        return out
    if g.ship_reachable is False:
        out.append("'Ship it' is out of reach at this number of tasks: only Don't ship can decide")
    hit = "reaches" if p_decide >= target else "falls short of"
    out.append(
        f"{int(extra.sum())} more attempt(s) on {int((extra > 0).sum())} task(s) "
        f"{hit} the target {100 * target:.0f}% chance of a decision ({100 * p_decide:.0f}%)"
    )
    return out
