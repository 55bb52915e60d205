"""The compiled finishing rules (native/atif/src/finish.rs) against the Polars rules they port.

Rows of the compiled path come out with exit_code, is_error, is_error_source, retried and
timestamp already filled; a row the port cannot decide exactly is marked and finished by
Python with the Polars expressions (commands.finish_tool_calls, frames.parse_timestamps).
Here both run on the same generated rows: every row the port decided must carry the
Polars values, and plain rows must be decided (so the fast path is really taken).
"""

from __future__ import annotations

import datetime as dt

import orjson
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalkit.load.steps import native
from evalkit.load.steps.commands import finish_tool_calls
from evalkit.load.steps.frames import parse_timestamps

pytestmark = pytest.mark.skipif(not native.available(), reason="compiled extractor not built")


def polars_rules(rows: list) -> pl.DataFrame:
    df = pl.DataFrame(
        {
            "observation": [r[0] for r in rows],
            "command": ["cmd" if r[1] else None for r in rows],
            "_s_err": [r[2] for r in rows],
            "_s_exit": [r[3] for r in rows],
            "_ts": [r[4] for r in rows],
        },
        schema={
            "observation": pl.String,
            "command": pl.String,
            "_s_err": pl.Boolean,
            "_s_exit": pl.Int64,
            "_ts": pl.String,
        },
    )
    out = finish_tool_calls(df)
    return out.with_columns(parse_timestamps().alias("ts_us"))


def check(rows: list) -> pl.DataFrame:
    """Compare; returns the compiled result (for coverage assertions)."""
    got = native.finish_rows(rows)
    want = polars_rules(rows)
    assert got.height == len(rows)
    for i in range(len(rows)):
        if got["fin"][i]:
            for c in ("exit_code", "is_error", "is_error_source"):
                assert got[c][i] == want[c][i], (c, rows[i], got.row(i), want.row(i))
        if got["ts_fin"][i]:
            assert got["ts_us"][i] == want["ts_us"][i], (rows[i], got.row(i))
    return got


MARKERS = [
    "[exit_code]", "<exit_code>", "</exit_code>", "[Command finished with exit code ",
    "Process exited with code ", "Exit Code: ", "exit status ", "\n", "\r\n", "\r", " ",
    "\t", "\x0b", "\u00a0", "\u3000", "\u0085", "-", "0", "7", "42", "007",
    "9223372036854775808", "0000000000000000000001", "\u0663", "\uff11", "x", "]", "[",
    "{", "}", '"success"', '"error"', ": ", ":", ",", "true", "false", "null", '""', "[]",
    "{}", '"exit_code"', '"exitCode"', '"returncode"', '"return_code"', "\\u0065", '"',
    "Traceback (most recent call last)", "bash: ", "sh: ", "zsh: ", "/bin/bash: ",
    "No such file or directory", "Permission denied", "syntax error", "Error", "ERROR",
    "error", "fatal", "FATAL", "panic", "ValueError", "Exception", "XError", "KeyError",
    ": command not found", "<tool_use_error>", "[error] tool reported failure", "é", "✓",
]  # fmt: skip

text = st.lists(st.sampled_from(MARKERS) | st.text(max_size=3), max_size=14).map("".join)

json_leaf = (
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=4)
    | st.sampled_from(["", "false", "true", "null", "{}", "[]"])
)
json_value = st.recursive(
    json_leaf,
    lambda kids: (
        st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=3), kids, max_size=3)
    ),
    max_leaves=6,
)
envelope = st.builds(
    lambda d, pre, post, keys: (
        pre + orjson.dumps({**{k: v for k, v in d.items()}, **keys}).decode() + post
    ),
    st.dictionaries(st.sampled_from(["a", "exit_code", "x"]), json_value, max_size=2),
    st.sampled_from(["", " ", "\n ", "\u00a0", "\u2003"]),
    st.sampled_from(["", " ", "\n", "x", "}", "\u00a0"]),
    st.dictionaries(st.sampled_from(["success", "error", "exitCode", "returncode"]), json_value),
)
observation = st.none() | text | envelope

stamp = st.datetimes(min_value=dt.datetime(1960, 1, 1), max_value=dt.datetime(2250, 1, 1)).flatmap(
    lambda d: st.tuples(
        st.sampled_from(["T", " ", "t"]),
        st.sampled_from(["", ".5", ".123", ".123456", ".123456789", ".1234567891", "."]),
        st.sampled_from(["", "Z", "z", "+00:00", "-05:30", "+14:00", "+0530", "+24:00", " Z"]),
    ).map(lambda p: d.strftime("%Y-%m-%d") + p[0] + d.strftime("%H:%M:%S") + p[1] + p[2])
)
timestamp = st.none() | stamp | st.text(max_size=25)

row = st.tuples(
    observation,
    st.booleans(),
    st.none() | st.booleans(),
    st.none() | st.integers(-300, 300),
    timestamp,
).map(list)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(row, min_size=1, max_size=60))
def test_compiled_rules_agree_with_polars(rows: list) -> None:
    check(rows)


def test_plain_rows_are_decided_and_exact() -> None:
    rows = [
        ["Traceback (most recent call last):\n  File", True, None, None, "2025-01-02T03:04:05Z"],
        ["total 0\nExit Code: 0\n", True, None, None, "2025-01-02T03:04:05.123456+02:00"],
        ["[exit_code] 2\nboom", False, None, None, "2025-01-02 03:04:05"],
        ['{"success": false, "error": "nope"}', False, None, None, "2025-01-02T03:04:05.5"],
        ['  {"success": true, "exitCode": 3}', False, None, None, None],
        ['{"error": {}, "success": "true"}', False, None, None, None],
        ['{"error": "", "error": "late"}', False, None, None, None],  # serde: last wins
        ['{"success": false', False, None, None, None],  # not JSON: no envelope flag
        ["ValueError: bad\n", False, None, None, None],
        ["error[E0425]: cannot find value", True, None, None, None],
        ["all good", False, True, 5, None],
        [None, False, None, None, None],
        ["exit status 1", True, None, None, None],
        ["exit status 1", False, None, None, None],  # shell-only marker
    ]
    got = check(rows)
    assert got["fin"].all() and got["ts_fin"].all()
    assert got["is_error"].to_list() == [
        True, False, True, True, False, False, True, False, True, True, True, None, True, False,
    ]  # fmt: skip
    assert got["exit_code"].to_list()[:5] == [None, 0, 2, None, 3]


def test_undecidable_rows_are_left_to_polars() -> None:
    rows = [
        ["[exit_code]\u00a01", False, None, None, None],  # Unicode \\s
        ["Exit Code: 1\u0663\n", True, None, None, None],  # Unicode \\d
        ["[exit_code] 00000000000000000000001", False, None, None, None],  # long digits
        [
            '{"success":' * 150 + "1" + "}" * 150,
            False,
            None,
            None,
            None,
        ],  # deeper than serde's limit
        ["x", False, None, None, "2025-02-29T00:00:00Z"],  # not a date: Polars says
        ["x", False, None, None, "1969-12-31T23:59:59Z"],
    ]
    got = check(rows)
    assert got["fin"].to_list()[:4] == [False] * 4
    assert got["ts_fin"].to_list()[4:] == [False, False]
