"""load/findings/table: detected and recorded findings become one frame of the declared schema."""

from __future__ import annotations

import polars as pl

from evalkit.load.findings.columns import COLUMNS
from evalkit.load.findings.table import findings_frame

SCHEMA = {c.name: c.dtype for c in COLUMNS}


def test_nothing_found_is_an_empty_frame_of_the_schema() -> None:
    for got in (findings_frame(), findings_frame(None, None)):
        assert got.height == 0 and dict(got.schema) == SCHEMA


def test_both_producers_in_order_with_what_each_left_out_as_null() -> None:
    detected = pl.DataFrame(
        {"trial_id": ["t1"], "detector": ["retry_loop"], "step_start": [3], "mode": ["structural"]}
    )
    recorded = pl.DataFrame(
        {"trial_id": ["t2"], "detector": ["unverified_file_claim"], "source": ["recorded"],
         "step_start": ["7"]}  # a string index, as a rollout may carry it
    )  # fmt: skip
    got = findings_frame(detected, None, recorded)
    assert list(got.columns)[: len(SCHEMA)] == list(SCHEMA)
    assert got["trial_id"].to_list() == ["t1", "t2"]
    assert got["step_start"].to_list() == [3, 7]
    assert got["mode"].to_list() == ["structural", None]
    assert got["source"].to_list() == [None, "recorded"]
    assert got.schema["step_start"] == pl.Int64
