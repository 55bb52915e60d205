"""load/dataset/scan.py: export -> scan round trips on the real fixtures (every frame equal,
values and dtypes), any run label, reading only some runs, the schema version check, a
column added later, and a dataset read over an object-storage style URL."""

from __future__ import annotations

import functools
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import evalkit
from evalkit.load._columns import conform
from evalkit.load.dataset import (
    SCHEMA_VERSION,
    DatasetVersionError,
    export_dataset,
    scan,
    write_frames,
)
from evalkit.load.dataset.layout import COLUMNS_FILE, MANIFEST_FILE
from evalkit.load.trials.columns import COLUMNS as TRIAL_COLUMNS
from tests.conftest import HARBOR, OPENCLAW
from tests.load.dataset.frames import (
    JOBS,
    assert_round_trip,
    atif_runs,
    trials_frame,
)


def test_round_trip_harbor_fixtures(tmp_path: Path) -> None:
    runs = evalkit.load(HARBOR, progress=False)
    ds = assert_round_trip(runs, tmp_path / "ds")
    assert runs.trials.height == 63 and runs.steps.height > 0 and runs.findings.height > 0
    assert ds.files.filter(pl.col("frame") == "trials").height == runs.trials["job_id"].n_unique()


def test_round_trip_atif_fixtures(tmp_path: Path) -> None:
    runs = evalkit.load(atif_runs(tmp_path / "runs"), progress=False)
    assert_round_trip(runs, tmp_path / "ds")
    assert runs.steps["trajectory"].n_unique() > 1  # subagents and continuations came along
    assert runs.tool_calls.height > 0 and runs.load_errors.height > 0


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(labels=st.lists(st.text(min_size=0, max_size=12), min_size=1, max_size=3, unique=True))
def test_any_run_label_round_trips(tmp_path_factory, labels: list[str]) -> None:
    dest = tmp_path_factory.mktemp("labels")
    frames = pl.concat([trials_frame(lab, f"j{i}") for i, lab in enumerate(labels)])
    write_frames({"trials": frames}, dest)
    back = scan(dest).trials.collect().sort("trial_id")
    assert_frame_equal(back, frames.sort("trial_id"))


def test_scan_runs_reads_only_those_runs(tmp_path: Path) -> None:
    write_frames(
        {"trials": pl.concat([trials_frame("a", "j1"), trials_frame("b", "j2")])}, tmp_path
    )
    ds = scan(tmp_path, runs=["b"])
    assert ds.trials.collect()["run"].unique().to_list() == ["b"]
    plan = scan(tmp_path).trials.filter(pl.col("run") == "a").explain()
    assert "run=a/" in plan and "run=b/" not in plan  # the filter prunes files by partition


def test_schema_version_is_checked(tmp_path: Path) -> None:
    write_frames({"trials": trials_frame("a", "j1")}, tmp_path)
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
    write_frames({"trials": trials_frame("a", "j1")}, tmp_path)
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
