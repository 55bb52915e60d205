"""Files a shell command writes, read with a real shell lexer (``shlex``).

The command is split into words and operators by :class:`shlex.shlex` in POSIX mode with
punctuation characters: quoting and escapes are resolved first, so a ``>`` inside a quoted
string is part of a word and never a redirect. Newlines, ``;``, ``&&``, ``||``, ``|``, ``&``
and parentheses separate simple commands; heredoc bodies are removed before lexing (their
first line, with any redirect on it, is kept). A command the lexer rejects (an unclosed
quote: the shell would refuse it too) writes nothing.

Write targets of one simple command: the word after ``>``, ``>>``, ``>|``, ``&>``, ``&>>``
or ``>&`` (not a file descriptor, not /dev/*); the operands of ``tee`` and ``touch``; the
file operands of ``sed -i`` and ``perl -i``; the file ``patch`` writes (its ``-o`` output,
else its first operand); the last operand of ``cp``, ``mv``, ``install`` and ``ln``; and the
``+++`` files of a diff given to ``patch`` or ``git apply`` as a heredoc. Only words that look like paths (a ``.`` or ``/`` in them, no
``$``, globs or options) count.
"""

from __future__ import annotations

import functools
import re
import shlex

#: Literals one of which every command that can write contains (a prefilter before lexing).
WRITE_HINTS = (
    ">",
    "tee",
    "touch",
    "sed",
    "perl",
    "patch",
    "cp ",
    "mv ",
    "install ",
    "ln ",
    "apply",
)
#: Operators that end a simple command.
_SEPARATORS = frozenset((";", ";;", "&&", "||", "|", "|&", "&", "(", ")", "\n"))
#: Redirections whose next word is a file written.
_WRITE_REDIRECTS = frozenset((">", ">>", ">|", "&>", "&>>", ">&"))
#: Redirections whose next word is read (skipped).
_READ_REDIRECTS = frozenset(("<", "<<", "<<-", "<<<", "<&", "<>"))
#: A heredoc: operator, delimiter (quoted or not), the rest of its line, body, delimiter line.
_HEREDOC = re.compile(r"<<-?[ \t]*(['\"]?)([\w.-]+)\1([^\n]*)\n.*?(?:\n[ \t]*\2[ \t]*(?=\n|$)|$)", re.S)  # fmt: skip
_PATHLIKE = re.compile(r"[./]")
_NOT_PATH = re.compile(r"^(?:-|&|/dev/|/proc/)|[$*?`]|/$")
_ASSIGNMENT = re.compile(r"^[A-Za-z_]\w*=")
_PERL_INPLACE = re.compile(r"^-\w*i")
#: patch options whose value is the next word (``-o`` / ``--output`` is the file written).
_PATCH_VALUE_OPTS = frozenset(
    [
        "-i",
        "-o",
        "-p",
        "-d",
        "-r",
        "-B",
        "-D",
        "-F",
        "-V",
        "-z",
        "-Y",
        "-g",
        "--input",
        "--output",
        "--directory",
        "--reject-file",
        "--prefix",
        "--ifdef",
        "--fuzz",
        "--version-control",
        "--suffix",
        "--basename-prefix",
        "--strip",
        "--get",
    ]
)
#: A diff given to patch / git apply as a heredoc: program, options, delimiter, body.
_DIFF_HEREDOC = re.compile(r"\b(patch|git[ \t]+apply)\b([^\n]*?)<<-?[ \t]*(['\"]?)([\w.-]+)\3[^\n]*\n(.*?)(?:\n[ \t]*\4[ \t]*(?=\n|$)|$)", re.S)  # fmt: skip
_DIFF_NEW_FILE = re.compile(r"(?m)^\+\+\+ ([^\t\n]+)")
_STRIP = re.compile(r"(?:-p[ \t]*|--strip[= ])(\d+)")


def _strip_heredocs(cmd: str) -> str:
    """Heredoc bodies removed; the operator and the rest of its first line kept."""
    return _HEREDOC.sub(lambda m: "<<HEREDOC" + m.group(3), cmd)


def _tokens(cmd: str) -> list[str]:
    lex = shlex.shlex(cmd, posix=True, punctuation_chars="();<>|&\n")
    lex.whitespace = " \t\r"  # newline separates commands
    lex.whitespace_split = True
    lex.commenters = "#"
    return list(lex)


