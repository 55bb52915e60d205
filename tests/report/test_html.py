"""report/html.py: escaping, value formats (each kind at its boundaries), counts with their
noun in the right number, and where long identifiers may wrap."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from evalkit.report import html as H


def test_esc_quotes_and_none() -> None:
    assert H.esc('<a href="x">&</a>') == "&lt;a href=&quot;x&quot;&gt;&amp;&lt;/a&gt;"
    assert H.esc(None) == ""


@pytest.mark.parametrize(
    ("v", "kind", "want"),
    [
        (None, "pct", "–"),
        (float("nan"), "", "–"),
        (0.0009, "p", "< 0.001"),
        (0.001, "p", "0.001"),
        (0.0512, "pts", "+5.1 pts"),
        (-0.05, "pts", "-5.0 pts"),
        (0.125, "pct", "12%"),
        (0.125, "pct1", "12.5%"),
        (0.994, "usd", "$0.9940"),
        (0.995, "usd", "$0.99"),  # >= 0.995 rounds to cents
        (1234.5, "usd", "$1,234.50"),
        (9999, "tok", "9,999"),
        (10_000, "tok", "10k"),
        (2_500_000, "tok", "2.5M"),
        (59, "dur", "59 s"),
        (90, "dur", "1.5 min"),
        (5400, "dur", "1.5 h"),
        (1234567, "int", "1,234,567"),
        (0.12345, "float", "0.123"),
        (0.000123456, "", "0.000123"),
        ([1, "a"], "", "1, a"),
        (datetime(2026, 12, 8, 1, 2, tzinfo=UTC), "", "2026-12-08 01:02 UTC"),
        (datetime(2026, 12, 8, 1, 2), "", "2026-12-08 01:02"),
    ],
)
def test_fmt(v, kind: str, want: str) -> None:
    assert H.fmt(v, kind) == want


def test_counted_singular_plural_and_irregular() -> None:
    assert [H.counted(n, "run") for n in (0, 1, 2)] == ["0 runs", "1 run", "2 runs"]
    assert H.counted(1, "task") == "1 task"
    assert H.counted(3, "is", "are") == "3 are"


def test_breakable_only_long_identifiers() -> None:
    assert H.breakable("a__b/c") == "a__b/c"
    long = "openclaw-gateway__claude-opus/persistence"
    assert H.breakable(long) == "openclaw-gateway__<wbr>claude-opus/<wbr>persistence"
