"""Trajectories (ATIF v1.0-v1.8) -> the steps and tool_calls frames.

* :func:`build_trajectories` (``table.py``): every trial of a trials frame, in parallel,
  cached per job. Wired into :class:`evalkit.load.runs.Runs`.
* :func:`read_trajectory`: one trajectory file, for notebooks and tests.

Rules (command detection, is_error, non-ATIF files, stitching) are documented in
``docs/trajectories.md``.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import polars as pl

if TYPE_CHECKING:
    from evalkit.load.errors import LoadError
    from evalkit.load.steps.table import build_trajectories

__all__ = ["build_trajectories", "read_trajectory"]


def __getattr__(name: str) -> Any:
    # lazy: evalkit.load.runs imports steps.columns, and table.py imports runs
    if name == "build_trajectories":
        from evalkit.load.steps.table import build_trajectories

        return build_trajectories
    raise AttributeError(name)


def read_trajectory(
    path: str | os.PathLike[str], *, trial_id: str | None = None
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame, list[LoadError]]:
    """Parse one ATIF file (with its continuations and subagent files next to it).

    Returns ``(steps, tool_calls, summary, errors)``: steps / tool_calls conform to
    STEP_COLUMNS / TOOL_CALL_COLUMNS; summary is one row (trial_id, n_steps, n_tool_calls,
    n_turns, final_prompt_tokens, final_completion_tokens, final_cached_tokens,
    final_cost_usd: the final_metrics totals of the last file of the main chain) or zero
    rows when the file is not a readable ATIF trajectory; errors are LoadErrors (a non-ATIF
    file gives one with error_type 'not_atif'). ``trial_id`` defaults to a hash of the path.
    """
    from evalkit.load.shared.cache import path_key
    from evalkit.load.steps.derive import calls_frame, final_totals, steps_frame
    from evalkit.load.steps.extract import parse_file

    p = os.fspath(path)
    tid = trial_id if trial_id is not None else path_key(p)
    tp = parse_file(p, tid)
    steps, calls = steps_frame(tp.acc.step_columns()), calls_frame(tp.acc.call_columns())
    t = final_totals(tp.final_metrics)
    schema = {
        "trial_id": pl.String, "n_steps": pl.Int64, "n_tool_calls": pl.Int64, "n_turns": pl.Int64,
        "final_prompt_tokens": pl.Float64, "final_completion_tokens": pl.Float64,
        "final_cached_tokens": pl.Float64, "final_cost_usd": pl.Float64,
    }  # fmt: skip
    rows = []
    if tp.has_trajectory:
        rows.append((
            tid, tp.n_steps, tp.n_tool_calls, tp.n_turns, t["total_prompt_tokens"],
            t["total_completion_tokens"], t["total_cached_tokens"], t["total_cost_usd"],
        ))  # fmt: skip
    summary = pl.DataFrame(rows, schema=schema, orient="row")
    return steps, calls, summary, tp.errors
