"""What a widget leaves where no kernel runs (GitHub's and GitLab's notebook views,
nbviewer, VS Code's preview, a PDF): a readable HTML table beside the live widget.

Jupyter picks the widget view when a widget manager is there; every other viewer falls back
to the ``text/html`` entry of the same output.
"""

from __future__ import annotations

from html import escape
from typing import Any

import polars as pl

#: Rows a static table lists at most (the caption says how many there are).
STATIC_ROWS = 25
NOTE = "Static copy of an interactive widget: run the notebook in Jupyter to browse."


def frame_html(df: pl.DataFrame, caption: str, max_rows: int = STATIC_ROWS) -> str:
    """``df`` as an HTML table under a caption (at most ``max_rows`` rows, saying so)."""
    more = f" (first {max_rows} of {df.height})" if df.height > max_rows else ""
    body = df.head(max_rows)._repr_html_() if df.height else "<p><i>none</i></p>"
    return f"<div><b>{escape(caption)}</b>{escape(more)}{body}</div>"


def static_page(*parts: str) -> str:
    """The fallback of one widget: the note, then the parts (already HTML)."""
    return (
        "<div class='evalkit-static'><p><i>" + escape(NOTE) + "</i></p>" + "".join(parts) + "</div>"
    )


def with_static(bundle: Any, html: str) -> Any:
    """A widget's mimebundle (dict, or (data, metadata)) with ``html`` as its ``text/html``."""
    data = bundle[0] if isinstance(bundle, tuple) else bundle
    if isinstance(data, dict):
        data["text/html"] = html
    return bundle
