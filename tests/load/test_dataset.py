"""evalkit.load.dataset: export -> scan round trips on the real fixtures, incremental
appends, atomic replacement, layout, schema version and object-storage style URLs."""

from __future__ import annotations

import functools
import http.server
import json
import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import evalkit
from evalkit.load._columns import conform, empty
from evalkit.load.dataset import (
    SCHEMA_VERSION,
    DatasetVersionError,
    export_dataset,
    scan,
    write_frames,
)
from evalkit.load.dataset.layout import COLUMNS_FILE, MANIFEST_FILE, frame_columns
from evalkit.load.trials.columns import COLUMNS as TRIAL_COLUMNS
from tests.conftest import FIXTURES, HARBOR, OPENCLAW
from tests.load import factory

ATIF = FIXTURES / "atif"
#: Keys that order each frame (a dataset has no global row order).
SORT_KEYS = {
    "jobs": ["job_id"],
    "trials": ["trial_id"],
    "steps": ["trial_id", "step_index"],
    "tool_calls": ["trial_id", "step_index", "call_index"],
    "findings": ["trial_id", "detector", "step_start", "step_end"],
    "load_errors": ["path", "level", "error_type", "message"],
}


def assert_round_trip(runs: evalkit.Runs, dest: Path) -> evalkit.load.dataset.Dataset:
    """Export, scan, and require every frame identical (values and dtypes)."""
    export_dataset(runs, dest, redact=False)
    ds = scan(dest)
    for name, keys in SORT_KEYS.items():
        loaded = getattr(runs, name).sort(keys, nulls_last=True)
        back = getattr(ds, name).collect().sort(keys, nulls_last=True)
        assert_frame_equal(back, loaded, check_row_order=True, check_dtypes=True)
    return ds


def test_round_trip_harbor_fixtures(tmp_path: Path) -> None:
    runs = evalkit.load(HARBOR, progress=False)
    ds = assert_round_trip(runs, tmp_path / "ds")
    assert runs.trials.height == 63 and runs.steps.height > 0 and runs.findings.height > 0
    assert ds.files.filter(pl.col("frame") == "trials").height == runs.trials["job_id"].n_unique()


def _atif_runs(root: Path) -> Path:
    """Two Harbor jobs whose trials carry the ATIF fixture trajectories (continuations and
    summarisation subagents included), plus a job whose trial result is broken."""
    golden = ATIF / "harbor-golden"
    trajectories = {
        "t2-summ": (golden / "terminus_2", "hello-world-context-summarization.trajectory"),
        "t2-linear": (
            golden / "terminus_2",
            "hello-world-context-summarization-linear-history.trajectory",
        ),
        "t2-timeout": (golden / "terminus_2", "hello-world-timeout.trajectory"),
        "openhands": (golden / "openhands", "hello-world.trajectory"),
        "cc-pass": (ATIF / "claude-code-real", "trajectory_pass"),
        "cc-fail": (ATIF / "claude-code-real", "trajectory_fail"),
    }
    for j, names in enumerate((list(trajectories)[:3], list(trajectories)[3:])):
        trials = [
            factory.trial_result(f"task-{n}", f"{n}__{j}", rewards={"reward": float(i % 2)})
            for i, n in enumerate(names)
        ]
        jd = factory.job(root, f"atif-job-{j}", trials)
        for n in names:
            folder, stem = trajectories[n]
            agent = jd / f"{n}__{j}" / "agent"
            agent.mkdir(parents=True, exist_ok=True)
            for f in folder.glob(f"{stem}*.json"):
                shutil.copy(f, agent / f.name.replace(stem, "trajectory"))
    broken = factory.job(root, "broken-job", [factory.trial_result("t", "t__0")])
    (broken / "t__0" / "result.json").write_text("{not json")
    return root


def test_round_trip_atif_fixtures(tmp_path: Path) -> None:
    runs = evalkit.load(_atif_runs(tmp_path / "runs"), progress=False)
    assert_round_trip(runs, tmp_path / "ds")
    assert runs.steps["trajectory"].n_unique() > 1  # subagents and continuations came along
    assert runs.tool_calls.height > 0 and runs.load_errors.height > 0


def _copy_jobs(names: list[str], dest: Path) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    for n in names:
        shutil.copytree(OPENCLAW / n, dest / n)
    return dest


def _stamps(root: Path) -> dict[str, tuple[int, int]]:
    return {
        str(p.relative_to(root)): (p.stat().st_ino, p.stat().st_mtime_ns)
        for p in root.rglob("*.parquet")
        if not p.relative_to(root).parts[0].startswith("_")
    }


JOBS = sorted(p.name for p in OPENCLAW.iterdir() if p.is_dir())


