"""The headline figures of a comparison, how they are written, and whether the comparison
means anything.

One source for every place that shows a comparison: ``evalkit compare``, the report's first
screen and gate section, and compare.json / summary.json (``headline`` and ``evidence``) all
call :func:`headline` and print :meth:`Figure.delta_text` / :meth:`Figure.ci_text`, so the
same pair reads the same everywhere, in the same unit:

* rates (pass rate, timeout rate, evidence complete): percent for a side, **points** for a
  difference and its interval;
* mean reward: reward units (3 decimals);
* cost: US dollars per attempt; time: seconds per attempt (minutes or hours when the sides
  are that long, the same unit for sides, difference and interval);
* tokens: whole numbers with thousands separators; turns: one decimal.

Every figure is B - A over the comparable tasks (``Comparison.side_summary(paired=True)``);
its interval is the paired task-cluster interval of ``evalkit.stats`` over the per-task
differences (``paired_core``), computed only when the value is known for every comparable
task on both sides (otherwise the figure says why it has no interval).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

import polars as pl

from evalkit.stats.paired import paired_core

if TYPE_CHECKING:
    from evalkit.compare.core import Comparison

#: Fewest comparable tasks for a meaningful comparison (the report's ``min_shared_tasks``).
MIN_SHARED_TASKS = 5
#: A pass-rate interval that reaches this far on both sides cannot tell a large regression
#: from a large improvement: the comparison says nothing.
LARGE_EFFECT = 0.25

#: key -> (label, unit, per-task delta column of cmp.tasks or None for the stats objects)
FIGURES: dict[str, tuple[str, str, str | None]] = {
    "pass_rate": ("pass rate", "pts", None),
    "mean_reward": ("mean reward", "reward", None),
    "cost_per_attempt": ("cost / attempt", "usd", "d_cost_usd"),
    "duration_s": ("time / attempt", "time", "d_duration_s"),
    "tokens": ("tokens / attempt", "tokens", "d_tokens"),
    "turns": ("turns / attempt", "turns", "d_turns"),
    "timeout_rate": ("timeout rate", "pts", None),
    "evidence_rate": ("evidence complete", "pts", None),
    "cost_per_pass": ("cost / pass", "usd", None),
}
#: The four figures of the report's first screen.
HEADLINE = ("pass_rate", "mean_reward", "cost_per_attempt", "duration_s")


def _time_unit(*values: float | None) -> tuple[str, float]:
    top = max((abs(v) for v in values if v is not None), default=0.0)
    if top >= 2 * 3600:
        return "h", 3600.0
    if top >= 120:
        return "min", 60.0
    return "s", 1.0


@dataclass(frozen=True)
class Figure:
    """One compared measure: both sides, B - A, and its interval (None when unknown).

    ``note`` says why a figure was not compared or has no interval.
    """

    key: str
    label: str
    unit: str
    a: float | None
    b: float | None
    delta: float | None
    ci_low: float | None = None
    ci_high: float | None = None
    confidence: float = 0.95
    n_tasks: int = 0
    note: str | None = None

    @property
    def compared(self) -> bool:
        return self.delta is not None

    def _scale(self) -> tuple[str, float]:
        if self.unit == "time":
            return _time_unit(self.a, self.b)
        return "", 1.0

    def value_text(self, v: float | None) -> str:
        """One side's value in this figure's unit ("unknown" when not known)."""
        if v is None:
            return "unknown"
        if self.unit == "pts":
            return f"{100 * v:.1f}%"
        if self.unit == "reward":
            return f"{v:.3f}"
        if self.unit == "usd":
            return f"${v:,.4f}" if abs(v) < 1 else f"${v:,.2f}"
        if self.unit == "time":
            name, div = self._scale()
            return f"{v / div:.1f} {name}"
        if self.unit == "tokens":
            return f"{round(v):,}"
        return f"{v:.1f}"

    def signed(self, d: float | None) -> str:
        """A difference (or an interval bound) in this figure's unit, with its sign."""
        if d is None or (isinstance(d, float) and math.isnan(d)):
            return "unknown"
        sign = "+" if d > 0 else ("-" if d < 0 else "±")
        m = abs(d)
        if self.unit == "pts":
            body = f"{100 * m:.1f} pts"
        elif self.unit == "reward":
            body = f"{m:.3f}"
        elif self.unit == "usd":
            body = f"${m:,.4f}" if m < 1 else f"${m:,.2f}"
        elif self.unit == "time":
            name, div = self._scale()
            body = f"{m / div:.1f} {name}"
        elif self.unit == "tokens":
            body = f"{round(m):,}"
        else:
            body = f"{m:.1f}"
        return sign + body

    def delta_text(self) -> str:
        """B - A, or "not compared" when a side is unknown."""
        return self.signed(self.delta) if self.compared else "not compared"

    def ci_text(self) -> str:
        """The interval of B - A in the same unit ("" when there is none)."""
        if self.ci_low is None or self.ci_high is None:
            return ""
        return f"{self.confidence:.0%} CI {self.signed(self.ci_low)} … {self.signed(self.ci_high)}"

    def line(self) -> str:
        """'pass rate 61.7% -> 75.0%: +13.3 pts (95% CI +5.0 pts … +23.3 pts)'."""
        head = f"{self.label} {self.value_text(self.a)} -> {self.value_text(self.b)}: "
        if not self.compared:
            return head + f"not compared ({self.note or 'unknown on a side'})"
        ci = self.ci_text()
        return head + self.delta_text() + (f" ({ci})" if ci else "")

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d |= {"deltaText": self.delta_text(), "ciText": self.ci_text(), "line": self.line()}
        return d


