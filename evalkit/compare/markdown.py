"""Markdown pieces for evidence written from job folders: content is redacted, cannot
break out of its block or table cell, and is text in any Markdown viewer (SECURITY.md)."""

from __future__ import annotations

import re
from typing import Any

from evalkit.load.shared.redact import env_secret_values, redact_text


def code_block(text: str, lang: str = "", indent: str = "") -> str:
    """A fenced block that ``text`` cannot close (fence longer than any backtick run)."""
    text = redact_text(text or "", env_secret_values())
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    body = "\n".join(indent + ln for ln in text.splitlines()) if indent else text
    return f"{indent}{fence}{lang}\n{body}\n{indent}{fence}"


#: Text in a Markdown cell, heading or label is text: HTML-significant characters become
#: entities (no tag runs in a viewer that allows HTML), Markdown syntax is backslash-escaped
#: (``*.txt`` is no emphasis, ``[x](y)`` no link; ``_`` at a word's edge), and a backtick,
#: which no escape stops inside a code span, becomes a quote.
_MD_TEXT = str.maketrans(
    {"&": "&amp;", "<": "&lt;", ">": "&gt;", "\\": "\\\\", "|": "\\|", "`": "'", "*": "\\*",
     "[": "\\[", "]": "\\]", "~": "\\~"}
)  # fmt: skip
#: Underscores are emphasis only at a word's edge (``snake_case``, ``task__a1b2c3d`` stay).
_EDGE_UNDERSCORES = re.compile(r"(?<![A-Za-z0-9_])_+|_+(?![A-Za-z0-9_])")


def cell(v: Any, n: int = 80) -> str:
    """Text for a Markdown table cell, heading or label: redacted, one line, cut to ``n``
    chars, then escaped (``_MD_TEXT``)."""
    if v is None:
        return "-"
    s = redact_text(str(v), env_secret_values()).replace("\r", " ").replace("\n", " ")
    s = s if len(s) <= n else s[: n - 1] + "…"
    s = s.translate(_MD_TEXT)
    return _EDGE_UNDERSCORES.sub(lambda m: "\\_" * len(m.group()), s)
