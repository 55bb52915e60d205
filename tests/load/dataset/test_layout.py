"""evalkit.load.dataset.layout: where each file of an exported dataset lives, and its docs.

``partition_value`` percent-encodes a hive partition value (everything but letters, digits
and ``_.-~``, as ``urllib.parse.quote(safe="")`` does; null is the hive default marker),
``partition_path`` builds ``<frame>/run=<run>/job_id=<job_id>/part-0.parquet``,
``frame_columns`` / ``frame_schema`` give the six declared frames, and ``columns_table`` is
one documentation row per (frame, column). Checked against the column declarations of
``evalkit/load/*/columns.py`` and hand-encoded paths; export/scan round trips are in
``tests/load/dataset/test_scan.py`` and ``test_write.py``.
"""

from __future__ import annotations

from urllib.parse import unquote

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalkit.load.dataset.layout import (
    COLUMNS_FILE,
    MANIFEST_FILE,
    MANIFEST_SCHEMA,
    NULL_PARTITION,
    PARTITION_KEYS,
    SCHEMA_VERSION,
    columns_table,
    frame_columns,
    frame_schema,
    partition_path,
    partition_value,
)
from evalkit.load.errors import COLUMNS as ERROR_COLUMNS
from evalkit.load.findings.columns import COLUMNS as FINDING_COLUMNS
from evalkit.load.jobs.columns import COLUMNS as JOB_COLUMNS
from evalkit.load.steps.columns import STEP_COLUMNS, TOOL_CALL_COLUMNS
from evalkit.load.trials.columns import COLUMNS as TRIAL_COLUMNS

DECLARED = {
    "jobs": JOB_COLUMNS,
    "trials": TRIAL_COLUMNS,
    "steps": STEP_COLUMNS,
    "tool_calls": TOOL_CALL_COLUMNS,
    "findings": FINDING_COLUMNS,
    "load_errors": ERROR_COLUMNS,
}


def test_the_six_frames_are_the_column_declarations_in_load_order() -> None:
    fc = frame_columns()
    assert list(fc) == ["jobs", "trials", "steps", "tool_calls", "findings", "load_errors"]
    for name, cols in DECLARED.items():
        assert fc[name] == tuple(cols)


def test_frame_schema_is_the_declared_name_to_dtype_mapping() -> None:
    s = frame_schema("load_errors")
    assert list(s) == ["path", "level", "error_type", "message", "job_id", "trial_id"]
    assert set(s.values()) == {pl.String}
    assert frame_schema("trials") == {c.name: c.dtype for c in TRIAL_COLUMNS}
    with pytest.raises(KeyError):
        frame_schema("nope")


@pytest.mark.parametrize(
    ("value", "encoded"),
    [
        ("baseline", "baseline"),
        ("a/b", "a%2Fb"),  # as Spark escapes a '/'
        ("x=1 y", "x%3D1%20y"),
        ("100%", "100%25"),
        ("claude-code__anthropic/claude-x__ds@1.0", "claude-code__anthropic%2Fclaude-x__ds%401.0"),
        ("é", "%C3%A9"),  # UTF-8 bytes
        ("_.-~", "_.-~"),  # the unreserved characters stay
        ("", ""),
        (None, NULL_PARTITION),
    ],
)
def test_partition_values_are_percent_encoded_and_null_is_the_hive_marker(
    value: str | None, encoded: str
) -> None:
    assert partition_value(value) == encoded


@settings(max_examples=300, derandomize=True, deadline=None)
@given(st.text(max_size=30))
def test_an_encoded_value_is_one_path_segment_that_decodes_back(value: str) -> None:
    enc = partition_value(value)
    assert "/" not in enc and "=" not in enc and "\\" not in enc
    assert unquote(enc) == value
    assert enc.isascii()


def test_partition_path_nests_frame_run_and_job() -> None:
    assert partition_path("trials", "base/line", "j 1") == (
        "trials/run=base%2Fline/job_id=j%201/part-0.parquet"
    )
    assert partition_path("load_errors", None, None) == (
        f"load_errors/run={NULL_PARTITION}/job_id={NULL_PARTITION}/part-0.parquet"
    )
    assert PARTITION_KEYS == ("run", "job_id")


def test_metadata_files_live_in_the_evalkit_folder() -> None:
    assert COLUMNS_FILE == "_evalkit/columns.parquet"
    assert MANIFEST_FILE == "_evalkit/manifest.parquet"
    assert list(MANIFEST_SCHEMA) == [
        "frame", "run", "job_id", "path", "sha256", "n_rows", "schema_version", "written_at"
    ]  # fmt: skip
    assert MANIFEST_SCHEMA["written_at"] == pl.Datetime("us", "UTC")


def test_columns_table_has_one_row_per_declared_column_with_its_position() -> None:
    t = columns_table()
    assert t.schema == pl.Schema(
        {
            "schema_version": pl.Int64,
            "frame": pl.String,
            "position": pl.Int64,
            "column": pl.String,
            "dtype": pl.String,
            "doc": pl.String,
            "required": pl.Boolean,
        }
    )
    assert t.height == sum(len(c) for c in DECLARED.values())
    assert t["schema_version"].unique().to_list() == [SCHEMA_VERSION]
    for name, cols in DECLARED.items():
        rows = t.filter(pl.col("frame") == name)
        assert rows["position"].to_list() == list(range(len(cols)))
        assert rows["required"].to_list() == [c.required for c in cols]
        assert rows["column"].to_list() == [c.name for c in cols]


def test_columns_table_names_dtypes_as_polars_prints_them() -> None:
    t = columns_table()
    row = t.filter((pl.col("frame") == "load_errors") & (pl.col("column") == "path"))
    assert row.select("dtype", "required").row(0) == ("String", True)
    # the trials' rewards: a list of name/value structs
    rewards = t.filter((pl.col("frame") == "trials") & (pl.col("column") == "rewards"))
    assert rewards["dtype"].item().startswith("List(Struct(")
