"""Build an ATIF trajectory (Harbor's ``agent/trajectory.json``) step by step (pure).

Token counts are simulated deterministically from the text the agent "reads" and
"writes" (about 4 characters per token, the whole context re-read on every call, the
previous prompt served from a prefix cache), and priced like a mid-size hosted model, so
token, cache and cost analyses have realistic, internally consistent numbers: the
per-step metrics add up exactly to ``final_metrics``.
"""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from typing import Any

SCHEMA_VERSION = "ATIF-v1.7"
PRICE_PER_TOKEN = {"input": 3e-6, "cached": 0.3e-6, "output": 15e-6}
SYSTEM_PROMPT = (
    "You are evalkit-scripted, a deterministic stand-in for an LLM coding agent. "
    "You work in a Linux container through one tool, bash(command). Solve the task, "
    "then reply with a final message and no tool call."
)
TOOL_DEFINITIONS = [
    {
        "type": "function",
        "function": {
            "name": "bash",
            "description": "Run a shell command in the task container.",
            "parameters": {
                "type": "object",
                "properties": {"command": {"type": "string"}},
                "required": ["command"],
            },
        },
    }
]
MAX_OBSERVATION_CHARS = 4000
#: prompt tokens a real agent's tool manual and harness preamble would add to every call
HIDDEN_PROMPT_TOKENS = 1500


def tokens(text: str) -> int:
    return math.ceil(len(text) / 4) if text else 0


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class Trajectory:
    """Accumulates ATIF steps and the running token/cost totals."""

    def __init__(
        self, session_id: str, agent_version: str, model_name: str | None, variant: str
    ) -> None:
        self.session_id = session_id
        self.agent = {
            "name": "evalkit-scripted",
            "version": agent_version,
            "model_name": model_name,
            "tool_definitions": TOOL_DEFINITIONS,
            "extra": {"variant": variant},
        }
        self.steps: list[dict[str, Any]] = []
        self.context_tokens = 0
        self.prev_prompt = 0
        self.totals = {"prompt": 0, "completion": 0, "cached": 0, "cost": 0.0}
        self.notes: str | None = None

    def add_system(self, text: str = SYSTEM_PROMPT) -> None:
        self._append({"source": "system", "message": text})
        self.context_tokens += tokens(text) + HIDDEN_PROMPT_TOKENS

    def add_user(self, text: str) -> None:
        self._append({"source": "user", "message": text})
        self.context_tokens += tokens(text)

    def add_agent(self, message: str, command: str | None) -> dict[str, Any]:
        """Append an agent step (one simulated LLM call); returns it for the observation."""
        call_id = f"call_{len(self.steps) + 1}"
        args = {"command": command} if command is not None else None
        completion = tokens(message) + (tokens(json.dumps(args)) + 8 if args else 0) + 4
        prompt = self.context_tokens
        cached = min(self.prev_prompt, prompt)
        cost = round(
            (prompt - cached) * PRICE_PER_TOKEN["input"]
            + cached * PRICE_PER_TOKEN["cached"]
            + completion * PRICE_PER_TOKEN["output"],
            8,
        )
        step: dict[str, Any] = {
            "source": "agent",
            "model_name": self.agent["model_name"],
            "message": message,
            "metrics": {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "cached_tokens": cached,
                "cost_usd": cost,
            },
        }
        if args is not None:
            step["tool_calls"] = [
                {"tool_call_id": call_id, "function_name": "bash", "arguments": args}
            ]
        stored = self._append(step)
        self.prev_prompt = prompt
        self.context_tokens += completion
        self.totals["prompt"] += prompt
        self.totals["completion"] += completion
        self.totals["cached"] += cached
        self.totals["cost"] = round(self.totals["cost"] + cost, 8)
        return stored

    def observe(self, step: dict[str, Any], output: str, exit_code: int | None) -> None:
        """Attach a tool result to the step that made the call."""
        text = (
            output
            if len(output) <= MAX_OBSERVATION_CHARS
            else output[:MAX_OBSERVATION_CHARS] + "\n[output truncated]"
        )
        if exit_code:
            text = (
                text + "\n" if text and not text.endswith("\n") else text
            ) + f"[exit code {exit_code}]"
        call_id = step["tool_calls"][0]["tool_call_id"]
        step["observation"] = {
            "results": [
                {"source_call_id": call_id, "content": text, "extra": {"exit_code": exit_code}}
            ]
        }
        self.context_tokens += tokens(text)

    def _append(self, step: dict[str, Any]) -> dict[str, Any]:
        stored = {"step_id": len(self.steps) + 1, "timestamp": now_iso(), **step}
        self.steps.append(stored)
        return stored

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "schema_version": SCHEMA_VERSION,
            "session_id": self.session_id,
            "agent": self.agent,
            "steps": self.steps,
            "final_metrics": {
                "total_prompt_tokens": self.totals["prompt"],
                "total_completion_tokens": self.totals["completion"],
                "total_cached_tokens": self.totals["cached"],
                "total_cost_usd": self.totals["cost"],
                "total_steps": len(self.steps),
            },
        }
        if self.notes:
            out["notes"] = self.notes
        return out