def test_incremental_append_writes_only_the_new_job(tmp_path: Path) -> None:
    runs_dir = _copy_jobs(JOBS[:2], tmp_path / "runs")
    dest = tmp_path / "ds"
    first = export_dataset(evalkit.load(runs_dir, progress=False), dest)
    assert first.written and not first.removed
    before = _stamps(dest)

    _copy_jobs([JOBS[2]], runs_dir)
    runs = evalkit.load(runs_dir, progress=False)
    new_id = runs.jobs.filter(pl.col("job_name") == JOBS[2])["job_id"].item()
    second = export_dataset(runs, dest)

    assert second.written, "the new job was not written"
    assert all(f"job_id={new_id}/" in p for p in second.written), second.written
    assert second.unchanged == len(first.written) and not second.removed
    after = _stamps(dest)
    assert {k: after[k] for k in before} == before  # old files untouched (same inode, mtime)
    assert set(scan(dest).jobs.collect()["job_name"]) == set(JOBS[:3])


def test_changed_job_is_replaced_and_others_stay(tmp_path: Path) -> None:
    runs_dir = _copy_jobs(JOBS[:2], tmp_path / "runs")
    dest = tmp_path / "ds"
    export_dataset(evalkit.load(runs_dir, progress=False), dest)
    before = _stamps(dest)

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
    after = _stamps(dest)
    untouched = {k: v for k, v in before.items() if f"job_id={changed_id}/" not in k}
    assert {k: after[k] for k in untouched} == untouched
    back = scan(dest).trials.filter(pl.col("job_id") == changed_id).collect()
    assert back["reward"].to_list() == [0.25]
    assert not list(dest.rglob(".*.tmp"))  # no temporary file left behind


def _trials(run: str | None, job: str, n: int = 2) -> pl.DataFrame:
    return conform(
        pl.DataFrame(
            {
                "job_id": [job] * n,
                "run": [run] * n,
                "trial_id": [f"{job}-{i}" for i in range(n)],
                "task_name": [f"t{i}" for i in range(n)],
                "reward": [1.0, 0.0][:n],
            }
        ),
        TRIAL_COLUMNS,
    )


def _steps(trial_ids: list[str]) -> pl.DataFrame:
    return pl.DataFrame({"trial_id": trial_ids, "step_index": list(range(len(trial_ids)))})


def test_partition_no_longer_produced_is_removed(tmp_path: Path) -> None:
    t = _trials("r", "j1")
    write_frames({"trials": t, "steps": _steps(t["trial_id"].to_list())}, tmp_path)
    assert scan(tmp_path).steps.collect().height == 2
    out = write_frames({"trials": t, "steps": _steps([])}, tmp_path)
    assert out.removed == ["steps/run=r/job_id=j1/part-0.parquet"]
    assert scan(tmp_path).steps.collect().height == 0
    assert not (tmp_path / "steps").exists()  # empty folders go too


def test_relabelled_job_moves_to_its_new_run(tmp_path: Path) -> None:
    write_frames({"trials": _trials("old", "j1"), "jobs": _trials("old", "j1")[:1]}, tmp_path)
    write_frames({"trials": _trials("new", "j1")}, tmp_path)
    ds = scan(tmp_path)
    assert ds.trials.collect()["run"].unique().to_list() == ["new"]
    assert ds.jobs.collect()["run"].to_list() == ["old"]  # frames not given stay as they were


def test_other_jobs_stay_when_a_load_no_longer_has_them(tmp_path: Path) -> None:
    write_frames({"trials": pl.concat([_trials("r", "j1"), _trials("r", "j2")])}, tmp_path)
    write_frames({"trials": _trials("r", "j2")}, tmp_path)
    assert sorted(scan(tmp_path).trials.collect()["job_id"].unique()) == ["j1", "j2"]


def test_layout_metadata_and_column_docs(tmp_path: Path) -> None:
    write_frames({"trials": _trials("a/b c=%", "j1")}, tmp_path)
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


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(labels=st.lists(st.text(min_size=0, max_size=12), min_size=1, max_size=3, unique=True))
def test_any_run_label_round_trips(tmp_path_factory, labels: list[str]) -> None:
    dest = tmp_path_factory.mktemp("labels")
    frames = pl.concat([_trials(lab, f"j{i}") for i, lab in enumerate(labels)])
    write_frames({"trials": frames}, dest)
    back = scan(dest).trials.collect().sort("trial_id")
    assert_frame_equal(back, frames.sort("trial_id"))


