"""Column declarations and the helpers built on them (load/_columns.py)."""

from __future__ import annotations

import polars as pl

from evalkit.load._columns import (
    UTC_DATETIME,
    Column,
    conform,
    docs_table,
    empty,
    reader_schema,
    schema,
)

COLS = (
    Column("id", pl.String, "Key.", True),
    Column("n", pl.Int64, "Count."),
    Column("ts", UTC_DATETIME, "Derived time.", derived=True),
    Column("ok", pl.Boolean, "Flag."),
)


def test_schema_is_declaration_order() -> None:
    assert list(schema(COLS).items()) == [
        ("id", pl.String),
        ("n", pl.Int64),
        ("ts", pl.Datetime("us", "UTC")),
        ("ok", pl.Boolean),
    ]


def test_reader_schema_skips_derived_and_appends_working() -> None:
    working = (Column("__w", pl.Float64, "working"), Column("__d", pl.String, "x", derived=True))
    assert reader_schema(COLS, working) == {
        "id": pl.String,
        "n": pl.Int64,
        "ok": pl.Boolean,
        "__w": pl.Float64,
    }
    assert list(reader_schema(COLS)) == ["id", "n", "ok"]


def test_empty_frame_has_exact_schema() -> None:
    df = empty(COLS)
    assert df.height == 0
    assert df.schema == pl.Schema(schema(COLS))


def test_conform_casts_orders_and_fills_missing() -> None:
    df = pl.DataFrame({"extra": [1, 2], "n": ["3", "x"], "id": [7, 8]})
    out = conform(df, COLS)
    assert out.columns == ["id", "n", "ts", "ok", "extra"]
    assert out.schema["id"] == pl.String and out.schema["n"] == pl.Int64
    assert out.schema["ts"] == UTC_DATETIME and out.schema["ok"] == pl.Boolean
    # non-strict cast: "x" is not an integer and becomes null; missing columns are null
    assert out.rows() == [("7", 3, None, None, 1), ("8", None, None, None, 2)]


def test_conform_without_extra_drops_undeclared() -> None:
    df = pl.DataFrame({"extra": [1], "id": ["a"]})
    assert conform(df, COLS, extra=False).columns == ["id", "n", "ts", "ok"]


def test_docs_table_marks_contract_columns() -> None:
    assert docs_table(COLS[:2]).splitlines() == [
        "| column | dtype | meaning |",
        "|---|---|---|",
        "| `id` | `String` | Key. *(contract)* |",
        "| `n` | `Int64` | Count. |",
    ]
