"""Write the frames of a load as a partitioned Parquet dataset, incrementally.

Each frame of each job is one file (``layout.partition_path``); as in every hive-style
dataset, the partition columns (run, job_id) are in the file's path, not in the file. A file is rewritten only
when its content changed: the manifest keeps the sha256 of every file's bytes, and the
bytes of an unchanged partition are the same (the writer is deterministic for a given
Polars version; after an upgrade every partition is written once more). Each file is
replaced atomically (temporary file in the same folder, then rename), the manifest last.
One writer at a time per dataset.
"""

from __future__ import annotations

import hashlib
import io
import os
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from evalkit.load._columns import conform
from evalkit.load.dataset.layout import (
    COLUMNS_FILE,
    FILE_META_FRAME,
    FILE_META_VERSION,
    MANIFEST_FILE,
    MANIFEST_SCHEMA,
    PARTITION_KEYS,
    SCHEMA_VERSION,
    columns_table,
    frame_columns,
    partition_path,
)
from evalkit.load.shared.redact import env_secret_values

if TYPE_CHECKING:
    from evalkit.load.runs import Runs

#: Frames without run / job_id columns find their job through trials.trial_id.
_BY_TRIAL = ("steps", "tool_calls", "findings")
_RUN, _JOB = "__partition_run", "__partition_job_id"


@dataclass
class ExportResult:
    """What one export did. Paths are relative to the dataset folder."""

    path: Path
    written: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unchanged: int = 0

    def __str__(self) -> str:
        return (
            f"{len(self.written)} file(s) written, {self.unchanged} unchanged, "
            f"{len(self.removed)} removed in {self.path}"
        )


def export_dataset(
    runs: Runs, dest: str | os.PathLike[str], *, redact: bool = True
) -> ExportResult:
    """Write everything ``runs`` holds (jobs, trials, steps, tool calls, findings, load
    errors) to the dataset folder ``dest`` (created if needed; see docs/dataset.md).

    Trajectories are parsed and findings computed first. ``redact``: text goes through
    :meth:`Runs.redacted` with the secret values of this environment, as reports do.
    Jobs already in ``dest`` and unchanged are not rewritten; jobs that are in ``dest``
    but not in ``runs`` stay (the dataset keeps the history).
    """
    runs.steps  # noqa: B018  (parse first: trials gains its trajectory columns)
    if redact:
        runs = runs.redacted(env_secret_values())
    return write_frames({name: getattr(runs, name) for name in frame_columns()}, dest)


def write_frames(frames: Mapping[str, pl.DataFrame], dest: str | os.PathLike[str]) -> ExportResult:
    """Write the given frames (keys: jobs, trials, steps, tool_calls, findings, load_errors;
    any subset) to ``dest``, each conformed to its declared columns.

    For every job in the given frames, the given frames' partitions of that job replace
    those in ``dest`` (a partition that is no longer produced is removed); load errors that
    belong to no job are replaced as a whole. Other jobs and frames stay as they are.
    ``steps`` / ``tool_calls`` / ``findings`` need ``trials`` to find their job.
    """
    declared = frame_columns()
    unknown = sorted(set(frames) - set(declared))
    if unknown:
        raise ValueError(f"unknown frame(s) {unknown}; expected some of {list(declared)}")
    if any(f in frames for f in _BY_TRIAL) and "trials" not in frames:
        raise ValueError("steps, tool_calls and findings need the trials frame to find their job")
    root = Path(dest)
    root.mkdir(parents=True, exist_ok=True)
    result = ExportResult(root)
    old = _read_manifest(root)
    previous = {r["path"]: r for r in old.iter_rows(named=True)}
    produced: dict[str, dict] = {}
    parts = [
        (name, run, job_id, part)
        for name, df in frames.items()
        for (run, job_id), part in _partitions(
            name, conform(df, declared[name], extra=False), frames
        )
    ]
    for name, run, job_id, _ in parts:  # every path is valid before anything is written
        partition_path(name, run, job_id)
    for name, run, job_id, part in parts:
        row = _sync_partition(root, name, run, job_id, part, previous, result)
        produced[row["path"]] = row
    replaced_jobs = {r["job_id"] for r in produced.values()}
    if "load_errors" in frames:
        replaced_jobs.add(None)
    kept = []
    for path, row in previous.items():
        if path in produced:
            continue
        if row["frame"] in frames and row["job_id"] in replaced_jobs:
            _remove(root, path, result)
        else:
            kept.append(row)
    manifest = pl.DataFrame([*kept, *produced.values()], schema=MANIFEST_SCHEMA).sort(
        "frame", "run", "job_id", nulls_last=True
    )
    _write_atomic(root / COLUMNS_FILE, _parquet_bytes(columns_table(), {}))
    _write_atomic(root / MANIFEST_FILE, _parquet_bytes(manifest, {}))
    return result


