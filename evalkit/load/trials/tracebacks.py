"""The exception a trial without result.json died of, from its exception.txt or the tail
of its trial.log.

Harbor writes ``exception.txt`` with ``traceback.format_exc()`` when a trial first records
an exception, before result.json (which a killed or cancelled run never writes). The text
ends with Python's standard last line(s): ``<dotted.Type>: <message>`` (or the bare type
when the message is empty), after the indented frame lines. The type's last dotted part is
the name result.json would record (``asyncio.exceptions.CancelledError`` ->
``CancelledError``), so ``load/outcomes.py`` classifies it like a finished trial's.
"""

from __future__ import annotations

import re

from evalkit.load.errors import LoadError
from evalkit.load.shared.io import NotARegularFile, tail_bytes

#: Bytes read from the end of exception.txt / trial.log.
TAIL_BYTES = 64 * 1024
_HEAD = "Traceback (most recent call last):"
_GROUP_HEAD = re.compile(r"^(\s*)\+ Exception Group Traceback \(most recent call last\):$")
_FRAME = re.compile(r"^\s+File ")
_TYPE = re.compile(r"^([A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)*)(?::(?: (.*))?)?$")


def _log_tail(path: str, trial_id: str, errors: list[LoadError]) -> str | None:
    """The last TAIL_BYTES of a log as text (None, with a load error, when it cannot be read)."""
    try:
        data, _ = tail_bytes(path, TAIL_BYTES)
    except NotARegularFile:
        errors.append(LoadError(path, "file", "not_a_file", "not a regular file", trial_id=trial_id))  # fmt: skip
        return None
    except OSError as e:
        errors.append(LoadError(path, "file", "unreadable", f"{type(e).__name__}: {e}", trial_id=trial_id))  # fmt: skip
        return None
    return data.decode("utf-8", errors="replace")


def _last_traceback(lines: list[str]) -> list[str] | None:
    """The lines from the last top-level traceback header on (None when there is none)."""
    heads = [i for i, ln in enumerate(lines) if ln == _HEAD or _GROUP_HEAD.match(ln)]
    return lines[heads[-1] :] if heads else None


def _without_group_margin(lines: list[str]) -> list[str]:
    """An exception group's own traceback: the lines inside its ``  | `` margin, stopping
    where its sub-exceptions begin; other tracebacks come back unchanged."""
    m = _GROUP_HEAD.match(lines[0]) if lines else None
    if m is None:
        return lines
    margin = m.group(1) + "| "
    own = []
    for ln in lines[1:]:
        if not ln.startswith(margin):
            break
        own.append(ln[len(margin) :])
    return own


def last_exception(text: str, *, need_header: bool = False) -> tuple[str, str] | None:
    """(type name, message) of the last traceback in ``text``; None when there is none.

    The exception line is the first unindented line after the last ``File`` frame line
    (the frame's source and caret lines are indented); every line after it is the message,
    indented or not. ``need_header``: only read text from the last ``Traceback (most recent
    call last):`` line (a log file holds other lines too); without it, text with no such line
    is read whole.
    """
    lines = text.rstrip().splitlines()
    last = _last_traceback(lines)
    if last is None and need_header:
        return None
    lines = _without_group_margin(last or lines)
    frames = [i for i, ln in enumerate(lines) if _FRAME.match(ln)]
    at = frames[-1] + 1 if frames else 0
    while at < len(lines) and (not lines[at].strip() or lines[at][:1] in (" ", "\t")):
        at += 1
    if at == len(lines):
        return None
    m = _TYPE.match(lines[at].strip())
    if m is None:
        return None
    message = "\n".join([m.group(2) or "", *lines[at + 1 :]]).strip()
    return m.group(1).rsplit(".", 1)[-1], message


def exception_from_files(
    base: str, names: list[str], trial_id: str, errors: list[LoadError]
) -> dict[str, str] | None:
    """``exception_info``-like {exception_type, exception_message} of a trial folder
    (``base`` ends with '/') from exception.txt, else from the tail of trial.log."""
    for name, need_header in (("exception.txt", False), ("trial.log", True)):
        if name not in names:
            continue
        text = _log_tail(base + name, trial_id, errors)
        found = last_exception(text, need_header=need_header) if text else None
        if found is not None:
            return {"exception_type": found[0], "exception_message": found[1]}
    return None
