"""steps/derive.py: accumulated columns -> typed steps / tool_calls / trial_summary frames.

Checked on small hand-made columns: ISO-8601 timestamps to UTC (offsets honoured, naive
read as UTC, a space separator, fractions, garbage null), the typed steps and calls frames
(working columns dropped, declared order and dtypes, values of the wrong type null),
``retried`` (an identical earlier call in the same trial / trajectory / task step; go-code's
canonical signature first), ``final_totals`` (summed over task steps, pre-v1.2 prompt made
to include cached, non-numbers ignored), ``metrics_mismatch`` (exact tokens, cost within
1e-6 relative / 1e-9 absolute, only fields on both sides) and ``trial_summary``
(tokens_not_recorded, absent trials columns, duplicate trial rows).
"""

from __future__ import annotations

from datetime import UTC, datetime

import polars as pl
import pytest

from evalkit.load.steps.columns import CALL_FIELDS, STEP_COLUMNS, STEP_FIELDS, TOOL_CALL_COLUMNS
from evalkit.load.steps.derive import (
    SUMMARY_SCHEMA,
    calls_frame,
    final_totals,
    metrics_mismatch_expr,
    parse_timestamps,
    raw_calls_frame,
    raw_steps_frame,
    steps_frame,
    summary_frame,
    trial_summary,
)


def _utc(*a) -> datetime:
    return datetime(*a, tzinfo=UTC)


# --- parse_timestamps -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-01-02T03:04:05Z", _utc(2026, 1, 2, 3, 4, 5)),
        ("2026-01-02T03:04:05+02:00", _utc(2026, 1, 2, 1, 4, 5)),  # 03:04 at +2 = 01:04 UTC
        ("2026-01-02T03:04:05-05:30", _utc(2026, 1, 2, 8, 34, 5)),  # 03:04 + 5:30 = 08:34
        ("2026-01-02T23:30:00-01:00", _utc(2026, 1, 3, 0, 30, 0)),  # across midnight
        ("2026-01-02T03:04:05", _utc(2026, 1, 2, 3, 4, 5)),  # naive: read as UTC
        ("2026-01-02 03:04:05", _utc(2026, 1, 2, 3, 4, 5)),  # a space for the T
        ("2026-01-02T03:04:05.062Z", _utc(2026, 1, 2, 3, 4, 5, 62000)),
        ("2026-01-02T03:04:05.5", _utc(2026, 1, 2, 3, 4, 5, 500000)),
        ("2026-01-02T03:04:05.123456789Z", _utc(2026, 1, 2, 3, 4, 5, 123456)),  # microseconds
        ("yesterday", None),
        ("", None),
        (None, None),
    ],
)
def test_parse_timestamps_gives_utc(text, expected):
    got = pl.DataFrame({"_ts": [text]}, schema={"_ts": pl.String}).select(parse_timestamps())
    assert got.schema["_ts"] == pl.Datetime("us", "UTC")
    assert got["_ts"].to_list() == [expected]


def test_parse_timestamps_reads_any_column():
    df = pl.DataFrame({"when": ["2026-05-01T00:00:00Z"]})
    assert df.select(parse_timestamps("when"))["when"].to_list() == [_utc(2026, 5, 1)]


# --- steps and calls frames -----------------------------------------------------------


def _step_cols(n: int, **cols) -> dict[str, list]:
    out: dict[str, list] = {f: [None] * n for f in STEP_FIELDS}
    out.update(cols)
    return out


def _call_cols(n: int, **cols) -> dict[str, list]:
    out: dict[str, list] = {f: [None] * n for f in CALL_FIELDS}
    out.update(cols)
    return out


def test_steps_frame_is_typed_in_declared_order_without_working_columns():
    cols = _step_cols(
        2,
        trial_id=["t", "t"],
        step_index=[0, 1],
        _ts=["2026-01-01T00:00:01+01:00", "nope"],
        prompt_tokens=[5, 2**70],  # beyond Int64: null, not an error
        cost_usd=[1, 0.5],
    )
    df = steps_frame(cols)
    assert df.columns == [c.name for c in STEP_COLUMNS]
    assert df.schema == {c.name: c.dtype for c in STEP_COLUMNS}
    assert df["timestamp"].to_list() == [_utc(2025, 12, 31, 23, 0, 1), None]  # 00:00:01 at +1
    assert df["prompt_tokens"].to_list() == [5, None]
    assert df["cost_usd"].to_list() == [1.0, 0.5]


