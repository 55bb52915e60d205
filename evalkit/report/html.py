"""Small HTML building blocks for report sections. Every value is escaped: run labels,
task names, error messages and trajectories are untrusted text."""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

import polars as pl

CSS = """<style>
.ek { font-family: system-ui, -apple-system, 'Segoe UI', Roboto, Arial, sans-serif; font-size: 14px; line-height: 1.45; }
.ek table.ek-table { border-collapse: collapse; margin: 0.4em 0 0.8em 0; font-size: 13px; }
.ek table.ek-table th { text-align: left; border-bottom: 2px solid #444; padding: 3px 10px 3px 4px; vertical-align: bottom; }
.ek table.ek-table td { border-bottom: 1px solid #ddd; padding: 3px 10px 3px 4px; vertical-align: top; text-align: left; overflow-wrap: break-word; }
.ek table.ek-table td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.ek table.ek-table th.num { text-align: right; }
.ek table.ek-table td.lead { min-width: 13em; }
.ek table.ek-table td.nw { white-space: nowrap; }
.ek .ek-md h1 { font-size: 1.2em; } .ek .ek-md h2 { font-size: 1.1em; } .ek .ek-md h3 { font-size: 1em; }
.ek .ek-md pre { white-space: pre-wrap; word-break: break-word; background: #f6f6f6; padding: 6px; font-size: 12px; max-height: 30em; overflow: auto; }
.ek .ek-md table { border-collapse: collapse; }
.ek .ek-md table td, .ek .ek-md table th { text-align: left; font-size: 12px; border-bottom: 1px solid #ddd; padding: 2px 8px 2px 2px; }
.ek .ek-scroll { max-width: 100%; overflow-x: auto; }
.ek table.ek-table tr:nth-child(even) td { background: #f7f7f7; }
.ek .ek-note { color: #555; font-size: 13px; margin: 0.2em 0 0.6em 0; }
.ek .ek-missing { border-left: 4px solid #E69F00; background: #fff8e6; padding: 6px 10px; margin: 0.4em 0; }
.ek .ek-warn { border-left: 4px solid #D55E00; background: #fdf0e8; padding: 6px 10px; margin: 0.4em 0; }
.ek .ek-ok { border-left: 4px solid #009E73; background: #eaf6f1; padding: 6px 10px; margin: 0.4em 0; }
.ek .ek-verdict { display: inline-block; font-weight: 700; font-size: 15px; padding: 4px 12px; border-radius: 4px; margin: 0.2em 0.6em 0.2em 0; border: 2px solid; }
.ek .ek-verdict.good { color: #00664a; border-color: #009E73; background: #eaf6f1; }
.ek .ek-verdict.hold { color: #7a5200; border-color: #E69F00; background: #fff8e6; }
.ek .ek-verdict.bad { color: #8a3300; border-color: #D55E00; background: #fdf0e8; }
.ek .ek-verdict.none { color: #333; border-color: #999; background: #f2f2f2; }
.ek .ek-answer { border: 1px solid #ddd; border-radius: 6px; padding: 8px 14px; margin: 0.3em 0 0.8em 0; }
.ek .ek-answer p, .ek .ek-answer ul { margin: 0.25em 0; }
.ek .ek-answer ul { padding-left: 1.2em; }
.ek .ek-answer table.ek-table { margin: 0.3em 0; }
.ek details { margin: 0.3em 0; }
.ek details > summary { cursor: pointer; font-weight: 600; }
.ek pre.ek-pre { white-space: pre-wrap; word-break: break-word; background: #f6f6f6; border: 1px solid #e2e2e2; padding: 8px; font-size: 12px; max-height: 36em; overflow: auto; }
.ek .ek-kv td:first-child { color: #555; padding-right: 14px; }
</style>"""


def esc(v: Any) -> str:
    return html.escape("" if v is None else str(v), quote=True)


