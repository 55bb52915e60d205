"""evalkit.compare.select: how a comparison side is named (run label, job name, id, folder,
prefix, list), the optional columns compare fills in, and the per-trial flags it counts."""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace

import polars as pl
import pytest

from evalkit.compare.select import (
    OPTIONAL_COLUMNS,
    closest,
    complete_columns,
    per_trial,
    resolve_name,
    select_side,
    trials_of,
)


def frame() -> pl.DataFrame:
    # run "alpha" is also the job name of a job of run "beta": the run label must win
    return pl.DataFrame(
        {
            "run": ["alpha", "alpha", "beta", "beta", "gamma-1", "gamma-2"],
            "job_name": ["j-one", "j-one", "alpha", "j-two", "j-three", "j-four"],
            "job_id": ["id1", "id1", "id2", "id3", "id4", "id5"],
            "trial_id": ["t1", "t2", "t3", "t4", "t5", "t6"],
            "task_name": ["a", "b", "a", "b", "a", "a"],
            "reward": [1.0, 0.0, 1.0, 0.5, None, 1.0],
        }
    )


# --------------------------------------------------------------------------------------------
# trials_of / complete_columns
# --------------------------------------------------------------------------------------------


def test_trials_of_accepts_frames_and_objects_with_trials() -> None:
    df = frame()
    assert trials_of(df).collect().equals(df)
    lf = df.lazy()
    assert trials_of(lf) is lf
    assert trials_of(SimpleNamespace(trials=df)).collect().equals(df)
    with pytest.raises(TypeError, match="SimpleNamespace"):
        trials_of(SimpleNamespace(trials=[1, 2]))
    with pytest.raises(TypeError, match="list"):
        trials_of([df])


def test_complete_columns_derives_outcome_from_reward() -> None:
    df = pl.DataFrame({"task_name": list("abcdef"), "reward": [None, 1.5, 1.0, 0.5, 0.0, -1.0]})
    out = complete_columns(df.lazy()).collect()
    assert out["outcome"].to_list() == ["no-reward", "pass", "pass", "partial", "fail", "fail"]
    # every optional column is there with its documented dtype, absent ones all null
    for col, dtype in OPTIONAL_COLUMNS.items():
        assert out.schema[col] == dtype, col
    assert out["cost_usd"].null_count() == 6 and out["started_at"].null_count() == 6


def test_complete_columns_keeps_an_outcome_and_casts_reward_and_null_columns() -> None:
    df = pl.DataFrame(
        {
            "task_name": ["a", "b"],
            "reward": [1, 0],  # integers
            "outcome": ["timeout", "error"],
            "n_steps": [None, None],  # a column of the Null dtype
        }
    )
    out = complete_columns(df.lazy()).collect()
    assert out["outcome"].to_list() == ["timeout", "error"]  # not re-derived from the reward
    assert out.schema["reward"] == pl.Float64 and out["reward"].to_list() == [1.0, 0.0]
    assert out.schema["n_steps"] == pl.Int64


def test_complete_columns_task_alias_and_errors() -> None:
    df = pl.DataFrame({"problem": ["p1", "p2"], "outcome": ["pass", "fail"]})
    out = complete_columns(df.lazy(), task="problem").collect()
    assert out["task_name"].to_list() == ["p1", "p2"]
    assert out.schema["reward"] == pl.Float64 and out["reward"].null_count() == 2
    with pytest.raises(ValueError, match="no 'task_name' column"):
        complete_columns(df.lazy())
    with pytest.raises(ValueError, match="'reward' or an 'outcome'"):
        complete_columns(pl.LazyFrame({"task_name": ["a"]}))


# --------------------------------------------------------------------------------------------
# resolve_name / closest
# --------------------------------------------------------------------------------------------


def test_resolve_name_exact_and_prefix() -> None:
    df = frame()
    assert resolve_name(df, "beta") == ("beta", "exact")
    assert resolve_name(df, "j-two") == ("j-two", "exact")
    assert resolve_name(df.lazy(), "j-th") == ("j-three", "prefix")
    assert resolve_name(df, "be") == ("beta", "prefix")


def test_resolve_name_ambiguous_and_unknown() -> None:
    df = frame()
    with pytest.raises(KeyError) as e:
        resolve_name(df, "gamma")
    assert "matches 2 names" in str(e.value)
    assert "gamma-1" in str(e.value) and "gamma-2" in str(e.value)
    with pytest.raises(KeyError) as e:
        resolve_name(df, "j-fuor")
    assert "no run or job named 'j-fuor'" in str(e.value) and "closest: j-four" in str(e.value)
    # nothing alike: the hint lists the runs instead
    with pytest.raises(KeyError) as e:
        resolve_name(df, "zzzzzzzz")
    assert "runs: alpha, beta, gamma-1, gamma-2" in str(e.value)


def test_closest_lists_prefix_matches_first_then_spellings() -> None:
    names = ["run-b", "run-a", "nur-a", "other"]
    assert closest("run", names) == ["run-b", "run-a"]
    assert closest("nur-b", names)[0] == "nur-a"
    assert "other" not in closest("run-c", names)
    assert len(closest("r", [f"r{i}" for i in range(9)], n=3)) == 3


# --------------------------------------------------------------------------------------------
# select_side
# --------------------------------------------------------------------------------------------


