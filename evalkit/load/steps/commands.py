"""Shell-command detection, structured error signals and the is_error / exit_code rules.

The rules are documented for users in ``docs/trajectories.md``; keep the two in step.

* :func:`shell_command` (per call, in Python: it needs the arguments dict) turns a tool call
  into the shell command text it ran, or None. A call runs a shell when its function name,
  stripped of namespaces (``mcp__srv__bash`` -> ``bash``, ``developer__shell`` -> ``shell``) and
  of ``-``/``_``/case, is one of :data:`SHELL_TOOL_NAMES`; the command is then the first of
  :data:`COMMAND_ARG_KEYS` present. A ``keystrokes`` argument (terminus, tmux send-keys
  style) makes any tool a shell tool.
* :func:`structured_signals` (per call, only when extras exist) reads error flags and exit
  codes that agents record in ``extra`` blocks.
* :func:`finish_tool_calls` (vectorised, whole frame) combines those with the exit codes
  printed in observations and the text heuristic.
"""

from __future__ import annotations

import re
import shlex
from typing import Any

import polars as pl

#: Normalised (lower case, no '-'/'_') names of tools that run a shell command.
SHELL_TOOL_NAMES = frozenset(
    {
        "bash", "sh", "zsh", "shell", "terminal", "cmd", "powershell",
        "executecommand", "runshellcommand", "runcommand", "execcommand", "executebash",
        "bashcommand", "localshell", "shellcommand", "runterminalcmd", "runterminalcommand",
        "terminalcommand", "tmuxsendkeys", "sendkeys", "runbash", "bashtool", "exec",
        "execute", "runshell", "containerexec", "terminalinput", "executeshell",
        "shellexec", "runinterminal", "sandboxexec", "run",
    }
)  # fmt: skip

#: Argument names that hold the command, in order of preference.
COMMAND_ARG_KEYS = ("command", "cmd", "keystrokes", "script", "commands", "input")

_NS_SPLIT = re.compile(r"__|\.|/|:")
_SHELLS = {"bash", "sh", "zsh", "/bin/bash", "/bin/sh", "/usr/bin/bash", "/bin/zsh"}
_SHELL_C_FLAGS = {"-c", "-lc", "-ic", "-lic", "-cl"}

_ERR_TRUE_STATUS = {"error", "failed", "failure", "errored"}
_ERR_FALSE_STATUS = {"success", "succeeded", "ok"}
_EXIT_KEYS = ("exit_code", "exitCode", "return_code", "returncode", "exit_status", "exitStatus")
_NESTED = ("tool_result_metadata", "metadata", "raw_tool_result", "tool_use_result", "result")
_SIGNAL_KEYS = frozenset({"is_error", "isError", "success", "error", "status", *_EXIT_KEYS})
_LOOK_KEYS = _SIGNAL_KEYS | frozenset(_NESTED)


def normalise_tool_name(name: str) -> str:
    """``mcp__srv__Run_Shell-Command`` -> ``runshellcommand``."""
    last = _NS_SPLIT.split(name)[-1] if name else ""
    return last.lower().replace("_", "").replace("-", "").replace(" ", "")


_SHELL_CACHE: dict[str, bool] = {}


def is_shell_tool(name: str | None) -> bool:
    """True when the (normalised) function name is a known shell-running tool."""
    if not name or type(name) is not str:
        return False
    hit = _SHELL_CACHE.get(name)
    if hit is None:
        hit = normalise_tool_name(name) in SHELL_TOOL_NAMES
        if len(_SHELL_CACHE) < 10_000:
            _SHELL_CACHE[name] = hit
    return hit


def _command_text(v: Any) -> str | None:
    if isinstance(v, str):
        s = v.rstrip()
        return s.lstrip("\n") or None
    if isinstance(v, list) and v:
        if all(isinstance(x, str) for x in v):
            if len(v) >= 3 and v[0] in _SHELLS and v[1] in _SHELL_C_FLAGS:
                return _command_text(v[2])
            return shlex.join(v) or None
        # terminus-style [{keystrokes, duration}, ...]
        parts = [x.get("keystrokes") for x in v if isinstance(x, dict)]
        parts = [p.rstrip() for p in parts if isinstance(p, str) and p.strip()]
        return "\n".join(parts) or None
    return None


