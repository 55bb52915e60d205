"""load/dataset/write.py: incremental appends (only new or changed jobs written), atomic
replacement, partitions removed or moved, layout metadata and column docs, null runs and
jobless load errors, the export command, and what it refuses."""

from __future__ import annotations

import json
import os
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import evalkit
from evalkit.load._columns import empty
from evalkit.load.dataset import (
    SCHEMA_VERSION,
    export_dataset,
    scan,
    write_frames,
)
from evalkit.load.dataset.layout import frame_columns
from tests.load.dataset.frames import (
    JOBS,
    copy_jobs,
    file_stamps,
    steps_frame,
    trials_frame,
)


def test_incremental_append_writes_only_the_new_job(tmp_path: Path) -> None:
    runs_dir = copy_jobs(JOBS[:2], tmp_path / "runs")
    dest = tmp_path / "ds"
    first = export_dataset(evalkit.load(runs_dir, progress=False), dest)
    assert first.written and not first.removed
    before = file_stamps(dest)

    copy_jobs([JOBS[2]], runs_dir)
    runs = evalkit.load(runs_dir, progress=False)
    new_id = runs.jobs.filter(pl.col("job_name") == JOBS[2])["job_id"].item()
    second = export_dataset(runs, dest)

    assert second.written, "the new job was not written"
    assert all(f"job_id={new_id}/" in p for p in second.written), second.written
    assert second.unchanged == len(first.written) and not second.removed
    after = file_stamps(dest)
    assert {k: after[k] for k in before} == before  # old files untouched (same inode, mtime)
    assert set(scan(dest).jobs.collect()["job_name"]) == set(JOBS[:3])


def test_changed_job_is_replaced_and_others_stay(tmp_path: Path) -> None:
    runs_dir = copy_jobs(JOBS[:2], tmp_path / "runs")
    dest = tmp_path / "ds"
    export_dataset(evalkit.load(runs_dir, progress=False), dest)
    before = file_stamps(dest)

    result = next((runs_dir / JOBS[0]).glob("*/result.json"))
    doc = json.loads(result.read_text())
    doc["verifier_result"] = {"rewards": {"reward": 0.25}}
    result.write_text(json.dumps(doc))
    # a regrade rewrites the job's result.json too (the loader's cache re-reads a finished
    # job's trials when the job's own files change)
    os.utime(runs_dir / JOBS[0] / "result.json")
    runs = evalkit.load(runs_dir, progress=False)
    changed_id = runs.jobs.filter(pl.col("job_name") == JOBS[0])["job_id"].item()
    out = export_dataset(runs, dest)
    assert out.written == [p for p in out.written if f"job_id={changed_id}/" in p]
    assert any(p.startswith("trials/") for p in out.written)
    after = file_stamps(dest)
    untouched = {k: v for k, v in before.items() if f"job_id={changed_id}/" not in k}
    assert {k: after[k] for k in untouched} == untouched
    back = scan(dest).trials.filter(pl.col("job_id") == changed_id).collect()
    assert back["reward"].to_list() == [0.25]
    assert not list(dest.rglob(".*.tmp"))  # no temporary file left behind


def test_partition_no_longer_produced_is_removed(tmp_path: Path) -> None:
    t = trials_frame("r", "j1")
    write_frames({"trials": t, "steps": steps_frame(t["trial_id"].to_list())}, tmp_path)
    assert scan(tmp_path).steps.collect().height == 2
    out = write_frames({"trials": t, "steps": steps_frame([])}, tmp_path)
    assert out.removed == ["steps/run=r/job_id=j1/part-0.parquet"]
    assert scan(tmp_path).steps.collect().height == 0
    assert not (tmp_path / "steps").exists()  # empty folders go too


