"""Markdown pieces for evidence written from job folders: content is redacted and cannot
break out of its block or table cell."""

from __future__ import annotations

import re
from typing import Any

from evalkit.load.redact import env_secret_values, redact_text


def code_block(text: str, lang: str = "", indent: str = "") -> str:
    """A fenced block that ``text`` cannot close (fence longer than any backtick run)."""
    text = redact_text(text or "", env_secret_values())
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    body = "\n".join(indent + ln for ln in text.splitlines()) if indent else text
    return f"{indent}{fence}{lang}\n{body}\n{indent}{fence}"


def cell(v: Any, n: int = 80) -> str:
    """A Markdown table cell: redacted, one line, pipes escaped, cut to ``n`` chars."""
    if v is None:
        return "-"
    s = redact_text(str(v), env_secret_values()).replace("\r", " ").replace("\n", " ")
    s = s if len(s) <= n else s[: n - 1] + "…"
    return s.replace("\\", "\\\\").replace("|", "\\|").replace("`", "'")
