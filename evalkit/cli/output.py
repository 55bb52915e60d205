"""Formatting frames for the terminal (rich) and for machines (json / csv)."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import polars as pl
import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

import evalkit
from evalkit.load.locate import locate, requested_runs

FORMATS = ("table", "json", "csv", "csv-raw")
#: The ``--runs`` option of the commands that read runs (found by :func:`load_runs`).
RunsOpt = typer.Option(
    None,
    "--runs",
    help="Runs folder (or a job folder); default $EVALKIT_RUNS, else ./runs or one above.",
)
#: The ``--redact/--no-redact`` option of the commands that write what they read.
RedactOpt = typer.Option(
    True,
    "--redact/--no-redact",
    help="Replace API-key-like values and secret env values with [REDACTED] (default).",
)
#: A text cell starting with one of these is a formula to a spreadsheet (OWASP "CSV
#: injection"): ``csv`` prefixes it with ``'``; ``csv-raw`` writes it as it is.
_FORMULA_START = r"^[=+\-@\t\r]"
#: Control characters (terminal escape sequences included) other than newline and tab.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def clean(v: Any) -> str:
    """Text from job folders made safe for a terminal: control characters (an ESC starting
    a sequence that retitles the window or rewrites the screen) shown as U+FFFD."""
    return _CONTROL.sub("\ufffd", str(v))


def safe(v: Any) -> str:
    """:func:`clean` and escaped for rich markup: ``[/]`` in a task name is text, not a tag
    (unescaped, it made rich raise MarkupError)."""
    return escape(clean(v))


def console() -> Console:
    return Console(soft_wrap=False, width=None if sys.stdout.isatty() else 220)


def err_console() -> Console:
    """A console on stderr (notes that must not mix with data on stdout)."""
    return Console(stderr=True, soft_wrap=False, width=None if sys.stderr.isatty() else 220)


def progress_wanted() -> bool:
    """Progress bars only when a person watches: stderr is a terminal (never in pipes, CI
    logs or captured output)."""
    return sys.stderr.isatty()


def check_choice(option: str, value: str | None, valid: tuple[str, ...]) -> None:
    """Exit 2 naming the valid values when ``value`` is not one of them."""
    if value is not None and value not in valid:
        err_console().print(
            f"[red]{option}: {escape(clean(repr(value)))} is not one of: {', '.join(valid)}[/red]"
        )
        raise typer.Exit(2)


#: (threshold, divisor, format, suffix): a value at or over the threshold is shown divided.
_DURATION_UNITS = ((3600, 3600, ".1f", "h"), (60, 60, ".1f", "m"))
_TOKEN_UNITS = ((1_000_000, 1e6, ".1f", "M"), (10_000, 1e3, ".0f", "k"))


def _in_largest_unit(
    v: float, units: tuple[tuple[float, float, str, str], ...], otherwise: str
) -> str:
    """``v`` in the first unit whose threshold it reaches, else ``otherwise``."""
    for threshold, divisor, spec, suffix in units:
        if v >= threshold:
            return f"{v / divisor:{spec}}{suffix}"
    return otherwise


def fmt_num(v: Any, kind: str = "") -> str:
    if v is None:
        return "unknown" if kind == "cost" else "-"
    if kind == "cost":
        return f"${v:,.2f}" if v >= 0.01 or v == 0 else f"${v:.4f}"
    if kind == "pct":
        return f"{100 * v:.1f}%"
    if kind == "dur":
        return _in_largest_unit(float(v), _DURATION_UNITS, f"{float(v):.0f}s")
    if kind == "tok":
        return _in_largest_unit(int(v), _TOKEN_UNITS, str(int(v)))
    if isinstance(v, float):
        return f"{v:.3g}" if abs(v) < 1000 else f"{v:,.0f}"
    if isinstance(v, datetime):
        return v.strftime("%Y-%m-%d %H:%M")
    return str(v)


def neutralise_formulas(df: pl.DataFrame) -> pl.DataFrame:
    """``df`` with every text cell that starts like a formula (``=``, ``+``, ``-``, ``@``,
    tab, carriage return) prefixed with a single quote, as OWASP recommends."""
    return df.with_columns(
        pl.when(pl.col(c).str.contains(_FORMULA_START))
        .then(pl.lit("'") + pl.col(c))
        .otherwise(pl.col(c))
        .alias(c)
        for c in df.columns
        if df.schema[c] == pl.String
    )


def emit(
    df: pl.DataFrame,
    fmt: str,
    *,
    title: str | None = None,
    kinds: dict[str, str] | None = None,
    style: Callable[[dict], str | None] | None = None,
    fold: tuple[str, ...] = (),
) -> None:
    """Print ``df`` as a rich table, JSON (records) or CSV (``csv``: text cells that a
    spreadsheet would run as a formula are neutralised; ``csv-raw``: as they are).

    In tables only the ``fold`` columns may wrap; the others stay on one line.
    """
    if fmt == "json":
        sys.stdout.write(df.write_json() + "\n")
        return
    if fmt in ("csv", "csv-raw"):
        # nested columns (rewards: a list of structs) as JSON text: Polars cannot cast them
        flat = df.with_columns(
            pl.Series(
                c,
                [None if v is None else json.dumps(v, default=str) for v in df[c].to_list()],
                pl.String,
            )
            for c in df.columns
            if df.schema[c].is_nested()
        )
        sys.stdout.write((flat if fmt == "csv-raw" else neutralise_formulas(flat)).write_csv())
        return
    kinds = kinds or {}
    table = Table(
        title=Text(clean(title)) if title else None,
        header_style="bold",
        show_lines=False,
        pad_edge=False,
    )
    for c in df.columns:
        numeric = df.schema[c].is_numeric()
        table.add_column(
            c,
            justify="right" if numeric else "left",
            overflow="fold" if c in fold else "ellipsis",
            no_wrap=c not in fold,
        )
    for row in df.iter_rows(named=True):
        table.add_row(
            *[Text(clean(fmt_num(row[c], kinds.get(c, "")))) for c in df.columns],
            style=style(row) if style else None,
        )
    console().print(table)


def load_runs(runs_dir: Path | None) -> evalkit.Runs:
    """``evalkit.load`` of the runs folder found by the notebooks' rule
    (:mod:`evalkit.load.locate`: the option, ``$EVALKIT_RUNS``, ``runs`` here or above);
    a folder found nowhere exits 2 with what was looked for."""
    asked, source = requested_runs(runs_dir)
    found = locate(asked)
    if found is None:
        err_console().print(
            f"[red]No such folder: {safe(asked)} ({safe(source)}; a relative path is also "
            "looked for in every folder above this one). Point elsewhere with --runs PATH "
            "or $EVALKIT_RUNS.[/red]"
        )
        raise typer.Exit(2)
    return evalkit.load(found, progress=progress_wanted())
