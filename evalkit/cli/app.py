"""The typer application. Each command module adds its commands to :data:`app`;
``evalkit/cli/__init__.py`` imports every command module, so ``evalkit.cli.app`` has all
commands once ``evalkit.cli`` is imported."""

from __future__ import annotations

import inspect

import typer

app = typer.Typer(
    name="evalkit",
    help="Analyse AI-agent benchmark runs (Harbor job folders, ATIF trajectories, rollouts).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def paragraphs_as_lines(doc: str) -> str:
    """A docstring with each paragraph on one line, so help rewraps it to the terminal width
    (typer keeps the line breaks of every paragraph after the first)."""
    return "\n\n".join(" ".join(p.split()) for p in inspect.cleandoc(doc).split("\n\n"))


def use_docstrings_as_help() -> None:
    """Every registered command's help: its docstring, one line per paragraph (an explicit
    ``help=`` is kept)."""
    for info in app.registered_commands:
        if info.help is None and info.callback is not None and info.callback.__doc__:
            info.help = paragraphs_as_lines(info.callback.__doc__)


def main() -> None:
    """Entry point of the ``evalkit`` script."""
    app()
