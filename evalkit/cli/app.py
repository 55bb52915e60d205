"""The typer application. Each command module adds its commands to :data:`app`;
``evalkit/cli/__init__.py`` imports every command module, so ``evalkit.cli.app`` has all
commands once ``evalkit.cli`` is imported."""

from __future__ import annotations

import typer

app = typer.Typer(
    name="evalkit",
    help="Analyse AI-agent benchmark runs (Harbor job folders, ATIF trajectories, rollouts).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def main() -> None:
    """Entry point of the ``evalkit`` script."""
    app()
