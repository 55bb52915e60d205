"""The Harbor agent class (runs in Harbor's process; imports harbor).

Kwargs (``--ak KEY=VALUE`` or ``agents[].kwargs`` in a job config):

- ``variant``: ``baseline`` or ``candidate``; selects the per-task pass rates declared in
  ``task.toml`` ``[metadata] scripted_pass_rate`` and the behaviour style. Default: the
  model name's last part when it names a variant (``-m scripted/candidate``), else
  ``baseline``, so two runs can differ in exactly one variable: the model.
- ``seed``: integer (default 0). The episode is a function of (seed, task, attempt).
- ``stall_rate``: probability (default 0) that a failing attempt stalls until Harbor's
  agent timeout (produces ``AgentTimeoutError`` trials).

The attempt number is claimed per task inside the job folder: the smallest number not
used by another trial of the same task (a claim is ``agent/evalkit-scripted.json``). So a
job's multiset of episodes per task is the same on every run, whatever the scheduling,
and a resumed job (Harbor deletes unfinished trial folders) re-plays the freed numbers.
A follow-up job of a plan (``<job>__plan-*``, evalkit.launch.followup) counts the claims
of its whole family, so its attempts continue the candidate's numbering instead of
re-playing the episodes the candidate already had.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from itertools import count
from pathlib import Path
from typing import Any

from harbor.agents.base import BaseAgent
from harbor.agents.capabilities import AgentCapabilities
from harbor.environments.base import BaseEnvironment
from harbor.models.agent.context import AgentContext

from evalkit_scripted import __version__
from evalkit_scripted.atif import Trajectory
from evalkit_scripted.plan import VARIANTS, TaskInfo, family_dirs, load_task, make_plan

CLAIM_FILE = "evalkit-scripted.json"


class ScriptedAgent(BaseAgent):
    """Deterministic, seeded stand-in for an LLM agent that writes ATIF trajectories."""

    capabilities = AgentCapabilities(atif=True)

    def __init__(
        self,
        logs_dir: Path,
        model_name: str | None = None,
        variant: str | None = None,
        seed: int | str = 0,
        stall_rate: float | str = 0.0,
        **kwargs: Any,
    ) -> None:
        self.variant = str(variant) if variant else _variant_from_model(model_name)
        super().__init__(
            logs_dir=logs_dir, model_name=model_name or f"scripted/{self.variant}", **kwargs
        )
        self.seed = int(seed)
        self.stall_rate = float(stall_rate)

    @staticmethod
    def name() -> str:
        return "evalkit-scripted"

    def version(self) -> str:
        return __version__

    async def setup(self, environment: BaseEnvironment) -> None:
        return

    async def run(
        self, instruction: str, environment: BaseEnvironment, context: AgentContext
    ) -> None:
        trial_dir = Path(self.logs_dir).parent
        task_dir, task_name = _task_location(trial_dir)
        task = load_task(task_dir, task_name) if task_dir else TaskInfo(task_name, instruction, ())
        attempt = _claim_attempt(trial_dir, task.name, self.logs_dir)
        plan = make_plan(
            task, variant=self.variant, attempt=attempt, seed=self.seed, stall_rate=self.stall_rate
        )
        _write_json(self.logs_dir / CLAIM_FILE, plan.summary())

        traj = Trajectory(
            self.session_id or trial_dir.name, __version__, self.model_name, self.variant
        )
        traj.add_system()
        traj.add_user(instruction)
        path = self.logs_dir / "trajectory.json"
        try:
            for act in plan.actions:
                step = traj.add_agent(act.message, act.command)
                _write_json(path, traj.to_dict())
                if act.command is None:
                    continue
                res = await environment.exec(command=act.command)
                traj.observe(step, (res.stdout or "") + (res.stderr or ""), res.return_code)
        finally:
            _write_json(path, traj.to_dict())
            context.n_input_tokens = traj.totals["prompt"]
            context.n_cache_tokens = traj.totals["cached"]
            context.n_output_tokens = traj.totals["completion"]
            context.cost_usd = traj.totals["cost"]
            context.metadata = {"evalkit_scripted": plan.summary()}


def _variant_from_model(model_name: str | None) -> str:
    """``scripted/candidate`` -> candidate; anything else -> baseline."""
    name = (model_name or "").rsplit("/", 1)[-1]
    return name if name in VARIANTS else "baseline"


def _task_location(trial_dir: Path) -> tuple[Path | None, str]:
    """The task folder and name from the trial's config.json (Harbor writes it first)."""
    name = trial_dir.name.rsplit("__", 1)[0]
    try:
        cfg = json.loads((trial_dir / "config.json").read_text())
        raw = (cfg.get("task") or {}).get("path")
    except (OSError, ValueError):
        return None, name
    if not raw:
        return None, name
    path = Path(raw)
    if not path.is_absolute():
        path = Path.cwd() / path
    return (path, path.name) if path.is_dir() else (None, path.name)


def _claim_attempt(trial_dir: Path, task_name: str, logs_dir: Path) -> int:
    """Smallest attempt number of this task not claimed by another trial of the job or
    of its family (:func:`family_dirs`)."""
    own = logs_dir / CLAIM_FILE
    job_dir = trial_dir.parent
    lock_path = job_dir / "config.json"
    lock_fh = open(lock_path) if lock_path.exists() else None  # noqa: SIM115
    try:
        if lock_fh is not None:
            fcntl.flock(lock_fh, fcntl.LOCK_EX)
        with contextlib.suppress(OSError, ValueError):
            mine = json.loads(own.read_text())
            if mine.get("task") == task_name and isinstance(mine.get("attempt"), int):
                return mine["attempt"]
        used: set[int] = set()
        claims = (c for d in family_dirs(job_dir) for c in d.glob(f"*/agent/{CLAIM_FILE}"))
        for claim in claims:
            if claim == own:
                continue
            with contextlib.suppress(OSError, ValueError):
                data = json.loads(claim.read_text())
                if data.get("task") == task_name and isinstance(data.get("attempt"), int):
                    used.add(data["attempt"])
        attempt = next(i for i in count(1) if i not in used)
        _write_json(own, {"task": task_name, "attempt": attempt})
        return attempt
    finally:
        if lock_fh is not None:
            fcntl.flock(lock_fh, fcntl.LOCK_UN)
            lock_fh.close()


def _write_json(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=2))
    os.replace(tmp, path)
