"""trainerd's RegressionGuard (go-code ``internal/training/regression.go``), reproduced.

Given a baseline and a candidate, each summarised as

* ``pass_rate``    share of tasks (trials) that passed, a fraction in [0, 1];
* ``avg_cost_usd`` mean cost per task (trial) in USD;
* ``avg_steps``    mean agent steps per task (trial),

the guard computes

* ``accuracy_delta`` = cand.pass_rate - base.pass_rate (ABSOLUTE difference of fractions);
* ``cost_delta``     = (cand.avg_cost_usd - base.avg_cost_usd) / base.avg_cost_usd, RELATIVE,
  and 0 when the baseline cost is 0 (or unknown here);
* ``step_delta``     = (cand.avg_steps - base.avg_steps) / base.avg_steps, RELATIVE, and 0
  when the baseline steps are 0 (or unknown here);

and decides, first rule that applies (priority revert > cost > steps > merge):

1. accuracy_delta < -0.05  -> "revert";
2. cost_delta > 0.15       -> "flag";
3. step_delta > 0.20       -> "flag";
4. otherwise               -> "merge" ("no regression detected").

Thresholds compare with a 1e-9 tolerance (api-contract.md), so a drop of exactly 5 points
(0.80 -> 0.75, which is -0.05000000000000004 in floats) merges, and exactly +15 % cost or
+20 % steps does not flag. Unknown cost (a trial without a recorded cost) is not 0: the cost
delta is then 0 and a reason says the cost could not be compared.

The baseline may be go-code's ``benchmarks/terminal_bench/baseline.json``: trainerd's
``LoadBaseline`` reads pass_rate = #expected_pass / #tasks, avg_cost_usd = mean of the tasks'
avg_cost_usd and avg_steps = mean of the tasks' avg_steps (unweighted across tasks).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import orjson
import polars as pl

TOL = 1e-9
REVERT, FLAG, MERGE = "revert", "flag", "merge"


@dataclass(frozen=True)
class GuardMetrics:
    """One side of the guard: pass rate (fraction), mean cost (USD, None = unknown), mean
    steps (None = unknown), and where the numbers came from."""

    pass_rate: float
    avg_cost_usd: float | None
    avg_steps: float | None
    n: int | None = None
    source: str = "mapping"


@dataclass(frozen=True)
class GuardResult:
    """``decision`` in {"revert", "flag", "merge"}, the three deltas it was decided on,
    the reasons (every rule that fired, in priority order, then notes) and both inputs."""

    decision: str
    accuracy_delta: float
    cost_delta: float
    step_delta: float
    reasons: list[str]
    base: GuardMetrics
    cand: GuardMetrics
    thresholds: dict[str, float] = field(default_factory=dict)

    def __str__(self) -> str:
        return self.decision

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def line(self) -> str:
        """The decision and the three deltas, as text."""
        return f"{self.decision} ({self.numbers()})"

    @property
    def not_compared(self) -> list[str]:
        """The dimensions ("cost", "steps") the decision could not look at: unknown on a side
        or zero in the baseline. Their delta is 0 in the rule, which is not a pass."""
        out = []
        for name, b, c in (
            ("cost", self.base.avg_cost_usd, self.cand.avg_cost_usd),
            ("steps", self.base.avg_steps, self.cand.avg_steps),
        ):
            if b is None or c is None or b <= 0:
                out.append(name)
        return out

    def numbers(self) -> str:
        """The deltas the decision used; a dimension not compared says so (never "+0.0%")."""
        skip = set(self.not_compared)
        cost = "cost not compared" if "cost" in skip else f"cost {100 * self.cost_delta:+.1f}%"
        steps = "steps not compared" if "steps" in skip else f"steps {100 * self.step_delta:+.1f}%"
        return f"pass rate {100 * self.accuracy_delta:+.1f} pts, {cost}, {steps}"

    def summary(self) -> str:
        """The decision in one line, saying what it did not compare."""
        skip = self.not_compared
        if not skip:
            return f"{self.decision}: {self.reasons[0]}"
        what = " and ".join(skip)
        return f"{self.decision} on pass rate only: {what} not compared (unknown on a side)"


def _num(v: Any) -> float | None:
    if v is None or isinstance(v, bool):
        return None
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if f == f else None  # NaN -> None


def metrics_from_baseline_json(
    data: Mapping[str, Any], source: str = "baseline.json"
) -> GuardMetrics:
    """trainerd's LoadBaseline over a parsed go-code baseline.json (``tasks`` mapping)."""
    tasks = data.get("tasks") or {}
    if not isinstance(tasks, Mapping) or not tasks:
        return GuardMetrics(0.0, 0.0, 0.0, 0, source)
    vals = [t for t in tasks.values() if isinstance(t, Mapping)]
    n = len(vals)
    passed = sum(1 for t in vals if t.get("expected_pass") is True)
    costs = [_num(t.get("avg_cost_usd")) or 0.0 for t in vals]
    steps = [_num(t.get("avg_steps")) or 0.0 for t in vals]
    return GuardMetrics(passed / n, sum(costs) / n, sum(steps) / n, n, source)


