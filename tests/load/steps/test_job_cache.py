"""The per-job trajectory cache (load/steps/job_cache.py): tables written under one
generation id and read back only as a complete, same-version, same-generation set."""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl
import pytest

from evalkit.load.errors import LoadError
from evalkit.load.shared import cache as _cache
from evalkit.load.steps import job_cache
from evalkit.load.steps.job_cache import (
    CACHE_VERSION,
    INDEX_SCHEMA,
    TABLES,
    errors_frame,
    errors_list,
    read_job,
    write_job,
)


@pytest.fixture(autouse=True)
def _cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVALKIT_CACHE_DIR", str(tmp_path / "cache"))


def _tables() -> dict[str, pl.DataFrame]:
    errs = [LoadError("/j/t/agent/trajectory.json", "trajectory", "not_atif", "m", "j", "t")]
    return {
        "traj_steps": pl.DataFrame({"trial_id": ["t", "t"], "step": [1, 2]}),
        "traj_calls": pl.DataFrame({"trial_id": ["t"], "tool": ["bash"]}),
        "traj_index": pl.DataFrame(
            {"trial_id": ["t"], "sig": ["-"], "n_steps": [2]},
            schema={"trial_id": pl.String, "sig": pl.String, "n_steps": pl.Int64},
        ),
        "traj_errors": errors_frame(errs),
    }


def _job(tmp_path: Path) -> str:
    d = tmp_path / "job"
    d.mkdir(exist_ok=True)
    return str(d)


def test_round_trip_keeps_tables_and_meta(tmp_path: Path) -> None:
    job = _job(tmp_path)
    tables = _tables()
    write_job(job, tables, {"sigs": "abc"})
    got = read_job(job)
    assert got is not None
    assert list(got.tables) == list(TABLES)
    for name in TABLES:
        assert got.tables[name].equals(tables[name])
    assert got.meta["sigs"] == "abc"
    assert re.fullmatch(r"[0-9a-f]{32}", got.meta["generation"])
    assert got.meta["version"] == CACHE_VERSION
    assert errors_list(got.tables["traj_errors"]) == [
        LoadError("/j/t/agent/trajectory.json", "trajectory", "not_atif", "m", "j", "t")
    ]


def test_each_write_is_a_new_generation(tmp_path: Path) -> None:
    job = _job(tmp_path)
    write_job(job, _tables())
    g1 = read_job(job).meta["generation"]
    write_job(job, _tables())
    assert read_job(job).meta["generation"] != g1


def test_nothing_cached_is_none(tmp_path: Path) -> None:
    assert read_job(_job(tmp_path)) is None


def test_a_missing_table_invalidates_the_set(tmp_path: Path) -> None:
    job = _job(tmp_path)
    write_job(job, _tables())
    (_cache.job_cache_dir(job) / "traj_calls.parquet").unlink()
    assert read_job(job) is None


def test_a_table_of_another_generation_invalidates_the_set(tmp_path: Path) -> None:
    job = _job(tmp_path)
    write_job(job, _tables())
    meta = read_job(job).meta
    # a half-finished later write: one table replaced under another generation
    _cache.write_table(
        job, "traj_index", CACHE_VERSION, _tables()["traj_index"], {"generation": "other"}
    )
    assert read_job(job) is None
    _cache.write_table(
        job,
        "traj_index",
        CACHE_VERSION,
        _tables()["traj_index"],
        {"generation": meta["generation"]},
    )
    assert read_job(job) is not None


def test_tables_without_a_generation_are_not_read(tmp_path: Path) -> None:
    job = _job(tmp_path)
    for name, df in _tables().items():
        _cache.write_table(job, name, CACHE_VERSION, df, {})
    assert read_job(job) is None


def test_another_cache_version_is_not_read(tmp_path: Path, monkeypatch) -> None:
    job = _job(tmp_path)
    write_job(job, _tables())
    monkeypatch.setattr(job_cache, "CACHE_VERSION", "traj-1-deadbeef")
    assert read_job(job) is None


def test_version_names_the_schema() -> None:
    assert re.fullmatch(r"traj-1-[0-9a-f]{8}", CACHE_VERSION)
    assert list(INDEX_SCHEMA) == [
        "trial_id", "sig", "has_data", "n_steps", "n_tool_calls", "n_turns",
        "fm_prompt", "fm_completion", "fm_cached", "fm_cost",
    ]  # fmt: skip


def test_errors_frame_and_list_round_trip() -> None:
    errs = [LoadError("p", "file", "too_large", "m"), LoadError("q", "job", "x", "y", "j", None)]
    df = errors_frame(errs)
    assert df.columns == ["path", "level", "error_type", "message", "job_id", "trial_id"]
    assert errors_list(df) == errs
    assert errors_list(errors_frame([])) == []
