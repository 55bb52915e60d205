"""Corrupted copies of real jobs: every problem is a load_errors row, every trial stays a row."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import polars as pl
import pytest

import evalkit
from tests.conftest import OPENCLAW, SKILLSBENCH_JOB


@pytest.fixture()
def job(tmp_path: Path) -> Path:
    dst = tmp_path / "job"
    shutil.copytree(SKILLSBENCH_JOB, dst)
    return dst


def _trial_result(job: Path, name: str) -> Path:
    return job / name / "result.json"


def _load(path: Path) -> evalkit.Runs:
    return evalkit.load(path, cache=False, progress=False)


def test_truncated_json_is_a_load_error_and_an_incomplete_row(job: Path) -> None:
    p = _trial_result(job, "3d-scan-calc__H3b5QLh")
    p.write_bytes(p.read_bytes()[:500])
    runs = _load(job)
    assert runs.trials.height == 17
    row = runs.trials.filter(pl.col("trial_name") == "3d-scan-calc__H3b5QLh")
    assert row["outcome"].item() == "incomplete"
    err = runs.load_errors.filter(pl.col("path") == str(p))
    assert err["error_type"].to_list() == ["json_decode"]
    assert err["trial_id"].item() == row["trial_id"].item()
    # every other trial unchanged
    assert runs.trials.filter(pl.col("outcome") == "pass").height == 5


@pytest.mark.parametrize(
    ("content", "etype"),
    [
        (b"", "empty"),
        (b"   \n", "empty"),
        (b"\x00\xff\xfe binary \x89PNG", "invalid_utf8"),
        (b'{"a": [1, 2', "json_decode"),
        (b"[1, 2, 3]", "wrong_type"),
        (b'"a string"', "wrong_type"),
    ],
)
def test_bad_result_files(job: Path, content: bytes, etype: str) -> None:
    p = _trial_result(job, "dialogue-parser__EhaimzM")
    p.write_bytes(content)
    runs = _load(job)
    assert runs.trials.height == 17
    assert runs.load_errors.filter(pl.col("path") == str(p))["error_type"].to_list() == [etype]


def test_directory_named_result_json(job: Path) -> None:
    p = _trial_result(job, "dialogue-parser__EhaimzM")
    p.unlink()
    p.mkdir()
    runs = _load(job)
    assert runs.trials.height == 17
    assert runs.load_errors.filter(pl.col("path") == str(p))["error_type"].to_list() == [
        "not_a_file"
    ]


def test_wrong_types_inside_result(job: Path) -> None:
    import orjson

    p = _trial_result(job, "3d-scan-calc__qLuah6E")
    d = orjson.loads(p.read_bytes())
    d["verifier_result"] = {"rewards": {"reward": "high", "other": [1], "ok": 0.5}}
    d["agent_result"] = {
        "n_input_tokens": "12",
        "n_cache_tokens": 1.5,
        "n_output_tokens": True,
        "cost_usd": "free",
    }
    d["started_at"] = 12345
    d["agent_info"] = "claude"
    d["exception_info"] = ["not", "a", "dict"]
    d["task_id"] = None
    p.write_bytes(orjson.dumps(d))
    runs = _load(job)
    r = runs.trials.filter(pl.col("trial_name") == "3d-scan-calc__qLuah6E").row(0, named=True)
    assert r["reward"] == 0.5 and [x["name"] for x in r["rewards"]] == ["ok"]
    assert (
        r["n_input_tokens"] is None and r["n_cache_tokens"] is None and r["n_output_tokens"] is None
    )
    assert r["cost_usd"] is None and r["started_at"] is None
    assert r["outcome"] == "partial"
    kinds = runs.load_errors.filter(pl.col("trial_id") == r["trial_id"])["error_type"].to_list()
    assert kinds.count("non_numeric_reward") == 2


def test_nan_and_huge_numbers(job: Path) -> None:
    p = _trial_result(job, "3d-scan-calc__qLuah6E")
    text = (
        p.read_text()
        .replace('"reward": 1.0', '"reward": NaN')
        .replace('"n_input_tokens": 433881', '"n_input_tokens": 123456789012345678901234567890')
    )
    p.write_text(text)
    runs = _load(job)
    r = runs.trials.filter(pl.col("trial_name") == "3d-scan-calc__qLuah6E").row(0, named=True)
    assert r["reward"] is None and r["n_input_tokens"] is None
    assert r["outcome"] == "no-reward"


def test_broken_job_files_keep_the_trials(job: Path) -> None:
    (job / "result.json").write_bytes(b"{")
    (job / "config.json").write_bytes(b"\x00\x01")
    runs = _load(job)
    assert runs.trials.height == 17
    assert runs.jobs.height == 1 and runs.jobs["state"].item() in ("unknown", "running")
    assert set(runs.load_errors["level"]) == {"job"}


def test_unreadable_trial_folder(job: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # CI runs as root, which reads everything: simulate EACCES at the OS boundary instead
    import evalkit.load.trials.extract as ex

    bad = str((job / "dialogue-parser__EhaimzM").resolve())
    real_listdir = os.listdir

    def listdir(path: str) -> list[str]:
        if os.fspath(path) == bad:
            raise PermissionError(13, "Permission denied", path)
        return real_listdir(path)

    monkeypatch.setattr(ex.os, "listdir", listdir)
    runs = _load(job)
    assert runs.trials.height == 17
    row = runs.trials.filter(pl.col("trial_name") == "dialogue-parser__EhaimzM")
    assert row["outcome"].item() == "incomplete"
    assert runs.load_errors.filter(pl.col("path") == bad)["error_type"].to_list() == ["unreadable"]


def test_symlink_loop_and_missing_paths(tmp_path: Path) -> None:
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    shutil.copytree(OPENCLAW / "2026-05-26__11-41-23", tmp_path / "j1")
    runs = evalkit.load([tmp_path, tmp_path / "nope"], cache=False, progress=False)
    assert runs.trials.height == 1
    assert "missing" in runs.load_errors["error_type"].to_list()


def test_file_size_cap(job: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVALKIT_MAX_FILE_MB", "0.001")  # ~1 KB
    runs = _load(job)
    assert runs.trials.height == 17
    assert set(runs.load_errors["error_type"]) == {"too_large"}


def test_same_folder_through_overlapping_paths_is_one_row(job: Path) -> None:
    runs = evalkit.load(
        [job, job / "3d-scan-calc__qLuah6E", job.parent], cache=False, progress=False
    )
    assert runs.trials.height == 17


def test_copied_folder_is_another_row(job: Path, tmp_path: Path) -> None:
    shutil.copytree(job, tmp_path / "copy")
    runs = evalkit.load([job, tmp_path / "copy"], cache=False, progress=False)
    assert runs.trials.height == 34 and runs.trials["trial_id"].n_unique() == 34


def test_read_tail_refuses_fifos_and_cuts_large_files(tmp_path: Path) -> None:
    from evalkit.load.shared.io import read_tail

    fifo = tmp_path / "test-stdout.txt"
    os.mkfifo(fifo)
    assert read_tail(str(fifo)) == (None, False)  # returns at once: never waits for a writer
    big = tmp_path / "big.txt"
    big.write_bytes(b"x" * 100 + "é\nlast line\n".encode())
    text, cut = read_tail(str(big), max_bytes=12)
    assert cut and text.endswith("last line\n")
    assert read_tail(str(tmp_path / "missing")) == (None, False)
    assert read_tail(str(tmp_path)) == (None, False)