def metrics_from_baseline_frame(
    df: pl.DataFrame, source: str = "read_baseline frame"
) -> GuardMetrics:
    """LoadBaseline over ``evalkit.load.gocode.read_baseline``'s per-task frame (an
    unpriced cost is null there, so the cost is unknown and its delta 0, as in trainerd)."""
    n = df.height
    if n == 0:
        return GuardMetrics(0.0, 0.0, 0.0, 0, source)
    rate = df.select(pl.col("expected_pass").fill_null(False).mean()).item()
    cost = None
    if "avg_cost_usd" in df.columns and df["avg_cost_usd"].null_count() == 0:
        cost = float(df["avg_cost_usd"].mean())  # type: ignore[arg-type]
    steps = float(df["avg_steps"].fill_null(0).mean()) if "avg_steps" in df.columns else 0.0  # type: ignore[arg-type]
    return GuardMetrics(float(rate), cost, steps, n, source)


def metrics_from_trials(df: pl.DataFrame, source: str = "trials") -> GuardMetrics:
    """pass_rate = share of trials with reward >= 1 (null reward = fail, over all trials);
    avg_cost_usd = mean cost_usd, None unless every trial has a cost; avg_steps = mean
    n_steps over the trials whose steps are known (None when none are)."""
    n = df.height
    if n == 0:
        return GuardMetrics(0.0, None, None, 0, source)
    rate = (
        df.select((pl.col("reward") >= 1).fill_null(False).mean()).item()
        if "reward" in df.columns
        else 0.0
    )
    cost = None
    if "cost_usd" in df.columns and df["cost_usd"].null_count() == 0:
        cost = float(df["cost_usd"].mean())  # type: ignore[arg-type]
    steps = None
    if "n_steps" in df.columns and df["n_steps"].null_count() < n:
        steps = float(df["n_steps"].mean())  # type: ignore[arg-type]
    return GuardMetrics(float(rate), cost, steps, n, source)


def guard_metrics(obj: Any) -> GuardMetrics:
    """Summarise a guard input: GuardMetrics; a mapping with pass_rate / avg_cost_usd /
    avg_steps (trainerd's BenchmarkResult JSON; missing keys are 0 as in Go); a parsed
    baseline.json mapping (has ``tasks``) or a path to one, or read_baseline's frame (has
    ``expected_pass``); a one-run trials frame; or a Runs with one run."""
    if isinstance(obj, GuardMetrics):
        return obj
    if isinstance(obj, str | os.PathLike) and not isinstance(obj, Mapping):
        p = Path(obj)
        if p.is_dir():
            p = p / "baseline.json"
        data = orjson.loads(p.read_bytes())
        if not isinstance(data, Mapping):
            raise ValueError(f"{p}: not a JSON object")
        return guard_metrics_from_mapping(data, str(p))
    if isinstance(obj, Mapping):
        return guard_metrics_from_mapping(obj, "mapping")
    if isinstance(obj, pl.DataFrame):
        if "expected_pass" in obj.columns:
            return metrics_from_baseline_frame(obj)
        _one_run(obj)
        return metrics_from_trials(obj)
    trials = getattr(obj, "trials", None)
    if isinstance(trials, pl.DataFrame):
        _one_run(trials)
        return metrics_from_trials(trials, "runs")
    raise TypeError(f"cannot read guard metrics from {type(obj).__name__}")