def test_raw_frames_keep_the_working_columns():
    raw = raw_steps_frame(_step_cols(1, _ts=["x"]))
    assert raw.columns == list(STEP_FIELDS) and raw["_ts"].to_list() == ["x"]
    raw = raw_calls_frame(_call_cols(1, _sig=["s"], _s_err=[True], _s_exit=[2]))
    assert raw.columns == list(CALL_FIELDS)
    assert raw.row(0, named=True)["_sig"] == "s"


def test_empty_columns_give_empty_typed_frames():
    s = steps_frame({f: [] for f in STEP_FIELDS})
    c = calls_frame({f: [] for f in CALL_FIELDS})
    assert s.height == c.height == 0
    assert s.schema == {col.name: col.dtype for col in STEP_COLUMNS}
    assert c.schema == {col.name: col.dtype for col in TOOL_CALL_COLUMNS}


def _calls(**cols) -> pl.DataFrame:
    n = len(next(iter(cols.values())))
    base = {"trial_id": ["t"] * n, "trajectory": ["main"] * n, "step_index": list(range(n))}
    base["call_index"] = [0] * n
    return calls_frame(_call_cols(n, **{**base, **cols}))


def test_retried_marks_an_identical_earlier_call_of_the_same_trajectory():
    df = _calls(
        function_name=["bash", "bash", "bash", "bash", "Read", "bash"],
        arguments=[
            '{"c":"ls"}',
            '{"c":"ls"}',
            '{"c":"pwd"}',
            '{"c":"ls"}',
            '{"c":"ls"}',
            '{"c":"ls"}',
        ],
        trajectory=["main", "main", "main", "sub", "main", "main"],
    )
    # 1: same as 0; 2: other arguments; 3: another trajectory; 4: another tool; 5: as 0
    assert df["retried"].to_list() == [False, True, False, False, False, True]
    assert df.columns == [c.name for c in TOOL_CALL_COLUMNS]


def test_retried_is_kept_apart_by_trial_and_task_step():
    df = _calls(
        function_name=["f"] * 4,
        arguments=["{}"] * 4,
        trial_id=["a", "b", "a", "a"],
        task_step=[None, None, "s2", None],
    )
    assert df["retried"].to_list() == [False, False, False, True]


def test_retried_is_unknown_without_a_function_or_arguments():
    df = _calls(function_name=[None, None, "f", "f"], arguments=["{}", "{}", None, None])
    assert df["retried"].to_list() == [None, None, None, None]


def test_retried_prefers_the_go_code_signature_to_the_arguments_text():
    # go-code passes key-sorted arguments in _sig: different texts, same call
    df = _calls(
        function_name=["f", "f", "f"],
        arguments=['{"a":1,"b":2}', '{"b":2,"a":1}', '{"a":1,"b":2}'],
        _sig=["f\x00a=1,b=2", "f\x00a=1,b=2", "f\x00other"],
    )
    assert df["retried"].to_list() == [False, True, False]


def test_calls_frame_parses_the_call_timestamp_and_drops_working_columns():
    df = _calls(function_name=["f"], arguments=["{}"], _ts=["2026-01-01 10:00:00"], _sig=[None])
    assert df["timestamp"].to_list() == [_utc(2026, 1, 1, 10)]
    assert not {"_ts", "_sig", "_s_err", "_s_exit"} & set(df.columns)


# --- final_totals ---------------------------------------------------------------------

KEYS = ("total_prompt_tokens", "total_completion_tokens", "total_cached_tokens", "total_cost_usd")


def test_final_totals_sum_over_task_steps():
    fms = [
        (
            {"total_prompt_tokens": 100, "total_completion_tokens": 10, "total_cost_usd": 0.25},
            (1, 7),
        ),
        ({"total_prompt_tokens": 50, "total_cached_tokens": 5, "total_cost_usd": 0.5}, (1, 8)),
    ]
    # 100 + 50; 10; 5; 0.25 + 0.5
    assert final_totals(fms) == dict(zip(KEYS, (150.0, 10.0, 5.0, 0.75), strict=True))


