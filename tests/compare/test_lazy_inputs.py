"""compare on LazyFrames and on a scanned dataset: the same comparison as on the loaded
frames, reading only the two sides' rows and the columns compare uses."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import evalkit
from evalkit.compare import compare
from evalkit.load.dataset import export_dataset
from tests.conftest import HARBOR

OPUS = "openclaw-gateway__claude-opus-4-6__persistence"
SONNET = "openclaw-gateway__claude-sonnet-4-6__persistence"


@pytest.fixture(scope="module")
def runs() -> evalkit.Runs:
    return evalkit.load(HARBOR, progress=False)


def assert_same(lazy, eager) -> None:
    assert (lazy.a, lazy.b, lazy.a_kind, lazy.b_kind) == (
        eager.a,
        eager.b,
        eager.a_kind,
        eager.b_kind,
    )
    assert_frame_equal(lazy.tasks, eager.tasks)
    assert_frame_equal(lazy.transitions, eager.transitions)
    assert_frame_equal(lazy.trials.sort("trial_id"), eager.trials.sort("trial_id"))
    # integrity needs the Runs' trajectories, which a lazy frame does not carry
    opts = {"include_config_diff": False, "include_integrity": False}
    assert lazy.to_json(**opts) == eager.to_json(**opts)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (OPUS, SONNET),
        ("2026-05-26__02-16-39", "2026-05-26__02-16-43"),  # job names
        ([OPUS], [SONNET, "2026-05-26__02-16-43"]),  # lists
    ],
)
def test_lazyframe_equals_dataframe(runs: evalkit.Runs, a, b) -> None:
    eager = compare(runs.trials, a, b)
    assert_same(compare(runs.trials.lazy(), a, b), eager)


def test_scanned_dataset_equals_runs(runs: evalkit.Runs, tmp_path: Path) -> None:
    export_dataset(runs, tmp_path / "ds", redact=False)
    ds = evalkit.scan(tmp_path / "ds")
    from_runs = compare(runs, OPUS, SONNET)
    from_ds = compare(ds, OPUS, SONNET)
    assert_same(from_ds, from_runs)
    assert from_ds.runs is None  # no job configs to diff from a lazy dataset
    assert "configDiff" not in from_ds.to_json()


def test_only_the_two_sides_and_needed_columns_are_read(runs: evalkit.Runs) -> None:
    """Rows of other runs, and a column compare does not use, fail when computed."""
    t = runs.trials.with_columns(pl.lit("text").alias("notes"))
    bad = ~pl.col("run").is_in([OPUS, SONNET])
    poisoned = (
        t.lazy()
        .with_columns(
            pl.col("notes").str.to_integer(strict=True),
            pl.when(bad).then(pl.lit("x")).otherwise(pl.col("reward").cast(pl.String)).alias("__r"),
        )
        .with_columns(pl.col("__r").cast(pl.Float64, strict=True).alias("reward"))
        .drop("__r")
    )
    with pytest.raises(pl.exceptions.PolarsError):
        poisoned.select("reward").collect()
    assert_same(compare(poisoned, OPUS, SONNET), compare(runs.trials, OPUS, SONNET))


def test_unknown_side_on_a_lazyframe(runs: evalkit.Runs) -> None:
    with pytest.raises(KeyError, match="no run or job named"):
        compare(runs.trials.lazy(), OPUS, "no-such-run")
