"""``evalkit export DEST``: write everything loaded as a partitioned Parquet dataset."""

from __future__ import annotations

from pathlib import Path

import typer

import evalkit
from evalkit.cli.app import app
from evalkit.cli.output import RedactOpt, RunsOpt, console, safe
from evalkit.load.dataset import export_dataset


@app.command("export")
def export_cmd(
    dest: Path = typer.Argument(..., help="Dataset folder (created; updated when it exists)."),
    runs_dir: Path = RunsOpt,
    redact: bool = RedactOpt,
) -> None:
    """Export the runs folder to DEST as a Parquet dataset, one file per frame and job.

    Loads the runs (trajectories and findings included) and writes jobs, trials, steps,
    tool calls, findings and load errors under DEST/<frame>/run=<run>/job_id=<id>/. Jobs
    already in DEST and unchanged are not rewritten.

    Read it with evalkit.scan(DEST), DuckDB, Spark or Dask (docs/dataset.md).
    """
    if not runs_dir.exists():
        console().print(f"[red]No such folder: {safe(runs_dir)}[/red]")
        raise typer.Exit(2)
    runs = evalkit.load(runs_dir, progress=True)
    result = export_dataset(runs, dest, redact=redact)
    console().print(safe(str(result)))
