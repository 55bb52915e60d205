"""load/shared/timeparse: zone policies and the conversion to UTC, against Python's zoneinfo."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalkit.load.shared import timeparse as tp


@given(st.integers(-14 * 60, 14 * 60).map(lambda m: m * 60))
def test_offsets_round_trip(seconds: int) -> None:
    assert tp.parse_offset(tp.format_offset(seconds)) == seconds


@pytest.mark.parametrize(
    ("text", "seconds"), [("+08:00", 28800), ("-0530", -19800), (" +00:00 ", 0), ("8:00", None)]
)
def test_parse_offset(text: str, seconds: int | None) -> None:
    assert tp.parse_offset(text) == seconds


def test_policies_are_checked() -> None:
    assert tp.resolve_policy("auto") == "auto"
    assert tp.resolve_policy("utc") == "UTC"
    assert tp.resolve_policy("Asia/Shanghai") == "Asia/Shanghai"
    assert tp.resolve_policy("+05:45") == "+05:45"
    with pytest.raises(ValueError, match="naive_tz='Mars/Base'"):
        tp.resolve_policy("Mars/Base")


_ZONES = ["UTC", "Asia/Kolkata", "America/New_York", "Europe/Berlin", "+08:00", "-03:30"]


def _expected(naive: datetime, zone: str) -> datetime | None:
    off = tp.parse_offset(zone)
    tz = timezone(timedelta(seconds=off)) if off is not None else ZoneInfo(zone)
    local = naive.replace(tzinfo=tz, fold=0)  # fold=0: the earlier of two ambiguous times
    if off is None and local.astimezone(UTC).astimezone(tz).replace(tzinfo=None) != naive:
        return None  # skipped by a DST jump: no such local time
    return local.astimezone(UTC)


@settings(max_examples=200, deadline=None)
@given(
    st.datetimes(datetime(2000, 1, 1), datetime(2035, 1, 1)).map(
        lambda d: d.replace(microsecond=d.microsecond // 1000 * 1000)
    ),
    st.sampled_from(_ZONES),
    st.booleans(),
)
def test_naive_and_aware_strings_reach_utc_as_python_computes_it(
    naive: datetime, zone: str, aware: bool
) -> None:
    text = naive.isoformat(timespec="milliseconds")
    expected: datetime | None
    if aware:
        text += "Z"
        expected = naive.replace(tzinfo=UTC)
    else:
        expected = _expected(naive, zone)
    df = pl.DataFrame({"t": [text], "zone": [zone]})
    got = df.select(tp.to_utc(pl.col("t"), pl.col("zone"), _ZONES))["t"].item()
    assert got == expected


def test_garbage_is_null_not_an_error() -> None:
    df = pl.DataFrame({"t": ["yesterday", None, "2026-13-40T00:00:00"], "zone": ["UTC"] * 3})
    got = df.select(tp.to_utc(pl.col("t"), pl.col("zone"), ["UTC"]))["t"]
    assert got.dtype == pl.Datetime("us", "UTC")
    assert got.null_count() == 3


@pytest.mark.parametrize(
    ("lo", "hi", "anchor", "local", "want"),
    [
        (28790, 28820, None, None, 28800),  # one quarter hour fits
        (-3600, 7200, None, 3600, 3600),  # several fit: the machine's own offset
        (-3600, 7200, 1810, None, 1800),  # ... else the one the job start points at
        (-3600, 7200, 1400, None, None),  # ... not within 5 minutes: undecided
        (None, None, 1800, 0, None),  # no bound at all
        (100, 200, None, None, None),  # no quarter hour between the bounds
    ],
)
def test_choose_offset(lo, hi, anchor, local, want) -> None:
    assert tp.choose_offset(lo, hi, anchor, local) == want
