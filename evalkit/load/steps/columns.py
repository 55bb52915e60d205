"""The steps and tool_calls frames (from ATIF trajectories and go-code rollouts).

``runs.steps``: one row per trajectory step. ``runs.tool_calls``: one row per tool call with
its observation joined by source_call_id. Both declared here and nowhere else; values are
extracted in ``steps/extract.py`` (ATIF) and ``gocode/`` (go-code rollouts).
"""

from __future__ import annotations

from typing import Any

import polars as pl

from evalkit.load._columns import UTC_DATETIME, Column, reader_schema

STEP_COLUMNS: tuple[Column, ...] = (
    Column("trial_id", pl.String, "Trial the step belongs to (join key to trials).", True),
    Column(
        "step_index",
        pl.Int64,
        "0-based order of the step in the stitched trial trajectory (join key).",
        True,
    ),
    Column(
        "step_id", pl.Int64, "ATIF step_id as recorded (1-based within its trajectory file).", True
    ),
    Column(
        "trajectory",
        pl.String,
        "Which (sub)trajectory the step belongs to: 'main' (incl. continuations), or e.g. 'summarization-1-summary' / a subagent id.",
    ),
    Column(
        "is_main",
        pl.Boolean,
        "True for steps of the main agent trajectory (continuations included; sidechain steps excluded).",
    ),
    Column("source", pl.String, "system / user / agent.", True),
    Column("model_name", pl.String, "Model that produced the step (agent steps)."),
    Column(
        "message",
        pl.String,
        "Message text (content parts joined; images/audio as '[image: path]' placeholders).",
        True,
    ),
    Column("reasoning_content", pl.String, "Reasoning text when recorded."),
    Column("timestamp", UTC_DATETIME, "Step timestamp (UTC).", True, derived=True),
    Column(
        "prompt_tokens",
        pl.Int64,
        "Prompt tokens of this step (includes cached from ATIF v1.2).",
        True,
    ),
    Column("completion_tokens", pl.Int64, "Completion tokens.", True),
    Column("cached_tokens", pl.Int64, "Cached prompt tokens.", True),
    Column("cost_usd", pl.Float64, "Cost of this step in USD (null when unknown).", True),
    Column("n_tool_calls", pl.Int64, "Tool calls made in this step."),
    Column(
        "observation",
        pl.String,
        "Step-level observation text not tied to a tool call (no source_call_id).",
    ),
    Column(
        "is_copied_context",
        pl.Boolean,
        "ATIF is_copied_context (context replayed from an earlier trajectory).",
    ),
    Column("llm_call_count", pl.Int64, "ATIF llm_call_count."),
    Column("extra", pl.String, "Step extra as JSON text."),
    Column(
        "task_step",
        pl.String,
        "Multi-step task: name of the task step (steps/<name>/agent/) the trajectory belongs to; null for single-step trials.",
    ),
    Column(
        "llm_retries",
        pl.Int64,
        "go-code: llm.empty_response.retry events in this step (null for ATIF).",
    ),
    Column(
        "is_sidechain",
        pl.Boolean,
        "ATIF step extra.is_sidechain is true: a Claude Code subagent step recorded in the main trajectory (is_main False, not in trials.n_steps / n_tool_calls; null for go-code).",
    ),
)

TOOL_CALL_COLUMNS: tuple[Column, ...] = (
    Column("trial_id", pl.String, "Trial the call belongs to.", True),
    Column("step_index", pl.Int64, "Step (steps.step_index) that made the call.", True),
    Column("call_index", pl.Int64, "0-based order of the call within its step.", True),
    Column("tool_call_id", pl.String, "Tool call id as recorded."),
    Column("trajectory", pl.String, "Which (sub)trajectory (see steps.trajectory)."),
    Column("function_name", pl.String, "Tool / function name.", True),
    Column("arguments", pl.String, "Arguments as JSON text.", True),
    Column("command", pl.String, "Shell command text when the tool runs a shell, else null.", True),
    Column(
        "observation", pl.String, "Observation content joined to this call by source_call_id.", True
    ),
    Column(
        "is_error",
        pl.Boolean,
        "The call failed: structured signal (exit code, error field) else the documented text heuristic.",
        True,
        derived=True,
    ),
    Column("exit_code", pl.Int64, "Exit code when one is recorded or printed.", derived=True),
    Column(
        "timestamp",
        UTC_DATETIME,
        "Timestamp of the step (or the call when recorded).",
        derived=True,
    ),
    Column(
        "is_main", pl.Boolean, "True for calls of the main agent trajectory (see steps.is_main)."
    ),
    Column("task_step", pl.String, "Multi-step task step name (see steps.task_step)."),
    Column(
        "observation_source",
        pl.String,
        "How the observation was attached: 'call_id' (ATIF source_call_id or go-code call_id), 'step' (the only call of a step whose results carry no call id), or null (none).",
    ),
    Column(
        "is_error_source",
        pl.String,
        "Which rule set is_error: 'structured' (error flag/field), 'exit_code', 'text' (heuristic, docs/trajectories.md) or null (unknown).",
        derived=True,
    ),
    Column(
        "retried",
        pl.Boolean,
        "An identical call (same function and canonical arguments) came earlier in the same (sub)trajectory (the retry_loop detector's test).",
        derived=True,
    ),
    Column(
        "duration_ms",
        pl.Float64,
        "Call duration in milliseconds when recorded (go-code tool.call.completed).",
    ),
)

#: Working columns: filled by the readers, consumed when the frames are finished
#: (``steps/derive.py``), never in a frame the user sees.
STEP_WORKING: tuple[Column, ...] = (
    Column("_ts", pl.String, "The step's timestamp as recorded (ISO 8601 text) -> timestamp."),
)
CALL_WORKING: tuple[Column, ...] = (
    Column("_ts", pl.String, "The call's timestamp as recorded -> timestamp."),
    Column("_s_err", pl.Boolean, "Structured error signal (an error flag or field) -> is_error."),
    Column("_s_exit", pl.Int64, "Structured exit code -> exit_code."),
    Column(
        "_sig",
        pl.String,
        "Retry signature (go-code: tool and key-sorted arguments; ATIF: null, the recorded "
        "arguments text is used) -> retried.",
    ),
)

#: What a reader fills per step and per call: the declared columns that are not derived,
#: then the working ones, in this order (a call row is a tuple in CALL_FIELDS order).
STEP_READ_SCHEMA = reader_schema(STEP_COLUMNS, STEP_WORKING)
CALL_READ_SCHEMA = reader_schema(TOOL_CALL_COLUMNS, CALL_WORKING)
STEP_FIELDS = tuple(STEP_READ_SCHEMA)
CALL_FIELDS = tuple(CALL_READ_SCHEMA)


def _row(fields: tuple[str, ...], values: dict[str, Any]) -> tuple:
    unknown = values.keys() - set(fields)
    if unknown:
        raise TypeError(f"not a reader field: {', '.join(sorted(unknown))}")
    return tuple([values.get(f) for f in fields])


def step_row(**values: Any) -> tuple:
    """One step as a tuple in STEP_FIELDS order, from named values (the others null)."""
    return _row(STEP_FIELDS, values)


def call_row(**values: Any) -> tuple:
    """One tool call as a tuple in CALL_FIELDS order, from named values (the others null)."""
    return _row(CALL_FIELDS, values)
