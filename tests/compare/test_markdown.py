"""evalkit.compare.markdown: a fenced block its text cannot close, and table-cell text that
is one line, cut, redacted and escaped so that decoding the escapes gives the text back."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalkit.compare.markdown import cell, code_block

KEY = "sk-ant-abcdefghijklmnop"  # matches the provider-key pattern


def test_code_block_fences_and_language() -> None:
    assert code_block("print(1)", "python") == "```python\nprint(1)\n```"
    assert code_block("") == "```\n\n```"
    assert code_block(None) == "```\n\n```"  # type: ignore[arg-type]
    # a run of 5 backticks needs a fence of 6
    assert code_block("a ````` b\n``").split("\n")[0] == "``````"
    assert code_block("x\ny", "sh", indent="> ") == "> ```sh\n> x\n> y\n> ```"


def test_code_block_redacts() -> None:
    out = code_block(f"export KEY={KEY}\nok")
    assert KEY not in out and "export KEY=[REDACTED]\nok" in out


def test_code_block_redacts_secret_environment_values(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_SERVICE_API_KEY", "hunter2hunter2")
    assert "hunter2hunter2" not in code_block("the key is hunter2hunter2")
    assert "hunter2hunter2" not in cell("the key is hunter2hunter2")


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet="`ab \n~", max_size=40))
def test_code_block_cannot_be_closed_by_its_text(text: str) -> None:
    out = code_block(text, "txt")
    lines = out.split("\n")
    fence = lines[0][: -len("txt")]
    assert set(fence) == {"`"} and lines[-1] == fence
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    assert len(fence) == max(3, longest + 1)
    # CommonMark closes a fence on a line of at least as many backticks: none in the body
    for ln in lines[1:-1]:
        assert not re.fullmatch(" {0,3}`{" + str(len(fence)) + r",}\s*", ln)
    assert "\n".join(lines[1:-1]) == text


@pytest.mark.parametrize(
    ("raw", "text"),
    [
        (None, "-"),
        ("a|b", "a\\|b"),
        ("<b>&</b>", "&lt;b&gt;&amp;&lt;/b&gt;"),
        ("*.txt [x](y) ~~s~~", "\\*.txt \\[x\\](y) \\~\\~s\\~\\~"),
        ("`rm -rf`", "'rm -rf'"),
        ("C:\\dir", "C:\\\\dir"),
        ("snake_case task__a1b2c3d", "snake_case task__a1b2c3d"),  # inner underscores stay
        ("_emph_ __init__", "\\_emph\\_ \\_\\_init\\_\\_"),
        ("line1\r\nline2", "line1  line2"),
        (42, "42"),
    ],
)
def test_cell_escapes(raw: object, text: str) -> None:
    assert cell(raw) == text


def test_cell_cuts_before_escaping() -> None:
    assert cell("abcdef", n=4) == "abc…"
    assert cell("abcd", n=4) == "abcd"
    # 4 raw characters kept ("a|b" + the ellipsis), then the pipe is escaped
    assert cell("a|b|c|d", n=4) == "a\\|b…"
    assert cell("x" * 100) == "x" * 79 + "…"


def test_cell_redacts() -> None:
    assert cell(f"token {KEY}") == "token \\[REDACTED\\]"


def decode(s: str) -> str:
    """Undo cell's escapes: backslash escapes, the three entities, quote -> backtick."""
    out, i = [], 0
    while i < len(s):
        if s[i] == "\\":
            out.append(s[i + 1])
            i += 2
            continue
        for ent, ch in (("&amp;", "&"), ("&lt;", "<"), ("&gt;", ">")):
            if s.startswith(ent, i):
                out.append(ch)
                i += len(ent)
                break
        else:
            out.append("`" if s[i] == "'" else s[i])
            i += 1
    return "".join(out)


@settings(max_examples=80, deadline=None)
@given(st.text(alphabet="ab1 _|*[]~`<>&\\\n", max_size=30))
def test_cell_is_one_line_of_text_that_decodes_back(raw: str) -> None:
    out = cell(raw, n=1000)
    assert "\n" not in out and "\r" not in out
    assert decode(out) == raw.replace("\n", " ")
    # every pipe, emphasis or link character is escaped: none stands alone
    assert not re.search(r"(?<!\\)(?:\\\\)*[|*\[\]~`<>]", out)
    # an underscore at a word's edge is escaped
    assert not re.search(r"(?<![\\A-Za-z0-9_])_|(?<!\\)_(?![A-Za-z0-9_\\])", out)
