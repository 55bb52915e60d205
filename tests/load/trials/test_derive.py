"""Derived trial columns (load/trials/derive.py), on hand-built raw records."""

from __future__ import annotations

from datetime import UTC, datetime

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from evalkit.load.trials.derive import (
    PARSED,
    add_run_and_attempt,
    default_run_label,
    derive,
    failed_checks,
    known_sum,
    measured_tokens,
    out_of_window,
    recorded_task_names,
    tokens_not_recorded,
    with_parsed,
)
from evalkit.load.trials.extract import RAW_SCHEMA


def _raw(**rows: list) -> pl.DataFrame:
    """Raw records (RAW_SCHEMA, nulls where not given) + job_id / __zone."""
    n = len(next(iter(rows.values())))
    schema = {**RAW_SCHEMA, "job_id": pl.String, "job_name": pl.String, "__zone": pl.String}
    data = {c: rows.get(c, [None] * n) for c in schema}
    return pl.DataFrame(data, schema=schema)


def _utc(*a: int) -> datetime:
    return datetime(*a, tzinfo=UTC)


def test_derive_converts_naive_times_in_the_job_zone_and_measures_phases() -> None:
    raw = _raw(
        result_present=[True, True],
        __zone=["+08:00", "UTC"],
        # row 0: naive local times of a UTC+8 machine; row 1: aware times
        ts_started=["2024-03-01T10:00:00", "2024-03-01T02:00:00Z"],
        ts_finished=["2024-03-01 10:05:30.25", "2024-03-01T02:05:00+00:00"],
        ts_agent_start=["2024-03-01T10:01:00", "2024-03-01T02:01:00Z"],
        ts_agent_end=["2024-03-01T10:04:00", "2024-03-01T02:10:00Z"],  # row 1: 5 min late
        reward=[1.0, 0.0],
        rewards=[[{"name": "reward", "value": 1.0}], [{"name": "reward", "value": 0.0}]],
        exception_type=[None, "AgentTimeoutError"],
        cost_usd=[0.5, None],
        n_input_tokens=[0, 10],
        n_output_tokens=[0, 5],
        has_trajectory=[True, True],
    )
    df = derive(raw, ["+08:00", "UTC"])
    assert not set(PARSED) & set(df.columns)
    assert df["started_at"].to_list() == [_utc(2024, 3, 1, 2), _utc(2024, 3, 1, 2)]
    assert df["finished_at"].to_list()[0] == datetime(2024, 3, 1, 2, 5, 30, 250000, tzinfo=UTC)
    assert df["duration_s"].to_list() == [330.25, 300.0]
    assert df["agent_s"].to_list() == [180.0, 540.0]
    assert df["env_setup_s"].to_list() == [None, None]
    assert df["naive_timestamps"].to_list() == [True, False]
    # 02:10Z is 300 s after the 02:05Z end: beyond the 60 s tolerance
    assert df["timestamp_out_of_window"].to_list() == [False, True]
    assert df["outcome"].to_list() == ["pass", "timeout"]
    assert df["error_kind"].to_list() == ["none", "agent"]
    assert df["reward_valid"].to_list() == [True, True]
    assert df["cost_status"].to_list() == ["recorded", "unknown"]
    assert df["tokens_not_recorded"].to_list() == [True, False]
    assert df["source_format"].to_list() == ["harbor", "harbor"]
    assert df["evidence_complete"].to_list() == [False, False]


def test_derive_strict_rule_and_reward_valid_without_result() -> None:
    raw = _raw(
        result_present=[True, False],
        __zone=["UTC", "UTC"],
        reward=[1.0, 1.0],
        rewards=[[{"name": "reward", "value": 1.0}]] * 2,
        exception_type=["ApiRateLimitError", None],
        has_trajectory=[True, True],
        has_reward_file=[True, True],
        has_verifier_output=[True, True],
        has_artifacts_manifest=[True, None],
    )
    df = derive(raw, ["UTC"], outcome_rule="strict")
    assert df["outcome"].to_list() == ["error", "incomplete"]
    # provider error: reward invalid; no result.json: its rewards do not count
    assert df["reward_valid"].to_list() == [False, False]
    assert df["evidence_complete"].to_list() == [True, False]


