"""Property tests for timestamp and reward parsing."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from evalkit.load.shared.timeparse import choose_offset, format_offset, parse_offset, to_utc
from evalkit.load.trials.extract import _numeric_rewards, primary_reward

instants = st.datetimes(min_value=datetime(1971, 1, 1), max_value=datetime(2100, 1, 1)).map(
    lambda d: d.replace(tzinfo=UTC)
)
offsets = st.integers(-14 * 4, 14 * 4).map(lambda q: q * 900)


@settings(max_examples=200, deadline=None)
@given(instants, offsets, st.booleans(), st.sampled_from(["T", " "]))
def test_naive_and_aware_strings_give_the_same_instant(
    when: datetime, off: int, frac: bool, sep: str
) -> None:
    local = (when + timedelta(seconds=off)).replace(tzinfo=None)
    fmt = f"%Y-%m-%d{sep}%H:%M:%S" + (".%f" if frac else "")
    naive = local.strftime(fmt)
    aware_z = when.strftime(fmt) + "Z"
    aware_off = local.strftime(fmt) + format_offset(off)
    zone = format_offset(off)
    df = pl.DataFrame({"s": [naive, aware_z, aware_off], "z": [zone] * 3})
    got = df.select(to_utc(pl.col("s"), pl.col("z"), [zone]).alias("t"))["t"].to_list()
    expect = when if frac else when.replace(microsecond=0)
    assert got == [expect, expect, expect]


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40))
def test_garbage_timestamps_become_null_never_raise(s: str) -> None:
    df = pl.DataFrame({"s": [s], "z": ["UTC"]})
    out = df.select(to_utc(pl.col("s"), pl.col("z"), ["UTC"]).alias("t"))
    assert out.schema["t"] == pl.Datetime("us", "UTC")


@given(offsets)
def test_offset_format_roundtrip(off: int) -> None:
    assert parse_offset(format_offset(off)) == off


@settings(max_examples=300, deadline=None)
@given(offsets, st.floats(0, 240), st.floats(0, 240))
def test_offset_choice_from_tight_bounds(off: int, lead: float, lag: float) -> None:
    # job starts `lead` s before its first trial and ends `lag` s after its last one
    lo, hi = off - lead - 5, off + lag + 5
    assert choose_offset(lo, hi, off - lead, None) == off


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=10),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=10,
)


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_reward_parsing_never_raises_and_keeps_only_finite_numbers(raw) -> None:
    errors: list = []
    items = _numeric_rewards(raw, "r.json", None, errors)
    for it in items:
        assert isinstance(it["value"], float) and math.isfinite(it["value"])
    if isinstance(raw, dict):
        good = [
            k
            for k, v in raw.items()
            if not isinstance(v, bool) and isinstance(v, (int, float)) and math.isfinite(float(v))
        ]
        assert [it["name"] for it in items] == [str(k) for k in good]
        assert len(errors) == len(raw) - len(good)
        p = primary_reward(items)
        if "reward" in good:
            assert p == float(raw["reward"])
        elif good:
            assert p == float(raw[good[0]])
        else:
            assert p is None
