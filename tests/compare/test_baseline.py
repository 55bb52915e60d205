"""compare.against_baseline: N runs vs one baseline, adjusted p-values, excluded tasks."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from statsmodels.stats.multitest import multipletests

import evalkit
from evalkit.compare import against_baseline


def trials(passes: dict[str, set[int]], n_tasks: int = 60) -> pl.DataFrame:
    return pl.DataFrame(
        [
            {"run": run, "task_name": f"t{t:02d}", "reward": float(t in passed)}
            for run, passed in passes.items()
            for t in range(n_tasks)
        ]
    )


def test_one_row_per_candidate_with_known_fixed_and_broken() -> None:
    base = set(range(30))
    df = trials(
        {
            "base": base,
            "same": base,
            "better": base | set(range(30, 50)),  # fixes 20
            "worse": set(range(10)),  # breaks 20
        }
    )
    tab = against_baseline(df, "base")
    assert tab["run"].to_list() == ["better", "same", "worse"]
    row = {r["run"]: r for r in tab.iter_rows(named=True)}
    assert (row["better"]["fixed"], row["better"]["broken"]) == (20, 0)
    assert (row["worse"]["fixed"], row["worse"]["broken"]) == (0, 20)
    assert row["better"]["delta"] == pytest.approx(20 / 60)
    assert row["better"]["ci_low"] > 0 > row["worse"]["ci_high"]
    assert row["better"]["verdict"] == evalkit.compare.SHIP
    assert row["worse"]["verdict"] == evalkit.compare.DONT_SHIP
    assert row["same"]["delta"] == 0
    p = tab["p_value"].to_numpy()
    np.testing.assert_allclose(tab["p_adjusted"].to_numpy(), multipletests(p, method="holm")[1])
    bh = against_baseline(df, "base", adjust="bh")
    np.testing.assert_allclose(bh["p_adjusted"].to_numpy(), multipletests(p, method="fdr_bh")[1])
    assert set(tab["adjustment"]) == {"holm"}


def test_excluded_tasks_leave_every_comparison() -> None:
    df = trials({"base": set(range(30)), "b": set(range(35))})
    full = against_baseline(df, "base")
    cut = against_baseline(df, "base", exclude_tasks=["t30", "t31", "nope"])
    assert full["fixed"][0] == 5 and cut["fixed"][0] == 3
    assert cut["n_tasks"][0] == 58 and cut["n_tasks_excluded"][0] == 2
    cmp = evalkit.compare.compare(df, "base", "b", exclude_tasks=["t30"])
    assert cmp.to_json(include_config_diff=False)["excludedTasks"] == ["t30"]
    with pytest.raises(TypeError, match="list of task names"):
        evalkit.compare.compare(df, "base", "b", exclude_tasks="t30")


def test_errors() -> None:
    df = trials({"base": {1}})
    with pytest.raises(ValueError, match="no run to compare"):
        against_baseline(df, "base")
    with pytest.raises(ValueError, match="adjust must be"):
        against_baseline(df, "base", adjust="bonferroni")
