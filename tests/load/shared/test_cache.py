"""load/shared/cache: tables per job, whole-load results, signatures; a broken entry is a miss."""

from __future__ import annotations

import os
import time
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from evalkit.load.shared import cache


@pytest.fixture(autouse=True)
def _root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("EVALKIT_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_a_table_comes_back_with_its_meta_and_only_for_its_version(tmp_path: Path) -> None:
    df = pl.DataFrame({"a": [1, 2], "b": ["x", None]})
    cache.write_table(tmp_path / "job", "trials", "v7", df, {"note": 1})
    got, meta = cache.read_table(tmp_path / "job", "trials", "v7")
    assert_frame_equal(got, df)
    assert meta["note"] == 1 and meta["job_dir"] == os.path.realpath(tmp_path / "job")
    assert cache.read_table(tmp_path / "job", "trials", "v8") is None
    assert cache.read_table(tmp_path / "other", "trials", "v7") is None


def test_a_broken_entry_reads_as_missing(tmp_path: Path) -> None:
    cache.write_table(tmp_path / "job", "trials", "v1", pl.DataFrame({"a": [1]}))
    (cache.job_cache_dir(tmp_path / "job") / "trials.parquet").write_bytes(b"not parquet")
    assert cache.read_table(tmp_path / "job", "trials", "v1") is None
    (cache.job_cache_dir(tmp_path / "job") / "trials.meta.json").write_bytes(b"[1,")
    assert cache.read_meta(tmp_path / "job", "trials", "v1") is None


def test_whole_load_results_keep_the_newest(_root: Path) -> None:
    for i in range(cache.MAX_LOADS + 3):
        cache.write_load(f"k{i}", pl.DataFrame({"i": [i]}), {"i": i})
        os.utime(cache._loads_dir() / f"k{i}.meta.json", ns=(i * 10**9, i * 10**9))
    cache.write_load("last", pl.DataFrame({"i": [-1]}), {})
    kept = sorted(p.name for p in cache._loads_dir().glob("*.meta.json"))
    assert len(kept) == cache.MAX_LOADS
    assert "k0.meta.json" not in kept and "last.meta.json" in kept
    assert cache.read_load("k0") is None
    assert cache.read_load("last")[0]["i"].to_list() == [-1]


def test_the_signature_sees_an_edit_whose_mtime_was_put_back(tmp_path: Path) -> None:
    f = tmp_path / "result.json"
    f.write_bytes(b'{"reward": 0}')
    before = cache.file_sig(str(f))
    st = os.stat(f)
    time.sleep(0.05)  # past the file system's coarse clock tick, so ctime can move
    with open(f, "r+b") as fh:
        fh.write(b'{"reward": 1}')
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert os.stat(f).st_mtime_ns == st.st_mtime_ns and os.stat(f).st_size == st.st_size
    assert cache.file_sig(str(f)) != before
    assert cache.file_sig(str(tmp_path / "missing")) == "-"


def test_clear_removes_one_job_or_all(tmp_path: Path, _root: Path) -> None:
    for name in ("a", "b"):
        cache.write_table(tmp_path / name, "trials", "v1", pl.DataFrame({"x": [1]}))
    cache.clear(tmp_path / "a")
    assert cache.read_table(tmp_path / "a", "trials", "v1") is None
    assert cache.read_table(tmp_path / "b", "trials", "v1") is not None
    cache.clear()
    assert not _root.exists()
