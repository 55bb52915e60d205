"""go-code rollouts (``<dir>/<YYYY-MM-DD>/<run_id>.jsonl``) and harness outputs -> frames.

* :func:`is_rollout_folder`, :func:`read_rollouts` -> :class:`RolloutFrames` (jobs, trials,
  steps, tool_calls, findings with source 'recorded', errors).
* :func:`read_results_jsonl` (concatenated pretty-printed JSON or strict JSONL),
  :func:`read_baseline` (per-task frame), :func:`join_results`.

Rules: docs/trajectories.md ("go-code rollouts").
"""

from __future__ import annotations

from evalkit.load.gocode.folder import (
    RolloutFrames,
    is_rollout_folder,
    read_rollouts,
    rollout_files,
)
from evalkit.load.gocode.results import join_results, read_baseline, read_results_jsonl

__all__ = [
    "RolloutFrames",
    "is_rollout_folder",
    "join_results",
    "read_baseline",
    "read_results_jsonl",
    "read_rollouts",
    "rollout_files",
]
