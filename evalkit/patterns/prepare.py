"""Preparing the tool-call frame: the derived columns every detector shares.

:func:`enrich_calls` sorts the calls by trajectory (``gkey``: a 64-bit key of trial_id +
trajectory) and position, and adds ``seq``, ``fn``, ``cmd``, ``sig`` / ``sig_g``, ``obs_hash``
/ ``obs_g``, ``err``, ``w_paths``, ``r_paths``, ``m_paths``, ``is_write``, ``is_modify``,
``is_verify``, ``is_finish`` and ``is_shell`` (meanings in :mod:`evalkit.patterns.context`). Everything is a
Polars expression; regexes run only on the rows they can match (literal prefilters), long texts
are hashed in place, and function names are normalised once per distinct name.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import polars as pl

from evalkit.patterns.config import SHELL
from evalkit.patterns.shell import WRITE_HINTS, write_targets

_HEREDOC = (
    r"(?s)<<-?\s*['\"]?(EOF|PY|EOT|END|PYEOF|HEREDOC|SCRIPT|CODE|JSON|MD|TXT|PYTHON|SQL|YAML)"
    r"['\"]?.*?\n\s*(EOF|PY|EOT|END|PYEOF|HEREDOC|SCRIPT|CODE|JSON|MD|TXT|PYTHON|SQL|YAML)\b"
)


_CALL_KEEP = (
    "trial_id", "step_index", "call_index", "trajectory", "is_main", "function_name", "arguments",
    "command", "observation", "is_error", "exit_code", "duration_ms",
)  # fmt: skip


def norm_fn(col: str = "function_name") -> pl.Expr:
    """``mcp__srv__Run_Shell-Command`` -> ``runshellcommand`` (as evalkit.load's rule)."""
    return (
        pl.col(col)
        .fill_null("")
        .str.replace(r"^.*(?:__|[.:/])", "")
        .str.to_lowercase()
        .str.replace_all(r"[-_ ]", "")
    )


def clean_path(e: pl.Expr) -> pl.Expr:
    """Strip quotes / trailing punctuation / a leading './'."""
    return (
        e.str.strip_chars(" \t'\"`*,;:()[]{}<>").str.strip_chars_end(".").str.replace(r"^\./", "")
    )


def finding_columns(
    severity: str | pl.Expr,
    confidence: float | pl.Expr,
    evidence: str | pl.Expr,
    *,
    start: str = "step_index",
    end: str | pl.Expr | None = None,
) -> list[pl.Expr]:
    """The columns every detector returns: trial_id, step_start (column ``start``), step_end
    (``end``, default the start), severity and confidence (a literal or an expression) and
    evidence (an expression or a column name)."""
    end_expr = pl.col(end) if isinstance(end, str) else (end if end is not None else pl.col(start))
    return [
        pl.col("trial_id"),
        pl.col(start).alias("step_start"),
        end_expr.alias("step_end"),
        (severity if isinstance(severity, pl.Expr) else pl.lit(severity)).alias("severity"),
        (confidence if isinstance(confidence, pl.Expr) else pl.lit(confidence)).alias("confidence"),
        (pl.col(evidence) if isinstance(evidence, str) else evidence).alias("evidence"),
    ]


def basename(e: pl.Expr) -> pl.Expr:
    return e.str.extract(r"([^/\\]+)$", 1)


def _group1_all(e: pl.Expr, pattern: str) -> pl.Expr:
    """Every match of ``pattern`` -> its group 1 (a List[str])."""
    return e.str.extract_all(pattern).list.eval(pl.element().str.extract(pattern, 1))


def _with_shell_writes(df: pl.DataFrame) -> pl.DataFrame:
    """``_shw``: the files each shell command writes (``patterns/shell.py``: a shell lexer),
    lexed once per distinct command that can write (literal prefilter); null otherwise."""
    cmd = df.get_column("command")  # as run: shell.py reads heredocs itself
    cands = cmd.filter(cmd.str.contains(any_of(WRITE_HINTS))).unique()
    targets = pl.DataFrame(
        {"command": cands, "_shw": [list(write_targets(c)) for c in cands]},
        schema={"command": pl.String, "_shw": pl.List(pl.String)},
    )
    return df.join(targets, on="command", how="left", maintain_order="left")


def _looks_like_path(e: pl.Expr) -> pl.Expr:
    return e.str.contains(r"[./]") & ~e.str.contains(r"^(/dev/|/proc/|&|\$|-)") & (e != ".")


def _json_str_field(keys: tuple[str, ...] | list[str]) -> str:
    """Regex for the first string value of any of ``keys`` in a JSON object text (one regex
    pass instead of one JSON parse per key; JSON escapes are undone by :func:`_unescape`)."""
    alt = "|".join(re.escape(k) for k in keys)
    return r'"(?:' + alt + r')"\s*:\s*"((?:[^"\\]|\\.)*)"'


def _unescape(e: pl.Expr) -> pl.Expr:
    return (
        e.str.replace_all(r"\\/", "/").str.replace_all(r'\\"', '"').str.replace_all(r"\\\\", "\\")
    )


#: literal hints that a shell command may write / read a file (cheap prefilters)
_READ_HINTS = (
    "cat", "head", "tail", "less", "more", "nl ", "bat ", "view", "wc ", "stat", "file ", "sed",
    "awk", "grep", "rg ", "diff", "cmp", "jq", "json.tool", "xxd", "od ", "vi", "nano",
)  # fmt: skip


def any_of(phrases: tuple[str, ...] | list[str], *, ignore_case: bool = False) -> str:
    """A regex matching any of the literal ``phrases`` (Polars' regex engine is much faster
    than ``str.contains_any`` on long texts)."""
    alt = "|".join(re.escape(p) for p in phrases) or "$^"
    return ("(?i)" if ignore_case else "") + f"(?:{alt})"


def grouped(df: pl.DataFrame, *order: str) -> pl.DataFrame:
    """``df`` with each trajectory's rows together (``gkey``) and in ``order`` within it.

    The rules only need that grouping, not any order between trajectories, so frames that
    already have it (loaders emit trial by trial, step by step) are returned unsorted.
    """
    same = pl.col("gkey") == pl.col("gkey").shift(1)
    inner = pl.lit(True)
    for col in reversed(order):  # lexicographic >= on the order columns
        prev = pl.col(col).shift(1)
        inner = (pl.col(col) > prev) | ((pl.col(col) == prev) & inner)
    ok = df.select(
        (
            (same & inner.fill_null(False))
            | (~same.fill_null(False) & pl.col("gkey").is_first_distinct())
        ).all()
    ).item()
    return df if ok else df.sort("gkey", *order, maintain_order=True)


def gkey_expr() -> pl.Expr:
    """64-bit key of (trial_id, traj): the unit every sequence rule works within."""
    return (
        pl.concat_str([pl.col("trial_id"), pl.col("traj")], separator="\x00").hash(3).alias("gkey")
    )


def group_start(key: str = "gkey") -> pl.Expr:
    """True on the first row of each run of equal ``key`` (frame sorted by it)."""
    return (pl.col(key) != pl.col(key).shift(1)).fill_null(True)


def run_id(*keys: str) -> pl.Expr:
    """An id for each maximal run of consecutive rows of a trajectory with equal ``keys``."""
    new = group_start("gkey")
    for k in keys:
        new = new | group_start(k)
    return new.cum_sum()


def flagged_spans(df: pl.DataFrame, flag: str, *aggs: pl.Expr) -> pl.DataFrame:
    """One row per run of consecutive rows of a trajectory where ``flag`` holds: its
    ``trial_id`` and ``aggs`` over the run's rows."""
    return (
        df.with_columns(run_id(flag).alias("_run"))
        .filter(pl.col(flag))
        .group_by("_run", maintain_order=True)
        .agg(pl.col("trial_id").first(), *aggs)
    )


def within_group_index(key: str = "gkey") -> pl.Expr:
    """0-based row position within consecutive runs of ``key`` (global ops, no window)."""
    idx = pl.int_range(pl.len(), dtype=pl.Int64)
    return idx - pl.when(group_start(key)).then(idx).otherwise(None).forward_fill()


def enrich_calls(tc: pl.DataFrame, common: Mapping[str, Any]) -> pl.DataFrame:
    df = _sorted_calls(tc)
    df = _with_signatures_and_raw_paths(df, common)
    df = _with_file_flags(df, common)
    return df.drop("_path", "_ecmd", "_patch", "_patch_new", "_shw", "_shr")


def _sorted_calls(tc: pl.DataFrame) -> pl.DataFrame:
    """The kept columns, sorted by trajectory key and position, with ``fn``, ``cmd``, ``seq``."""
    # grouping key first: sorting by two integers is much cheaper than by strings
    df = (
        tc.select([c for c in _CALL_KEEP if c in tc.columns])
        .with_columns(pl.col("trajectory").fill_null("main").alias("traj"))
        .with_columns(gkey_expr())
    )
    df = grouped(df, "step_index", "call_index")
    # normalised function names: computed once per distinct name
    names = df.get_column("function_name").unique()
    fn_map = pl.DataFrame({"function_name": names}).with_columns(norm_fn().alias("fn"))
    fn_dict = dict(zip(fn_map["function_name"].to_list(), fn_map["fn"].to_list(), strict=True))
    cmd = pl.col("command").str.replace_all(_HEREDOC, "<<HEREDOC").str.strip_chars()
    return df.with_columns(
        pl.col("function_name")
        .replace_strict(fn_dict, default="", return_dtype=pl.String)
        .alias("fn"),
        cmd.alias("cmd"),
    ).with_columns(within_group_index().alias("seq"))


def _error_flag(df: pl.DataFrame, common: Mapping[str, Any]) -> pl.Expr:
    """The recorded error flag; the ERR regex only where none was recorded."""
    need_text = df.select(
        (pl.col("is_error").is_null() & pl.col("observation").is_not_null()).any()
    ).item()
    err = pl.col("is_error")
    if need_text:
        err = err.fill_null(pl.col("observation").str.contains(common["err_regex"]))
    return err.fill_null(False)


def _with_signatures_and_raw_paths(df: pl.DataFrame, common: Mapping[str, Any]) -> pl.DataFrame:
    """``err``, the call and output hashes (``sig``, ``obs_hash`` and per trajectory), and the
    raw path candidates (``_path``, ``_ecmd``, ``_patch``, ``_shw``, ``_shr``)."""
    sh = SHELL
    is_shell = pl.col("cmd").is_not_null()
    fn = pl.col("fn")
    write_tools = list(common["write_tools"])
    file_tool = ~is_shell & (fn.is_in(write_tools) | fn.is_in(list(common["read_tools"])))
    args_f = pl.when(file_tool).then(pl.col("arguments"))
    path_arg = clean_path(_unescape(args_f.str.extract(_json_str_field(common["path_keys"]), 1)))
    editor_cmd = pl.when(~is_shell & fn.is_in(write_tools)).then(
        pl.col("arguments").str.extract(r'"command"\s*:\s*"(\w+)"', 1)
    )
    patch_text = pl.when(~is_shell & fn.is_in(["applypatch", "patch"])).then(pl.col("arguments"))
    # full texts are hashed in place (a struct of existing columns: no copies)
    sig = pl.struct(fn.alias("f"), pl.coalesce(pl.col("cmd"), pl.col("arguments")).alias("a")).hash(
        7
    )
    err = _error_flag(df, common)
    # shell paths: only commands that can write / read a file are scanned
    df = _with_shell_writes(df)
    cmd_r = pl.when(pl.col("cmd").str.contains(any_of(_READ_HINTS))).then(pl.col("cmd"))
    return df.with_columns(
        err.alias("err"),
        sig.alias("sig"),
        pl.col("observation").hash(11).alias("obs_hash"),
        path_arg.alias("_path"),
        editor_cmd.alias("_ecmd"),
        _group1_all(
            patch_text, r"(?:\*\*\* (?:Update|Add|Delete) File: |\+\+\+ b/)([^\s\\]+)"
        ).alias("_patch"),
        # files a patch creates: an Add File header, or a diff from /dev/null
        _group1_all(
            patch_text, r"(?:\*\*\* Add File: |--- /dev/null(?:\\n|\n)\+\+\+ b/)([^\s\\]+)"
        ).alias("_patch_new"),
        _group1_all(cmd_r, sh["shell_read"]).alias("_shr"),
    ).with_columns(
        pl.col("sig").xor(pl.col("gkey")).alias("sig_g"),
        pl.col("obs_hash").xor(pl.col("gkey")).alias("obs_g"),
    )


def _tool_modifies(
    common: Mapping[str, Any], has_patch: pl.Expr, patch_modified: pl.Expr
) -> pl.Expr:
    """A non-shell call edits an existing file: a patch that changes a file it does not add,
    a modifying tool without an editor command, or an editor's modifying command."""
    fn, ecmd = pl.col("fn"), pl.col("_ecmd")
    return (
        pl.when(has_patch)
        .then(patch_modified.list.len() > 0)
        .otherwise(
            (fn.is_in(list(common["modify_tools"])) & ecmd.is_null())
            | ecmd.is_in(list(SHELL["editor_modify"]))
        )
    )


def _with_file_flags(df: pl.DataFrame, common: Mapping[str, Any]) -> pl.DataFrame:
    """``w_paths`` / ``r_paths`` / ``m_paths`` (written, read, modified) and the
    ``is_write``, ``is_modify``, ``is_verify``, ``is_finish`` and ``is_shell`` flags from the
    raw path candidates."""
    sh = SHELL
    is_shell = pl.col("cmd").is_not_null()
    fn = pl.col("fn")
    write_tools = list(common["write_tools"])
    ecmd = pl.col("_ecmd")
    tool_write = fn.is_in(write_tools) & (ecmd.is_null() | ecmd.is_in(list(sh["editor_write"])))
    tool_read = fn.is_in(list(common["read_tools"])) | (fn.is_in(write_tools) & (ecmd == "view"))
    has_patch = pl.col("_patch").list.len() > 0
    patch_modified = pl.col("_patch").list.set_difference(pl.col("_patch_new"))
    tool_modify = _tool_modifies(common, has_patch, patch_modified)
    empty_list = pl.lit([], pl.List(pl.String))
    one_path = pl.concat_list([pl.col("_path")])
    w_paths = pl.coalesce(
        pl.col("_shw"),
        pl.when(tool_write & pl.col("_path").is_not_null()).then(one_path),
        pl.when(has_patch).then(pl.col("_patch")),
        empty_list,
    )
    r_paths = pl.coalesce(
        pl.col("_shr"),
        pl.when(tool_read & pl.col("_path").is_not_null()).then(one_path),
        empty_list,
    )
    verify = pl.col("cmd").str.contains(common["verify_regex"]).fill_null(False) | fn.str.contains(
        r"test|verify|check|lint"
    )
    is_modify = (
        (pl.col("w_paths").list.len() > 0)
        & pl.when(is_shell)
        .then(pl.col("cmd").str.contains(sh["shell_modify"]))
        .otherwise(tool_modify)
    ).fill_null(False)
    # the paths an edit changes (a patch's created files are written, not modified)
    m_paths = (
        pl.when(~pl.col("is_modify"))
        .then(empty_list)
        .when(has_patch & ~is_shell)
        .then(patch_modified)
        .otherwise(pl.col("w_paths"))
    )
    return (
        df.with_columns(w_paths.alias("w_paths"), r_paths.alias("r_paths"))
        .with_columns(
            (pl.col("w_paths").list.len() > 0).alias("is_write"),
            is_modify.alias("is_modify"),
            verify.alias("is_verify"),
            fn.is_in(list(common["finish_tools"])).alias("is_finish"),
            is_shell.alias("is_shell"),
        )
        .with_columns(m_paths.alias("m_paths"))
    )
