"""Shared fixtures for evalkit.stats tests: small synthetic trial frames."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest


def make_trials(
    runs: dict[str, float],
    n_tasks: int,
    attempts: int,
    *,
    seed: int = 0,
    shared: bool = True,
) -> pl.DataFrame:
    """Binary trials: task i has rate p_i ~ Beta(0.5, 0.5) shifted by each run's offset."""
    rng = np.random.default_rng(seed)
    base = rng.beta(0.5, 0.5, size=n_tasks)
    rows = []
    for run, shift in runs.items():
        p = base if shared else rng.beta(0.5, 0.5, size=n_tasks)
        p = np.clip(p + shift * (1 - p), 0, 1)
        for t in range(n_tasks):
            for a in range(attempts):
                rows.append(
                    {
                        "run": run,
                        "task_name": f"task-{t:03d}",
                        "attempt": a + 1,
                        "reward": float(rng.random() < p[t]),
                    }
                )
    return pl.DataFrame(rows)


@pytest.fixture
def trials_k5() -> pl.DataFrame:
    return make_trials({"A": 0.0, "B": 0.3}, n_tasks=30, attempts=5, seed=1)


@pytest.fixture
def trials_k1() -> pl.DataFrame:
    return make_trials({"A": 0.0, "B": 0.3}, n_tasks=40, attempts=1, seed=2)


@pytest.fixture
def trials_factory():
    """The :func:`make_trials` helper, for tests that need their own frames."""
    return make_trials