def _finite(v: Any) -> float | None:
    if v is None:
        return None
    f = float(v)
    return None if math.isnan(f) or math.isinf(f) else f


def _from_stats(cmp: Comparison, attr: str) -> tuple[float | None, float | None, str | None]:
    try:
        st = getattr(cmp, attr)
    except RuntimeError as e:
        return None, None, str(e)
    if st is None:
        return None, None, None
    get = st.get if isinstance(st, dict) else lambda k: getattr(st, k, None)
    return _finite(get("ci_low")), _finite(get("ci_high")), None


def _from_tasks(
    cmp: Comparison, col: str, conf: float
) -> tuple[float | None, float | None, str | None]:
    """Paired interval over the per-task differences ``col`` of the comparable tasks."""
    d = cmp.tasks.filter(pl.col("comparable"))[col]
    if d.len() == 0:
        return None, None, None
    if d.null_count():
        return None, None, f"no interval: unknown for {d.null_count()} of {d.len()} tasks"
    o = cmp.options
    r = paired_core(d.cast(pl.Float64).to_numpy(), confidence=conf, seed=o.get("seed", 0))
    lo, hi = _finite(r.ci_low), _finite(r.ci_high)
    if lo is None or hi is None:
        return None, None, f"no interval over {d.len()} task(s)"
    return lo, hi, None


def headline(cmp: Comparison) -> list[Figure]:
    """Every figure of :data:`FIGURES`, B - A over the comparable tasks (module docstring)."""
    side = cmp.side_summary(paired=True)
    a, b = side["a"], side["b"]
    conf = cmp.options.get("confidence", 0.95)
    n = a["n_tasks"]
    out = []
    for key, (label, unit, col) in FIGURES.items():
        va, vb = a.get(key), b.get(key)
        delta = None if va is None or vb is None else vb - va
        lo = hi = note = None
        if delta is None:
            note = "unknown on a side" if n else "no comparable task"
        elif key == "pass_rate":
            lo, hi, note = _from_stats(cmp, "pass_stats")
        elif key == "mean_reward":
            lo, hi, note = _from_stats(cmp, "stats")
        elif col is not None:
            lo, hi, note = _from_tasks(cmp, col, conf)
        out.append(Figure(key, label, unit, va, vb, delta, lo, hi, conf, n, note))
    return out


#: Column headers of :func:`figure_rows`: label, side A, side B, difference, interval.
FIGURE_HEADERS = ("figure", "A", "B", "B - A", "CI")


def figure_rows(
    figures: list[Figure],
    keys: tuple[str, ...] | None = None,
    headers: tuple[str, str, str, str, str] = FIGURE_HEADERS,
) -> pl.DataFrame:
    """The figures as text, one row per figure (those named in ``keys``, or all): label, A,
    B, B - A and its interval (or why there is none), under ``headers``."""
    rows = [
        (f.label, f.value_text(f.a), f.value_text(f.b), f.delta_text(), f.ci_text() or f.note or "")
        for f in figures
        if keys is None or f.key in keys
    ]
    return pl.DataFrame(rows, schema=dict.fromkeys(headers, pl.String), orient="row")


