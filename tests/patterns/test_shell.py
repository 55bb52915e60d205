"""The shell lexer rule of file writes (``evalkit/patterns/shell.py``)."""

from __future__ import annotations

import shlex

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import evalkit as ek
import evalkit.patterns as ep
from evalkit.patterns.shell import write_targets
from tests.conftest import FIXTURES

_TEXT = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=60
)
_PATH = st.from_regex(
    r"(/?[a-z][a-z0-9_-]{0,8}/){0,3}[a-z][a-z0-9_-]{0,10}\.[a-z]{1,4}", fullmatch=True
)
_JOIN = st.sampled_from([" && ", "; ", " | ", "\n", " || "])


@settings(max_examples=300, deadline=None)
@given(text=_TEXT)
def test_quoted_text_is_never_a_write(text: str) -> None:
    assert write_targets(f"echo {shlex.quote(text)}") == ()
    assert write_targets(f'printf "%s" {shlex.quote(text)} | grep -c x') == ()


@settings(max_examples=300, deadline=None)
@given(path=_PATH, text=_TEXT, op=st.sampled_from([">", ">>", "2>", "&>", ">|"]), join=_JOIN)
def test_a_redirect_after_any_quoted_text_is_found(
    path: str, text: str, op: str, join: str
) -> None:
    cmd = f"cd /app{join}echo {shlex.quote(text)} {op} {shlex.quote(path)}"
    assert write_targets(cmd) == (path,)


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=80))
def test_never_raises(text: str) -> None:
    assert isinstance(write_targets(text), tuple)


@pytest.mark.parametrize(
    ("cmd", "expected"),
    [
        ("cat > app.py <<'EOF'\nprint('a > b.py')\nEOF\npython app.py", ("app.py",)),
        ("ls 2>/dev/null && echo x >> ./log.txt", ("log.txt",)),
        ("tee -a a.log b.log < in.txt", ("a.log", "b.log")),
        ("sed -i -e 's/>/</' f.txt", ("f.txt",)),
        ("perl -pi -e 's/>//' x.pl", ("x.pl",)),
        ("cp a.txt dir/b.txt && mv -f c.txt d/", ("dir/b.txt",)),
        ("sudo touch /etc/x.conf", ("/etc/x.conf",)),
        ("cmd 2>&1 | tee out.log", ("out.log",)),
        ('grep "a>b.py" f.txt', ()),
        ('echo "unclosed > x.txt', ()),
        ("echo $HOME > $OUT", ()),
        # patch: the file operand, or the -o output; a diff on stdin names its files inside
        ("patch src/app.py fix.diff", ("src/app.py",)),
        ("patch -p1 -i fix.diff src/app.py", ("src/app.py",)),
        ("patch -o out/app.py src/app.py < fix.diff", ("out/app.py",)),
        ("patch --output=out/app.py src/app.py fix.diff", ("out/app.py",)),
        ("patch -p1 < fix.diff", ()),
        (
            "patch -p1 <<'EOF'\n--- a/src/app.py\n+++ b/src/app.py\n@@ -1 +1 @@\n-a\n+b\nEOF",
            ("src/app.py",),
        ),
        ("cd /r && patch <<EOF\n--- app.py.orig\n+++ app.py\n@@ -1 +1 @@\nEOF", ("app.py",)),
        (
            "git apply <<'EOF'\n--- a/x.py\n+++ b/x.py\n--- /dev/null\n+++ b/new.py\nEOF",
            ("x.py", "new.py"),
        ),
    ],
)
def test_write_targets(cmd: str, expected: tuple[str, ...]) -> None:
    assert write_targets(cmd) == expected


def test_echoed_html_payload_is_no_file_write() -> None:
    runs = ek.load(FIXTURES / "harbor-edges" / "quoted-redirect", cache=False, progress=False)
    assert ep.detect(runs).height == 0
