"""``evalkit report nightly|compare``: render a papermill report to offline HTML."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from evalkit.cli.app import app
from evalkit.cli.output import RedactOpt, console

if TYPE_CHECKING:
    from rich.console import Console

    from evalkit.report import ReportError


def parse_params(args: list[str]) -> list[tuple[str, str]]:
    """``-p NAME VALUE`` / ``--param NAME VALUE`` pairs (repeatable); values stay text."""
    out, i = [], 0
    while i < len(args):
        if args[i] not in ("-p", "--param"):
            raise typer.BadParameter(f"unexpected argument {args[i]!r} (parameters: -p NAME VALUE)")
        if i + 2 >= len(args):
            raise typer.BadParameter("-p needs a NAME and a VALUE")
        out.append((args[i + 1], args[i + 2]))
        i += 3
    return out


@app.command(
    "report",
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
)
def report_cmd(
    ctx: typer.Context,
    name: str = typer.Argument(..., help="nightly | compare (or a path to a report notebook)."),
    runs_dir: Path | None = typer.Option(
        None,
        "--runs",
        help="Runs folder (or a job folder); default $EVALKIT_RUNS, else ./runs or one above.",
    ),
    out: Path = typer.Option(Path("reports"), "--out", "-o", help="Folder for the report files."),
    redact: bool = RedactOpt,
    formats: list[str] = typer.Option(
        ["html"],
        "--format",
        "-f",
        help="html | ipynb | pdf | md (repeatable): the files whose paths are printed; "
        "pdf needs Chromium.",
    ),
) -> None:
    """Render a report (nightly, compare) to offline HTML and print its path.

    Executes the notebook (papermill, this environment) and writes DIR/<date>-<name>.html,
    the executed .ipynb and summary.json, plus a .pdf (--format pdf: for mail and archives)
    and a .md with its charts as PNG files (--format md: for a pull request). A failing
    cell fails the command with that cell's error.

    Notebook parameters: -p NAME VALUE (repeatable), e.g. -p candidate my-run -p gate_alpha 0.1.
    Values arrive as data (text, or the type of the parameter's default).
    """
    from evalkit.report import ReportError, render
    from evalkit.report.formats import FormatError

    err = console()
    err.file = sys.stderr
    param = parse_params(list(ctx.args))
    try:
        files = render(name, runs_dir, out, param, redact=redact, formats=formats)
    except (FileNotFoundError, ValueError, FormatError) as e:
        err.print(f"[red]{e}[/red]")
        raise typer.Exit(2) from None
    except ReportError as e:
        _print_cell_failure(err, name, e, out, redact)
        raise typer.Exit(1) from None
    s = files.seconds
    extra = f", summary {files.summary}" if files.summary.exists() else ""
    err.print(
        f"report {name}: {s['total']:.1f} s (execute {s['execute']:.1f} s, export {s['export']:.1f} s); "
        f"notebook {files.notebook}{extra}",
        highlight=False,
    )
    for fmt in dict.fromkeys(formats):
        print(files.path(fmt))


def _print_cell_failure(err: Console, name: str, e: ReportError, out: Path, redact: bool) -> None:
    """The failing cell: its number and first lines, the traceback's tail and the error
    (redacted unless ``redact`` is off), and where the partial notebook is."""
    from evalkit.load.shared.redact import env_secret_values, redact_text

    secret = env_secret_values()
    red = (lambda t: redact_text(t, secret)) if redact else (lambda t: t)
    err.print(f"[red]report {name} failed in cell {e.cell}:[/red]", highlight=False)
    if e.source:
        err.print("  " + "\n  ".join(e.source.splitlines()[:8]), markup=False, highlight=False)
    tail = "\n".join(e.traceback.splitlines()[-25:])
    err.print(red(tail), markup=False, highlight=False)
    err.print(red(f"{e.ename}: {e.evalue}"), markup=False, highlight=False)
    err.print(f"(partial notebook: {out})", markup=False, highlight=False)
