"""Regrades (stats/regrades.py) on the constructed `harbor job regrade` fixture."""

from __future__ import annotations

import shutil
from pathlib import Path

import polars as pl
import pytest

import evalkit as ek
from evalkit.stats import (
    INSTABILITY_COLUMNS,
    REGRADE_PAIR_COLUMNS,
    proportion_ci,
    regrade_pairs,
    verifier_instability,
)
from tests.conftest import FIXTURES


@pytest.fixture(scope="module")
def trials(tmp_path_factory: pytest.TempPathFactory) -> pl.DataFrame:
    dst = tmp_path_factory.mktemp("regraded") / "regraded"
    shutil.copytree(FIXTURES / "harbor-edges" / "regraded", dst)
    return ek.load(dst, cache=False).trials


def test_each_regrade_pairs_with_its_source_reward(trials: pl.DataFrame) -> None:
    p = regrade_pairs(trials)
    assert p.columns == list(REGRADE_PAIR_COLUMNS)
    rows = {r["task_name"]: r for r in p.iter_rows(named=True)}
    fix, cache, logs = rows["harbor/fix-parser"], rows["harbor/add-cache"], rows["harbor/sort-logs"]
    assert (fix["reward_before"], fix["reward_after"], fix["reward_changed"]) == (1.0, 0.0, True)
    assert (cache["reward_before"], cache["reward_after"], cache["reward_changed"]) == (
        0.0,
        0.0,
        False,
    )
    assert logs["task_changed"] is True and fix["task_changed"] is False
    # the pair's run is the source's; the regrade keeps its own label beside it
    assert set(p["run"]) == {"claude-code__claude-sonnet-4-6__harbor"}
    assert set(p["regrade_run"]) == {"claude-code__claude-sonnet-4-6__harbor__regrade"}
    src = trials.filter(pl.col("trial_name") == "fix-parser__Sr1aaaa")["trial_id"][0]
    assert fix["source_trial_id"] == src


def test_instability_counts_only_changes_on_unchanged_tasks(trials: pl.DataFrame) -> None:
    by_run = verifier_instability(trials, by="run")
    assert by_run.columns == ["run", *INSTABILITY_COLUMNS]
    r = by_run.row(0, named=True)
    assert (r["n_regrades"], r["n_compared"], r["n_unstable"]) == (3, 2, 1)
    assert (r["n_task_changed"], r["n_unpaired"]) == (1, 0)
    assert r["unstable_rate"] == 0.5
    lo, hi = proportion_ci(1, 2)
    assert r["ci_low"] == pytest.approx(float(lo)) and r["ci_high"] == pytest.approx(float(hi))
    by_task = verifier_instability(trials, by="task_name").sort("task_name")
    assert by_task["n_unstable"].to_list() == [0, 1, 0]
    assert by_task["unstable_rate"].to_list() == [0.0, 1.0, None]  # sort-logs: tests changed


def test_a_source_outside_the_frame_is_unpaired_not_stable(trials: pl.DataFrame) -> None:
    only_regrades = trials.filter(pl.col("regrade_of").is_not_null())
    p = regrade_pairs(only_regrades)
    assert p["reward_before"].null_count() == 3 and p["reward_changed"].null_count() == 3
    r = verifier_instability(only_regrades).row(0, named=True)
    assert (r["n_compared"], r["n_unpaired"], r["unstable_rate"]) == (0, 3, None)


def test_no_regrades_gives_an_empty_frame(trials: pl.DataFrame) -> None:
    plain = trials.filter(pl.col("regrade_of").is_null())
    assert regrade_pairs(plain).height == 0
    assert verifier_instability(plain).height == 0
    with pytest.raises(ValueError, match="by"):
        verifier_instability(trials, by="agent_name")


def test_a_source_named_by_its_folder_pairs_too(trials: pl.DataFrame) -> None:
    """A regrade whose source_trial recorded no trial_id falls back to the folder path."""
    src = trials.filter(pl.col("trial_name") == "add-cache__Sr2bbbb").row(0, named=True)
    t = trials.with_columns(
        pl.when(pl.col("regrade_of") == src["result_id"])
        .then(pl.lit(src["trial_dir"]))
        .otherwise(pl.col("regrade_of"))
        .alias("regrade_of")
    )
    row = regrade_pairs(t).filter(pl.col("task_name") == "harbor/add-cache").row(0, named=True)
    assert row["source_trial_id"] == src["trial_id"] and row["reward_before"] == 0.0


def test_pairs_work_on_a_lazy_frame(trials: pl.DataFrame, tmp_path: Path) -> None:
    assert regrade_pairs(trials.lazy()).equals(regrade_pairs(trials))
