"""Command detection, structured signals, printed exit codes and the is_error text heuristic."""

from __future__ import annotations

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalkit.load.steps.commands import finish_tool_calls, shell_command, structured_signals


@pytest.mark.parametrize(
    "name,args,expected",
    [
        ("bash", {"command": "ls -la"}, "ls -la"),
        ("Bash", {"command": "git diff", "description": "d", "timeout": 5}, "git diff"),
        ("terminal", {"command": "pwd\n"}, "pwd"),
        ("execute_command", {"command": "make test"}, "make test"),
        ("run_shell_command", {"command": "echo hi", "directory": "/app"}, "echo hi"),
        ("shell", {"command": ["bash", "-lc", "cat x | wc -l"]}, "cat x | wc -l"),  # codex
        ("shell", {"command": ["ls", "-la", "my dir"]}, "ls -la 'my dir'"),
        ("exec_command", {"cmd": "npm test"}, "npm test"),
        (
            "execute_bash",
            {"command": "python app.py", "security_risk": "LOW"},
            "python app.py",
        ),  # openhands
        (
            "bash_command",
            {"keystrokes": "cat hello.txt\n", "duration": 0.1},
            "cat hello.txt",
        ),  # terminus-2
        ("bash_command", {"keystrokes": "", "duration": 10}, None),  # a terminus wait
        ("tmux_send_keys", {"keystrokes": "C-c"}, "C-c"),
        ("anything", {"keystrokes": "ls\n"}, "ls"),  # keystrokes make any tool a terminal
        ("developer__shell", {"command": "ls /app"}, "ls /app"),  # goose
        ("mcp__box__bash", {"command": "id"}, "id"),
        ("run", {"cmd": "make"}, "make"),
        ("bash", "ls -la", "ls -la"),  # arguments recorded as a bare string
        ("bash", {"description": "no command"}, None),
        (
            "str_replace_editor",
            {"command": "create", "path": "/a"},
            None,
        ),  # editor verb, not a shell
        ("task_tracker", {"command": "view"}, None),
        ("BashOutput", {"bash_id": "1"}, None),
        ("Read", {"file_path": "/x"}, None),
        (None, {"command": "ls"}, None),
        ("bash", None, None),
        ("bash", {"command": 5}, None),
    ],
)
def test_shell_command(name, args, expected):
    assert shell_command(name, args) == expected


def test_terminus_command_list():
    args = {"commands": [{"keystrokes": "cd /app\n"}, {"keystrokes": "ls\n"}, {"keystrokes": ""}]}
    assert shell_command("terminal", args) == "cd /app\nls"


@pytest.mark.parametrize(
    "extras,expected",
    [
        (({"is_error": True},), (True, None)),
        (({"tool_result_metadata": {"raw_tool_result": {"is_error": False}}},), (False, None)),
        (({"metadata": {"exit_code": 3}},), (True, 3)),
        (({"exitCode": 0},), (False, 0)),
        (({"success": False},), (True, None)),
        (({"error": "boom"},), (True, None)),
        (({"error": ""},), (None, None)),
        (({"status": "failed"},), (True, None)),
        (({"status": "success"},), (False, None)),
        (({"status": "completed"},), (None, None)),
        (({"is_error": False, "exit_code": 1},), (False, 1)),  # explicit flag wins
        ((None, {}, "x"), (None, None)),
    ],
)
def test_structured_signals(extras, expected):
    assert structured_signals(*extras) == expected


def _finish(rows):
    df = pl.DataFrame(
        rows,
        schema={
            "observation": pl.String,
            "command": pl.String,
            "_s_err": pl.Boolean,
            "_s_exit": pl.Int64,
        },
        orient="row",
    )
    return finish_tool_calls(df).select("exit_code", "is_error", "is_error_source").rows()


@pytest.mark.parametrize(
    "obs,cmd,expected",
    [
        ("out\n[exit_code] 2", None, (2, True, "exit_code")),  # Harbor's claude-code converter
        ("<exit_code>0</exit_code>", None, (0, False, "exit_code")),
        ("x\n[Command finished with exit code 127]", "foo", (127, True, "exit_code")),  # OpenHands
        ("Process exited with code 0\nok", "ls", (0, False, "exit_code")),  # codex
        ("Exit Code: 1", "false", (1, True, "exit_code")),  # Harbor oracle
        ("Exit Code: 1", None, (None, False, "text")),  # ... trusted only for shell calls
        ("Exit code: 1", "echo", (None, False, "text")),  # program output, not the marker
        ("Traceback (most recent call last):\n  File", "python x.py", (None, True, "text")),
        ("bash: foo: command not found", "foo", (None, True, "text")),
        ("ls: cannot access 'x': No such file or directory", "ls x", (None, False, "text")),
        ("bash: cd: /nope: No such file or directory", "cd /nope", (None, True, "text")),
        ("error: could not compile `x`", "cargo build", (None, True, "text")),
        ("fatal: not a git repository", "git status", (None, True, "text")),
        ("ValueError: bad input", "python x.py", (None, True, "text")),
        ("<tool_use_error>File has not been read yet</tool_use_error>", None, (None, True, "text")),
        ("all good\n3 errors fixed", "make", (None, False, "text")),
        ('{"success": false, "error": "nope"}', None, (None, True, "structured")),  # JSON envelope
        ('{"success": true}', None, (None, False, "structured")),
        ('{"error": null, "exit_code": 4}', None, (4, True, "exit_code")),
        (
            '{"success": false}',
            "cat x.json",
            (None, False, "text"),
        ),  # shell output is not an envelope
        (None, "ls", (None, None, None)),  # no observation: unknown
    ],
)
def test_exit_code_and_is_error_rules(obs, cmd, expected):
    assert _finish([(obs, cmd, None, None)]) == [expected]


def test_structured_signal_beats_text():
    assert _finish([("Traceback (most recent call last)", "x", False, None)]) == [
        (None, False, "structured")
    ]
    assert _finish([("fine", "x", None, 3)]) == [(3, True, "exit_code")]


@settings(max_examples=300, deadline=None)
@given(
    name=st.one_of(
        st.none(),
        st.text(max_size=30),
        st.sampled_from(["bash", "Bash", "shell", "bash_command", "run"]),
    ),
    args=st.recursive(
        st.one_of(
            st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True), st.text(max_size=20)
        ),
        lambda kids: st.one_of(
            st.lists(kids, max_size=4),
            st.dictionaries(
                st.sampled_from(["command", "cmd", "keystrokes", "commands", "x", "input"]),
                kids,
                max_size=4,
            ),
        ),
        max_leaves=12,
    ),
)
def test_shell_command_never_crashes(name, args):
    out = shell_command(name, args)
    assert out is None or (isinstance(out, str) and out)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.one_of(st.none(), st.text(max_size=60)), st.one_of(st.none(), st.text(max_size=10))
        ),
        max_size=8,
    )
)
def test_finish_never_crashes(rows):
    out = _finish([(o, c, None, None) for o, c in rows])
    assert len(out) == len(rows)
    for (o, _), (_, err, src) in zip(rows, out, strict=True):
        assert (err is None) == (o is None) and (src is None) == (o is None)


def test_huge_exit_codes_ignored():
    assert structured_signals({"exit_code": 2**70}) == (None, None)
    assert structured_signals({"exit_code": True}) == (None, None)