def _one_run(df: pl.DataFrame) -> None:
    if "run" in df.columns and df["run"].n_unique() > 1:
        raise ValueError(
            f"the frame holds {df['run'].n_unique()} runs; filter it to one run first "
            "(or use compare(...).regression_guard())"
        )


def guard_metrics_from_mapping(data: Mapping[str, Any], source: str = "mapping") -> GuardMetrics:
    if "tasks" in data and isinstance(data["tasks"], Mapping) and "pass_rate" not in data:
        return metrics_from_baseline_json(data, source if source != "mapping" else "baseline.json")
    return GuardMetrics(
        _num(data.get("pass_rate")) or 0.0,
        _num(data.get("avg_cost_usd")) if "avg_cost_usd" in data else 0.0,
        _num(data.get("avg_steps")) if "avg_steps" in data else 0.0,
        None,
        source,
    )


def _rel(cand: float | None, base: float | None) -> float:
    if base is None or cand is None or base <= 0:
        return 0.0
    return (cand - base) / base


def regression_guard(
    base: Any,
    cand: Any,
    *,
    max_pass_rate_drop: float = 0.05,
    max_cost_rise: float = 0.15,
    max_step_rise: float = 0.20,
) -> GuardResult:
    """trainerd's RegressionGuard.Compare (module docstring for the exact rule).

    ``base`` and ``cand`` are anything :func:`guard_metrics` reads: mappings with
    pass_rate / avg_cost_usd / avg_steps, go-code's baseline.json (parsed or a path), a
    one-run trials frame, or a one-run Runs.
    """
    b, c = guard_metrics(base), guard_metrics(cand)
    acc = c.pass_rate - b.pass_rate
    cost = _rel(c.avg_cost_usd, b.avg_cost_usd)
    step = _rel(c.avg_steps, b.avg_steps)
    reasons: list[str] = []
    revert = acc < -max_pass_rate_drop - TOL
    cost_flag = cost > max_cost_rise + TOL
    step_flag = step > max_step_rise + TOL
    if revert:
        reasons.append(
            f"pass rate dropped {100 * -acc:.1f} pts ({100 * b.pass_rate:.1f}% -> "
            f"{100 * c.pass_rate:.1f}%), "
            f"more than {100 * max_pass_rate_drop:g} pts"
        )
    if cost_flag:
        reasons.append(
            f"cost rose {100 * cost:.1f}% (${b.avg_cost_usd:.4f} -> ${c.avg_cost_usd:.4f}), "
            f"more than {100 * max_cost_rise:g}%"
        )
    if step_flag:
        reasons.append(
            f"steps rose {100 * step:.1f}% ({b.avg_steps:.1f} -> {c.avg_steps:.1f}), "
            f"more than {100 * max_step_rise:g}%"
        )
    decision = REVERT if revert else FLAG if (cost_flag or step_flag) else MERGE
    if decision == MERGE:
        reasons.append("no regression detected")
    if b.avg_cost_usd is None or c.avg_cost_usd is None:
        reasons.append("cost not compared: unknown on at least one side (delta taken as 0)")
    elif b.avg_cost_usd <= 0:
        reasons.append("cost not compared: baseline cost is 0 (delta taken as 0)")
    if b.avg_steps is None or c.avg_steps is None:
        reasons.append("steps not compared: unknown on at least one side (delta taken as 0)")
    elif b.avg_steps <= 0:
        reasons.append("steps not compared: baseline steps are 0 (delta taken as 0)")
    return GuardResult(
        decision,
        float(acc),
        float(cost),
        float(step),
        reasons,
        b,
        c,
        {
            "max_pass_rate_drop": max_pass_rate_drop,
            "max_cost_rise": max_cost_rise,
            "max_step_rise": max_step_rise,
        },
    )
