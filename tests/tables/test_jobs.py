"""evalkit.tables.jobs.jobs_table: one row per job with outcome counts, rates over finished
trials, unknown-is-not-zero sums and error kinds; hand-built frames plus the bundled real
job checked against its result.json files read with the json module."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest

import evalkit
from evalkit.tables.jobs import OUTCOME_COUNTS, jobs_table

ROOT = Path(__file__).resolve().parents[2]
BASELINE = ROOT / "runs" / "scripted-baseline"


def t0(hour: int) -> datetime:
    return datetime(2026, 5, 1, hour, tzinfo=UTC)


def jobs() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "job_id": ["j1", "j2", "j3", "j4"],
            "job_name": ["late", "empty", "early", "undated"],
            "state": ["complete", "complete", "running", "complete"],
            "run": ["r", "r", "r", "s"],
            "agent_name": ["cc", "cc", "cc", "oracle"],
            "model_name": ["m", "m", "m", None],
            "started_at": [t0(12), t0(11), t0(9), None],
            "n_trials_declared": [6, 2, 2, 1],
        }
    )


def trials() -> pl.DataFrame:
    rows = [
        # job, task, outcome, reward, duration, in, cache, out, not_recorded, steps, cost, error_kind
        ("j1", "a", "pass", 1.0, 10.0, 100, 10, 5, False, 3, 0.5, "none"),
        ("j1", "a", "fail", 0.0, 20.0, 200, 20, 6, False, None, None, "none"),
        ("j1", "b", "partial", 0.5, None, 0, 0, 0, True, 2, 0.25, "none"),
        ("j1", "c", "error", None, 5.0, None, None, None, False, None, None, "verifier"),
        ("j1", "c", "timeout", 0.0, 30.0, 50, 0, 1, False, 4, None, "agent"),
        ("j1", "c", "incomplete", None, None, None, None, None, False, None, None, "verifier"),
        ("j3", "a", "incomplete", None, None, None, None, None, False, None, None, "none"),
        ("j3", "b", "incomplete", 1.0, 1.0, None, None, None, False, None, None, "none"),
        ("j4", "a", "no-reward", None, 2.0, 0, 0, 0, False, 0, 0.0, "none"),
    ]
    cols = ["job_id", "task_name", "outcome", "reward", "duration_s", "n_input_tokens",
            "n_cache_tokens", "n_output_tokens", "tokens_not_recorded", "n_steps", "cost_usd",
            "error_kind"]  # fmt: skip
    return pl.DataFrame(rows, schema=cols, orient="row")


def test_columns_and_order() -> None:
    out = jobs_table(jobs(), trials())
    assert "job_id" not in out.columns
    assert out.columns[:8] == ["job_name", "state", "run", "agent_name", "model_name",
                               "started_at", "n_declared", "n_trials"]  # fmt: skip
    for c in (
        *OUTCOME_COUNTS,
        "pass_rate",
        "mean_reward",
        "compute_s",
        "cost_known",
        "error_kinds",
    ):
        assert c in out.columns
    # by start time, a job without one last
    assert out["job_name"].to_list() == ["early", "empty", "late", "undated"]


def test_figures_of_a_mixed_job() -> None:
    out = {r["job_name"]: r for r in jobs_table(jobs(), trials()).to_dicts()}
    j = out["late"]
    assert (j["n_declared"], j["n_trials"], j["tasks"], j["attempts_max"]) == (6, 6, 3, 3)
    assert [j[o] for o in OUTCOME_COUNTS] == [1, 1, 1, 1, 1, 0, 1]
    # 5 finished trials (one incomplete): 1 pass; rewards 1, 0, .5, null -> 0, 0
    assert j["pass_rate"] == pytest.approx(1 / 5)
    assert j["mean_reward"] == pytest.approx(1.5 / 5)
    assert j["compute_s"] == pytest.approx(65.0)  # unknown durations are skipped
    # the trial whose tokens were not recorded does not add its 0s
    assert (j["n_input_tokens"], j["n_cache_tokens"], j["n_output_tokens"]) == (350, 30, 12)
    assert j["n_steps"] == 9
    assert j["cost_usd"] == pytest.approx(0.75) and j["cost_known"] == 2
    assert j["error_kinds"] == "agent:1, verifier:2"


def test_job_without_trials_and_job_without_finished_trials() -> None:
    out = {r["job_name"]: r for r in jobs_table(jobs(), trials()).to_dicts()}
    e = out["empty"]
    assert e["n_trials"] == 0 and all(e[o] == 0 for o in OUTCOME_COUNTS)
    assert e["error_kinds"] == ""
    assert e["pass_rate"] is None and e["n_input_tokens"] is None and e["cost_usd"] is None
    r = out["early"]
    assert r["incomplete"] == 2 and r["n_trials"] == 2
    assert r["pass_rate"] is None and r["mean_reward"] is None  # nothing finished
    assert r["n_input_tokens"] is None and r["cost_usd"] is None and r["cost_known"] == 0
    o = out["undated"]
    # recorded zeros are known values: 0, not unknown
    assert (o["n_input_tokens"], o["cost_usd"], o["n_steps"]) == (0, 0.0, 0)
    assert o["pass_rate"] == 0.0 and o["no-reward"] == 1


def test_real_job_against_its_result_files() -> None:
    results = [json.loads(p.read_text()) for p in sorted(BASELINE.glob("*/result.json"))]
    runs = evalkit.load(BASELINE, progress=False)
    row = jobs_table(runs.jobs, runs.trials).row(0, named=True)
    per_task: dict[str, int] = {}
    for r in results:
        per_task[r["task_name"]] = per_task.get(r["task_name"], 0) + 1
    assert row["job_name"] == "scripted-baseline"
    assert row["n_trials"] == len(results)
    assert row["tasks"] == len(per_task) and row["attempts_max"] == max(per_task.values())
    rewards = [
        ((r.get("verifier_result") or {}).get("rewards") or {}).get("reward") for r in results
    ]
    assert row["pass"] == sum(x is not None and x >= 1 for x in rewards)
    assert row["pass_rate"] == pytest.approx(row["pass"] / len(results))
    assert row["mean_reward"] == pytest.approx(sum(x or 0.0 for x in rewards) / len(results))
    for col in ("n_input_tokens", "n_cache_tokens", "n_output_tokens"):
        assert row[col] == sum(r["agent_result"][col] for r in results), col
    assert row["cost_usd"] == pytest.approx(sum(r["agent_result"]["cost_usd"] for r in results))
    assert row["cost_known"] == len(results)
    timeouts = sum(
        (r.get("exception_info") or {}).get("exception_type") == "AgentTimeoutError"
        for r in results
    )
    assert row["timeout"] == timeouts == 2
    assert row["error_kinds"] == "agent:2"  # the two agent timeouts
