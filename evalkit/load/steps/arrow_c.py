"""Arrow C stream pieces of the compiled extractor's frames (``steps/native.py``): the
``Layout`` Python asks a library table in (which columns, in which order, typed how, from
where) and the import of the stream the library hands back into a Polars frame (its
buffers moved, not copied)."""

from __future__ import annotations

import ctypes
import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from evalkit.load._columns import UTC_DATETIME

#: Column sources of a ``Layout`` besides a table column's index.
NULL, TRIAL_ID, ROW_TRIAL_ID = -1, -2, -3
#: Arrow C format of each column kind the library writes.
KIND_FORMAT = {"i": "l", "f": "g", "b": "b", "s": "U"}
_PyCapsule_New = ctypes.pythonapi.PyCapsule_New
_PyCapsule_New.restype = ctypes.py_object
_PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


def arrow_format(dtype: pl.DataType) -> str:
    """Arrow C format of the dtypes the extractor's frames hold."""
    if dtype == UTC_DATETIME:
        return "tsu:UTC"
    return {pl.Int64: "l", pl.Float64: "g", pl.Boolean: "b", pl.String: "U"}[dtype]  # type: ignore[index]


@dataclass(frozen=True)
class Layout:
    """Columns of a frame taken from a result table: (name, Arrow format, source) each,
    source = the table column's index (each at most once), NULL (all null), TRIAL_ID (the
    trial id at the position held in the row's column 0) or ROW_TRIAL_ID (the trial id
    at the row's position: tables with a row per trial); encoded for ``ek_stream``."""

    columns: tuple[tuple[str, str, int], ...]
    names: bytes
    formats: bytes
    sources: Any  # ctypes int64 array


@functools.cache
def layout(columns: tuple[tuple[str, str, int], ...]) -> Layout:
    """The ``Layout`` of these columns (encoded once)."""
    return Layout(
        columns,
        "\0".join(c[0] for c in columns).encode(),
        "\0".join(c[1] for c in columns).encode(),
        (ctypes.c_int64 * len(columns))(*(c[2] for c in columns)),
    )


def raw_layout(cols: Sequence[tuple[str, str]]) -> Layout:
    """A table's columns as the library writes them (``ts_us`` a UTC datetime)."""
    return layout(
        tuple(
            (name, "tsu:UTC" if name == "ts_us" else KIND_FORMAT[k], i)
            for i, (name, k) in enumerate(cols)
        )
    )


def _stream_importer() -> Callable[[Any], pl.DataFrame]:
    """``pl.DataFrame(stream)`` without its Python dispatch (~15 isinstance checks before
    the PyCapsule case: ~5 us warm, ~15 us just after a parse, per frame): the same two
    Polars calls ``polars/_utils/pycapsule.py`` makes. Falls back to ``pl.DataFrame``
    where these internals are not found."""
    try:
        from polars._plr import PySeries  # type: ignore[import-not-found]

        PySeries.from_arrow_c_stream, PySeries.struct_unnest, pl.DataFrame._from_pydf  # noqa: B018
    except (ImportError, AttributeError):
        return pl.DataFrame
    wrap = pl.DataFrame._from_pydf
    return lambda obj: wrap(PySeries.from_arrow_c_stream(obj).struct_unnest())


_from_stream = _stream_importer()


class _Stream:
    """An Arrow C stream capsule, offered to ``pl.DataFrame`` (PyCapsule interface)."""

    __slots__ = ("capsule",)

    def __init__(self, capsule: object) -> None:
        self.capsule = capsule

    def __arrow_c_stream__(self, requested_schema: object = None) -> object:
        return self.capsule


def import_stream(stream: int) -> pl.DataFrame:
    """The frame of an ArrowArrayStream the library made (address ``stream``); Polars
    takes its arrays (and releases them), the caller still frees the stream struct."""
    return _from_stream(_Stream(_PyCapsule_New(stream, b"arrow_array_stream", None)))
