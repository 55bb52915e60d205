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
  ``m_paths``   the paths it edits: ``w_paths`` of a modifying write, less the files a
                patch adds (``*** Add File``, a diff from /dev/null)
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

from collections.abc import Mapping
from functools import cached_property
from typing import Any

import polars as pl

from evalkit.load._columns import conform, empty
from evalkit.load.steps.columns import STEP_COLUMNS, TOOL_CALL_COLUMNS
from evalkit.load.trials.columns import COLUMNS as TRIAL_COLUMNS
from evalkit.patterns.prepare import (
    _json_str_field,
    _unescape,
    basename,
    enrich_calls,
    gkey_expr,
    group_start,
    grouped,
)

_STEP_KEEP = (
    "trial_id", "step_index", "trajectory", "is_main", "source", "message", "n_tool_calls",
    "observation", "prompt_tokens", "model_name",
)  # fmt: skip
_FINISH_KEYS = ("message", "result", "answer", "summary", "output", "final_answer")


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
        out.append(conform(df, cols) if df is not None and df.width else empty(cols))
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
        return enrich_calls(self._raw_calls, self.common)

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
        agent = _agent_messages(_with_turns(s))
        fin = self._finish_messages()
        if fin.height:
            turns = agent.select("trial_id", "traj", "step_index", "turn")
            fin = (
                fin.join(turns, on=["trial_id", "traj", "step_index"], how="left")
                .with_columns(pl.col("turn").fill_null(0), pl.lit(True).alias("from_finish"))
                .filter(pl.col("message").str.contains(r"\S"))
            )
            agent = pl.concat([agent, fin.select(agent.columns)], how="vertical_relaxed").sort(
                "gkey", "step_index", "from_finish", maintain_order=True
            )
        return _with_closing(agent)

    def _finish_messages(self) -> pl.DataFrame:
        """The message argument of each analysed finish call, as an agent message."""
        return self.calls.filter(pl.col("is_finish")).select(
            "trial_id", "traj", "gkey", "step_index",
            _unescape(pl.col("arguments").str.extract(_json_str_field(_FINISH_KEYS), 1)).fill_null("").alias("message"),
            pl.lit(0, pl.Int64).alias("n_tool_calls"),
        )  # fmt: skip

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
        s = e.cast(pl.String).str.slice(0, 8 * n).str.replace_all(r"\s+", " ").str.strip_chars()
        return pl.when(s.str.len_chars() > n).then(s.str.slice(0, n - 1) + "…").otherwise(s)


def _with_turns(s: pl.DataFrame) -> pl.DataFrame:
    """Steps with ``gkey`` and ``turn``: user messages seen so far within the trajectory."""
    s = grouped(s.with_columns(gkey_expr()), "step_index").with_columns(
        (pl.col("source") == "user").cast(pl.Int64).cum_sum().alias("_u")
    )
    # global cum-sum minus the offset at the trajectory's first step
    return s.with_columns(
        (
            pl.col("_u")
            - pl.when(group_start())
            .then(pl.col("_u") - (pl.col("source") == "user").cast(pl.Int64))
            .otherwise(None)
            .forward_fill()
        ).alias("turn")
    )


def _agent_messages(s: pl.DataFrame) -> pl.DataFrame:
    """The agent steps of ``s`` in the columns of :attr:`Context.msgs` (before is_closing)."""
    return s.filter(pl.col("source") == "agent").select(
        "trial_id",
        "traj",
        "gkey",
        "step_index",
        pl.col("message").fill_null(""),
        pl.col("n_tool_calls").fill_null(0),
        "turn",
        pl.lit(False).alias("from_finish"),
    )


def _with_closing(agent: pl.DataFrame) -> pl.DataFrame:
    """Add ``is_closing``: the last message with text in its (trajectory, turn), and every
    finish message."""
    agent = agent.with_row_index("_r")
    txt = agent.filter((pl.col("message").str.contains(r"\S")) & ~pl.col("from_finish")).select(
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
