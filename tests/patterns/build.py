"""Hand-made trajectories for detector tests.

A trajectory is a list of events::

    ("user", "Fix the bug")
    ("agent", "Let me look", [call(...), ...])      # a step with tool calls
    ("agent", "Done, all tests pass.")               # a step without
    ("system", "Performed context summarization")

``call(fn, cmd=None, args=None, obs="", err=None)``: a shell call when ``cmd`` is given
(``fn`` defaults to ``bash``), else a tool call with ``args`` (a dict, serialised to JSON).
"""

from __future__ import annotations

import json
from typing import Any

import polars as pl

from evalkit.load._columns import conform, empty
from evalkit.load.steps.columns import STEP_COLUMNS, TOOL_CALL_COLUMNS
from evalkit.load.trials.columns import COLUMNS as TRIAL_COLUMNS


def call(
    fn: str = "bash",
    cmd: str | None = None,
    args: dict[str, Any] | None = None,
    obs: str | None = "",
    err: bool | None = False,
    **extra: Any,
) -> dict[str, Any]:
    if cmd is not None:
        args = {"command": cmd, **(args or {})}
    return {"fn": fn, "cmd": cmd, "args": args or {}, "obs": obs, "err": err, **extra}


def sh(cmd: str, obs: str = "", err: bool | None = False, **kw: Any) -> dict[str, Any]:
    return call("bash", cmd=cmd, obs=obs, err=err, **kw)


def frames(
    events: list[tuple],
    *,
    trial_id: str = "t1",
    reward: float | None = None,
    exception_type: str | None = None,
    trajectory: str = "main",
    **trial: Any,
) -> dict[str, pl.DataFrame]:
    steps, calls = [], []
    for i, ev in enumerate(events):
        source, text = ev[0], ev[1]
        cs = ev[2] if len(ev) > 2 else []
        steps.append(
            {
                "trial_id": trial_id, "step_index": i, "step_id": i + 1, "source": source,
                "message": text, "n_tool_calls": len(cs), "trajectory": trajectory,
                "is_main": trajectory == "main", "observation": ev[3] if len(ev) > 3 else None,
            }
        )  # fmt: skip
        for j, c in enumerate(cs):
            calls.append(
                {
                    "trial_id": trial_id, "step_index": i, "call_index": j,
                    "function_name": c["fn"], "arguments": json.dumps(c["args"]),
                    "command": c["cmd"], "observation": c["obs"], "is_error": c["err"],
                    "trajectory": trajectory, "is_main": trajectory == "main",
                    "duration_ms": c.get("duration_ms"), "exit_code": c.get("exit_code"),
                }
            )  # fmt: skip
    tr = {"trial_id": trial_id, "reward": reward, "exception_type": exception_type, **trial}
    return {
        "steps": conform(pl.DataFrame(steps, infer_schema_length=None), STEP_COLUMNS),
        "tool_calls": (
            conform(pl.DataFrame(calls, infer_schema_length=None), TOOL_CALL_COLUMNS)
            if calls
            else empty(TOOL_CALL_COLUMNS)
        ),
        "trials": conform(pl.DataFrame([tr], infer_schema_length=None), TRIAL_COLUMNS),
    }


def combine(*fs: dict[str, pl.DataFrame]) -> dict[str, pl.DataFrame]:
    return {
        k: pl.concat([f[k] for f in fs], how="vertical_relaxed")
        for k in ("steps", "tool_calls", "trials")
    }


def hits(findings: pl.DataFrame, detector: str, trial_id: str | None = None) -> pl.DataFrame:
    f = findings.filter(pl.col("detector") == detector)
    return f if trial_id is None else f.filter(pl.col("trial_id") == trial_id)
