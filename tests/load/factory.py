"""Build synthetic Harbor job folders in the shapes harbor-format.md documents, for formats
the real fixtures do not cover (0.1.x naive times, 0.26 schema_version / policy, package and
git task ids, multi-step results, reward-file precedence)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def write(path: Path, obj: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj, indent=4))


def trial_result(
    task: str,
    trial: str,
    *,
    rewards: dict | None = None,
    exc: dict | None = None,
    started: str = "2026-05-01T10:00:00Z",
    finished: str = "2026-05-01T10:05:00Z",
    task_id: dict | None = None,
    extra: dict | None = None,
    agent: str = "oracle",
    model: str | None = "anthropic/claude-x",
    tokens: tuple = (100, 40, 10),
    cost: float | None = 0.01,
) -> dict:
    prov, _, name = (model or "").partition("/")
    d = {
        "id": f"id-{trial}",
        "task_name": task,
        "trial_name": trial,
        "trial_uri": f"file:///somewhere/else/{trial}",
        "task_id": task_id or {"path": f"tasks/{task}"},
        "source": "ds",
        "task_checksum": "abc",
        "config": {
            "task": {"path": f"tasks/{task}"},
            "trial_name": trial,
            "agent": {"name": agent, "model_name": model},
            "environment": {"type": "docker"},
            "job_id": "job-uuid",
        },
        "agent_info": {
            "name": agent,
            "version": "1.0",
            "model_info": {"name": name, "provider": prov} if model else None,
        },
        "agent_result": {
            "n_input_tokens": tokens[0],
            "n_cache_tokens": tokens[1],
            "n_output_tokens": tokens[2],
            "cost_usd": cost,
        },
        "verifier_result": {"rewards": rewards} if rewards is not None else None,
        "exception_info": exc,
        "started_at": started,
        "finished_at": finished,
        "environment_setup": {"started_at": started, "finished_at": started},
        "agent_setup": None,
        "agent_execution": {"started_at": started, "finished_at": finished},
        "verifier": None,
    }
    d.update(extra or {})
    return d


def job(
    root: Path,
    name: str,
    trials: list[dict],
    *,
    result: dict | None = None,
    config: dict | None = None,
) -> Path:
    jd = root / name
    jd.mkdir(parents=True, exist_ok=True)
    write(
        jd / "config.json",
        config
        or {
            "job_name": name,
            "n_attempts": 1,
            "n_concurrent_trials": 2,
            "agents": [{"name": "oracle"}],
            "datasets": [{"name": "ds", "version": "1.0"}],
        },
    )
    if result is not False:
        write(
            jd / "result.json",
            result
            or {
                "id": f"job-{name}",
                "started_at": "2026-05-01T09:59:58",
                "finished_at": "2026-05-01T10:10:00",
                "n_total_trials": len(trials),
                "stats": {"n_trials": len(trials), "n_errors": 0, "evals": {}},
            },
        )
    for t in trials:
        write(jd / t["trial_name"] / "result.json", t)
    return jd
