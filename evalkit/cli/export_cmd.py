"""``evalkit export DEST``: write everything loaded as a partitioned Parquet dataset."""

from __future__ import annotations

from pathlib import Path

import typer

from evalkit.cli.app import app
from evalkit.cli.output import RedactOpt, RunsOpt, console, load_runs, safe
from evalkit.load.dataset import export_dataset


@app.command("export")
def export_cmd(
    dest: Path = typer.Argument(..., help="Dataset folder (created; updated when it exists)."),
    runs_dir: Path | None = RunsOpt,
    redact: bool = RedactOpt,
) -> None:
    """Export the runs folder to DEST as a Parquet dataset, one file per frame and job.

    Loads the runs (trajectories and findings included) and writes jobs, trials, steps,
    tool calls, findings and load errors under DEST/<frame>/run=<run>/job_id=<id>/. Jobs
    already in DEST and unchanged are not rewritten.

    Read it with evalkit.scan(DEST), DuckDB, Spark or Dask (docs/dataset.md).
    """
    runs = load_runs(runs_dir)
    result = export_dataset(runs, dest, redact=redact)
    console().print(safe(str(result)))