def fmt(v: Any, kind: str = "") -> str:
    """A value as text: pct, pct1, usd, int, tok, dur, float, or plain."""
    if v is None or (isinstance(v, float) and v != v):
        return "–"
    if kind == "p":
        return "< 0.001" if v < 0.001 else f"{v:.3f}"
    if kind == "pts":
        return f"{100 * v:+.1f} pts"
    if kind in ("pct", "pct1"):
        return f"{100 * v:.{1 if kind == 'pct1' else 0}f}%"
    if kind == "usd":
        return f"${v:,.2f}" if abs(v) >= 0.995 else f"${v:.4f}"
    if kind == "int":
        return f"{int(v):,}"
    if kind == "tok":
        n = float(v)
        return f"{n / 1e6:.1f}M" if n >= 1e6 else (f"{n / 1e3:.0f}k" if n >= 1e4 else f"{n:,.0f}")
    if kind == "dur":
        s = float(v)
        return (
            f"{s / 3600:.1f} h" if s >= 3600 else (f"{s / 60:.1f} min" if s >= 60 else f"{s:.0f} s")
        )
    if kind == "float":
        return f"{v:.3f}"
    if isinstance(v, datetime):
        return v.strftime("%Y-%m-%d %H:%M UTC") if v.tzinfo else v.strftime("%Y-%m-%d %H:%M")
    if isinstance(v, float):
        return f"{v:.3g}"
    if isinstance(v, list):
        return ", ".join(str(x) for x in v)
    return str(v)


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``1 run``, ``2 runs``: a count with its noun in the right number."""
    return f"{n} {noun if n == 1 else (plural or noun + 's')}"


def breakable(escaped: str) -> str:
    """Let long identifiers (run labels, paths) wrap after ``__`` and ``/``."""
    if len(escaped) <= 24:
        return escaped
    return escaped.replace("__", "__<wbr>").replace("/", "/<wbr>")


NUMERIC_KINDS = ("p", "pct", "pct1", "pts", "usd", "int", "tok", "dur", "float", "right")


def table(
    df: pl.DataFrame,
    kinds: Mapping[str, str] | None = None,
    *,
    headers: Mapping[str, str] | None = None,
    max_rows: int = 200,
    raw: Iterable[str] = (),
) -> str:
    """An HTML table of ``df``. ``kinds``: column -> fmt kind; ``headers``: column -> title;
    ``raw``: columns whose values are already safe HTML (built with :func:`esc`)."""
    kinds, headers, raw = dict(kinds or {}), dict(headers or {}), set(raw)
    cols = df.columns
    shown = df.head(max_rows)
    numeric = {c: df.schema[c].is_numeric() or kinds.get(c) in NUMERIC_KINDS for c in cols}
    text = {
        c: [
            v if c in raw and v is not None else breakable(esc(fmt(v, kinds.get(c, ""))))
            for v in shown[c].to_list()
        ]
        for c in cols
    }
    cls = {
        c: ' class="num"'
        if numeric[c]
        else (
            ' class="nw"'
            if max((len(x) for x in text[c]), default=0) <= 24
            else (' class="lead"' if i == 0 else "")
        )
        for i, c in enumerate(cols)
    }
    head = "".join(
        ('<th class="num">' if numeric[c] else "<th>") + f"{esc(headers.get(c, c))}</th>"
        for c in cols
    )
    rows = [
        "<tr>" + "".join(f"<td{cls[c]}>{text[c][i]}</td>" for c in cols) + "</tr>"
        for i in range(shown.height)
    ]
    more = ""
    if df.height > max_rows:
        more = f'<p class="ek-note">… {df.height - max_rows} more rows not shown.</p>'
    return (
        f'<div class="ek-scroll"><table class="ek-table"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>{more}"
    )


def p(text: str, cls: str = "") -> str:
    return f'<p class="{cls}">{esc(text)}</p>' if cls else f"<p>{esc(text)}</p>"


def note(text: str) -> str:
    return p(text, "ek-note")


def box(text: str, kind: str = "missing") -> str:
    """A highlighted paragraph: kind 'missing' (not available), 'warn' or 'ok'."""
    return f'<div class="ek-{kind}">{esc(text)}</div>'


def verdict(text: str, tone: str) -> str:
    return f'<span class="ek-verdict {tone}">{esc(text)}</span>'


def details(summary: str, body_html: str, open_: bool = False) -> str:
    return (
        f"<details{' open' if open_ else ''}><summary>{esc(summary)}</summary>{body_html}</details>"
    )


def pre(text: str) -> str:
    return f'<pre class="ek-pre">{esc(text)}</pre>'


def kv(pairs: Iterable[tuple[str, Any]]) -> str:
    rows = "".join(f"<tr><td>{esc(k)}</td><td>{esc(fmt(v))}</td></tr>" for k, v in pairs)
    return f'<table class="ek-table ek-kv"><tbody>{rows}</tbody></table>'


def h(level: int, text: str) -> str:
    return f"<h{level}>{esc(text)}</h{level}>"


def wrap(parts: Iterable[str]) -> str:
    return '<div class="ek">' + "\n".join(parts) + "</div>"
