"""The public names of api-contract.md exist after a plain ``import evalkit``."""

from __future__ import annotations

import evalkit
from tests.conftest import SKILLSBENCH_JOB


def test_contract_names() -> None:
    assert callable(evalkit.load)
    for name in ("summarize", "paired", "pass_at_k", "pass_hat_k"):
        assert callable(getattr(evalkit.stats, name)), name
    for name in ("compare", "evidence_bundle", "ship_gate", "regression_guard"):
        assert callable(getattr(evalkit.compare, name)), name


def test_runs_frames_and_required_columns() -> None:
    runs = evalkit.load(SKILLSBENCH_JOB, progress=False)
    for frame, cols in {
        "jobs": "job_id job_name job_dir state started_at finished_at n_trials_declared n_trials_found",
        "steps": "trial_id step_index step_id source message timestamp prompt_tokens completion_tokens cached_tokens cost_usd",
        "tool_calls": "trial_id step_index call_index function_name arguments command observation is_error",
        "findings": "trial_id detector step_start step_end severity evidence rule_version",
        "load_errors": "path level error_type message",
    }.items():
        df = getattr(runs, frame)
        assert set(cols.split()) <= set(df.columns), frame


def test_findings_provider_is_registered_by_import_evalkit() -> None:
    from evalkit.load import runs as runs_mod

    assert runs_mod._findings_provider is evalkit.patterns.findings_provider
    assert callable(evalkit.patterns.detect)


def test_second_round_many_runs_names() -> None:
    import polars as pl

    for name in ("leaderboard", "flaky_tasks", "noise_floor"):
        assert callable(getattr(evalkit.stats, name)), name
    trials = pl.DataFrame(
        {
            "run": [r for r in ("a", "b") for _ in range(12)],
            "task_name": [f"t{i % 6}" for i in range(24)],
            "reward": [float(i % 3 == 0) for i in range(24)],
        }
    )
    lb = evalkit.stats.leaderboard(trials, by="run", metric="pass_rate", draws=200)
    cols = "run score ci_low ci_high rank rank_low rank_high tier p_rank_1 n_tasks p_frontier"
    assert set(cols.split()) <= set(lb.columns)
    ft = evalkit.stats.flaky_tasks(trials, by="run")
    assert {"task_name", "flaky"} <= set(ft.columns) and ft["flaky"].dtype == pl.Boolean
    assert 0.0 <= evalkit.stats.noise_floor(trials, "a") <= 1.0