def test_null_run_and_jobless_load_errors(tmp_path: Path) -> None:
    errors = pl.DataFrame(
        {"path": ["/x", "/y"], "level": ["job", "trial"], "error_type": ["e", "e"],
         "message": ["m", "m"], "job_id": [None, "j1"]}
    )  # fmt: skip
    write_frames({"trials": _trials(None, "j1"), "load_errors": errors}, tmp_path)
    ds = scan(tmp_path)
    assert ds.trials.collect()["run"].to_list() == [None, None]
    assert ds.load_errors.collect().sort("path")["job_id"].to_list() == [None, "j1"]
    assert (tmp_path / "load_errors" / "run=__HIVE_DEFAULT_PARTITION__").is_dir()


def test_scan_runs_reads_only_those_runs(tmp_path: Path) -> None:
    write_frames({"trials": pl.concat([_trials("a", "j1"), _trials("b", "j2")])}, tmp_path)
    ds = scan(tmp_path, runs=["b"])
    assert ds.trials.collect()["run"].unique().to_list() == ["b"]
    plan = scan(tmp_path).trials.filter(pl.col("run") == "a").explain()
    assert "run=a/" in plan and "run=b/" not in plan  # the filter prunes files by partition


def test_schema_version_is_checked(tmp_path: Path) -> None:
    write_frames({"trials": _trials("a", "j1")}, tmp_path)
    cols = pl.read_parquet(tmp_path / COLUMNS_FILE)
    cols.with_columns(pl.lit(SCHEMA_VERSION + 1).alias("schema_version")).write_parquet(
        tmp_path / COLUMNS_FILE
    )
    with pytest.raises(DatasetVersionError, match="schema version"):
        scan(tmp_path)
    with pytest.raises(FileNotFoundError, match="not an evalkit dataset"):
        scan(tmp_path / "nothing-here")


def test_column_added_later_reads_as_null(tmp_path: Path) -> None:
    """A partition written before a column was declared still scans (the column is null)."""
    write_frames({"trials": _trials("a", "j1")}, tmp_path)
    old = pl.read_parquet(tmp_path / "trials/run=a/job_id=j1/part-0.parquet").drop("harbor_schema")
    old.write_parquet(tmp_path / "trials/run=a/job_id=j1/part-0.parquet")
    back = scan(tmp_path).trials.collect()
    assert back["harbor_schema"].to_list() == [None, None]
    assert back.schema == pl.Schema(conform(old, TRIAL_COLUMNS).schema)


class _RangeHandler(http.server.SimpleHTTPRequestHandler):
    """Static files with HTTP range requests, as object stores serve them."""

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        rng = self.headers.get("Range")
        path = Path(self.translate_path(self.path))
        if not rng or not path.is_file():
            return super().do_GET()
        data = path.read_bytes()
        first, _, last = rng.removeprefix("bytes=").partition("-")
        if first:
            start, end = int(first), int(last) if last else len(data) - 1
        else:  # suffix range: the last N bytes
            start, end = max(len(data) - int(last), 0), len(data) - 1
        end = min(end, len(data) - 1)
        self.send_response(206)
        self.send_header("Content-Range", f"bytes {start}-{end}/{len(data)}")
        self.send_header("Content-Length", str(end - start + 1))
        self.end_headers()
        self.wfile.write(data[start : end + 1])


@pytest.fixture
def http_root(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A read-only HTTP server over tmp_path: a stand-in for an object-storage URL."""
    handler = functools.partial(_RangeHandler, directory=str(tmp_path))
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    th = threading.Thread(target=srv.serve_forever, daemon=True)
    th.start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}", tmp_path
    finally:
        srv.shutdown()
        srv.server_close()


def test_scan_over_a_url_reads_through_polars(http_root: tuple[str, Path]) -> None:
    url, root = http_root
    runs = evalkit.load(OPENCLAW / JOBS[0], progress=False)
    export_dataset(runs, root / "ds", redact=False)
    ds = scan(f"{url}/ds/", storage_options={"token": "never-printed-0123456789"})
    assert_frame_equal(ds.trials.collect().sort("trial_id"), runs.trials.sort("trial_id"))
    assert "never-printed" not in repr(ds) and ds.path == f"{url}/ds"
    assert (root / "ds" / MANIFEST_FILE).is_file()


def test_export_command_appends(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from evalkit.cli.app import app

    runs_dir = _copy_jobs(JOBS[:2], tmp_path / "runs")
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
    frames = pl.concat([_trials("ok", "j1"), _trials("__HIVE_DEFAULT_PARTITION__", "j2")])
    with pytest.raises(ValueError, match="read it back as null"):
        write_frames({"trials": frames}, tmp_path / "ds")
    assert not any((tmp_path / "ds").rglob("*.parquet"))
