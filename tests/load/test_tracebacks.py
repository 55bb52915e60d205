"""exception.txt / trial.log tails: the last exception of a real Python traceback."""

from __future__ import annotations

import asyncio
import traceback

from hypothesis import given, settings
from hypothesis import strategies as st

from evalkit.load.trials.tracebacks import last_exception

_NAME = st.from_regex(r"[A-Z][A-Za-z0-9_]{0,20}Error", fullmatch=True)
_MESSAGE = st.text(st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp")), max_size=80).map(
    str.strip
)


def _format(exc: BaseException) -> str:
    try:
        raise exc
    except BaseException:
        return traceback.format_exc()


@settings(max_examples=200, deadline=None)
@given(name=_NAME, message=_MESSAGE)
def test_round_trips_what_traceback_writes(name: str, message: str) -> None:
    exc_type = type(name, (Exception,), {"__module__": "harbor.trial.errors"})
    got = last_exception(_format(exc_type(message)))
    assert got == (name, message)


def test_cancelled_and_chained() -> None:
    assert last_exception(_format(asyncio.CancelledError())) == ("CancelledError", "")
    try:
        try:
            raise KeyError("k")
        except KeyError as e:
            raise RuntimeError("wrapped") from e
    except RuntimeError:
        text = traceback.format_exc()
    assert last_exception(text) == ("RuntimeError", "wrapped")


def test_log_tail_needs_a_traceback() -> None:
    assert last_exception("INFO done\nERROR: something\n", need_header=True) is None
    log = "INFO start\n" + _format(ValueError("bad value")) + "\n"
    assert last_exception(log, need_header=True) == ("ValueError", "bad value")
    assert last_exception("") is None
