"""evalkit.stats._frames: the by-list, lazy-frame and column-check plumbing and the per-task
sufficient statistics (task_table) every estimator reads."""

from __future__ import annotations

import math

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalkit.stats._frames import as_by_list, as_lazy, check_columns, collect, task_table


def test_as_by_list_shapes() -> None:
    assert as_by_list(None) == []
    assert as_by_list("run") == ["run"]
    assert as_by_list(("run", "model")) == ["run", "model"]
    assert as_by_list(["a"]) == ["a"]
    with pytest.raises(TypeError, match="by must be"):
        as_by_list(["run", 3])


def test_as_lazy_and_collect() -> None:
    df = pl.DataFrame({"x": [3, 1, 2]})
    lf = as_lazy(df)
    assert isinstance(lf, pl.LazyFrame)
    assert as_lazy(lf) is lf  # a LazyFrame is passed through, not wrapped again
    out = collect(lf.sort("x"))
    assert isinstance(out, pl.DataFrame) and out["x"].to_list() == [1, 2, 3]
    with pytest.raises(TypeError, match="got dict"):
        as_lazy({"x": [1]})


def test_check_columns_names_the_missing_ones_in_order() -> None:
    df = pl.DataFrame({"a": [1], "b": [2]})
    check_columns(df.lazy(), ["b", "a"])  # all present: nothing to report
    with pytest.raises(ValueError) as e:
        check_columns(df, ["z", "a", "y"])
    assert "['z', 'y']" in str(e.value) and "['a', 'b']" in str(e.value)


def test_task_table_hand_values() -> None:
    # run r1, task t1: rewards 1, 0.5, null  -> null counts as 0 and a failure
    # run r1, task t2: rewards NaN, 2.0      -> NaN is null; 2.0 >= 1 passes and is fractional
    # run r2, task t1: rewards 0, 0
    df = pl.DataFrame(
        {
            "run": ["r1", "r1", "r1", "r1", "r1", "r2", "r2"],
            "task": ["t1", "t1", "t1", "t2", "t2", "t1", "t1"],
            "reward": [1.0, 0.5, None, float("nan"), 2.0, 0.0, 0.0],
        }
    )
    t = task_table(df, ["run"], "task", "reward")
    assert t.columns == [
        "run",
        "task",
        "n_trials",
        "n_pass",
        "reward_sum",
        "reward_sq_sum",
        "n_valid",
        "n_pass_valid",
        "reward_sum_valid",
        "n_fractional",
    ]
    rows = t.rows()
    assert rows == [
        # n, pass, sum, sq sum, valid, pass_valid, sum_valid, fractional
        ("r1", "t1", 3, 1, 1.5, 1.25, 2, 1, 1.5, 1),
        ("r1", "t2", 2, 1, 2.0, 4.0, 1, 1, 2.0, 1),
        ("r2", "t1", 2, 0, 0.0, 0.0, 2, 0, 0.0, 0),
    ]


def test_task_table_casts_text_rewards_and_sorts_null_keys_last() -> None:
    # "1" -> 1.0; "oops" cannot be cast: null (a failure, not an error)
    df = pl.DataFrame({"task": [None, "b", "a", "a"], "r": ["1", "0.25", "oops", "1"]})
    t = task_table(df.lazy(), [], "task", "r")
    assert t["task"].to_list() == ["a", "b", None]
    assert t["n_trials"].to_list() == [2, 1, 1]
    assert t["n_valid"].to_list() == [1, 1, 1]
    assert t["n_pass"].to_list() == [1, 0, 1]
    assert t["reward_sum"].to_list() == [1.0, 0.25, 1.0]


def test_task_table_column_errors() -> None:
    df = pl.DataFrame({"task": ["a"], "reward": [1.0]})
    with pytest.raises(ValueError, match="task column cannot also be a by column"):
        task_table(df, ["task"], "task", "reward")
    with pytest.raises(ValueError, match="run"):
        task_table(df, ["run"], "task", "reward")


REWARDS = st.sampled_from([None, float("nan"), 0.0, 0.25, 0.5, 1.0, 1.5])


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["x", "y"]), st.sampled_from(["t1", "t2", "t3"]), REWARDS),
        min_size=1,
        max_size=25,
    )
)
def test_task_table_matches_a_plain_python_count(rows: list[tuple]) -> None:
    df = pl.DataFrame(rows, schema={"g": pl.String, "task": pl.String, "reward": pl.Float64},
                      orient="row")  # fmt: skip
    got = {(r["g"], r["task"]): r for r in task_table(df, ["g"], "task", "reward").to_dicts()}
    groups: dict[tuple[str, str], list] = {}
    for g, task, r in rows:
        groups.setdefault((g, task), []).append(None if r is None or math.isnan(r) else r)
    assert set(got) == set(groups)
    for key, rs in groups.items():
        r0 = [0.0 if r is None else r for r in rs]
        valid = [r for r in rs if r is not None]
        row = got[key]
        assert row["n_trials"] == len(rs)
        assert row["n_pass"] == sum(r >= 1 for r in r0)
        assert row["reward_sum"] == pytest.approx(sum(r0))
        assert row["reward_sq_sum"] == pytest.approx(sum(r * r for r in r0))
        assert row["n_valid"] == len(valid)
        assert row["n_pass_valid"] == sum(r >= 1 for r in valid)
        assert row["reward_sum_valid"] == pytest.approx(sum(valid))
        assert row["n_fractional"] == sum(r not in (0.0, 1.0) for r in r0)