def test_with_parsed_keeps_columns_parsed_already() -> None:
    raw = pl.DataFrame(
        {"ts_started": ["2024-01-01T00:00:00Z"], "ts_finished": ["2024-01-01T01:00:00"]}
    )
    once = with_parsed(raw, ("ts_started", "ts_finished"))
    assert once["__a_ts_started"].to_list() == [_utc(2024, 1, 1)]
    assert once["__n_ts_started"].to_list() == [None]  # aware: not naive
    assert once["__n_ts_finished"].to_list() == [datetime(2024, 1, 1, 1)]
    marked = once.with_columns(pl.lit(None, pl.Datetime("us", "UTC")).alias("__a_ts_started"))
    again = with_parsed(marked, ("ts_started", "ts_finished"))
    assert again["__a_ts_started"].to_list() == [None]  # not parsed a second time
    assert again.columns == marked.columns


def test_out_of_window_tolerance_is_60_seconds() -> None:
    start, end = _utc(2024, 1, 1, 0, 0, 0), _utc(2024, 1, 1, 1, 0, 0)
    at = [
        _utc(2024, 1, 1, 1, 1, 0),  # exactly 60 s after the end: inside
        _utc(2024, 1, 1, 1, 1, 1),  # 61 s after
        _utc(2023, 12, 31, 23, 59, 0),  # exactly 60 s before the start
        _utc(2023, 12, 31, 23, 58, 59),  # 61 s before
        None,
    ]
    n = len(at)
    cols = {
        c: [None] * n
        for c in ("_env_s", "_env_e", "_as_s", "_as_e", "_ag_s", "_ag_e", "_v_s", "_v_e")
    }
    df = pl.DataFrame(
        {"started_at": [start] * n, "finished_at": [end] * n, "exception_at": at, **cols},
        schema={
            c: pl.Datetime("us", "UTC")
            for c in ("started_at", "finished_at", "exception_at", *cols)
        },
    )
    got = df.select(out_of_window().alias("o"))["o"].to_list()
    assert got == [False, True, False, True, False]
    unfinished = df.with_columns(pl.lit(None, pl.Datetime("us", "UTC")).alias("finished_at"))
    assert unfinished.select(out_of_window().alias("o"))["o"].to_list() == [None] * n


def test_tokens_not_recorded_and_measured_tokens() -> None:
    df = pl.DataFrame(
        {
            "n_input_tokens": [0, 0, 5, 0, None, 0],
            "n_output_tokens": [0, 0, 0, 0, None, 0],
            "has_trajectory": [True, False, True, True, True, None],
            "fm_prompt": [None, None, None, 120.0, None, None],
        }
    )
    flag = df.select(tokens_not_recorded().alias("f"))["f"].to_list()
    # 0/0 and the agent ran -> flagged; no trajectory (oracle) -> real 0; null counters -> no
    assert flag == [True, False, False, True, False, False]
    exact = df.select(tokens_not_recorded(trajectory_totals=(pl.col("fm_prompt"),)).alias("f"))
    assert exact["f"].to_list() == [True, False, False, False, False, False]
    ran = df.select(tokens_not_recorded(ran=pl.lit(False)).alias("f"))["f"].to_list()
    assert ran == [False] * 6
    m = df.with_columns(tokens_not_recorded().alias("tokens_not_recorded")).select(
        measured_tokens("n_input_tokens")
    )
    assert m["n_input_tokens"].to_list() == [None, 0, 5, None, None, 0]


def test_known_sum_unknown_is_not_zero() -> None:
    df = pl.DataFrame(
        {"a": [None, None], "b": [None, 2.5], "c": [0.0, 0.0]},
        schema={c: pl.Float64 for c in "abc"},
    )
    got = df.select(known_sum("a"), known_sum("b"), known_sum(pl.col("c") + 1).alias("c1"))
    assert got.row(0) == (None, 2.5, 2.0)


def test_failed_checks_lists_failed_names_in_order() -> None:
    item = pl.Struct({"name": pl.String, "verdict": pl.String, "explanation": pl.String})
    df = pl.DataFrame(
        {
            "analysis_checks": [
                [
                    {"name": "reward_hacking", "verdict": "fail", "explanation": "x"},
                    {"name": "task_specification", "verdict": "pass", "explanation": None},
                    {"name": "z", "verdict": "fail", "explanation": None},
                ],
                [{"name": "reward_hacking", "verdict": "not_applicable", "explanation": None}],
                None,
            ]
        },
        schema={"analysis_checks": pl.List(item)},
    )
    got = df.select(failed_checks().alias("f"))["f"].to_list()
    assert got == ["reward_hacking, z", "", None]


