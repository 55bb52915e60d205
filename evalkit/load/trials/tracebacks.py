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


def last_exception(text: str, *, need_header: bool = False) -> tuple[str, str] | None:
    """(type name, message) of the last traceback in ``text``; None when there is none.

    ``need_header``: only read text after a ``Traceback (most recent call last):`` line
    (a log file holds other lines too).
    """
    if need_header:
        at = text.rfind(_HEAD)
        if at < 0:
            return None
        text = text[at:]
    lines = text.rstrip().splitlines()
    # the exception lines follow the last indented frame line
    last_frame = max((i for i, ln in enumerate(lines) if ln[:1] in (" ", "\t")), default=-1)
    tail = [ln for ln in lines[last_frame + 1 :] if ln.strip()]
    if not tail:
        return None
    m = _TYPE.match(tail[0].strip())
    if m is None:
        return None
    message = "\n".join([m.group(2) or "", *tail[1:]]).strip()
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