def shell_command(function_name: str | None, arguments: Any) -> str | None:
    """The shell command a tool call ran, or None when the tool does not run a shell.

    Trailing newlines/whitespace are stripped (terminus keystrokes end with ``\\n``); an
    empty command (a terminus "wait" with empty keystrokes) is None. A string ``arguments``
    holding a bare command is accepted for shell tools.
    """
    if isinstance(arguments, dict):
        if is_shell_tool(function_name):
            for k in COMMAND_ARG_KEYS:
                if k in arguments:
                    return _command_text(arguments[k])
            return None
        ks = arguments.get("keystrokes")
        return _command_text(ks) if ks is not None else None
    if isinstance(arguments, str) and is_shell_tool(function_name):
        return _command_text(arguments)
    return None


def _scan(d: dict, out: list) -> None:
    """Fill out=[flag, exit, error-field, status] from one dict (first value found wins)."""
    if d.keys().isdisjoint(_SIGNAL_KEYS):
        return
    if out[0] is None:
        for k in ("is_error", "isError"):
            v = d.get(k)
            if isinstance(v, bool):
                out[0] = v
                break
        else:
            v = d.get("success")
            if isinstance(v, bool):
                out[0] = not v
    if out[1] is None:
        for k in _EXIT_KEYS:
            v = d.get(k)
            if type(v) is int and -(2**63) <= v < 2**63:
                out[1] = v
                break
    if out[2] is None:
        e = d.get("error")
        if isinstance(e, (str, dict, list)) and e:
            out[2] = True
        st = d.get("status")
        if isinstance(st, str) and out[3] is None:
            s = st.lower()
            out[3] = True if s in _ERR_TRUE_STATUS else (False if s in _ERR_FALSE_STATUS else None)


def structured_signals(*extras: Any) -> tuple[bool | None, int | None]:
    """(is_error, exit_code) recorded in ``extra`` dicts of a call / its observation results.

    Looked up in each dict and one level down in tool_result_metadata / metadata /
    raw_tool_result / tool_use_result / result. Precedence: an ``is_error``/``isError``/
    ``success`` boolean, then a non-empty ``error`` field, then an exit code (non-zero =
    error), then a ``status`` of error/failed (or success/ok).
    """
    out: list = [None, None, None, None]  # flag, exit, error-field, status
    for d in extras:
        if type(d) is not dict or d.keys().isdisjoint(_LOOK_KEYS):
            continue
        _scan(d, out)
        for k in _NESTED:
            sub = d.get(k)
            if isinstance(sub, dict):
                _scan(sub, out)
                for k2 in _NESTED:
                    sub2 = sub.get(k2)
                    if isinstance(sub2, dict):
                        _scan(sub2, out)
    flag, code, err_field, status = out
    if flag is None:
        if err_field:
            flag = True
        elif code is not None:
            flag = code != 0
        elif status is not None:
            flag = status
    return flag, code


# -- vectorised rules -----------------------------------------------------------------------

#: Exit-code markers written by agents / converters; apply to every call.
EXIT_MARKERS = (
    r"\[exit_code\]\s*(-?\d+)",  # Harbor's claude-code converter
    r"<exit_code>\s*(-?\d+)\s*</exit_code>",  # claude-code TaskOutput
    r"\[Command finished with exit code (-?\d+)\]",  # OpenHands
    r"Process exited with code (-?\d+)",  # codex exec
)
#: Line-anchored markers, only trusted for shell calls (a file may contain them).
SHELL_EXIT_MARKERS = (
    r"(?m)^Exit Code: (-?\d+)\s*$",  # Harbor oracle agent ('Exit Code', capital C)
    r"(?m)^exit status (\d+)\s*$",  # Go os/exec error text
)
#: Text heuristic: an observation matching this looks like a failure.
ERROR_TEXT = "|".join(
    (
        r"Traceback \(most recent call last\)",
        r": command not found",
        r"(?m)^(?:bash|sh|zsh|/bin/sh|/bin/bash): .*(?:No such file or directory|Permission denied|syntax error)",
        r"(?m)^(?:Error|ERROR|error|fatal|FATAL|panic)(?:\[[^\]\n]*\])?: ",
        r"(?m)^[A-Z][A-Za-z]*(?:Error|Exception): ",
        r"<tool_use_error>",
        r"\[error\] tool reported failure",
    )
)


