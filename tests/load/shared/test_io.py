"""load/shared/io: what a reader gets back for every kind of file, never an exception."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalkit.load.shared import io

_json = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=20),
    lambda kids: (
        st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=8), kids, max_size=4)
    ),
    max_leaves=20,
)


@given(_json)
def test_parse_json_equals_the_standard_library(value: object) -> None:
    data = json.dumps(value).encode()
    assert io.parse_json(data, "f.json", "trial") == (json.loads(data), None)


@pytest.mark.parametrize(
    ("data", "kind"),
    [
        (b"", "empty"),
        (b"  \n", "empty"),
        (b"{", "json_decode"),
        (b"[" * 2000 + b"]" * 2000, "json_decode"),
        (b'{"a": "\xff"}', "invalid_utf8"),
    ],
)
def test_bad_json_is_a_load_error(data: bytes, kind: str) -> None:
    value, err = io.parse_json(data, "f.json", "trial")
    assert value is None and err is not None
    assert (err.error_type, err.path, err.level) == (kind, "f.json", "trial")


def test_nan_literals_and_lone_surrogates_are_read() -> None:
    value, err = io.parse_json(b'{"x": NaN, "s": "a\\ud800b"}', "f.json", "trial")
    assert err is None
    assert value["x"] != value["x"]  # NaN
    assert value["s"] == "a\ufffdb"


def test_read_bytes_refuses_what_is_not_a_small_regular_file(tmp_path: Path) -> None:
    f = tmp_path / "f.json"
    f.write_bytes(b"x" * 100)
    assert io.read_bytes(str(f), "trial") == (b"x" * 100, None)
    kinds = {
        "missing": io.read_bytes(str(tmp_path / "nope"), "trial")[1],
        "not_a_file": io.read_bytes(str(tmp_path), "trial")[1],
        "too_large": io.read_bytes(str(f), "trial", limit=10)[1],
    }
    os.mkfifo(tmp_path / "fifo")
    kinds["fifo"] = io.read_regular(str(tmp_path / "fifo"), "trial")[1]  # must not block
    assert {k: e.error_type for k, e in kinds.items()} == {
        "missing": "missing",
        "not_a_file": "not_a_file",
        "too_large": "too_large",
        "fifo": "not_a_file",
    }


def test_read_regular_gives_the_stat_of_what_it_read(tmp_path: Path) -> None:
    f = tmp_path / "f.json"
    f.write_bytes(b"{}")
    data, err, st_ = io.read_regular(str(f), "trial")
    assert (data, err) == (b"{}", None)
    assert st_ is not None and st_.st_ino == os.stat(f).st_ino


def test_the_cap_follows_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVALKIT_MAX_FILE_MB", "0.5")
    assert io.max_bytes() == 512 * 1024
    monkeypatch.setenv("EVALKIT_MAX_FILE_MB", "lots")
    assert io.max_bytes() == io.DEFAULT_MAX_BYTES


def test_read_tail_keeps_the_end_and_says_it_cut(tmp_path: Path) -> None:
    f = tmp_path / "log.txt"
    f.write_bytes(b"a" * 100 + b"\xffEND")
    text, cut = io.read_tail(str(f), max_bytes=4)
    assert (text, cut) == ("\ufffdEND", True)
    assert io.read_tail(str(f)) == ("a" * 100 + "\ufffdEND", False)
    assert io.read_tail(str(tmp_path)) == (None, False)
    assert io.read_tail(None) == (None, False)