def test_final_totals_before_v1_2_add_cached_to_prompt():
    fms = [
        ({"total_prompt_tokens": 100, "total_cached_tokens": 40}, (1, 0)),  # 100 + 40 = 140
        ({"total_prompt_tokens": 60, "total_cached_tokens": 10}, (1, 2)),  # already included
        ({"total_prompt_tokens": 7}, (1, 1)),  # no cached: 7
        ({"total_cached_tokens": 3}, (1, 0)),  # no prompt: nothing to add to
    ]
    got = final_totals(fms)
    assert got["total_prompt_tokens"] == 140 + 60 + 7
    assert got["total_cached_tokens"] == 40 + 10 + 3


def test_final_totals_ignore_values_that_are_not_finite_numbers():
    fms = [
        (
            {
                "total_prompt_tokens": True,
                "total_completion_tokens": "12",
                "total_cached_tokens": float("inf"),
                "total_cost_usd": float("nan"),
            },
            (1, 7),
        ),
        ({"total_completion_tokens": 3}, None),
    ]
    assert final_totals(fms) == dict(zip(KEYS, (None, 3.0, None, None), strict=True))


def test_final_totals_without_any_record_are_null_not_zero():
    assert final_totals([]) == dict.fromkeys(KEYS)
    assert final_totals([({"total_steps": 4}, (1, 2))]) == dict.fromkeys(KEYS)
    assert final_totals([({"total_cost_usd": 0}, (1, 2))])["total_cost_usd"] == 0.0


# --- metrics_mismatch -----------------------------------------------------------------


def _mismatch(**cols) -> list:
    base = {k: [None] for k in ("fm_prompt", "fm_completion", "fm_cached", "fm_cost")}
    base |= {k: [None] for k in ("n_input_tokens", "n_output_tokens", "n_cache_tokens", "cost_usd")}
    base |= {k: [v] for k, v in cols.items()}
    df = pl.DataFrame(base, schema={k: pl.Float64 for k in base})
    return df.select(metrics_mismatch_expr())[:, 0].to_list()


@pytest.mark.parametrize(
    ("cols", "text"),
    [
        ({"fm_prompt": 100.0, "n_input_tokens": 100}, None),
        ({"fm_prompt": 100.0, "n_input_tokens": 99}, "prompt_tokens: atif 100 vs result 99"),
        ({"fm_completion": 3.0, "n_output_tokens": 4}, "completion_tokens: atif 3 vs result 4"),
        ({"fm_cached": 0.0, "n_cache_tokens": 1}, "cached_tokens: atif 0 vs result 1"),
        ({"fm_prompt": 100.0}, None),  # only one side: nothing to compare
        ({"n_input_tokens": 100}, None),
        ({}, None),
        # cost: |1.0 - 1.0000009| = 9e-7 < 1e-6 * 1.0000009: the same
        ({"fm_cost": 1.0, "cost_usd": 1.0000009}, None),
        # |0.5 - 0.500001| = 1e-6 > 1e-6 * 0.500001: differs (shown to 6 places)
        ({"fm_cost": 0.5, "cost_usd": 0.500001}, "cost_usd: atif 0.5 vs result 0.500001"),
        # tiny costs: the 1e-9 absolute floor, |1e-10 - 2e-10| < 1e-9
        ({"fm_cost": 1e-10, "cost_usd": 2e-10}, None),
        ({"fm_cost": 0.462381, "cost_usd": 0.5}, "cost_usd: atif 0.462381 vs result 0.5"),
    ],
)
def test_metrics_mismatch_compares_totals_present_on_both_sides(cols, text):
    assert _mismatch(**cols) == [text]


def test_metrics_mismatch_lists_every_differing_total_in_order():
    got = _mismatch(
        fm_prompt=10.0, n_input_tokens=11, fm_completion=2.0, n_output_tokens=2,
        fm_cached=5.0, n_cache_tokens=6, fm_cost=1.0, cost_usd=2.0,
    )  # fmt: skip
    assert got == [
        "prompt_tokens: atif 10 vs result 11; cached_tokens: atif 5 vs result 6;"
        " cost_usd: atif 1.0 vs result 2.0"  # a cost is a float
    ]