def test_relabelled_job_moves_to_its_new_run(tmp_path: Path) -> None:
    write_frames(
        {"trials": trials_frame("old", "j1"), "jobs": trials_frame("old", "j1")[:1]}, tmp_path
    )
    write_frames({"trials": trials_frame("new", "j1")}, tmp_path)
    ds = scan(tmp_path)
    assert ds.trials.collect()["run"].unique().to_list() == ["new"]
    assert ds.jobs.collect()["run"].to_list() == ["old"]  # frames not given stay as they were


def test_other_jobs_stay_when_a_load_no_longer_has_them(tmp_path: Path) -> None:
    write_frames(
        {"trials": pl.concat([trials_frame("r", "j1"), trials_frame("r", "j2")])}, tmp_path
    )
    write_frames({"trials": trials_frame("r", "j2")}, tmp_path)
    assert sorted(scan(tmp_path).trials.collect()["job_id"].unique()) == ["j1", "j2"]


def test_layout_metadata_and_column_docs(tmp_path: Path) -> None:
    write_frames({"trials": trials_frame("a/b c=%", "j1")}, tmp_path)
    path = tmp_path / "trials" / "run=a%2Fb%20c%3D%25" / "job_id=j1" / "part-0.parquet"
    assert path.is_file()
    meta = pl.read_parquet_metadata(path)
    assert meta["evalkit.schema_version"] == str(SCHEMA_VERSION)
    assert meta["evalkit.frame"] == "trials"
    assert not {"run", "job_id"} & set(pl.read_parquet_schema(path))  # in the path only
    ds = scan(tmp_path)
    assert ds.schema_version == SCHEMA_VERSION
    for frame, cols in frame_columns().items():
        docs = ds.columns.filter(pl.col("frame") == frame).sort("position")
        assert docs["column"].to_list() == [c.name for c in cols]
        assert docs["doc"].to_list() == [c.doc for c in cols]
        assert docs["dtype"].to_list() == [str(c.dtype) for c in cols]
    # frames never written are empty with their declared columns
    assert_frame_equal(ds.steps.collect(), empty(frame_columns()["steps"]))


def test_null_run_and_jobless_load_errors(tmp_path: Path) -> None:
    errors = pl.DataFrame(
        {"path": ["/x", "/y"], "level": ["job", "trial"], "error_type": ["e", "e"],
         "message": ["m", "m"], "job_id": [None, "j1"]}
    )  # fmt: skip
    write_frames({"trials": trials_frame(None, "j1"), "load_errors": errors}, tmp_path)
    ds = scan(tmp_path)
    assert ds.trials.collect()["run"].to_list() == [None, None]
    assert ds.load_errors.collect().sort("path")["job_id"].to_list() == [None, "j1"]
    assert (tmp_path / "load_errors" / "run=__HIVE_DEFAULT_PARTITION__").is_dir()


def test_export_command_appends(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from evalkit.cli.app import app

    runs_dir = copy_jobs(JOBS[:2], tmp_path / "runs")
    args = ["export", str(tmp_path / "ds"), "--runs", str(runs_dir)]
    first = CliRunner().invoke(app, args)
    assert first.exit_code == 0, first.output
    n = len(scan(tmp_path / "ds").files)
    assert f"{n} file(s) written, 0 unchanged, 0 removed" in first.output
    again = CliRunner().invoke(app, args)
    assert f"0 file(s) written, {n} unchanged, 0 removed" in again.output
    missing = CliRunner().invoke(
        app, ["export", str(tmp_path / "x"), "--runs", str(tmp_path / "no")]
    )
    assert missing.exit_code == 2 and "No such folder" in missing.output


def test_a_run_labelled_like_the_null_marker_is_refused_before_anything_is_written(
    tmp_path: Path,
) -> None:
    # hive readers read the marker back as null: say so instead of losing the label
    frames = pl.concat([trials_frame("ok", "j1"), trials_frame("__HIVE_DEFAULT_PARTITION__", "j2")])
    with pytest.raises(ValueError, match="read it back as null"):
        write_frames({"trials": frames}, tmp_path / "ds")
    assert not any((tmp_path / "ds").rglob("*.parquet"))