def _simple_commands(tokens: list[str]) -> list[tuple[list[str], list[str]]]:
    """(argv, redirect targets written) of each simple command."""
    out: list[tuple[list[str], list[str]]] = []
    argv: list[str] = []
    written: list[str] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok in _SEPARATORS or set(tok) <= set(";&|()\n"):
            out.append((argv, written))
            argv, written = [], []
        elif tok in _WRITE_REDIRECTS or tok in _READ_REDIRECTS:
            if argv and argv[-1].isdigit():  # '2>' : the fd number is no argument
                argv.pop()
            target = tokens[i + 1] if i + 1 < len(tokens) else ""
            if tok in _WRITE_REDIRECTS and not (tok == ">&" and target.isdigit()):
                written.append(target)
            i += 1
        else:
            argv.append(tok)
        i += 1
    out.append((argv, written))
    return out


def _operands(args: list[str]) -> list[str]:
    return [a for a in args if not a.startswith("-")]


def _program_targets(argv: list[str]) -> list[str]:
    """Files written by the program of one simple command (not its redirects)."""
    while argv and (argv[0] == "sudo" or _ASSIGNMENT.match(argv[0])):
        argv = argv[1:]
    if not argv:
        return []
    prog, args = argv[0].rsplit("/", 1)[-1], argv[1:]
    if prog in ("tee", "touch"):
        return _operands(args)
    if prog in ("cp", "mv", "install", "ln"):
        ops = _operands(args)
        return ops[-1:] if len(ops) >= 2 else []
    if prog == "sed" and any(a.startswith(("-i", "--in-place")) for a in args):
        return _script_operands(args, "-e", ("-f",))
    if prog == "perl" and any(_PERL_INPLACE.match(a) for a in args):
        return _script_operands(args, "-e", ())
    if prog == "patch":
        return _patch_operands(args)
    return []


def _patch_operands(args: list[str]) -> list[str]:
    """The file ``patch [options] [originalfile [patchfile]]`` writes: its ``-o`` output,
    else the original file (a diff read from stdin names its files inside)."""
    operands: list[str] = []
    output = None
    it = iter(args)
    for a in it:
        if a in _PATCH_VALUE_OPTS:
            value = next(it, None)
            output = value if a in ("-o", "--output") else output
        elif a.startswith("--output="):
            output = a.split("=", 1)[1]
        elif a.startswith("-o") and len(a) > 2:
            output = a[2:]
        elif not a.startswith("-"):
            operands.append(a)
    return [output] if output else operands[:1]


def _heredoc_diff_targets(cmd: str) -> list[str]:
    """Files named by the ``+++`` lines of diffs fed to patch / git apply as heredocs, with
    the leading components the program strips (git apply: -p1 by default; patch without
    -p keeps the file name only)."""
    out: list[str] = []
    for m in _DIFF_HEREDOC.finditer(cmd):
        git = m.group(1) != "patch"
        strip = _STRIP.search(m.group(2))
        for name in _DIFF_NEW_FILE.findall(m.group(5)):
            name = name.strip()
            if name == "/dev/null":
                continue
            parts = name.split("/")
            if strip is None and not git:
                out.append(parts[-1])
            else:
                n = int(strip.group(1)) if strip else 1
                out.append("/".join(parts[n:]) or parts[-1])
    return out


def _script_operands(args: list[str], script_opt: str, file_opts: tuple[str, ...]) -> list[str]:
    """File operands of sed / perl: the words after the script (the first operand unless
    the script came with -e / -f)."""
    ops: list[str] = []
    has_script = False
    skip = False
    for a in args:
        if skip:
            skip = False
            continue
        if a == script_opt or a in file_opts or (a.startswith("-") and a.endswith("e") and len(a) > 2 and a[1] != "-"):  # fmt: skip
            has_script, skip = True, True
        elif not a.startswith("-"):
            ops.append(a)
    return ops if has_script else ops[1:]


def _pathlike(word: str) -> bool:
    return bool(word) and bool(_PATHLIKE.search(word)) and not _NOT_PATH.search(word)


@functools.lru_cache(maxsize=65536)
def write_targets(cmd: str) -> tuple[str, ...]:
    """Paths a shell command writes (redirects, tee, touch, sed -i, perl -i, patch, cp / mv /
    install / ln destinations, heredoc diffs), in order, a leading ``./`` removed."""
    try:
        tokens = _tokens(_strip_heredocs(cmd))
    except ValueError:  # unclosed quote or escape: the shell would not run it
        return ()
    out: list[str] = []
    for argv, written in _simple_commands(tokens):
        for w in (*written, *_program_targets(argv)):
            if _pathlike(w):
                out.append(w[2:] if w.startswith("./") else w)
    if "<<" in cmd:
        out.extend(w for w in _heredoc_diff_targets(cmd) if _pathlike(w))
    return tuple(out)
