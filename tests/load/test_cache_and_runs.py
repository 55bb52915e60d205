"""Persistent cache (reuse, incremental update) and run labelling."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import orjson
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import evalkit
from evalkit.load.shared import cache as cache_mod
from tests.conftest import OPENCLAW, SKILLSBENCH_JOB


@pytest.fixture()
def job(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("EVALKIT_CACHE_DIR", str(tmp_path / "cache"))
    dst = tmp_path / "job"
    shutil.copytree(SKILLSBENCH_JOB, dst)
    return dst


def _count_extracts(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    import evalkit.load.trials.table as table

    seen: list[str] = []
    real = table.extract_trial

    def spy(d: str, tid: str):
        seen.append(d)
        return real(d, tid)

    monkeypatch.setattr(table, "extract_trial", spy)
    return seen


def test_second_load_reuses_cache_and_gives_the_same_frame(
    job: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = _count_extracts(monkeypatch)
    a = evalkit.load(job, progress=False)
    assert len(seen) == 17
    b = evalkit.load(job, progress=False)
    assert len(seen) == 17  # nothing re-extracted
    assert_frame_equal(a.trials, b.trials)
    assert_frame_equal(a.jobs, b.jobs)
    assert_frame_equal(a.trials, evalkit.load(job, cache=False, progress=False).trials)
    assert (cache_mod.job_cache_dir(job) / "trials.parquet").exists()


def test_added_and_changed_trials_are_picked_up_incrementally(
    job: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    res = job / "result.json"
    d = orjson.loads(res.read_bytes())
    d["finished_at"] = None  # a running job: the per-trial check applies
    res.write_bytes(orjson.dumps(d))
    evalkit.load(job, progress=False)
    seen = _count_extracts(monkeypatch)
    # a new trial appears
    src = job / "3d-scan-calc__qLuah6E"
    new = job / "3d-scan-calc__NEWNEW1"
    shutil.copytree(src, new)
    # and a finished one is rewritten (regraded)
    p = job / "3d-scan-calc__cfGcT9F" / "result.json"
    r = orjson.loads(p.read_bytes())
    r["verifier_result"]["rewards"]["reward"] = 1.0
    time.sleep(0.01)
    p.write_bytes(orjson.dumps(r))
    os.utime(p, None)
    runs = evalkit.load(job, progress=False)
    assert sorted(os.path.basename(s) for s in seen) == [
        "3d-scan-calc__NEWNEW1",
        "3d-scan-calc__cfGcT9F",
    ]
    assert runs.trials.height == 18
    assert (
        runs.trials.filter(pl.col("trial_name") == "3d-scan-calc__cfGcT9F")["outcome"].item()
        == "pass"
    )
    # the cached load equals a cold one
    assert_frame_equal(runs.trials, evalkit.load(job, cache=False, progress=False).trials)


def test_load_errors_survive_the_cache(job: Path) -> None:
    (job / "dialogue-parser__EhaimzM" / "result.json").write_bytes(b"{oops")
    a = evalkit.load(job, progress=False)
    b = evalkit.load(job, progress=False)
    assert a.load_errors.height == b.load_errors.height == 1


def test_corrupt_cache_is_rebuilt(job: Path) -> None:
    a = evalkit.load(job, progress=False)
    (cache_mod.job_cache_dir(job) / "trials.parquet").write_bytes(b"not parquet")
    b = evalkit.load(job, progress=False)
    assert_frame_equal(a.trials, b.trials)


def test_run_labels_from_mapping_callable_and_job(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    shutil.copytree(OPENCLAW / "2026-05-26__11-41-23", a / "j1")
    shutil.copytree(OPENCLAW / "2026-05-26__11-16-57", b / "j2")
    shutil.copytree(OPENCLAW / "2026-05-26__17-02-55", b / "j3")
    runs = evalkit.load(
        {"baseline": a, "candidate": [b / "j2", b / "j3"]}, cache=False, progress=False
    )
    assert dict(runs.trials.select("job_name", "run").iter_rows()) == {
        "j1": "baseline",
        "j2": "candidate",
        "j3": "candidate",
    }
    # the same task in one run: attempts 1, 2 in start order
    assert sorted(runs.trials.filter(pl.col("run") == "candidate")["attempt"].to_list()) == [1, 2]
    runs = evalkit.load(
        tmp_path,
        cache=False,
        progress=False,
        run=lambda cfg: "x" if cfg["_job_folder"] == "j1" else "y",
    )
    assert dict(runs.trials.select("job_name", "run").iter_rows()) == {
        "j1": "x",
        "j2": "y",
        "j3": "y",
    }
    runs = evalkit.load(tmp_path, cache=False, progress=False, run="job")
    assert runs.trials["run"].to_list() == runs.trials["job_name"].to_list()
    runs = evalkit.load(tmp_path, cache=False, progress=False, run={"j2": "two"})
    assert dict(runs.trials.select("job_name", "run").iter_rows())["j2"] == "two"
    assert (
        dict(runs.trials.select("job_name", "run").iter_rows())["j1"]
        == "openclaw-gateway__claude-opus-4-6__persistence"
    )


def _regrade_in_place(p: Path, keep_mtime: bool) -> None:
    st = p.stat()
    r = orjson.loads(p.read_bytes())
    r["verifier_result"]["rewards"]["reward"] = 1.0 - r["verifier_result"]["rewards"]["reward"]
    raw = orjson.dumps(r)
    with open(p, "r+b") as fh:  # in place: the folder's mtime does not change
        fh.write(raw)
        fh.truncate()
    if keep_mtime:  # `touch -r`: size may also be equal; only the ctime tells
        os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))


@pytest.mark.parametrize("running", [False, True])
@pytest.mark.parametrize("keep_mtime", [False, True])
def test_an_in_place_edit_of_a_trial_is_seen(job: Path, keep_mtime: bool, running: bool) -> None:
    name = "3d-scan-calc__cfGcT9F"
    if running:  # the per-trial signatures decide (not the finished-job fast path)
        res = job / "result.json"
        d = orjson.loads(res.read_bytes())
        d["finished_at"] = None
        res.write_bytes(orjson.dumps(d))
    evalkit.load(job, progress=False)
    evalkit.load(job, progress=False)  # the fast path and the whole-load result are stored
    _regrade_in_place(job / name / "result.json", keep_mtime)
    for _ in range(2):
        runs = evalkit.load(job, progress=False)
        cold = evalkit.load(job, cache=False, progress=False)
        assert_frame_equal(runs.trials, cold.trials)
        got = runs.trials.filter(pl.col("trial_name") == name)["outcome"].item()
        assert got == cold.trials.filter(pl.col("trial_name") == name)["outcome"].item()
    assert cache_mod.stat_sig(os.stat(job)).count(":") == 2  # size:mtime:ctime


def _analyse(trial: Path, summary: str) -> None:
    """What ``harbor analyze <trial>`` does: ``write_text`` of analysis.json into the
    finished trial's folder (a second run rewrites the file in place)."""
    doc = {"summary": summary, "checks": {"reward_hacking": {"outcome": "pass"}}}
    (trial / "analysis.json").write_text(orjson.dumps(doc).decode())


def test_harbor_analyze_of_a_finished_job_is_seen(job: Path) -> None:
    name = "3d-scan-calc__cfGcT9F"
    evalkit.load(job, progress=False)
    evalkit.load(job, progress=False)  # the finished-job fast path is stored
    job_stat = os.stat(job)
    for summary in ("first look", "second look, same folder"):
        _analyse(job / name, summary)
        assert os.stat(job).st_mtime_ns == job_stat.st_mtime_ns  # the job folder tells nothing
        runs = evalkit.load(job, progress=False)
        got = runs.trials.filter(pl.col("trial_name") == name)["analysis_summary"].item()
        assert got == summary
        assert_frame_equal(runs.trials, evalkit.load(job, cache=False, progress=False).trials)
