"""``evalkit leaderboard``: every loaded run ranked, with its uncertainty."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import typer

from evalkit.cli.app import app
from evalkit.cli.output import (
    FORMATS,
    RunsOpt,
    check_choice,
    console,
    emit,
    err_console,
    load_runs,
    safe,
)
from evalkit.patterns.integrity import INTEGRITY_COUNTS
from evalkit.stats.leaderboard import METRICS
from evalkit.tables.leaderboard import BY_COLUMNS, leaderboard_table

TIER_STYLE = {1: "bold green", 2: "yellow"}


@app.command("leaderboard")
def leaderboard_cmd(
    runs_dir: Path | None = RunsOpt,
    by: str = typer.Option("label", "--by", help="label (run label) | job (job folder)"),
    metric: str = typer.Option("pass_rate", "--metric", help=" | ".join(METRICS)),
    fmt: str = typer.Option("table", "--format", "-f", help="table | json | csv"),
    draws: int = typer.Option(2000, "--draws", help="Bootstrap draws (task resamples)."),
    confidence: float = typer.Option(0.95, "--confidence", help="Interval / tier level."),
    seed: int = typer.Option(0, "--seed", help="Bootstrap seed."),
    integrity: bool = typer.Option(
        True, "--integrity/--no-integrity", help="Integrity counts (parses trajectories)."
    ),
) -> None:
    """Rank every run over the tasks they all have, with intervals and tiers.

    Per run: score with a task-clustered interval, rank interval, P(rank 1), tier (1 = not
    separable from the leader, corrected for the number of runs), P(on the cost frontier)
    and integrity counts.

    See docs/leaderboard.md.
    """
    check_choice("--by", by, tuple(BY_COLUMNS))
    check_choice("--metric", metric, tuple(METRICS))
    check_choice("--format", fmt, FORMATS)
    runs = load_runs(runs_dir)
    try:
        result = leaderboard_table(
            runs,
            by=by,
            metric=metric,
            confidence=confidence,
            draws=draws,
            seed=seed,
            integrity=integrity,
        )
    except ValueError as e:
        err_console().print(f"[red]{safe(str(e))}[/red]")
        raise typer.Exit(2) from e
    if result.left_out:
        err_console().print(
            f"[yellow]Left out (no task shared with the others): {safe(', '.join(result.left_out))}[/yellow]"
        )
    if fmt != "table":
        emit(result.table, fmt)
        return
    _print_ranking(result.table, metric, draws, confidence)


def _print_ranking(table: pl.DataFrame, metric: str, draws: int, confidence: float) -> None:
    """The leaderboard as a terminal table, rows coloured by tier, and what tier and rank
    interval mean."""
    shown = table.select(
        "run",
        "score",
        "ci_low",
        "ci_high",
        "rank",
        pl.format("{}-{}", "rank_low", "rank_high").alias("rank_ci"),
        "tier",
        "p_rank_1",
        "cost_per_attempt",
        "p_frontier",
        *[c for c in (*INTEGRITY_COUNTS, "n_trials") if c in table.columns],
    )
    n_tasks = int(table["n_tasks"][0]) if table.height else 0
    emit(
        shown,
        "table",
        title=f"{metric} over {n_tasks} shared tasks, {draws:,} task resamples",
        kinds={
            **{c: "pct" for c in ("score", "ci_low", "ci_high", "p_rank_1", "p_frontier")},
            "cost_per_attempt": "cost",
        },
        style=lambda r: TIER_STYLE.get(r["tier"]),
    )
    console().print(
        "tier 1: not separable from the leader at "
        f"{1 - confidence:.0%} (max-t over the comparisons); rank_low-rank_high: "
        f"{confidence:.0%} rank interval."
    )
