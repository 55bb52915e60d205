"""Lime's acceptance rules -> decision, and compare.json on Lime's own example trials."""

from __future__ import annotations

import json

import polars as pl
import pytest

from evalkit.compare import compare, promotion_decision
from evalkit.compare.gates import DONT_SHIP, HOLD, SHIP
from evalkit.compare.json_output import DECISIONS
from tests.conftest import FIXTURES

LIME = FIXTURES / "lime"


def decide(**kw):
    base = {
        "n_paired": 20,
        "mean_reward_delta": 0.10,
        "timeout_rate_delta": 0.0,
        "evidence_delta": 0.0,
        "evidence_missing": 0,
        "min_attempts": 1,
        "gate_verdict": SHIP,
        "guard_decision": "merge",
    }
    base.update(kw)
    return promotion_decision(**base)


def test_vocabulary_is_limes_schema_enum():
    schema = json.loads((LIME / "qc-benchmark.schema.json").read_text())
    assert tuple(schema["properties"]["decision"]["properties"]["outcome"]["enum"]) == DECISIONS


@pytest.mark.parametrize(
    "kw,expected",
    [
        ({}, "promote"),
        ({"n_paired": 0}, "blocked"),
        ({"mean_reward_delta": None}, "blocked"),
        ({"gate_verdict": DONT_SHIP}, "revert"),
        ({"guard_decision": "revert"}, "revert"),
        # under 2 points with one attempt: more trials first (even when negative)
        ({"mean_reward_delta": 0.019, "gate_verdict": HOLD}, "hold"),
        ({"mean_reward_delta": -0.019}, "hold"),
        ({"mean_reward_delta": 0.02}, "promote"),  # exactly 2 points is not under
        # with repeated trials a small delta is judged on its own
        ({"mean_reward_delta": 0.01, "min_attempts": 3}, "promote"),
        ({"mean_reward_delta": -0.05}, "revert"),
        ({"mean_reward_delta": -0.01, "min_attempts": 3}, "revert"),
        ({"evidence_delta": -0.05}, "needs-review"),
        ({"evidence_missing": 3}, "needs-review"),
        ({"evidence_missing": 3, "require_evidence": False}, "promote"),
        ({"mean_reward_delta": 0.0, "min_attempts": 3}, "hold"),
        ({"timeout_rate_delta": 0.01}, "hold"),
        ({"gate_verdict": HOLD}, "hold"),
        ({"cost_per_pass_b": 0.5, "cost_per_pass_budget": 0.4}, "hold"),
        ({"cost_per_pass_b": 0.4, "cost_per_pass_budget": 0.4}, "promote"),
        ({"cost_per_pass_b": None, "cost_per_pass_budget": 0.4}, "hold"),
        ({"guard_decision": "flag"}, "promote-with-monitoring"),
        # priorities: revert beats needs-review and hold; needs-review beats a gate hold
        ({"gate_verdict": DONT_SHIP, "evidence_missing": 2}, "revert"),
        ({"evidence_missing": 2, "gate_verdict": HOLD}, "needs-review"),
        ({"timeout_rate_delta": 0.1, "guard_decision": "flag"}, "hold"),
    ],
)
def test_decision_rules(kw, expected):
    decision, reasons = decide(**kw)
    assert decision == expected
    assert decision in DECISIONS and reasons


def test_reasons_list_every_rule_that_fired():
    _, reasons = decide(mean_reward_delta=0.0, timeout_rate_delta=0.2, gate_verdict=HOLD)
    assert any("more trials or pass@k" in r for r in reasons)
    assert any("timeout rate rose" in r for r in reasons)
    assert any("ship gate" in r for r in reasons)


def lime_trials() -> pl.DataFrame:
    ex = json.loads((LIME / "lime-benchmark-experiment.json").read_text())
    roles = {c["id"]: c["role"] for c in ex["configurations"]}
    return pl.DataFrame(
        [
            {
                "run": roles[t["configuration_id"]],
                "job_name": t["job_ref"],
                "trial_id": t["trial_id"],
                "task_name": t["task_id"],
                "attempt": t["attempt"],
                "reward": float(t["reward"]),
                "outcome": "pass" if t["status"] == "passed" else "fail",
                "cost_usd": t["cost"]["cost_usd"],
                "duration_s": t["duration_ms"] / 1000,
                "evidence_complete": True,
            }
            for t in ex["trials"]
        ]
    )


def test_limes_example_trials():
    """Lime's public example (one task, one attempt each; both passed; cost 0.42 -> 0.39)
    decided "promote-with-monitoring"; evalkit asks for more trials first."""
    c = compare(lime_trials(), "baseline", "candidate")
    j = c.to_json()
    json.dumps(j, allow_nan=False)
    assert j["pairedTasks"] == 1
    assert j["meanRewardDelta"] == 0.0
    assert j["costPerPassDelta"] == pytest.approx(0.39 - 0.42)
    assert j["durationSecondsDelta"] == pytest.approx(98 - 120)
    assert j["evidenceCompletenessDelta"] == 0.0 and j["timeoutRateDelta"] == 0.0
    assert j["p0QcGateRegressionCount"] == 0
    assert j["noise"]["needsMoreTrials"] is True
    assert "pass@k" in j["noise"]["message"]
    assert j["decision"] == "hold"
    assert j["decision"] in DECISIONS
    assert j["buckets"]["both_pass"] == ["tool-approval-sandbox-boundary"]
    for key in (
        "meanRewardDelta",
        "timeoutRateDelta",
        "evidenceCompletenessDelta",
        "p0QcGateRegressionCount",
        "costPerPassDelta",
        "decision",
        "passRateDelta",
        "fixed",
        "broken",
        "onlyInA",
        "onlyInB",
        "gates",
    ):
        assert key in j
    assert j["baseline"]["label"] == "baseline" and j["candidate"]["jobs"] == [
        "jobs/lime-runtime-candidate-feedback-v2"
    ]


def test_budget_and_evidence_options():
    c = compare(lime_trials(), "baseline", "candidate")
    assert c.to_json(cost_per_pass_budget=0.3)["decisionReasons"][-2].startswith("cost per pass")
    t = lime_trials().with_columns(
        pl.when(pl.col("run") == "candidate").then(False).otherwise(True).alias("evidence_complete")
    )
    j = compare(t, "baseline", "candidate").to_json()
    assert j["evidenceCompletenessDelta"] == -1.0
    assert any("evidence completeness fell" in r for r in j["decisionReasons"])


def test_pass_rate_delta_has_mcnemar_with_partial_credit() -> None:
    import evalkit as ek
    from tests.conftest import FIXTURES

    runs = ek.load(FIXTURES / "harbor-edges" / "partial-credit", run="job", cache=False)
    block = ek.compare.compare(runs, "run-a", "run-b").to_json()["passRateDelta"]
    assert block["mcnemarExactP"] is not None
