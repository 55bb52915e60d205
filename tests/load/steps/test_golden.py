"""The trajectory frames (steps, tool_calls, trial_summary, load errors) and the trials
frames of every case of ``golden_corpus`` equal the frozen golden outputs
(tests/fixtures/golden/trajectories), with the cache off, and with the cache on both when
it is written and when it is read back."""

from __future__ import annotations

import sys
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from tests.deadline import with_deadline
from tests.load.steps.golden_corpus import build_case, cases, frames_of, read_golden, run_case

CASES = cases()
DEADLINE_S = 120  # a hang (FIFO, symlink loop) fails instead of blocking the suite


def _as_text(df: pl.DataFrame) -> pl.DataFrame:
    """Float columns as text (tells -0.0 from 0.0, which equality does not)."""
    return df.with_columns(pl.col(pl.Float32, pl.Float64).cast(pl.String))


def _differences(frame: str, got: pl.DataFrame, want: pl.DataFrame) -> str:
    """The first differing cells, readable (for the assertion message)."""
    if got.schema != want.schema:
        return f"{frame}: schema {dict(got.schema)} != golden {dict(want.schema)}"
    if got.height != want.height:
        return f"{frame}: {got.height} rows != golden {want.height}"
    a, b = _as_text(got), _as_text(want)
    out = []
    for c in got.columns:
        rows = a.select(~pl.col(c).eq_missing(b[c]).alias("d"))["d"].arg_true().to_list()
        for r in rows[:3]:
            out.append(f"{frame}.{c} row {r}: got {got[c][r]!r} golden {want[c][r]!r}")
    return "\n".join(out) or f"{frame}: equal values, other difference"


def assert_golden(case: str, got: dict[str, pl.DataFrame]) -> None:
    problems = []
    for frame, df in got.items():
        want = read_golden(frame, case)
        want = want.select(df.columns) if set(want.columns) >= set(df.columns) else want
        try:
            assert_frame_equal(df, want, check_exact=True)
            assert_frame_equal(_as_text(df), _as_text(want), check_exact=True)
        except AssertionError:
            problems.append(_differences(frame, df, want))
    assert not problems, f"case {case!r} differs from its golden output:\n" + "\n".join(problems)


@pytest.mark.parametrize("case", list(CASES))
def test_frames_equal_golden(case: str, tmp_path: Path) -> None:
    got = with_deadline(lambda: run_case(CASES[case], tmp_path / "t"), DEADLINE_S, case)
    assert_golden(case, got)


@pytest.mark.parametrize("case", ["harbor", "fuzz_seed", "edges", "random", "atif_tree"])
def test_cached_frames_equal_golden(
    case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Written to the per-job cache, then read back from it: both equal the golden."""
    monkeypatch.setenv("EVALKIT_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "t"
    built = build_case(CASES[case], root)
    assert_golden(case, frames_of(built, root, cache=True))
    assert any((tmp_path / "cache").rglob("traj_steps.parquet")), "nothing cached"
    assert_golden(case, frames_of(built, root, cache=True))


def test_frames_do_not_depend_on_the_recursion_limit(tmp_path: Path) -> None:
    """Hypothesis raises Python's recursion limit while its tests run (in any test of the
    same worker that overlaps one); how deep a file may nest is evalkit's own rule, so the
    edge cases (2000 and 1025 levels among them) still equal the golden output."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(old + 5000)
    try:
        got = run_case(CASES["edges"], tmp_path / "t")
    finally:
        sys.setrecursionlimit(old)
    assert_golden("edges", got)
