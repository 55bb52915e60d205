"""summarize(): the contract columns, conventions, method choice, any-frame input."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.proportion import proportion_confint

from evalkit.stats import SUMMARY_COLUMNS, summarize


def test_contract_columns_in_order(trials_k5: pl.DataFrame) -> None:
    out = summarize(trials_k5)
    assert out.columns[: 1 + len(SUMMARY_COLUMNS)] == ["run", *SUMMARY_COLUMNS]
    assert out["run"].to_list() == ["A", "B"]
    assert out["n_tasks"].to_list() == [30, 30]
    assert out["n_trials"].to_list() == [150, 150]
    assert out["attempts_min"].to_list() == [5, 5] and out["attempts_max"].to_list() == [5, 5]
    assert out["estimand"].to_list() == ["new_tasks", "new_tasks"]
    assert out["ci_method"].to_list() == ["wilson-clustered", "wilson-clustered"]
    for r in out.iter_rows(named=True):
        assert r["ci_low"] <= r["pass_rate"] <= r["ci_high"]
        assert r["pass_rate"] == r["mean_reward"]  # binary rewards


def test_null_reward_is_a_failure_and_valid_only_variants() -> None:
    df = pl.DataFrame(
        {
            "run": ["r"] * 6,
            "task_name": ["a", "a", "b", "b", "c", "c"],
            "reward": [1.0, None, 0.5, 1.0, None, 0.0],
        }
    )
    r = summarize(df).row(0, named=True)
    assert r["n_trials"] == 6 and r["n_tasks"] == 3
    assert r["pass_rate"] == pytest.approx(2 / 6)
    assert r["mean_reward"] == pytest.approx(2.5 / 6)
    assert r["n_trials_valid"] == 4 and r["n_reward_null"] == 2
    assert r["pass_rate_valid"] == pytest.approx(2 / 4)
    assert r["mean_reward_valid"] == pytest.approx(2.5 / 4)
    assert r["reward_binary"] is False
    assert r["reward_ci_method"] == "cluster-t"
    assert r["ci_low"] <= r["pass_rate"] <= r["ci_high"]


def test_nan_reward_counts_like_null() -> None:
    a = pl.DataFrame({"task_name": ["x", "y"], "reward": [1.0, float("nan")]})
    b = pl.DataFrame({"task_name": ["x", "y"], "reward": [1.0, None]})
    assert summarize(a, by=None).equals(summarize(b, by=None))


def test_one_attempt_binary_is_wilson_matching_statsmodels() -> None:
    df = pl.DataFrame(
        {
            "run": ["r"] * 40,
            "task_name": [f"t{i}" for i in range(40)],
            "reward": [1.0] * 17 + [0.0] * 23,
        }
    )
    r = summarize(df).row(0, named=True)
    lo, hi = proportion_confint(17, 40, method="wilson")
    assert r["ci_method"] == "wilson"
    assert abs(r["ci_low"] - lo) < 1e-9 and abs(r["ci_high"] - hi) < 1e-9
    r99 = summarize(df, confidence=0.99).row(0, named=True)
    lo99, hi99 = proportion_confint(17, 40, alpha=0.01, method="wilson")
    assert abs(r99["ci_low"] - lo99) < 1e-9 and abs(r99["ci_high"] - hi99) < 1e-9
    cp = summarize(df, method="clopper-pearson").row(0, named=True)
    blo, bhi = proportion_confint(17, 40, method="beta")
    assert cp["ci_method"] == "clopper-pearson"
    assert abs(cp["ci_low"] - blo) < 1e-9 and abs(cp["ci_high"] - bhi) < 1e-9
    jf = summarize(df, method="jeffreys").row(0, named=True)
    jlo, jhi = proportion_confint(17, 40, method="jeffreys")
    assert abs(jf["ci_low"] - jlo) < 1e-9 and abs(jf["ci_high"] - jhi) < 1e-9


def test_few_passes_switch_to_exact_mid_p() -> None:
    df = pl.DataFrame({"task_name": [f"t{i}" for i in range(10)], "reward": [1.0] + [0.0] * 9})
    r = summarize(df, by=None).row(0, named=True)
    assert r["ci_method"] == "mid-p"
    assert r["ci_low"] > 0 and r["ci_high"] > 0.35


def test_by_none_and_by_list(trials_k5: pl.DataFrame) -> None:
    whole = summarize(trials_k5, by=None)
    assert whole.columns[: len(SUMMARY_COLUMNS)] == SUMMARY_COLUMNS
    assert whole.height == 1 and whole["n_trials"][0] == 300
    assert whole["n_tasks"][0] == 30  # same task names in both runs: one task, 10 attempts
    split = summarize(
        trials_k5.with_columns((pl.col("attempt") <= 2).alias("early")), by=["run", "early"]
    )
    assert split.columns[:2] == ["run", "early"] and split.height == 4
    assert split.filter(pl.col("early"))["attempts_max"].to_list() == [2, 2]


def test_estimand_same_tasks_is_narrower_and_labelled(trials_k5: pl.DataFrame) -> None:
    e1 = summarize(trials_k5)
    e2 = summarize(trials_k5, estimand="same_tasks")
    assert e2["estimand"].to_list() == ["same_tasks"] * 2
    assert e2["ci_method"].to_list() == ["wilson-rerun"] * 2
    w1 = (e1["ci_high"] - e1["ci_low"]).to_numpy()
    w2 = (e2["ci_high"] - e2["ci_low"]).to_numpy()
    assert np.all(w2 < w1)
    assert np.all(e1["deff"].to_numpy() > 1)


def test_fractional_rewards_get_a_cluster_t_reward_interval() -> None:
    rng = np.random.default_rng(4)
    n = 20
    df = pl.DataFrame(
        {
            "task_name": np.repeat([f"t{i}" for i in range(n)], 3),
            "reward": np.clip(np.repeat(rng.random(n), 3) + rng.normal(0, 0.1, 3 * n), 0, 1),
        }
    )
    r = summarize(df, by=None).row(0, named=True)
    assert r["reward_ci_method"] == "cluster-t"
    assert r["reward_ci_low"] < r["mean_reward"] < r["reward_ci_high"]
    b = summarize(df, by=None, reward_method="cluster-bootstrap", seed=3, n_resamples=2000).row(
        0, named=True
    )
    assert b["reward_ci_method"] == "cluster-bootstrap"
    assert abs(b["reward_ci_low"] - r["reward_ci_low"]) < 0.03
    again = summarize(df, by=None, reward_method="cluster-bootstrap", seed=3, n_resamples=2000).row(
        0, named=True
    )
    assert again == b


def test_any_frame_csv_lazy_and_custom_names(tmp_path, trials_k5: pl.DataFrame) -> None:
    renamed = trials_k5.rename({"run": "agent", "task_name": "problem", "reward": "score"})
    path = tmp_path / "trials.csv"
    renamed.write_csv(path)
    from_csv = summarize(pl.read_csv(path), by="agent", task="problem", reward="score")
    lazy = summarize(pl.scan_csv(path), by="agent", task="problem", reward="score")
    direct = summarize(trials_k5)
    assert from_csv.equals(lazy)
    np.testing.assert_allclose(
        from_csv["ci_low"].to_numpy(), direct["ci_low"].to_numpy(), atol=1e-15
    )
    # boolean and integer rewards are fine too
    as_bool = trials_k5.with_columns(pl.col("reward") == 1.0)
    assert summarize(as_bool)["pass_rate"].to_list() == direct["pass_rate"].to_list()


def test_errors_and_empty() -> None:
    df = pl.DataFrame({"run": ["a"], "task_name": ["t"], "reward": [1.0]})
    with pytest.raises(ValueError, match="not in frame"):
        summarize(df, task="task")
    with pytest.raises(ValueError):
        summarize(df, estimand="population")
    with pytest.raises(ValueError):
        summarize(df, method="wald")
    empty = summarize(df.clear())
    assert empty.height == 0 and empty.columns[: 1 + len(SUMMARY_COLUMNS)] == [
        "run",
        *SUMMARY_COLUMNS,
    ]
    one = summarize(df).row(0, named=True)
    assert one["pass_rate"] == 1.0 and one["ci_high"] == 1.0 and one["ci_low"] < 1.0


@settings(max_examples=60, deadline=None)
@given(
    tasks=st.lists(
        st.lists(
            st.one_of(st.none(), st.sampled_from([0.0, 1.0]), st.floats(0, 1)),
            min_size=1,
            max_size=6,
        ),
        min_size=1,
        max_size=25,
    ),
    method=st.sampled_from(["auto", "wilson", "clopper-pearson", "jeffreys", "mid-p", "cluster-t"]),
    estimand=st.sampled_from(["new_tasks", "same_tasks"]),
)
def test_interval_always_brackets_pass_rate(
    tasks: list[list[float | None]], method: str, estimand: str
) -> None:
    if estimand == "same_tasks":
        method = "auto"
    rows = [{"task_name": f"t{i}", "reward": r} for i, rs in enumerate(tasks) for r in rs]
    r = summarize(
        pl.DataFrame(rows, schema={"task_name": pl.String, "reward": pl.Float64}),
        by=None,
        method=method,
        estimand=estimand,
    ).row(0, named=True)
    if method == "cluster-t" and r["n_tasks"] < 2:
        assert math.isnan(r["ci_low"])
        return
    assert 0.0 <= r["ci_low"] <= r["pass_rate"] <= r["ci_high"] <= 1.0
    assert r["n_trials"] == sum(len(t) for t in tasks)