def _label_frame(**cols: list) -> pl.DataFrame:
    names = ("agent_name", "model_name", "task_source", "__dataset", "regrade_of")
    n = len(next(iter(cols.values())))
    return pl.DataFrame(
        {c: cols.get(c, [None] * n) for c in names}, schema={c: pl.String for c in names}
    )


def test_default_run_label() -> None:
    df = _label_frame(
        agent_name=["claude-code", "goose", None, "oracle", "terminus-2"],
        model_name=["anthropic/claude-x", "openrouter/qwen/qwen3", None, "bare-model", "a/m"],
        task_source=["terminal-bench", None, None, "ds", "ds"],
        __dataset=[None, "local-ds", None, None, None],
        regrade_of=[None, None, None, None, "id-1"],
    )
    got = df.select(default_run_label().alias("l"))["l"].to_list()
    assert got == [
        "claude-code__claude-x__terminal-bench",
        "goose__qwen/qwen3__local-ds",  # only the provider part is cut
        "unknown-agent__no-model__adhoc",
        "oracle__bare-model__ds",
        "terminus-2__m__ds__regrade",
    ]


def test_recorded_task_names_from_a_finished_trial_of_the_same_ref() -> None:
    df = pl.DataFrame(
        {
            "result_present": [True, False, False, False, None],
            "task_ref": ["harbor/x@1", "harbor/x@1", "local/y", None, "harbor/x@1"],
            "task_name": ["x-recorded", "x", "y", "z", "x-folder"],
        }
    )
    assert recorded_task_names(df)["task_name"].to_list() == [
        "x-recorded",
        "x-recorded",
        "y",  # no finished trial of this ref: keeps its config name
        "z",
        "x-recorded",  # unknown presence counts as unfinished
    ]
    assert recorded_task_names(df.drop("result_present")).equals(df.drop("result_present"))


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["t1", "t2"]),
            st.none() | st.integers(0, 5),
            st.text("ab", min_size=1, max_size=3),
            st.sampled_from([None, "mylabel"]),
        ),
        min_size=1,
        max_size=12,
    )
)
def test_attempts_number_by_start_then_name(rows) -> None:
    n = len(rows)
    raw = _raw(
        job_id=["j"] * n,
        task_name=[r[0] for r in rows],
        trial_name=[r[2] for r in rows],
        agent_name=["a"] * n,
        model_name=["p/m"] * n,
        task_source=["ds"] * n,
        __zone=["UTC"] * n,
    ).with_columns(
        pl.Series("started_at", [None if r[1] is None else _utc(2024, 1, 1, r[1]) for r in rows],
                  dtype=pl.Datetime("us", "UTC")),
        pl.Series("__label", [r[3] for r in rows], dtype=pl.String),
        pl.lit(None, pl.String).alias("__dataset"),  # derive() adds it
    )  # fmt: skip
    out = add_run_and_attempt(raw, default_run_label())
    assert "__label" not in out.columns and "__zone" not in out.columns
    runs = [r[3] or "a__m__ds" for r in rows]
    assert out["run"].to_list() == runs
    # oracle: sort each run+task group by (start, nulls last), then trial name
    expect = [0] * n
    groups: dict = {}
    for i, r in enumerate(rows):
        groups.setdefault((runs[i], r[0]), []).append(i)
    for idx in groups.values():
        ordered = sorted(idx, key=lambda i: (rows[i][1] is None, rows[i][1] or 0, rows[i][2]))
        for k, i in enumerate(ordered, 1):
            expect[i] = k
    got = out["attempt"].to_list()
    # ties on (start, name) may be numbered either way; compare the multiset per key
    for idx in groups.values():
        by_key: dict = {}
        for i in idx:
            by_key.setdefault((rows[i][1], rows[i][2]), []).append(i)
        for same in by_key.values():
            assert sorted(got[i] for i in same) == sorted(expect[i] for i in same)
