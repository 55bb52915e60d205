"""RunSpec -> a Harbor ``JobConfig`` (Harbor 0.26's own schema, ``harbor job schema``).

Only the fields evalkit decides are written; Harbor fills in its defaults, and the
launcher records Harbor's resolved view (``harbor run -c FILE --print-config``) in the
manifest. Secrets never appear: variables listed in ``pass_env`` are passed as
``${NAME}`` templates that Harbor resolves from its own environment at run time.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from evalkit.launch.spec import IMPORT_PATH_RE, RunSpec, is_task_dir

JOB_CONFIG_KEYS = frozenset(
    {
        "job_name",
        "jobs_dir",
        "n_attempts",
        "timeout_multiplier",
        "agent_timeout_multiplier",
        "verifier_timeout_multiplier",
        "agent_setup_timeout_multiplier",
        "environment_build_timeout_multiplier",
        "n_concurrent_trials",
        "quiet",
        "retry",
        "environment",
        "agents",
        "datasets",
        "tasks",
    }
)


TIMEOUT_KEYS = (
    "timeout_multiplier",
    "agent_timeout_multiplier",
    "verifier_timeout_multiplier",
    "agent_setup_timeout_multiplier",
    "environment_build_timeout_multiplier",
)


def _slug(text: str) -> str:
    s = re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-._")
    return s or "x"


def default_job_name(spec: RunSpec, settings_digest: str) -> str:
    """``<agent>__<model>__<digest8>``: the same settings give the same job (resume)."""
    model = spec.model.split("/", 1)[-1] if spec.model else "nomodel"
    return (
        f"{_slug(spec.agent_label)[:40]}__{_slug(model)[:40]}__{settings_digest.split(':')[-1][:8]}"
    )


def build_job_config(
    spec: RunSpec, job_name: str, jobs_dir: Path, per_path: dict[Path, list[str]]
) -> dict[str, Any]:
    """The Harbor job config for ``spec`` (paths made absolute; exact task names)."""
    agent: dict[str, Any] = {}
    if spec.agent:
        agent["name"] = spec.agent
    else:
        agent["import_path"] = spec.agent_import_path
    if spec.model:
        agent["model_name"] = spec.model
    if spec.agent_kwargs:
        agent["kwargs"] = dict(spec.agent_kwargs)
    if spec.pass_env:
        agent["env"] = {name: "${" + name + "}" for name in spec.pass_env}

    env: dict[str, Any] = {}
    if IMPORT_PATH_RE.match(spec.env):
        env["import_path"] = spec.env
    else:
        env["type"] = spec.env

    retry: dict[str, Any] = {"max_retries": spec.max_retries}
    if spec.retry_include is not None:
        retry["include_exceptions"] = sorted(spec.retry_include)
    if spec.retry_exclude is not None:
        retry["exclude_exceptions"] = sorted(spec.retry_exclude)

    cfg: dict[str, Any] = {
        "job_name": job_name,
        "jobs_dir": str(jobs_dir),
        "n_attempts": spec.attempts,
        "n_concurrent_trials": spec.concurrency,
        "quiet": True,
        "retry": retry,
        "environment": env,
        "agents": [agent],
        "datasets": [],
        "tasks": [],
    }
    # the specific multipliers stay null unless set: Harbor then applies the general one
    cfg.update(
        {k: None if getattr(spec, k) is None else float(getattr(spec, k)) for k in TIMEOUT_KEYS}
    )
    if spec.dataset:
        name, version = spec.dataset.rsplit("@", 1)
        ds: dict[str, Any] = {"name": name, "version": version}
        if spec.tasks:
            ds["task_names"] = list(spec.tasks)
        if spec.exclude_tasks:
            ds["exclude_task_names"] = list(spec.exclude_tasks)
        cfg["datasets"].append(ds)
    for path, names in per_path.items():
        p = path.resolve()
        if is_task_dir(p):
            cfg["tasks"].append({"path": str(p)})
        else:
            cfg["datasets"].append({"path": str(p), "task_names": list(names)})
    return cfg


def harbor_start_command(harbor: str, config_file: Path) -> list[str]:
    """Start a new job from a config file (``-y``: never wait on a prompt)."""
    return [harbor, "run", "-c", str(config_file), "-y"]


def harbor_resume_command(harbor: str, job_dir: Path) -> list[str]:
    """Resume a job through Harbor's own resume (finished trials are kept)."""
    return [harbor, "job", "resume", "-p", str(job_dir)]


def harbor_print_config_command(harbor: str, config_file: Path) -> list[str]:
    return [harbor, "run", "-c", str(config_file), "--print-config"]
