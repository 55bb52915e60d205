"""Follow-up jobs from a plan: the extra candidate attempts a Hold's plan asks for.

``followup_specs(summary, runs_root)`` reads a summary.json / compare.json that carries a
``plan`` (evalkit.stats.plan) and returns one :class:`RunSpec` per distinct number of extra
attempts: the candidate job's own settings (from its frozen manifest: agent, model,
environment, task source, timeouts, retry policy), restricted to the planned tasks, with
that many attempts. The job name is the candidate job's name plus a digest of the plan, so
running the same plan again resumes instead of duplicating. Agent, model and task source
are the candidate's, so the follow-up trials get the candidate's default run label and
join its attempts when the next analysis selects the run (or lists both jobs).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from evalkit.launch import manifest as man
from evalkit.launch.spec import RunSpec, job_dir_for

__all__ = ["FollowUpError", "followup_specs", "read_plan"]


class FollowUpError(ValueError):
    """The summary has no runnable plan, or the candidate job cannot be found."""


def read_plan(path: str | Path) -> dict[str, Any]:
    """The summary.json / compare.json at ``path`` (a FollowUpError when unreadable)."""
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:
        raise FollowUpError(f"cannot read {path}: {exc}") from None


def _candidate_manifest(summary: dict[str, Any], runs_root: Path) -> tuple[str, dict[str, Any]]:
    jobs = (summary.get("candidate") or {}).get("jobs") or []
    for name in jobs:
        try:
            path = job_dir_for(runs_root, name) / man.MANIFEST_FILE
        except ValueError:
            continue
        if path.is_file():
            return name, json.loads(path.read_text())
    raise FollowUpError(
        f"no candidate job with an evalkit manifest in {runs_root} (candidate jobs: "
        f"{', '.join(jobs) or 'none listed'}): only jobs launched by evalkit can be followed up"
    )


def _task_paths(m: dict[str, Any]) -> list[Path]:
    """The candidate's local task folders, as recorded (relative ones from here or from
    the folder above its runs root)."""
    loc = m.get("location") or {}
    base = Path(loc.get("runs_root", ".")).parent
    out = []
    for p in loc.get("task_paths") or []:
        q = Path(p)
        out.append(q if q.is_absolute() or q.exists() else base / q)
    return out


def _spec(m: dict[str, Any], job_name: str, tasks: list[str], attempts: int, runs_root: Path):
    agent, t, timeouts, retry = m["agent"], m["tasks"], m.get("timeouts", {}), m.get("retry", {})
    return RunSpec(
        agent=agent.get("name"),
        agent_import_path=agent.get("import_path"),
        model=m.get("model"),
        dataset=t.get("dataset") if t.get("source") == "registry" else None,
        paths=_task_paths(m) if t.get("source") == "local" else (),
        tasks=sorted(tasks),
        attempts=attempts,
        concurrency=int(m.get("concurrency") or 4),
        env=(m.get("environment") or {}).get("import_path")
        or (m.get("environment") or {}).get("type", "docker"),
        max_retries=int(retry.get("max_retries") or 0),
        retry_include=retry.get("include_exceptions"),
        retry_exclude=retry.get("exclude_exceptions"),
        agent_kwargs=agent.get("kwargs") or {},
        pass_env=agent.get("pass_env") or (),
        job_name=job_name,
        runs_root=runs_root,
        **{k: timeouts[k] for k in timeouts if k in RunSpec.__dataclass_fields__},
    )


def followup_specs(summary: dict[str, Any], runs_root: str | Path) -> list[RunSpec]:
    """The follow-up job(s) that run exactly the plan's extra attempts (module docstring)."""
    plan = summary.get("plan")
    per_task = (plan or {}).get("attempts_per_task") or {}
    if not per_task:
        why = "has no plan" if not plan else "plans no extra attempt"
        raise FollowUpError(f"the summary {why} (the gate did not hold, or nothing can decide)")
    runs_root = Path(runs_root)
    cand, m = _candidate_manifest(summary, runs_root)
    digest = hashlib.sha256(json.dumps(per_task, sort_keys=True).encode()).hexdigest()[:8]
    by_count: dict[int, list[str]] = {}
    for task, n in sorted(per_task.items()):
        by_count.setdefault(int(n), []).append(task)
    return [
        _spec(m, f"{cand}__plan-{digest}-k{n}", tasks, n, runs_root)
        for n, tasks in sorted(by_count.items())
    ]
