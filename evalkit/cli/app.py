"""The typer application; commands register themselves from their modules."""

from __future__ import annotations

import typer

app = typer.Typer(
    name="evalkit",
    help="Analyse AI-agent benchmark runs (Harbor job folders, ATIF trajectories, rollouts).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _register() -> None:
    from evalkit.cli import inspect_cmds  # noqa: F401

    for mod in ("compare_cmd", "report_cmd", "run_cmd", "manage_cmd"):
        try:
            __import__(f"evalkit.cli.{mod}")
        except ImportError:
            pass


def main() -> None:
    """Entry point of the ``evalkit`` script."""
    _register()
    app()