def test_run_label_wins_over_a_job_name() -> None:
    out, label, kind = select_side(frame().lazy(), "alpha")
    assert (label, kind) == ("alpha", "run")
    assert out["trial_id"].to_list() == ["t1", "t2"]  # not t3 of the job named "alpha"


def test_job_name_job_id_and_prefix() -> None:
    lf = frame().lazy()
    out, label, kind = select_side(lf, "j-two")
    assert (out["trial_id"].to_list(), label, kind) == (["t4"], "j-two", "job")
    out, label, kind = select_side(lf, "id1")
    assert (out["trial_id"].to_list(), label, kind) == (["t1", "t2"], "id1", "job")


def test_select_side_prefix_resolves_to_the_unique_name() -> None:
    lf = frame().lazy()
    out, label, kind = select_side(lf, "j-fo")
    assert (out["trial_id"].to_list(), label, kind) == (["t6"], "j-four", "job")
    out, label, kind = select_side(lf, "bet")
    assert (out["trial_id"].to_list(), label, kind) == (["t3", "t4"], "beta", "run")
    with pytest.raises(KeyError, match="matches 2 names"):
        select_side(lf, "gamma-")


def test_list_side_is_the_union_without_duplicates() -> None:
    lf = frame().lazy()
    out, label, kind = select_side(lf, ["gamma-1", "gamma-2"])
    assert (sorted(out["trial_id"].to_list()), label, kind) == (
        ["t5", "t6"],
        "gamma-1 + gamma-2",
        "run",
    )
    # a run and one of its own jobs overlap; trial_id keeps each trial once
    out, label, kind = select_side(lf, ["alpha", "j-one"], columns=["trial_id", "reward"])
    assert out.columns == ["trial_id", "reward"]
    assert out["trial_id"].to_list() == ["t1", "t2"]
    assert (label, kind) == ("alpha + j-one", "job")  # one key is a job: the side is a job side
    with pytest.raises(KeyError, match="empty side"):
        select_side(lf, [])


def test_duplicate_rows_kept_when_a_trial_id_is_missing() -> None:
    df = pl.DataFrame(
        {"run": ["r", "r"], "job_name": ["j", "j"], "trial_id": ["x", None],
         "task_name": ["a", "a"], "reward": [1.0, 1.0]}
    )  # fmt: skip
    out, _, _ = select_side(df.lazy(), "r")
    assert out.height == 2


def test_folder_side_matches_trials_under_it_only(tmp_path: Path) -> None:
    job = tmp_path / "job"
    sibling = tmp_path / "job2"  # shares the prefix "job" but is another folder
    for d in (job / "t-1", job / "t-2", sibling / "t-1"):
        d.mkdir(parents=True)
    real = os.path.realpath
    df = pl.DataFrame(
        {
            "run": ["r1", "r1", "r2"],
            "job_name": ["nightly", "nightly", "other"],
            "job_id": ["i1", "i1", "i2"],
            "trial_id": ["a", "b", "c"],
            "trial_dir": [real(job / "t-1"), real(job / "t-2"), real(sibling / "t-1")],
            "task_name": ["x", "y", "x"],
            "reward": [1.0, 0.0, 1.0],
        }
    )
    link = tmp_path / "link"
    link.symlink_to(job)
    for key in (str(job), str(link)):
        out, label, kind = select_side(df.lazy(), key)
        assert out["trial_id"].to_list() == ["a", "b"]
        assert (label, kind) == ("nightly", "job")  # one job under the folder: its name
    out, label, _ = select_side(df.lazy(), str(job / "t-2"))  # the trial folder itself
    assert out["trial_id"].to_list() == ["b"] and label == "nightly"
    # a folder holding trials of two jobs keeps the path as its label
    both = df.with_columns(pl.lit(real(job / "t-1")).alias("trial_dir"))
    out, label, _ = select_side(
        both.with_columns(job_name=pl.Series(["n1", "n2", "n2"])).lazy(), str(job)
    )
    assert out.height == 3 and label == str(job)


# --------------------------------------------------------------------------------------------
# per_trial
# --------------------------------------------------------------------------------------------


def test_per_trial_flags() -> None:
    df = pl.DataFrame(
        {
            "reward": [1.0, None, 0.5, 0.0, 1.0],
            "outcome": ["pass", "incomplete", "partial", "error", None],
            "exception_type": [None, None, None, "AgentTimeoutError", "ValueError"],
            "evidence_complete": [True, None, False, True, None],
            "n_input_tokens": [100, None, 5, 7, 0],
            "n_output_tokens": [20, 3, None, 3, 0],
            "n_turns": [4, None, None, 2, None],
            "n_steps": [9, 8, None, 5, None],
        }
    )
    out = per_trial(df)
    assert out["passed"].to_list() == [True, False, False, False, True]
    assert out["reward0"].to_list() == [1.0, 0.0, 0.5, 0.0, 1.0]
    assert out["finished"].to_list() == [True, False, True, True, True]  # null outcome: finished
    # an error whose exception type says timeout is a timeout
    assert out["is_timeout"].to_list() == [False, False, False, True, False]
    assert out["evidence"].to_list() == [True, False, False, True, False]
    assert out["tokens"].to_list() == [120.0, None, None, 10.0, 0.0]
    assert out["turns"].to_list() == [4.0, 8.0, None, 2.0, None]
