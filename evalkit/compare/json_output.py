"""compare.json: the comparison fields, the gates, and a promotion decision with its reasons.

The field names and decision vocabulary follow Lime Agent-QC (limecloud/agentqc,
docs/en/authoring/benchmark-and-hill-climbing.md), which asks compare.json
for at least meanRewardDelta, timeoutRateDelta, evidenceCompletenessDelta,
p0QcGateRegressionCount, costPerPassDelta and a decision in
{promote, promote-with-monitoring, hold, revert, blocked, needs-review}, with the acceptance
rules: the candidate beats the baseline on reward; timeout rate must not rise; evidence
completeness must not fall; P0 regressions = 0; cost per pass within budget; "if the delta is
below two percentage points ... run repeated trials or pass@k before deciding"; missing
evidence is needs-review, never pass.

Every delta is B - A over the comparable tasks (both runs, finished attempts, unchanged
task), task-weighted (each task's per-attempt rate, then the mean over tasks). Rates are
fractions (0.02 = 2 points). Definitions:

* meanRewardDelta: mean reward (null reward = 0);
* passRateDelta: share of attempts with reward >= 1, with the CI and p-value of
  ``evalkit.stats.paired`` on the pass indicator (and exact McNemar p for K = 1);
* timeoutRateDelta: share of attempts that timed out (outcome timeout or a *Timeout*
  exception, even when the verifier still passed the trial);
* evidenceCompletenessDelta: share of attempts with trials.evidence_complete;
* costPerPassDelta: total cost / passing attempts; null when a cost is unknown on either
  side or a side has no pass (never 0 for unknown);
* p0QcGateRegressionCount: Harbor has no P0 QC gates; evalkit counts the broken tasks (A
  passed, B did not; per-task strict majority), the "regression scenarios".

Decision (first rule that applies; ``decisionReasons`` lists every rule that fired):

1. blocked: no comparable task; hold: no meaningful comparison (fewer comparable tasks
   than ``min_shared_tasks``, or a pass-rate interval that cannot tell a large drop from a
   large gain: ``evalkit.compare.headline.evidence``);
2. revert: ship gate "Don't ship" (breaks over tau or net < 0), or the regression guard "revert"
   (pass rate down more than 5 points);
3. hold: |meanRewardDelta| < 0.02 with one attempt per task on a side: more trials or
   pass@k are needed before deciding;
4. revert: meanRewardDelta < 0;
5. needs-review: evidence completeness fell, or (``require_evidence``, default) some paired
   trial lacks complete evidence;
6. hold: no reward improvement (delta 0), timeout rate rose, cost per pass over
   ``cost_per_pass_budget`` (USD, when given), or the ship gate holds (not enough evidence);
7. promote-with-monitoring: the regression guard flags a cost (+15 %) or step (+20 %) rise;
8. promote.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import polars as pl

from evalkit.compare.gates import DONT_SHIP, HOLD
from evalkit.compare.headline import LARGE_EFFECT, MIN_SHARED_TASKS

if TYPE_CHECKING:
    from evalkit.compare.core import Comparison
    from evalkit.compare.gates import GateResult
    from evalkit.compare.guard import GuardResult
    from evalkit.compare.headline import Evidence

TOL = 1e-9
DECISIONS = ("promote", "promote-with-monitoring", "hold", "revert", "blocked", "needs-review")
NOISE_POINTS = 0.02


def _get(obj: Any, name: str) -> Any:
    v = obj.get(name) if isinstance(obj, Mapping) else getattr(obj, name, None)
    if isinstance(v, float) and v != v:
        return None
    return v.item() if hasattr(v, "item") else v


def _delta(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else b - a


def promotion_decision(
    *,
    n_paired: int,
    mean_reward_delta: float | None,
    timeout_rate_delta: float | None,
    evidence_delta: float | None,
    evidence_missing: int,
    min_attempts: int | None,
    gate_verdict: str,
    guard_decision: str,
    cost_per_pass_b: float | None = None,
    cost_per_pass_budget: float | None = None,
    require_evidence: bool = True,
    noise_points: float = NOISE_POINTS,
    thin_evidence: list[str] | None = None,
) -> tuple[str, list[str]]:
    """The decision and its reasons (module docstring for the rule order)."""
    fired: list[tuple[int, str, str]] = []  # (priority, decision, reason)
    if n_paired == 0 or mean_reward_delta is None:
        return "blocked", [
            "no comparable task: nothing both runs finished on the same task version",
            *(thin_evidence or []),
        ]
    for why in thin_evidence or []:
        fired.append((1, "hold", f"no meaningful comparison: {why}"))
    if gate_verdict == DONT_SHIP:
        fired.append((2, "revert", "ship gate: Don't ship"))
    if guard_decision == "revert":
        fired.append((2, "revert", "regression guard: revert (pass rate fell more than 5 points)"))
    mrd = mean_reward_delta
    if abs(mrd) < noise_points - TOL and (min_attempts or 0) < 2:
        fired.append(
            (
                3,
                "hold",
                f"meanRewardDelta {100 * mrd:+.1f} points is under {100 * noise_points:g} points "
                "with one attempt per task: run more trials or pass@k before deciding",
            )
        )
    if mrd < -TOL:
        fired.append((4, "revert", f"mean reward fell {100 * mrd:+.1f} points"))
    fired += _evidence_reasons(evidence_delta, evidence_missing, require_evidence)
    fired += _hold_reasons(
        mrd, timeout_rate_delta, cost_per_pass_b, cost_per_pass_budget, gate_verdict
    )
    if guard_decision == "flag":
        fired.append((7, "promote-with-monitoring", "regression guard: flag (cost or steps rose)"))
    if not fired:
        return "promote", ["reward improved, no regression, enough evidence (ship gate: Ship it)"]
    fired.sort(key=lambda x: x[0])
    return fired[0][1], [r for _, _, r in fired]


def _evidence_reasons(
    evidence_delta: float | None, evidence_missing: int, require_evidence: bool
) -> list[tuple[int, str, str]]:
    """The needs-review rules: evidence completeness fell, or paired trials lack evidence."""
    fired: list[tuple[int, str, str]] = []
    if evidence_delta is not None and evidence_delta < -TOL:
        fired.append(
            (5, "needs-review", f"evidence completeness fell {100 * evidence_delta:+.1f} points")
        )
    if require_evidence and evidence_missing > 0:
        fired.append(
            (
                5,
                "needs-review",
                f"{evidence_missing} paired trial(s) lack complete evidence (trajectory, reward, "
                "verifier output, artifacts manifest): missing evidence is never a pass",
            )
        )
    return fired


def _hold_reasons(
    mrd: float,
    timeout_rate_delta: float | None,
    cost_per_pass_b: float | None,
    cost_per_pass_budget: float | None,
    gate_verdict: str,
) -> list[tuple[int, str, str]]:
    """The priority-6 hold rules: no improvement, timeouts rose, cost budget, ship gate Hold."""
    fired: list[tuple[int, str, str]] = []
    if abs(mrd) <= TOL:
        fired.append((6, "hold", "no mean-reward improvement"))
    if timeout_rate_delta is not None and timeout_rate_delta > TOL:
        fired.append((6, "hold", f"timeout rate rose {100 * timeout_rate_delta:+.1f} points"))
    if cost_per_pass_budget is not None:
        if cost_per_pass_b is None:
            fired.append((6, "hold", "cost per pass unknown: cannot check the budget"))
        elif cost_per_pass_b > cost_per_pass_budget + TOL:
            fired.append(
                (
                    6,
                    "hold",
                    f"cost per pass ${cost_per_pass_b:.4f} over budget ${cost_per_pass_budget:.4f}",
                )
            )
    if gate_verdict == HOLD:
        fired.append((6, "hold", "ship gate: Hold (not enough evidence)"))
    return fired


def _stats_block(cmp: Comparison, attr: str) -> tuple[dict[str, Any] | None, str | None]:
    try:
        s = getattr(cmp, attr)
    except RuntimeError as e:  # evalkit.stats not available
        return None, str(e)
    if s is None:
        return None, None
    return {
        "nTasks": _get(s, "n_tasks"),
        "meanA": _get(s, "mean_a"),
        "meanB": _get(s, "mean_b"),
        "value": _get(s, "diff"),
        "ciLow": _get(s, "ci_low"),
        "ciHigh": _get(s, "ci_high"),
        "confidence": cmp.options.get("confidence", 0.95),
        "pValue": _get(s, "p_value"),
        "method": _get(s, "method"),
        "mcnemarExactP": _get(s, "mcnemar_exact_p"),
        "mcnemarMidP": _get(s, "mcnemar_midp"),
    }, None


def _side(cmp: Comparison, s: str, paired: dict[str, Any], own: dict[str, Any]) -> dict[str, Any]:
    t = cmp.trials.filter(pl.col("side") == s.upper())
    jobs = sorted(t["job_name"].drop_nulls().unique().to_list())
    return {
        "label": cmp.a if s == "a" else cmp.b,
        "kind": cmp.a_kind if s == "a" else cmp.b_kind,
        "jobs": jobs,
        "paired": paired,
        "allTasks": own,
    }


def _integrity(cmp: Comparison) -> dict[str, Any]:
    """Per side, over the trials compare kept: the integrity counts (evalkit.patterns.integrity)."""
    from evalkit.patterns.integrity import integrity_counts, integrity_flags

    flags = integrity_flags(cmp.runs)
    sides = {"trials": cmp.trials.select("trial_id", "side").unique("trial_id")}
    counts = integrity_counts(sides, by="side", flags=flags)
    out: dict[str, Any] = {}
    for key, side in (("baseline", "A"), ("candidate", "B")):
        row = counts.filter(pl.col("side") == side)
        r = row.row(0, named=True) if row.height else {}
        out[key] = {
            "nPasses": r.get("n_passes", 0),
            "nWithToolCalls": r.get("n_with_calls", 0),
            "tamperedPasses": r.get("tampered_passes", 0),
            "tamperedPassesCi": [r.get("tampered_passes_low"), r.get("tampered_passes_high")],
            "greenFails": r.get("green_fails", 0),
            "passesWithoutVerification": r.get("passes_unverified", 0),
        }
    return out


def compare_json(
    cmp: Comparison,
    *,
    require_evidence: bool = True,
    cost_per_pass_budget: float | None = None,
    noise_points: float = NOISE_POINTS,
    include_config_diff: bool = True,
    min_shared_tasks: int = MIN_SHARED_TASKS,
    large_effect: float = LARGE_EFFECT,
    include_integrity: bool = True,
) -> dict[str, Any]:
    """Build compare.json for a :class:`~evalkit.compare.core.Comparison` (module docstring).

    ``include_integrity``: add ``integrity`` (per side: tampered passes, green fails, passes
    without verification; :mod:`evalkit.patterns.integrity`) when the comparison has its
    Runs (this reads the trajectories)."""
    paired = cmp.side_summary(paired=True)
    own = cmp.side_summary(paired=False)
    a, b = paired["a"], paired["b"]
    gate = cmp.gate()
    guard = cmp.regression_guard()
    reward_stats, err1 = _stats_block(cmp, "stats")
    pass_stats, err2 = _stats_block(cmp, "pass_stats")
    min_attempts = _min_attempts(a, b)
    d = _side_deltas(a, b)
    ev = cmp.evidence(min_shared_tasks, large_effect)
    decision, reasons = _decide(
        cmp,
        a,
        b,
        d,
        min_attempts,
        gate.verdict,
        guard.decision,
        ev.reasons,
        cost_per_pass_budget=cost_per_pass_budget,
        require_evidence=require_evidence,
        noise_points=noise_points,
    )
    noise = _noise_block(d["meanRewardDelta"], min_attempts, noise_points)
    return {
        **_header(cmp, paired, own),
        **_delta_fields(a, b, d, reward_stats, pass_stats),
        **_verdict_fields(cmp, ev, gate, guard, noise, decision, reasons),
        **_task_lists(cmp),
        **_optional_blocks(cmp, err1 or err2, include_integrity, include_config_diff),
    }


def _min_attempts(a: dict[str, Any], b: dict[str, Any]) -> int | None:
    """The fewer attempts per task of the two sides (None when neither is known)."""
    mins = [x for x in (a["attempts_min"], b["attempts_min"]) if x is not None]
    return min(mins) if mins else None


def _decide(
    cmp: Comparison,
    a: dict[str, Any],
    b: dict[str, Any],
    d: dict[str, float | None],
    min_attempts: int | None,
    gate_verdict: str,
    guard_decision: str,
    thin_evidence: list[str],
    *,
    cost_per_pass_budget: float | None,
    require_evidence: bool,
    noise_points: float,
) -> tuple[str, list[str]]:
    """The promotion decision and its reasons, from the side deltas, the gates and the evidence."""
    return promotion_decision(
        n_paired=a["n_tasks"],
        mean_reward_delta=d["meanRewardDelta"],
        timeout_rate_delta=d["timeoutRateDelta"],
        evidence_delta=d["evidenceCompletenessDelta"],
        evidence_missing=_paired_trials_without_evidence(cmp),
        min_attempts=min_attempts,
        gate_verdict=gate_verdict,
        guard_decision=guard_decision,
        cost_per_pass_b=b["cost_per_pass"],
        cost_per_pass_budget=cost_per_pass_budget,
        require_evidence=require_evidence,
        noise_points=noise_points,
        thin_evidence=thin_evidence,
    )


def _header(cmp: Comparison, paired: dict[str, Any], own: dict[str, Any]) -> dict[str, Any]:
    """The schema version, both sides and the number of paired tasks."""
    return {
        "schemaVersion": "evalkit.compare/1",
        "baseline": _side(cmp, "a", paired["a"], own["a"]),
        "candidate": _side(cmp, "b", paired["b"], own["b"]),
        "pairedTasks": paired["a"]["n_tasks"],
    }


def _delta_fields(
    a: dict[str, Any],
    b: dict[str, Any],
    d: dict[str, float | None],
    reward_stats: dict[str, Any] | None,
    pass_stats: dict[str, Any] | None,
) -> dict[str, Any]:
    """The B - A deltas, with the paired statistics of reward and pass rate."""
    return {
        "meanRewardDelta": d["meanRewardDelta"],
        "meanRewardDeltaStats": reward_stats,
        "passRateDelta": _pass_rate_block(d["passRate"], pass_stats),
        "timeoutRateDelta": d["timeoutRateDelta"],
        "evidenceCompletenessDelta": d["evidenceCompletenessDelta"],
        "costPerPassDelta": d["costPerPassDelta"],
        "costPerAttemptDelta": _delta(a["cost_per_attempt"], b["cost_per_attempt"]),
        "tokensDelta": _delta(a["tokens"], b["tokens"]),
        "durationSecondsDelta": _delta(a["duration_s"], b["duration_s"]),
        "turnsDelta": _delta(a["turns"], b["turns"]),
    }


def _verdict_fields(
    cmp: Comparison,
    ev: Evidence,
    gate: GateResult,
    guard: GuardResult,
    noise: dict[str, Any],
    decision: str,
    reasons: list[str],
) -> dict[str, Any]:
    """Regressions, headline figures, evidence, noise, the gates, the plan and the decision."""
    return {
        "p0QcGateRegressionCount": len(cmp.broken),
        "headline": [f.to_dict() for f in cmp.figures],
        "evidence": ev.to_dict(),
        "guardNotCompared": guard.not_compared,
        "noise": noise,
        "gates": {"ship": gate.to_dict(), "regressionGuard": guard.to_dict()},
        "plan": cmp.plan.to_dict() if cmp.plan is not None else None,
        "decision": decision,
        "decisionReasons": reasons,
    }


def _optional_blocks(
    cmp: Comparison, stats_error: str | None, include_integrity: bool, include_config_diff: bool
) -> dict[str, Any]:
    """statsUnavailable, integrity and configDiff, each when it applies."""
    out: dict[str, Any] = {}
    if stats_error:
        out["statsUnavailable"] = stats_error
    if include_integrity and cmp.runs is not None and hasattr(cmp.runs, "tool_calls"):
        out["integrity"] = _integrity(cmp)
    if include_config_diff and cmp.runs is not None and hasattr(cmp.runs, "jobs"):
        out["configDiff"] = _config_diff_block(cmp)
    return out


def _side_deltas(a: dict[str, Any], b: dict[str, Any]) -> dict[str, float | None]:
    """B - A of the side figures the decision reads."""
    return {
        "meanRewardDelta": _delta(a["mean_reward"], b["mean_reward"]),
        "passRate": _delta(a["pass_rate"], b["pass_rate"]),
        "timeoutRateDelta": _delta(a["timeout_rate"], b["timeout_rate"]),
        "evidenceCompletenessDelta": _delta(a["evidence_rate"], b["evidence_rate"]),
        "costPerPassDelta": _delta(a["cost_per_pass"], b["cost_per_pass"]),
    }


def _paired_trials_without_evidence(cmp: Comparison) -> int:
    pf = cmp.trials.filter(pl.col("finished") & pl.col("task_name").is_in(cmp.paired_tasks))
    return int((~pf["evidence"]).sum()) if pf.height else 0


def _pass_rate_block(value: float | None, pass_stats: dict[str, Any] | None) -> dict[str, Any]:
    """The pass-rate delta, with the paired statistics (their own value as statsValue)."""
    block: dict[str, Any] = {"value": value}
    if pass_stats is not None:
        block |= {k: v for k, v in pass_stats.items() if k != "value"}
        block["statsValue"] = pass_stats["value"]
    return block


def _noise_block(
    mean_reward_delta: float | None, min_attempts: int | None, noise_points: float
) -> dict[str, Any]:
    """Whether the mean reward delta is under the noise floor, and more trials are needed."""
    below = mean_reward_delta is not None and abs(mean_reward_delta) < noise_points - TOL
    needs_more = below and (min_attempts or 0) < 2
    return {
        "minAttemptsPerTask": min_attempts,
        "belowTwoPoints": below,
        "needsMoreTrials": needs_more,
        "message": (
            "meanRewardDelta is under 2 points with one attempt per task: run more "
            "trials or pass@k before deciding"
            if needs_more
            else None
        ),
    }


def _task_lists(cmp: Comparison) -> dict[str, Any]:
    """Which tasks were fixed, broken, on one side only, not comparable or excluded; the
    buckets and outcome transitions."""
    return {
        "fixed": cmp.fixed,
        "broken": cmp.broken,
        "onlyInA": cmp.only_in_a,
        "onlyInB": cmp.only_in_b,
        "notComparable": cmp.not_comparable,
        "excludedTasks": list(cmp.options.get("exclude_tasks", [])),
        "buckets": cmp.buckets,
        "transitions": [
            {"a": r["outcome_a"], "b": r["outcome_b"], "n": r["n"], "tasks": r["tasks"]}
            for r in cmp.transitions.iter_rows(named=True)
        ],
    }


def _config_diff_block(cmp: Comparison) -> dict[str, Any]:
    try:
        cd = cmp.config_diff()
    except (KeyError, ValueError) as e:
        return {"verdict": None, "error": str(e)}
    return {"verdict": cd.verdict, "variables": cd.variables}
