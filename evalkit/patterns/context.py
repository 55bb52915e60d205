"""Input frames -> the prepared frames every detector works on (computed once per detect()).

:class:`Context` holds

* ``calls``: the tool-call frame of the analysed trajectories (main only by default), sorted,
  with derived columns (all vectorised; regexes run only on the rows they concern):

  ============= =================================================================================
  ``traj``      trajectory name ('main' when null)
  ``seq``       0-based position of the call within (trial_id, traj)
  ``fn``        normalised function name (namespace stripped, lower case, no ``-``/``_``)
  ``cmd``       shell command, whitespace collapsed (null for non-shell tools)
  ``sig``       hash of (fn, cmd) for shell tools, else of (fn, arguments as recorded)
  ``obs_hash``  hash of the observation text
  ``err``       ``is_error``, else the ERR regex on the observation
  ``w_paths``   paths the call wrote (write/edit tools' path argument, apply_patch headers,
                shell redirections / tee / touch / sed -i / cp / mv targets)
  ``is_write``  ``w_paths`` is not empty
  ``is_modify`` the write edits an existing file (edit tools, sed -i, ``>>``, patch)
  ``r_paths``   paths the call read (read tools' path argument, cat/head/grep/... operands)
  ``is_verify`` the call runs tests / checks (VERIFY regex, or a test/verify/check tool)
  ``is_finish`` the call ends the episode (finish / submit / mark_task_complete ...)
  ============= =================================================================================

* ``all_calls``: the same over every (sub)trajectory (file writes made by a subagent count).
* ``msgs``: agent steps with their text (``message``), a ``turn`` number (user messages
  start turns) and ``is_closing`` (the last agent message of its turn), plus the message
  argument of finish calls as closing messages.
* ``steps`` and ``trials`` as given (``trials`` may be empty: outcome-conditioned detectors
  then find nothing).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cached_property
from typing import Any

import polars as pl

from evalkit.load._columns import conform
from evalkit.load.steps.columns import STEP_COLUMNS, TOOL_CALL_COLUMNS
from evalkit.load.trials.columns import COLUMNS as TRIAL_COLUMNS
from evalkit.patterns import rules

_HEREDOC = (
    r"(?s)<<-?\s*['\"]?(EOF|PY|EOT|END|PYEOF|HEREDOC|SCRIPT|CODE|JSON|MD|TXT|PYTHON|SQL|YAML)"
    r"['\"]?.*?\n\s*(EOF|PY|EOT|END|PYEOF|HEREDOC|SCRIPT|CODE|JSON|MD|TXT|PYTHON|SQL|YAML)\b"
)


_STEP_KEEP = (
    "trial_id", "step_index", "trajectory", "is_main", "source", "message", "n_tool_calls",
    "observation", "prompt_tokens", "model_name",
)  # fmt: skip
_CALL_KEEP = (
    "trial_id", "step_index", "call_index", "trajectory", "is_main", "function_name", "arguments",
    "command", "observation", "is_error", "exit_code", "duration_ms",
)  # fmt: skip
_FINISH_KEYS = ("message", "result", "answer", "summary", "output", "final_answer")


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


def basename(e: pl.Expr) -> pl.Expr:
    return e.str.extract(r"([^/\\]+)$", 1)


def _group1_all(e: pl.Expr, pattern: str) -> pl.Expr:
    """Every match of ``pattern`` -> its group 1 (a List[str])."""
    return e.str.extract_all(pattern).list.eval(pl.element().str.extract(pattern, 1))


def _looks_like_path(e: pl.Expr) -> pl.Expr:
    return e.str.contains(r"[./]") & ~e.str.contains(r"^(/dev/|/proc/|&|\$|-)") & (e != ".")


def coerce_frames(
    data: Any = None,
    *,
    steps: pl.DataFrame | None = None,
    tool_calls: pl.DataFrame | None = None,
    trials: pl.DataFrame | None = None,
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """(steps, tool_calls, trials) from a Runs object, a mapping of frames, or a tool_calls
    frame; explicit keyword frames win. Missing frames are empty; missing columns are nulls."""
    if isinstance(data, pl.DataFrame):
        tool_calls = data if tool_calls is None else tool_calls
    elif isinstance(data, Mapping):
        steps = data.get("steps") if steps is None else steps
        tool_calls = data.get("tool_calls") if tool_calls is None else tool_calls
        trials = data.get("trials") if trials is None else trials
    elif data is not None:
        steps = data.steps if steps is None else steps
        tool_calls = data.tool_calls if tool_calls is None else tool_calls
        trials = data.trials if trials is None else trials
    out = []
    for df, cols in (
        (steps, STEP_COLUMNS),
        (tool_calls, TOOL_CALL_COLUMNS),
        (trials, TRIAL_COLUMNS),
    ):
        if isinstance(df, pl.LazyFrame):
            df = df.collect()
        out.append(conform(df if df is not None else pl.DataFrame(), cols))
    return out[0], out[1], out[2]


class Context:
    """Prepared frames + merged configuration, handed to every detector."""

    def __init__(
        self,
        steps: pl.DataFrame,
        tool_calls: pl.DataFrame,
        trials: pl.DataFrame,
        config: dict[str, dict[str, Any]],
        mode: str,
    ) -> None:
        self.config = config
        self.mode = mode
        self.common = config["common"]
        self.trials = trials
        keep = [c for c in _STEP_KEEP if c in steps.columns]
        self.steps = steps.select(keep).with_columns(
            pl.col("trajectory").fill_null("main").alias("traj")
        )
        self._raw_calls = tool_calls

    def params(self, name: str) -> dict[str, Any]:
        """The merged parameters of detector ``name``."""
        return self.config.get(name, {})

    # -- calls ------------------------------------------------------------------------------
    @cached_property
    def all_calls(self) -> pl.DataFrame:
        """Enriched tool calls of every (sub)trajectory (see the module docstring)."""
        return _enrich_calls(self._raw_calls, self.common)

    @cached_property
    def calls(self) -> pl.DataFrame:
        """Enriched tool calls of the analysed trajectories (main only by default)."""
        c = self.all_calls
        if self.common["main_only"]:
            keep = pl.col("is_main").fill_null(pl.col("traj") == "main")
            if not c.select(keep.all()).item():
                c = c.filter(keep)
        return c

    @cached_property
    def writes(self) -> pl.DataFrame:
        """One row per (call, written path) over every trajectory: trial_id, traj, seq,
        step_index, path, base, is_modify."""
        return (
            self.all_calls.filter(pl.col("is_write"))
            .select("trial_id", "traj", "seq", "step_index", "w_paths", "is_modify", "fn")
            .explode("w_paths")
            .rename({"w_paths": "path"})
            .filter(pl.col("path").is_not_null())
            .with_columns(basename(pl.col("path")).alias("base"))
        )

    @cached_property
    def reads(self) -> pl.DataFrame:
        """One row per (call, read path) over the analysed trajectories."""
        return (
            self.calls.filter(pl.col("r_paths").list.len() > 0)
            .select("trial_id", "traj", "seq", "step_index", "r_paths")
            .explode("r_paths")
            .rename({"r_paths": "path"})
            .filter(pl.col("path").is_not_null())
            .with_columns(basename(pl.col("path")).alias("base"))
        )

    # -- messages ---------------------------------------------------------------------------
    @cached_property
    def msgs(self) -> pl.DataFrame:
        """Agent messages: trial_id, traj, gkey, step_index, message, n_tool_calls, turn,
        is_closing, from_finish (the text of a finish call's message argument)."""
        s = self.steps
        if self.common["main_only"]:
            s = s.filter(pl.col("is_main").fill_null(pl.col("traj") == "main"))
        s = (
            s.with_columns(gkey_expr())
            .sort("gkey", "step_index", maintain_order=True)
            .with_columns((pl.col("source") == "user").cast(pl.Int64).cum_sum().alias("_u"))
        )
        # turn: user messages seen so far within the trajectory (global cum-sum minus offset)
        s = s.with_columns(
            (
                pl.col("_u")
                - pl.when(group_start())
                .then(pl.col("_u") - (pl.col("source") == "user").cast(pl.Int64))
                .otherwise(None)
                .forward_fill()
            ).alias("turn")
        )
        agent = s.filter(pl.col("source") == "agent").select(
            "trial_id",
            "traj",
            "gkey",
            "step_index",
            pl.col("message").fill_null(""),
            pl.col("n_tool_calls").fill_null(0),
            "turn",
            pl.lit(False).alias("from_finish"),
        )
        fin = self.calls.filter(pl.col("is_finish")).select(
            "trial_id", "traj", "gkey", "step_index",
            _unescape(pl.col("arguments").str.extract(_json_str_field(_FINISH_KEYS), 1)).fill_null("").alias("message"),
            pl.lit(0, pl.Int64).alias("n_tool_calls"),
        )  # fmt: skip
        if fin.height:
            turns = agent.select("trial_id", "traj", "step_index", "turn")
            fin = (
                fin.join(turns, on=["trial_id", "traj", "step_index"], how="left")
                .with_columns(pl.col("turn").fill_null(0), pl.lit(True).alias("from_finish"))
                .filter(pl.col("message").str.strip_chars() != "")
            )
            agent = pl.concat([agent, fin.select(agent.columns)], how="vertical_relaxed").sort(
                "gkey", "step_index", "from_finish", maintain_order=True
            )
        # closing: the last message with text in its (trajectory, turn); finish messages too
        agent = agent.with_row_index("_r")
        txt = agent.filter(
            (pl.col("message").str.strip_chars() != "") & ~pl.col("from_finish")
        ).select(
            "_r",
            "from_finish",
            pl.col("gkey").xor(pl.col("turn").cast(pl.UInt64).hash(5)).alias("_tk"),
        )
        closing = pl.concat(
            [
                txt.filter((pl.col("_tk") != pl.col("_tk").shift(-1)).fill_null(True)).select("_r"),
                agent.filter(pl.col("from_finish")).select("_r"),
            ]
        ).with_columns(pl.lit(True).alias("is_closing"))
        return (
            agent.join(closing, on="_r", how="left")
            .with_columns(pl.col("is_closing").fill_null(False))
            .drop("_r")
        )

    @cached_property
    def final_msgs(self) -> pl.DataFrame:
        """The closing messages of each analysed trajectory's last turn."""
        m = self.msgs.filter(pl.col("is_closing"))
        return m.filter(pl.col("turn") == pl.col("turn").max().over("gkey"))

    @cached_property
    def trial_info(self) -> pl.DataFrame:
        """trial_id, reward, outcome, exception_type, exception_message, timing, task_name."""
        return self.trials.select(
            "trial_id", "reward", "outcome", "exception_type", "exception_message", "duration_s",
            "agent_s", "n_steps", "task_name", "model_name", "source_format",
        ).unique("trial_id", keep="first")  # fmt: skip

    def snippet(self, e: pl.Expr) -> pl.Expr:
        """Evidence text: whitespace collapsed, cut to ``evidence_chars``."""
        n = int(self.common["evidence_chars"])
        s = e.cast(pl.String).str.replace_all(r"\s+", " ").str.strip_chars()
        return pl.when(s.str.len_chars() > n).then(s.str.slice(0, n - 1) + "…").otherwise(s)


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
_WRITE_HINTS = (">", "tee", "touch", "sed", "perl", "cp ", "mv ", "install ", "ln ")
_READ_HINTS = (
    "cat", "head", "tail", "less", "more", "nl ", "bat ", "view", "wc ", "stat", "file ", "sed",
    "awk", "grep", "rg ", "diff", "cmp", "jq", "json.tool", "xxd", "od ", "vi", "nano",
)  # fmt: skip
_DEVNULL = r"\d*>>?&?\s*/dev/(?:null|stdout|stderr|tty)\b|\d*>&\d|&>\s*/dev/null"


def _head_tail(e: pl.Expr, head: int = 2000, tail: int = 200) -> pl.Expr:
    """The text itself when short, else its first ``head`` and last ``tail`` characters."""
    return (
        pl.when(e.str.len_bytes() <= head + tail)
        .then(e)
        .otherwise(pl.concat_str([e.str.slice(0, head), e.str.tail(tail)]))
    )


def gkey_expr() -> pl.Expr:
    """64-bit key of (trial_id, traj): the unit every sequence rule works within."""
    return (
        pl.concat_str([pl.col("trial_id"), pl.col("traj")], separator="\x00").hash(3).alias("gkey")
    )


def group_start(key: str = "gkey") -> pl.Expr:
    """True on the first row of each run of equal ``key`` (frame sorted by it)."""
    return (pl.col(key) != pl.col(key).shift(1)).fill_null(True)


def within_group_index(key: str = "gkey") -> pl.Expr:
    """0-based row position within consecutive runs of ``key`` (global ops, no window)."""
    idx = pl.int_range(pl.len(), dtype=pl.Int64)
    return idx - pl.when(group_start(key)).then(idx).otherwise(None).forward_fill()


def _enrich_calls(tc: pl.DataFrame, common: Mapping[str, Any]) -> pl.DataFrame:
    sh = rules.SHELL
    # grouping key first: sorting by two integers is much cheaper than by strings
    df = (
        tc.select([c for c in _CALL_KEEP if c in tc.columns])
        .with_columns(pl.col("trajectory").fill_null("main").alias("traj"))
        .with_columns(gkey_expr())
        .sort("gkey", "step_index", "call_index", maintain_order=True)
    )
    # normalised function names: computed once per distinct name
    names = df.get_column("function_name").unique()
    fn_map = pl.DataFrame({"function_name": names}).with_columns(norm_fn().alias("fn"))
    fn_dict = dict(zip(fn_map["function_name"].to_list(), fn_map["fn"].to_list(), strict=True))
    cmd = pl.col("command").str.replace_all(_HEREDOC, "<<HEREDOC").str.strip_chars()
    df = df.with_columns(
        pl.col("function_name")
        .replace_strict(fn_dict, default="", return_dtype=pl.String)
        .alias("fn"),
        cmd.alias("cmd"),
    ).with_columns(within_group_index().alias("seq"))
    # error flag: the recorded one; the ERR regex only where none was recorded
    need_text = df.select(
        (pl.col("is_error").is_null() & pl.col("observation").is_not_null()).any()
    ).item()
    err = pl.col("is_error")
    if need_text:
        err = err.fill_null(pl.col("observation").str.contains(common["err_regex"]))
    is_shell = pl.col("cmd").is_not_null()
    fn = pl.col("fn")
    write_tools = list(common["write_tools"])
    modify_tools = list(common["modify_tools"])
    read_tools = list(common["read_tools"])
    file_tool = ~is_shell & (fn.is_in(write_tools) | fn.is_in(read_tools))
    args_f = pl.when(file_tool).then(pl.col("arguments"))
    path_arg = clean_path(_unescape(args_f.str.extract(_json_str_field(common["path_keys"]), 1)))
    editor_cmd = pl.when(~is_shell & fn.is_in(write_tools)).then(
        pl.col("arguments").str.extract(r'"command"\s*:\s*"(\w+)"', 1)
    )
    patch_text = pl.when(~is_shell & fn.is_in(["applypatch", "patch"])).then(pl.col("arguments"))
    # long texts are identified by their head, tail and length (hashing whole 50 kB file
    # contents a million times would dominate the run time)
    args = pl.col("arguments").fill_null("")
    sig = pl.struct(
        fn.alias("f"),
        pl.coalesce(pl.col("cmd"), _head_tail(args)).alias("a"),
        pl.when(is_shell).then(0).otherwise(args.str.len_bytes()).alias("n"),
    ).hash(7)
    obs = pl.col("observation")
    obs_hash = pl.struct(_head_tail(obs).alias("o"), obs.str.len_bytes().alias("n")).hash(11)
    # shell paths: only commands that can write / read a file are scanned
    cmd_w = pl.when(pl.col("cmd").str.contains_any(list(_WRITE_HINTS))).then(
        pl.col("cmd").str.replace_all(_DEVNULL, " ")
    )
    cmd_r = pl.when(pl.col("cmd").str.contains_any(list(_READ_HINTS))).then(pl.col("cmd"))
    df = df.with_columns(
        err.fill_null(False).alias("err"),
        sig.alias("sig"),
        obs_hash.alias("obs_hash"),
        path_arg.alias("_path"),
        editor_cmd.alias("_ecmd"),
        _group1_all(
            patch_text, r"(?:\*\*\* (?:Update|Add|Delete) File: |\+\+\+ b/)([^\s\\]+)"
        ).alias("_patch"),
        _group1_all(cmd_w, sh["shell_write"]).alias("_shw"),
        _group1_all(cmd_r, sh["shell_read"]).alias("_shr"),
    ).with_columns(
        pl.col("sig").xor(pl.col("gkey")).alias("sig_g"),
        pl.col("obs_hash").xor(pl.col("gkey")).alias("obs_g"),
    )
    ecmd = pl.col("_ecmd")
    tool_write = fn.is_in(write_tools) & (ecmd.is_null() | ecmd.is_in(list(sh["editor_write"])))
    tool_read = fn.is_in(read_tools) | (fn.is_in(write_tools) & (ecmd == "view"))
    has_patch = pl.col("_patch").list.len() > 0
    tool_modify = (
        (fn.is_in(modify_tools) & ecmd.is_null())
        | ecmd.is_in(list(sh["editor_modify"]))
        | (has_patch & pl.col("arguments").str.contains(r"Update File|\+\+\+ b/"))
    )
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
    df = df.with_columns(w_paths.alias("w_paths"), r_paths.alias("r_paths")).with_columns(
        (pl.col("w_paths").list.len() > 0).alias("is_write"),
        (
            (pl.col("w_paths").list.len() > 0)
            & pl.when(is_shell)
            .then(pl.col("cmd").str.contains(sh["shell_modify"]))
            .otherwise(tool_modify)
        )
        .fill_null(False)
        .alias("is_modify"),
        verify.alias("is_verify"),
        fn.is_in(list(common["finish_tools"])).alias("is_finish"),
        is_shell.alias("is_shell"),
    )
    return df.drop("_path", "_ecmd", "_patch", "_shw", "_shr")