def _partitions(
    name: str, df: pl.DataFrame, frames: Mapping[str, pl.DataFrame]
) -> Iterator[tuple[tuple[str | None, str | None], pl.DataFrame]]:
    """(run, job_id) and that job's rows of one frame, rows in their original order."""
    if df.height == 0:
        return
    if name in _BY_TRIAL:
        keys = (
            frames["trials"]
            .select("trial_id", pl.col("run").alias(_RUN), pl.col("job_id").alias(_JOB))
            .unique("trial_id", keep="first")
        )
        keyed = df.join(keys, on="trial_id", how="left", maintain_order="left")
    elif name == "load_errors":
        keyed = df.with_columns(pl.col("job_id").alias(_JOB)).join(
            _job_runs(frames), on=_JOB, how="left", maintain_order="left"
        )
    else:
        keyed = df.with_columns(pl.col("run").alias(_RUN), pl.col("job_id").alias(_JOB))
    groups = keyed.partition_by([_RUN, _JOB], as_dict=True, maintain_order=True)
    for (run, job_id), part in groups.items():
        yield (run, job_id), part.drop(_RUN, _JOB, *PARTITION_KEYS, strict=False)  # type: ignore[misc]


def _job_runs(frames: Mapping[str, pl.DataFrame]) -> pl.DataFrame:
    """job_id -> run, from the jobs frame, else from trials."""
    parts = [
        frames[f].select(pl.col("job_id").alias(_JOB), pl.col("run").alias(_RUN))
        for f in ("jobs", "trials")
        if f in frames and "run" in frames[f].columns and "job_id" in frames[f].columns
    ]
    empty = pl.DataFrame(schema={_JOB: pl.String, _RUN: pl.String})
    out = pl.concat([empty, *parts], how="vertical_relaxed")
    return out.filter(pl.col(_JOB).is_not_null()).unique(_JOB, keep="first")


def _sync_partition(
    root: Path,
    name: str,
    run: str | None,
    job_id: str | None,
    part: pl.DataFrame,
    previous: Mapping[str, dict],
    result: ExportResult,
) -> dict:
    """Write one partition unless the same bytes are already there; its manifest row."""
    rel = partition_path(name, run, job_id)
    prev = previous.get(rel)
    data = _parquet_bytes(part, {FILE_META_VERSION: str(SCHEMA_VERSION), FILE_META_FRAME: name})
    sha = hashlib.sha256(data).hexdigest()
    if prev is not None and prev["sha256"] == sha and (root / rel).is_file():
        result.unchanged += 1
        return prev
    _write_atomic(root / rel, data)
    result.written.append(rel)
    return {
        "frame": name,
        "run": run,
        "job_id": job_id,
        "path": rel,
        "sha256": sha,
        "n_rows": part.height,
        "schema_version": SCHEMA_VERSION,
        "written_at": datetime.now(UTC),
    }


def _parquet_bytes(df: pl.DataFrame, metadata: dict[str, str]) -> bytes:
    buf = io.BytesIO()
    df.rechunk().write_parquet(buf, compression="zstd", metadata=metadata or None)
    return buf.getvalue()


def _read_manifest(root: Path) -> pl.DataFrame:
    path = root / MANIFEST_FILE
    if not path.is_file():
        return pl.DataFrame(schema=MANIFEST_SCHEMA)
    return pl.read_parquet(path)


def _write_atomic(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data``; readers see the old file or the new one, never a part.
    The temporary file starts with a dot and does not end in .parquet, so no reader lists it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _remove(root: Path, rel: str, result: ExportResult) -> None:
    """Delete a partition file and the folders it leaves empty."""
    path = root / rel
    path.unlink(missing_ok=True)
    result.removed.append(rel)
    parent = path.parent
    while parent != root and parent.is_dir() and not any(parent.iterdir()):
        parent.rmdir()
        parent = parent.parent
