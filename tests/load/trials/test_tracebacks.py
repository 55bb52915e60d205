"""exception.txt / trial.log reading (load/trials/tracebacks.py): the last exception of a
real Python traceback (plain, chained, grouped, with a multi-line message), which file wins,
what a bad file gives, and last-line shapes."""

from __future__ import annotations

import asyncio
import os
import traceback
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalkit.load.trials.tracebacks import TAIL_BYTES, exception_from_files, last_exception


def _format(exc: BaseException) -> str:
    try:
        raise exc
    except BaseException:
        return traceback.format_exc()


_NAME = st.from_regex(r"[A-Z][A-Za-z0-9_]{0,20}Error", fullmatch=True)
_MESSAGE = st.text(st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp")), max_size=80).map(
    str.strip
)


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


def test_a_message_with_indented_lines_keeps_its_type() -> None:
    # pydantic's ValidationError: the message's own lines are indented, like frame lines
    text = (
        "Traceback (most recent call last):\n"
        '  File "/app/run.py", line 5, in <module>\n'
        "    M()\n"
        "    ^^^\n"
        "pydantic_core._pydantic_core.ValidationError: 1 validation error for M\n"
        "x\n"
        "  Field required [type=missing, input_value={}, input_type=dict]\n"
        "    For further information visit https://errors.pydantic.dev/2.14/v/missing\n"
    )
    assert last_exception(text) == (
        "ValidationError",
        "1 validation error for M\nx\n  Field required [type=missing, input_value={}, "
        "input_type=dict]\n    For further information visit "
        "https://errors.pydantic.dev/2.14/v/missing",
    )
    assert last_exception("INFO start\n" + text, need_header=True)[0] == "ValidationError"


def test_an_exception_group_is_named_by_the_group() -> None:
    # what Harbor's result.json would record is the type that was raised: the group
    text = _format(ExceptionGroup("2 trials failed", [ValueError("x"), KeyError("k")]))
    assert last_exception(text) == ("ExceptionGroup", "2 trials failed (2 sub-exceptions)")
    log = "INFO start\n" + text + "INFO stopping\n"
    assert last_exception(log, need_header=True) == (
        "ExceptionGroup",
        "2 trials failed (2 sub-exceptions)",
    )


def _trial(tmp_path: Path, **files: str) -> tuple[str, list[str]]:
    for name, text in files.items():
        (tmp_path / name.replace("_", ".")).write_text(text)
    return str(tmp_path) + os.sep, sorted(os.listdir(tmp_path))


def test_exception_txt_wins_over_trial_log(tmp_path: Path) -> None:
    base, names = _trial(
        tmp_path,
        exception_txt=_format(TimeoutError("agent ran out of time")),
        trial_log="INFO x\n" + _format(ValueError("from the log")),
    )
    errors: list = []
    got = exception_from_files(base, names, "t", errors)
    assert got == {"exception_type": "TimeoutError", "exception_message": "agent ran out of time"}
    assert errors == []


def test_trial_log_is_used_when_exception_txt_has_no_traceback(tmp_path: Path) -> None:
    log = "INFO start\n" + _format(KeyError("k")) + "INFO shutting down\n"
    base, names = _trial(tmp_path, exception_txt="\n\n", trial_log=log)
    got = exception_from_files(base, names, "t", [])
    # lines after the exception are part of its message (not indented)
    assert got == {"exception_type": "KeyError", "exception_message": "'k'\nINFO shutting down"}


def test_trial_log_without_a_traceback_header_gives_nothing(tmp_path: Path) -> None:
    base, names = _trial(tmp_path, trial_log="INFO a\nRuntimeError: looks like one\n")
    assert exception_from_files(base, names, "t", []) is None


def test_only_listed_names_are_read(tmp_path: Path) -> None:
    base, _ = _trial(tmp_path, exception_txt=_format(ValueError("v")))
    assert exception_from_files(base, [], "t", []) is None


def test_exception_txt_folder_is_a_not_a_file_error(tmp_path: Path) -> None:
    (tmp_path / "exception.txt").mkdir()
    base, names = _trial(tmp_path, trial_log=_format(OSError("disk")))
    errors: list = []
    got = exception_from_files(base, names, "trial-9", errors)
    assert got == {"exception_type": "OSError", "exception_message": "disk"}
    assert [(e.path, e.level, e.error_type, e.trial_id) for e in errors] == [
        (base + "exception.txt", "file", "not_a_file", "trial-9")
    ]


def test_only_the_tail_of_a_long_log_is_read(tmp_path: Path) -> None:
    early = _format(ValueError("early"))
    filler = "INFO " + "x" * 100 + "\n"
    log = early + filler * (TAIL_BYTES // len(filler) + 10) + _format(LookupError("late"))
    base, names = _trial(tmp_path, trial_log=log)
    assert exception_from_files(base, names, "t", []) == {
        "exception_type": "LookupError",
        "exception_message": "late",
    }


def test_undecodable_bytes_are_replaced(tmp_path: Path) -> None:
    (tmp_path / "exception.txt").write_bytes(
        _format(ValueError("x")).encode().replace(b": x", b": caf\xe9")
    )
    got = exception_from_files(str(tmp_path) + os.sep, ["exception.txt"], "t", [])
    assert got == {"exception_type": "ValueError", "exception_message": "caf\ufffd"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Traceback (most recent call last):\n  File 'x'\nmod.sub.BoomError:\n", ("BoomError", "")),
        ("  File 'x'\nharbor.Err: a: b: c\n", ("Err", "a: b: c")),
        ("  File 'x'\nValueError: line one\nline two\n", ("ValueError", "line one\nline two")),
        ("  File 'x'\nnot a type name here\n", None),
        ("  File 'x'\n   \n", None),
        ("  File 'x'\n1Bad: x\n", None),
    ],
)
def test_last_line_shapes(text: str, expected) -> None:
    assert last_exception(text) == expected


def test_need_header_reads_the_last_traceback_only() -> None:
    log = _format(ValueError("first")) + "INFO retry\n" + _format(KeyError("second"))
    assert last_exception(log, need_header=True) == ("KeyError", "'second'")


def test_a_group_raised_while_handling_another_exception() -> None:
    try:
        try:
            raise KeyError("first")
        except KeyError:
            raise ExceptionGroup("during cleanup", [OSError("disk")])  # noqa: B904 (the implicit chain is the case)
    except ExceptionGroup:
        text = traceback.format_exc()
    assert last_exception(text) == ("ExceptionGroup", "during cleanup (1 sub-exception)")
