"""Loader crashers the fuzz campaign found, each as a small direct test (the stored
crashers under tests/fixtures/crashers/ replay the exact cases)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import polars as pl
import pytest

import evalkit
from tests.fuzz.corpus import JOBS, template


def _job(tmp_path: Path, name: str = "skills-job") -> Path:
    dst = tmp_path / name
    shutil.copytree(template() / name, dst, symlinks=True)
    return dst


def _load(path: Path) -> evalkit.Runs:
    runs = evalkit.load(path, cache=False, progress=False)
    _ = runs.steps, runs.tool_calls, runs.findings
    return runs


@pytest.mark.parametrize(
    "raw",
    [
        '"datasets": 1.5',  # not a list: was "float is not iterable"
        '"agents": "claude-code"',
        '"n_attempts": 123456789012345678901234567890',  # orjson cannot write > 64-bit ints
        '"job_name": "\\ud800 lone surrogate"',  # orjson cannot write lone surrogates
        '"deep": ' + "[" * 900 + "]" * 900,  # redaction and orjson recursion limits
    ],
)
def test_odd_job_config_values(tmp_path: Path, raw: str) -> None:
    job = _job(tmp_path)
    cfg = (job / "config.json").read_text()
    (job / "config.json").write_text(cfg.replace("{", "{" + raw + ",", 1))
    runs = _load(job)
    assert runs.trials.height == len(JOBS["skills-job"])
    text = runs.jobs["config_json"].item()
    assert text is None or isinstance(json.loads(text), dict)
    # the run= callable path parses config_json back
    again = evalkit.load(job, cache=False, progress=False, run=lambda c: str(c.get("n_attempts")))
    assert again.trials.height == len(JOBS["skills-job"])


def test_runs_folder_with_a_stray_trial_named_folder_is_not_a_job(tmp_path: Path) -> None:
    """A trial-named folder next to job folders (here a symlink to the folder above) made
    discovery take the runs folder for one job whose 'trials' were the job folders."""
    root = tmp_path / "runs"
    root.mkdir()
    for j in JOBS:
        shutil.copytree(template() / j, root / j, symlinks=True)
    (root / "link__L00pL00").symlink_to("..")
    runs = _load(root)
    assert set(runs.jobs["job_name"]) >= set(JOBS)
    assert runs.trials.height == sum(len(v) for v in JOBS.values())


@pytest.mark.parametrize("how", ["self", "pair", "dangling"])
def test_trial_named_symlink_that_leads_nowhere_is_a_load_error(tmp_path: Path, how: str) -> None:
    job = _job(tmp_path)
    name = JOBS["skills-job"][0]
    shutil.rmtree(job / name)
    if how == "self":
        (job / name).symlink_to(name)
    elif how == "pair":
        (job / name).symlink_to(name + ".b")
        (job / (name + ".b")).symlink_to(name)
    else:
        (job / name).symlink_to("/nonexistent/folder")
    for cache in (False, True, True):  # the remembered trial list must not hide it
        runs = evalkit.load(job, cache=cache, progress=False)
        assert runs.trials.height == len(JOBS["skills-job"]) - 1
        errs = runs.load_errors.filter(pl.col("path") == str(job / name))
        assert errs["error_type"].to_list() == ["unreadable"], runs.load_errors


@pytest.mark.parametrize("src", ["trial_result", "trajectory"])
def test_job_config_that_looks_like_a_trial_keeps_the_job(tmp_path: Path, src: str) -> None:
    """A job whose config.json holds a trial's result (keys task_name / trial_name) was
    taken for a trial folder given directly: the job and all its trials were lost."""
    job = _job(tmp_path)
    name = JOBS["skills-job"][0]
    other = job / name / "result.json"
    if src == "trajectory":
        other = template() / "atif-job" / JOBS["atif-job"][0] / "agent" / "trajectory.json"
    (job / "config.json").write_bytes(other.read_bytes())
    for path in (job, tmp_path):
        runs = _load(path)
        assert runs.jobs["job_name"].to_list() == ["skills-job"]
        assert runs.trials.height == len(JOBS["skills-job"])


@pytest.mark.parametrize("field", ["finished_at", "task_name", "exception_info"])
def test_lone_surrogate_escapes_in_a_trial_result(tmp_path: Path, field: str) -> None:
    """``"\\ud800"`` is valid JSON but not Unicode: orjson refuses it, the stdlib fallback
    parsed it, and building the trials frame raised UnicodeEncodeError."""
    job = _job(tmp_path, "atif-job")
    p = job / JOBS["atif-job"][1] / "result.json"
    d = json.loads(p.read_text())
    d[field] = (
        {"exception_type": "X", "exception_message": "m"} if field == "exception_info" else ""
    )
    text = (
        json.dumps(d)
        .replace('"m"', '"\\udfff m"')
        .replace(f'"{field}": ""', f'"{field}": "\\ud800"')
    )
    p.write_text(text)
    runs = _load(job)
    assert runs.trials.height == len(JOBS["atif-job"])
    row = runs.trials.filter(pl.col("trial_name") == JOBS["atif-job"][1]).row(0, named=True)
    if field == "task_name":
        assert row["task_name"] == "\ufffd"
    if field == "exception_info":
        assert row["exception_message"] == "\ufffd m"


@pytest.mark.parametrize("value", ["1e30", "-1e300", "1.5", "9223372036854775808"])
def test_huge_final_metrics_in_a_trajectory(tmp_path: Path, value: str) -> None:
    """final_metrics totals beyond Int64 failed the strict cast of the token-mismatch text
    (Polars evaluates both branches of when/then): InvalidOperationError from runs.steps."""
    job = _job(tmp_path, "atif-job")
    p = job / JOBS["atif-job"][1] / "agent" / "trajectory.json"
    d = json.loads(p.read_text())
    d.setdefault("final_metrics", {})["total_cached_tokens"] = "__V__"
    p.write_text(json.dumps(d).replace('"__V__"', value))
    runs = _load(job)
    row = runs.trials.filter(pl.col("trial_name") == JOBS["atif-job"][1]).row(0, named=True)
    assert row["n_steps"] is not None


@pytest.mark.parametrize(
    ("target", "how"),
    [
        ("rollouts/2026-01-15/simple-no-tool.jsonl", "read"),
        ("rollouts/2026-01-15", "read"),
        ("rollouts/2026-01-15", "search"),
    ],
)
def test_unreadable_rollout_files_are_load_errors(tmp_path: Path, target: str, how: str) -> None:
    """EACCES on a rollout file or date folder made its runs vanish without a load error."""
    from tests.fuzz.deny import denied

    shutil.copytree(template() / "rollouts", tmp_path / "rollouts")
    with denied([(str(tmp_path / target), how)]):
        runs = evalkit.load(tmp_path / "rollouts", cache=False, progress=False)
        errs = runs.load_errors
    assert runs.trials.height == (2 if target.endswith(".jsonl") else 1)  # the readable ones
    hit = errs.filter(pl.col("error_type") == "unreadable")["path"].to_list()
    assert hit and all(p.startswith(str(tmp_path / target)) for p in hit), errs


@pytest.mark.parametrize("odd", [b"\xff", b"\xed\xa0\x80"])
def test_trajectory_file_with_an_undecodable_name(
    tmp_path: Path, odd: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVALKIT_CACHE_DIR", str(tmp_path / "cache"))
    job = _job(tmp_path, "atif-job")
    agent = job / "hello-world__Cont1nu" / "agent"
    src = agent / "trajectory.cont-1.json"
    os.rename(os.fsencode(src), os.fsencode(src) + odd)
    runs = evalkit.load(job, cache=True, progress=False)  # the crash is on the cached path
    _ = runs.steps, runs.tool_calls
    assert runs.trials.height == len(JOBS["atif-job"])
    assert runs.load_errors.height >= 1


@pytest.mark.parametrize("odd", [b"\x1b[2J", b"\r"])
def test_rollout_folder_named_like_a_trial_with_odd_bytes(tmp_path: Path, odd: bytes) -> None:
    """Every rollout file of a date folder renamed to ``bad<odd>__X2abcde`` is a trial or is
    covered by a load error about the file or a folder holding it."""
    shutil.copytree(template(), tmp_path / "runs", symlinks=True)
    rd = tmp_path / "runs" / "rollouts"
    os.rename(rd / "2026-01-15", os.fsencode(rd) + b"/bad" + odd + b"__X2abcde")
    runs = _load(tmp_path / "runs")  # a runs root with jobs beside the rollouts folder
    errs = runs.load_errors["path"].drop_nulls().to_list()
    moved = [p for p in os.listdir(rd) if p.startswith("bad")]
    dirs = set(runs.trials["trial_dir"].to_list())
    for f in os.listdir(rd / moved[0]):
        p = str(rd / moved[0] / f)
        assert p in dirs or any(p == e or p.startswith(e + os.sep) for e in errs), (p, errs)
