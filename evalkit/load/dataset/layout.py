"""Where everything lives in an exported dataset, and what its metadata says.

Layout (hive style, one Parquet file per frame per job)::

    DEST/<frame>/run=<run>/job_id=<job_id>/part-0.parquet
    DEST/_evalkit/columns.parquet    # schema version + every column's dtype and doc
    DEST/_evalkit/manifest.parquet   # one row per file: frame, run, job_id, path, sha256, ...

Partition values are percent-encoded (``a/b`` -> ``a%2Fb``, as Spark escapes them; Polars,
DuckDB and Spark decode them); a null value is ``__HIVE_DEFAULT_PARTITION__``. The frames and
their columns are the declarations in ``evalkit/load/*/columns.py`` (via
:data:`evalkit.load.schema_doc.FRAMES`), never restated here.
"""

from __future__ import annotations

from urllib.parse import quote

import polars as pl

from evalkit.load._columns import Column, schema
from evalkit.load.schema_doc import FRAMES

#: Version of the layout and column meanings. Bump it when the layout or a declared
#: column's dtype or meaning changes; a column added to a declaration needs no bump
#: (partitions written before it read that column as null).
SCHEMA_VERSION = 1

#: The partition columns, outermost first.
PARTITION_KEYS = ("run", "job_id")
NULL_PARTITION = "__HIVE_DEFAULT_PARTITION__"
META_DIR = "_evalkit"
COLUMNS_FILE = f"{META_DIR}/columns.parquet"
MANIFEST_FILE = f"{META_DIR}/manifest.parquet"
PART_FILE = "part-0.parquet"
#: Key-value metadata of every data file (each file says what it is).
FILE_META_VERSION = "evalkit.schema_version"
FILE_META_FRAME = "evalkit.frame"

MANIFEST_SCHEMA: dict[str, pl.DataType] = {
    "frame": pl.String(),
    "run": pl.String(),
    "job_id": pl.String(),
    "path": pl.String(),
    "sha256": pl.String(),
    "n_rows": pl.Int64(),
    "schema_version": pl.Int64(),
    "written_at": pl.Datetime("us", "UTC"),
}


def frame_columns() -> dict[str, tuple[Column, ...]]:
    """``{frame name: its declared columns}`` for the six frames of a load."""
    return {title.removeprefix("runs."): cols for title, _src, cols in FRAMES}


def frame_schema(frame: str) -> dict[str, pl.DataType]:
    """The declared ``{column: dtype}`` of one frame."""
    return schema(frame_columns()[frame])


def partition_value(value: str | None) -> str:
    """One hive path segment value: percent-encoded text, or the null marker. A label that
    is the marker itself is refused: every hive reader would read it back as null."""
    if value == NULL_PARTITION:
        raise ValueError(
            f"a run or job id of {NULL_PARTITION!r} cannot be partitioned: hive readers read "
            "it back as null; relabel the run"
        )
    return NULL_PARTITION if value is None else quote(value, safe="")


def partition_path(frame: str, run: str | None, job_id: str | None) -> str:
    """Relative path (``/``-separated) of a frame's file for one job."""
    return f"{frame}/run={partition_value(run)}/job_id={partition_value(job_id)}/{PART_FILE}"


def columns_table() -> pl.DataFrame:
    """The dataset's column documentation: one row per (frame, column), with the version."""
    rows = [
        {
            "schema_version": SCHEMA_VERSION,
            "frame": frame,
            "position": i,
            "column": c.name,
            "dtype": str(c.dtype),
            "doc": c.doc,
            "required": c.required,
        }
        for frame, cols in frame_columns().items()
        for i, c in enumerate(cols)
    ]
    return pl.DataFrame(
        rows,
        schema={
            "schema_version": pl.Int64,
            "frame": pl.String,
            "position": pl.Int64,
            "column": pl.String,
            "dtype": pl.String,
            "doc": pl.String,
            "required": pl.Boolean,
        },
    )
