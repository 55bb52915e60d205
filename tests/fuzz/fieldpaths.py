"""JSON field paths of the seed tree: every concrete path of every JSON / JSONL file, their
general form (list indices collapsed) and the sweep order of the wrong-type family."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from tests.fuzz.corpus import targets, template


def _paths(v: Any, here: tuple = ()) -> list[tuple]:
    """Every concrete path in a JSON value (dict keys and list indices)."""
    out = [here]
    if isinstance(v, dict):
        for k, x in v.items():
            out += _paths(x, (*here, k))
    elif isinstance(v, list):
        for i, x in enumerate(v):
            out += _paths(x, (*here, i))
    return out


def general(path: tuple) -> str:
    """A path with list indices collapsed: ``steps[*].tool_calls[*].function_name``."""
    return "".join("[*]" if isinstance(p, int) else f".{p}" for p in path) or "$"


def _lines(text: bytes) -> list[tuple[int, Any]]:
    """(line index, value) of the lines of a JSONL text that parse on their own."""
    out = []
    for i, line in enumerate(text.splitlines(keepends=True)):
        try:
            out.append((i, json.loads(line)))
        except ValueError:
            continue
    return out


def _docs(text: bytes, kind: str) -> list[tuple[int, Any]]:
    return [(-1, json.loads(text))] if kind == "json" else _lines(text)


@cache
def field_paths() -> list[tuple[str, int, str]]:
    """(file, line index or -1, general path) for every JSON field of the seed tree: the
    sweep order of the wrong-type family. JSONL paths are per line."""
    root = template()
    out: list[tuple[str, int, str]] = []
    for t in targets():
        if t.kind not in ("json", "jsonl"):
            continue
        docs = _docs((root / t.rel).read_bytes(), t.kind)
        seen: set[tuple[str, str]] = set()
        for li, d in docs:
            for p in _paths(d):
                g = general(p)
                key = ("" if t.kind == "json" else _line_kind(d), g)
                if key not in seen:
                    seen.add(key)
                    out.append((t.rel, li, g))
    return out


def _line_kind(d: Any) -> str:
    """JSONL lines of one kind (rollout event type) share their field paths."""
    return str(d.get("type")) if isinstance(d, dict) else "-"


def _set(doc: Any, path: tuple, value: Any) -> Any:
    if not path:
        return value
    cur = doc
    for p in path[:-1]:
        cur = cur[p]
    cur[path[-1]] = value
    return doc


def _dumps(doc: Any, marker: str, raw: bytes | None) -> bytes:
    text = json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=True).encode(
        "utf-8", "surrogatepass"
    )
    return text.replace(f'"{marker}"'.encode(), raw) if raw is not None else text