@dataclass(frozen=True)
class Evidence:
    """Whether a comparison means anything: ``meaningful`` and, when not, ``reasons``."""

    meaningful: bool
    reasons: list[str]
    n_tasks: int
    min_shared_tasks: int
    large_effect: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def checksum_reason(cmp: Comparison) -> str | None:
    """When every shared task was left out because its checksum changed: a sentence naming
    the option that compares them anyway."""
    shared = cmp.tasks.filter(pl.col("side") == "both")
    if shared.height == 0 or cmp.options.get("checksums") != "exclude":
        return None
    changed = shared.filter(pl.col("checksum_status").is_in(["changed", "mixed"]))
    if changed.height != shared.height or shared["comparable"].any():
        return None
    only = _only_task_folders_changed(cmp)
    return (
        f"every one of the {shared.height} shared tasks has a different task checksum in A "
        "and B (the task folders changed)"
        + ("; the configurations differ in nothing else (job name aside)" if only else "")
        + ", so none is compared; if that change is the point of the A/B (skills added to "
        'the tasks, say), compare them anyway with checksums="ignore" '
        "(`evalkit compare --checksums ignore`, `evalkit report ... -p checksums ignore`)"
    )


def _only_task_folders_changed(cmp: Comparison) -> bool:
    """The config diff counts no variable but the task folders (dataset / task paths and
    the task checksums)."""
    try:
        d = cmp.config_diff()
    except (KeyError, ValueError, AttributeError):
        return False
    return bool(d.variables) and set(d.variables) <= {"dataset", "task checksums"}


def evidence(
    cmp: Comparison,
    min_shared_tasks: int = MIN_SHARED_TASKS,
    large_effect: float = LARGE_EFFECT,
) -> Evidence:
    """Enough overlap to compare? Not when fewer than ``min_shared_tasks`` tasks are
    comparable, or when the pass-rate interval reaches ``large_effect`` on both sides (it
    cannot tell a large regression from a large improvement)."""
    n = len(cmp.paired_tasks)
    reasons = []
    why = checksum_reason(cmp)
    if why:
        reasons.append(why)
    if n < min_shared_tasks and not (n == 0 and why):
        reasons.append(
            f"only {n} comparable task(s), fewer than the {min_shared_tasks} needed "
            "(min_shared_tasks)"
        )
    else:
        pr = next(f for f in cmp.figures if f.key == "pass_rate")
        if (
            pr.ci_low is not None
            and pr.ci_high is not None
            and pr.ci_low <= -large_effect
            and pr.ci_high >= large_effect
        ):
            reasons.append(
                f"the pass-rate interval ({pr.ci_text()}) includes both a "
                f"{100 * large_effect:.0f}-point drop and a {100 * large_effect:.0f}-point gain"
            )
    return Evidence(not reasons, reasons, n, min_shared_tasks, large_effect)


def disagreement(cmp: Comparison, verdict: str, confidence: float = 0.95) -> str | None:
    """One sentence when the paired test and the ship gate point different ways."""
    try:
        ps = cmp.pass_stats
    except RuntimeError:
        return None
    if ps is None:
        return None
    get = ps.get if isinstance(ps, dict) else lambda k: getattr(ps, k, None)
    p = _finite(get("p_value"))
    alpha = 1 - confidence
    significant = p is not None and p < alpha
    g = cmp.gate()
    if significant and verdict.startswith("Hold"):
        return (
            f"The paired test finds a pass-rate difference (p = {p:.3g}) while the ship gate "
            f"holds: the test weighs every attempt of all {get('n_tasks')} tasks, the gate only "
            f"counts whole tasks that flipped ({g.wins} fixed, {g.losses} broken) and needs "
            f"more of those before it ships."
        )
    if not significant and verdict == "Ship it":
        return (
            f"The ship gate says Ship it on {g.wins} fixed against {g.losses} broken tasks, "
            f"while the paired pass-rate test is not significant ({'p = ' + format(p, '.3g') if p is not None else 'no p-value'}): "
            "the gate counts whole tasks that flipped, the test also weighs the attempts of "
            "tasks that did not flip."
        )
    if significant and verdict == "Don't ship" and (_finite(get("diff")) or 0) > 0:
        return (
            f"Pass rate rose significantly (p = {p:.3g}) yet the gate says Don't ship: B broke "
            f"{g.losses} task(s) A solved, more than the gate's cap allows."
        )
    return None