def test_a_token_total_too_large_for_int64_is_still_reported():
    # 1e30 from a broken file must not fail the Int64 cast; the other side prints as 5
    (got,) = _mismatch(fm_prompt=1e30, n_input_tokens=5)
    assert got.startswith("prompt_tokens: atif 1") and got.endswith(" vs result 5")


# --- trial_summary --------------------------------------------------------------------


def _index(**cols) -> pl.DataFrame:
    n = len(cols["trial_id"])
    base = {
        "trial_id": cols.pop("trial_id"),
        "n_steps": [1] * n,
        "n_tool_calls": [0] * n,
        "n_turns": [1] * n,
        "fm_prompt": [None] * n,
        "fm_completion": [None] * n,
        "fm_cached": [None] * n,
        "fm_cost": [None] * n,
    }
    base.update(cols)
    schema = {
        k: (pl.String if k == "trial_id" else pl.Float64 if k.startswith("fm") else pl.Int64)
        for k in base
    }
    return pl.DataFrame(base, schema=schema)


def test_trial_summary_flags_unrecorded_tokens_from_steps_and_totals():
    index = _index(
        trial_id=["ran", "has_totals", "no_steps", "not_parsed", "nonzero"],
        n_steps=[3, 3, 0, None, 3],
        fm_prompt=[None, 0.0, None, None, None],
        fm_completion=[None, 12.0, None, None, None],
    )
    trials = pl.DataFrame(
        {
            "trial_id": ["ran", "has_totals", "no_steps", "not_parsed", "nonzero"],
            "n_input_tokens": [0, 0, 0, 0, 5],
            "n_output_tokens": [0, 0, 0, 0, 0],
        }
    )
    s = trial_summary(index, trials)
    # ran: 0/0 with steps and no totals -> True; has_totals: the trajectory records 12
    # completion tokens -> False; no_steps: the agent did not run -> False; not_parsed:
    # n_steps null, the load's flag stands -> null; nonzero: 5 input tokens -> False
    assert s["tokens_not_recorded"].to_list() == [True, False, False, None, False]
    assert s.schema == SUMMARY_SCHEMA


def test_trial_summary_without_result_totals_compares_nothing():
    index = _index(trial_id=["a"], fm_prompt=[10.0], fm_cost=[0.5])
    s = trial_summary(index, pl.DataFrame({"trial_id": ["a"]}))
    assert s.row(0, named=True) == {
        "trial_id": "a", "n_steps": 1, "n_tool_calls": 0, "n_turns": 1,
        "metrics_mismatch": None, "tokens_not_recorded": False,
    }  # fmt: skip


def test_trial_summary_uses_the_first_row_of_a_repeated_trial():
    index = _index(trial_id=["a"], fm_prompt=[10.0])
    trials = pl.DataFrame({"trial_id": ["a", "a"], "n_input_tokens": [9, 10]})
    s = trial_summary(index, trials)
    assert s.height == 1
    assert s["metrics_mismatch"].to_list() == ["prompt_tokens: atif 10 vs result 9"]


def test_trial_summary_keeps_trials_unknown_to_the_trials_frame():
    s = trial_summary(
        _index(trial_id=["x"], fm_prompt=[1.0]),
        pl.DataFrame({"trial_id": ["y"], "n_input_tokens": [2]}),
    )
    assert s.select("trial_id", "metrics_mismatch", "tokens_not_recorded").rows() == [
        ("x", None, False)
    ]


def test_summary_frame_has_the_declared_trials_dtypes():
    s = summary_frame(
        {
            "trial_id": ["a"], "n_steps": [2], "n_tool_calls": [1], "n_turns": [2],
            "metrics_mismatch": [None], "tokens_not_recorded": [None],
        }
    )  # fmt: skip
    assert s.schema == {
        "trial_id": pl.String, "n_steps": pl.Int64, "n_tool_calls": pl.Int64, "n_turns": pl.Int64,
        "metrics_mismatch": pl.String, "tokens_not_recorded": pl.Boolean,
    }  # fmt: skip
