"""The typer application; commands register themselves from their modules."""

from __future__ import annotations

import contextlib

import typer

app = typer.Typer(
    name="evalkit",
    help="Analyse AI-agent benchmark runs (Harbor job folders, ATIF trajectories, rollouts).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _register() -> None:
    from evalkit.cli import inspect_cmds, leaderboard_cmd  # noqa: F401

    for mod in ("compare_cmd", "report_cmd", "run_cmd", "manage_cmd", "export_cmd"):
        with contextlib.suppress(ImportError):
            __import__(f"evalkit.cli.{mod}")


def main() -> None:
    """Entry point of the ``evalkit`` script."""
    _register()
    app()
