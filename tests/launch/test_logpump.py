"""evalkit.launch.logpump: copies Harbor's output into the job's log line by line,
appending, with secret values (the named variables' and every secret-looking variable's)
and key-shaped strings replaced by [REDACTED]; bytes that are not UTF-8 do not stop it;
without a LOG argument it prints its usage and returns 2."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from evalkit.launch import logpump
from evalkit.launch.logpump import MAX_LINE, main, pump
from evalkit.load.shared.redact import SECRET_VALUE_RE

KEY = "sk-ant-api03-" + "Q" * 40  # key-shaped: redacted without being named
PLAIN = "hunter2-not-key-shaped"


class _Stdin:
    def __init__(self, data: bytes) -> None:
        self.buffer = io.BytesIO(data)


def test_lines_are_appended_with_named_values_and_key_shaped_strings_redacted(
    tmp_path: Path,
) -> None:
    log = tmp_path / "evalkit-harbor.log"
    log.write_text("=== header\n")
    src = io.BytesIO(f"start\nauth {PLAIN} ok\nkey={KEY}\nend".encode())
    pump(src, str(log), (PLAIN,))
    assert log.read_text() == "=== header\nstart\nauth [REDACTED] ok\nkey=[REDACTED]\nend"


def test_bytes_that_are_not_utf8_become_replacement_characters(tmp_path: Path) -> None:
    log = tmp_path / "log"
    pump(io.BytesIO(b"caf\xe9 \xff\xfe\nnext\n"), str(log), ())
    assert log.read_text(encoding="utf-8") == "caf\ufffd \ufffd\ufffd\nnext\n"


def test_a_line_longer_than_the_limit_is_copied_whole(tmp_path: Path) -> None:
    log = tmp_path / "log"
    line = b"x" * (MAX_LINE + 10) + b"\nshort\n"  # read in two pieces: MAX_LINE, then 10 + \n
    pump(io.BytesIO(line), str(log), ())
    assert log.read_text() == "x" * (MAX_LINE + 10) + "\nshort\n"


def test_empty_input_creates_the_log_and_writes_nothing(tmp_path: Path) -> None:
    log = tmp_path / "log"
    pump(io.BytesIO(b""), str(log), (PLAIN,))
    assert log.read_text() == ""


@settings(max_examples=60, deadline=None)
@given(
    lines=st.lists(
        st.text(alphabet=st.characters(codec="utf-8", exclude_characters="\r\n"), max_size=40),
        max_size=6,
    )
)
def test_text_without_secrets_is_copied_unchanged(lines: list[str], tmp_path_factory) -> None:
    text = "".join(f"{x}\n" for x in lines)
    assume(SECRET_VALUE_RE.search(text) is None)  # key-shaped text: redact's own tests
    log = tmp_path_factory.mktemp("pump") / "log"
    pump(io.BytesIO(text.encode()), str(log), ())
    assert log.read_text(encoding="utf-8") == text


def test_main_without_arguments_prints_usage_and_returns_2(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main([]) == 2
    assert "usage: python -m evalkit.launch.logpump LOG [NAME ...]" in capsys.readouterr().err


def test_main_redacts_named_variables_and_secret_looking_ones_but_no_others(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EK_RUN_HEADER", "named-value-123")  # not secret-looking: named below
    monkeypatch.setenv("EK_SERVICE_API_KEY", "apikey-value-456")  # *_API_KEY: always
    monkeypatch.setenv("EK_PLAIN_SETTING", "plain-value-789")  # neither: kept
    data = b"a named-value-123\nb apikey-value-456\nc plain-value-789\n"
    monkeypatch.setattr(logpump.sys, "stdin", _Stdin(data))
    log = tmp_path / "log"
    assert main([str(log), "EK_RUN_HEADER"]) == 0
    assert log.read_text() == "a [REDACTED]\nb [REDACTED]\nc plain-value-789\n"


def test_run_as_a_module_it_reads_stdin_until_eof(tmp_path: Path) -> None:
    log = tmp_path / "log"
    env = {"PATH": "/usr/bin:/bin", "EK_PASSED": "passed-secret-abc", "PYTHONPATH": str(Path.cwd())}
    p = subprocess.run(
        [sys.executable, "-m", "evalkit.launch.logpump", str(log), "EK_PASSED"],
        input=b"one passed-secret-abc\ntwo\n", capture_output=True, env=env, timeout=60,
        check=False,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert log.read_text() == "one [REDACTED]\ntwo\n"
