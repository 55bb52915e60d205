"""The load_errors frame and path_text (load/errors.py)."""

from __future__ import annotations

import os
import sys

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalkit.load.errors import LoadError, errors_frame, path_text

_COLUMNS = ["path", "level", "error_type", "message", "job_id", "trial_id"]


def test_empty_list_gives_a_typed_zero_row_frame() -> None:
    df = errors_frame([])
    assert df.height == 0
    assert df.schema == pl.Schema({c: pl.String for c in _COLUMNS})


def test_rows_keep_values_and_order() -> None:
    errors = [
        LoadError("/j/t/result.json", "trial", "json_decode", "bad json", "job-1", "t-1"),
        LoadError("/j", "job", "missing_result", "no result"),
        LoadError("/j/t/verifier/reward.json", "file", "non_numeric_reward", "m", trial_id="t-2"),
    ]
    df = errors_frame(errors)
    assert df.columns == _COLUMNS
    assert df.rows() == [
        ("/j/t/result.json", "trial", "json_decode", "bad json", "job-1", "t-1"),
        ("/j", "job", "missing_result", "no result", None, None),
        ("/j/t/verifier/reward.json", "file", "non_numeric_reward", "m", None, "t-2"),
    ]


def test_load_error_is_frozen() -> None:
    e = LoadError("p", "file", "too_large", "m")
    with pytest.raises(AttributeError):
        e.path = "q"  # type: ignore[misc]


def test_path_text_of_text_paths_is_unchanged() -> None:
    for p in ("", "/a/b", "/jobs/café/日本/trial__x", "emoji 🎉"):
        assert path_text(p) is p


def test_path_text_escapes_undecodable_name_bytes() -> None:
    # os.fsdecode keeps the byte 0xE9 as the lone surrogate U+DCE9 (surrogateescape)
    name = os.fsdecode(b"/jobs/caf\xe9/x")
    assert name == "/jobs/caf\udce9/x"
    assert path_text(name) == "/jobs/caf\\xe9/x"


def test_path_text_of_a_surrogate_not_from_a_name_is_replaced() -> None:
    # U+D800 is not a surrogateescape byte: os.fsencode cannot take it back to bytes
    assert path_text("a\ud800b") == "a?b"


@pytest.mark.skipif(sys.getfilesystemencoding() != "utf-8", reason="needs a UTF-8 file system")
@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=30))
def test_path_text_equals_backslashreplace_decoding(raw: bytes) -> None:
    got = path_text(os.fsdecode(raw))
    assert got == raw.decode("utf-8", "backslashreplace")
    got.encode("utf-8")  # valid UTF-8 text (raises otherwise)