def exit_code_expr(observation: str = "observation", command: str = "command") -> pl.Expr:
    """Exit code printed in the observation (first marker that matches), as Int64."""
    obs = pl.col(observation)
    parts = [obs.str.extract(p, 1) for p in EXIT_MARKERS]
    parts += [
        pl.when(pl.col(command).is_not_null()).then(obs.str.extract(p, 1))
        for p in SHELL_EXIT_MARKERS
    ]
    return pl.coalesce(parts).cast(pl.Int64, strict=False)


def _envelope_signals() -> tuple[pl.Expr, pl.Expr]:
    """(is_error, exit_code) from a JSON-object observation of a non-shell tool.

    Tools such as hermes' or go-code's return ``{"success": false, "error": ...}``
    envelopes; shell output is program output, so it is not read this way.
    """
    obs = pl.col("observation")
    env = pl.when(
        pl.col("command").is_null() & obs.str.strip_chars_start().str.starts_with("{")
    ).then(obs)
    success = env.str.json_path_match("$.success")
    err = env.str.json_path_match("$.error")
    code = env.str.extract(
        r'"(?:exit_code|exitCode|returncode|return_code)"\s*:\s*(-?\d+)', 1
    ).cast(pl.Int64, strict=False)
    flag = (
        pl.when(success == "false")
        .then(True)
        .when(err.is_not_null() & ~err.is_in(["", "false", "null", "{}", "[]"]))
        .then(True)
        .when(success == "true")
        .then(False)
        .otherwise(None)
    )
    return flag, code


def _envelope_columns(df: pl.DataFrame) -> tuple[pl.Series, pl.Series]:
    """:func:`_envelope_signals` evaluated only on the rows that can match (a JSON-object
    observation of a non-shell tool whose text holds the quoted key "success", "error" or
    an exit-code key, or a \\u escape, which could spell one), null elsewhere: the same
    values, without parsing every observation twice."""
    obs = pl.col("observation")
    maybe = (
        pl.col("command").is_null()
        & obs.str.strip_chars_start().str.starts_with("{")
        & pl.any_horizontal(
            obs.str.contains(k, literal=True)
            for k in (
                '"success"',
                '"error"',
                '"exit_code"',
                '"exitCode"',
                '"returncode"',
                '"return_code"',
                "\\u",
            )
        )
    )
    where = df.select(maybe.fill_null(False).arg_true().alias("i"))["i"]
    flag = pl.Series("f", [None] * df.height, pl.Boolean)
    code = pl.Series("c", [None] * df.height, pl.Int64)
    if len(where):
        env_flag, env_code = _envelope_signals()
        sub = df[where].select(env_flag.alias("f"), env_code.alias("c"))
        flag = flag.scatter(where, sub["f"])
        code = code.scatter(where, sub["c"])
    return flag, code


def finish_tool_calls(df: pl.DataFrame) -> pl.DataFrame:
    """Fill exit_code, is_error and is_error_source from the hidden signal columns.

    Needs ``observation``, ``command``, ``_s_err`` (Boolean) and ``_s_exit`` (Int64).
    Rule order: structured flag (extras, then a JSON envelope observation of a non-shell
    tool) > exit code (recorded, else printed) > text heuristic on the observation > null
    (no observation: unknown).
    """
    env_flag, env_code = _envelope_columns(df)
    df = df.with_columns(
        pl.coalesce(pl.col("_s_err"), pl.lit(env_flag)).alias("_s_err"),
        pl.coalesce(pl.col("_s_exit"), pl.lit(env_code), exit_code_expr()).alias("exit_code"),
    )
    has_obs = pl.col("observation").is_not_null()
    text_err = pl.col("observation").str.contains(ERROR_TEXT)
    return df.with_columns(
        pl.when(pl.col("_s_err").is_not_null())
        .then(pl.col("_s_err"))
        .when(pl.col("exit_code").is_not_null())
        .then(pl.col("exit_code") != 0)
        .when(has_obs)
        .then(text_err)
        .otherwise(None)
        .alias("is_error"),
        pl.when(pl.col("_s_err").is_not_null())
        .then(pl.lit("structured"))
        .when(pl.col("exit_code").is_not_null())
        .then(pl.lit("exit_code"))
        .when(has_obs)
        .then(pl.lit("text"))
        .otherwise(None)
        .alias("is_error_source"),
    )
