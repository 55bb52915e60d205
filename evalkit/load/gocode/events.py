"""Read one go-code rollout file into seq-sorted events (rollouts-gates-qc.md §1.2).

A rollout is JSON Lines: ``{"ts", "seq", "type", "data"}`` per line, written with
O_APPEND and possibly out of seq order. Blank lines are skipped; malformed lines (not JSON,
not an object, no string ``type``) are counted and reported, never raised.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from datetime import date

import orjson

from evalkit.load.errors import LoadError
from evalkit.load.shared import io

_DATE_NAME = re.compile(r"^\d{4}-\d{2}-\d{2}$")

#: Terminal events of a run (go-code's runner writes exactly one, last).
TERMINAL = ("run.completed", "run.failed", "run.cancelled")


@dataclass
class RolloutFile:
    """Events of one rollout file, sorted by seq (ties and missing seq keep file order)."""

    path: str
    events: list[dict] = field(default_factory=list)
    errors: list[LoadError] = field(default_factory=list)
    n_lines: int = 0
    n_malformed: int = 0


def is_date_folder(name: str) -> bool:
    """True for a recorder date folder name: a calendar date written YYYY-MM-DD."""
    if not _DATE_NAME.match(name):
        return False
    try:
        date.fromisoformat(name)
    except ValueError:
        return False
    return True


def _sniff_line(line: bytes) -> bool:
    try:
        ev = orjson.loads(line)
    except orjson.JSONDecodeError:
        return False
    return isinstance(ev, dict) and isinstance(ev.get("type"), str) and "seq" in ev


def looks_like_rollout_file(path: str, max_bytes: int = 1 << 20) -> bool:
    """True when the first non-blank line of ``path`` is a rollout envelope
    (``seq`` and a string ``type``). audit.jsonl (hash-chained audit trail) never matches."""
    if os.path.basename(path) == "audit.jsonl" or not path.endswith(".jsonl"):
        return False
    head = io.read_head(path, max_bytes)  # never blocks on a FIFO, refuses non-files
    if head is None:
        return False
    for line in head.split(b"\n"):
        line = line.strip()
        if line:
            return _sniff_line(line)
    return False


def _seq_key(ev: dict, i: int) -> tuple:
    s = ev.get("seq")
    ok = isinstance(s, (int, float)) and not isinstance(s, bool)
    return (0, s, i) if ok else (1, 0, i)


def _parse_lines(rf: RolloutFile, lines: list[bytes], job_id: str | None) -> list:
    """Each line on its own (a line is one event); unparsable ones are counted in ``rf``."""
    events: list = []
    first_bad = None
    for n, ln in enumerate(lines, 1):
        try:
            events.append(orjson.loads(ln))
        except orjson.JSONDecodeError as e:
            rf.n_malformed += 1
            first_bad = first_bad or (n, str(e))
    if first_bad:
        rf.errors.append(
            LoadError(rf.path, "rollout", "malformed_line",
                      f"{rf.n_malformed} unparsable line(s) skipped (first: non-blank line {first_bad[0]}: {first_bad[1]})",
                      job_id)
        )  # fmt: skip
    return events


def read_rollout_file(path: str, *, job_id: str | None = None) -> RolloutFile:
    """Parse a rollout file; errors (level 'rollout') say what was skipped."""
    rf = RolloutFile(path)
    data, err = io.read_bytes(path, "rollout")
    if err is not None:
        rf.errors.append(LoadError(err.path, "rollout", err.error_type, err.message, job_id))
        return rf
    lines = [ln for ln in data.split(b"\n") if ln.strip()]
    rf.n_lines = len(lines)
    events = _parse_lines(rf, lines, job_id)
    good = [e for e in events if isinstance(e, dict) and isinstance(e.get("type"), str)]
    if len(good) != len(events):
        bad = len(events) - len(good)
        rf.n_malformed += bad
        rf.errors.append(
            LoadError(
                path,
                "rollout",
                "not_an_event",
                f"{bad} line(s) are JSON but not rollout events (skipped)",
                job_id,
            )
        )
    order = sorted(range(len(good)), key=lambda i: _seq_key(good[i], i))
    rf.events = [good[i] for i in order]
    return rf
