"""RunSpec -> Harbor JobConfig (0.26 schema field names), exact and secret-free."""

from __future__ import annotations

import json
from pathlib import Path

from evalkit.launch.config import (
    build_job_config,
    default_job_name,
    harbor_resume_command,
    harbor_start_command,
)
from evalkit.launch.spec import JOB_NAME_RE, RunSpec, resolve_tasks

HARBOR_026_JOB_KEYS = {
    "schema_version", "job_name", "jobs_dir", "n_attempts", "install_only", "skip_credential_checks",
    "timeout_multiplier", "agent_timeout_multiplier", "verifier_timeout_multiplier",
    "agent_setup_timeout_multiplier", "environment_build_timeout_multiplier", "debug",
    "n_concurrent_trials", "quiet", "retry", "override_error_policy", "environment", "verifier",
    "metrics", "agents", "user_agent", "datasets", "tasks", "artifacts", "extra_instruction_paths",
    "extra_instructions", "source_jobs",
}  # fmt: skip


def test_local_dataset_config(dataset: Path, tmp_path: Path) -> None:
    spec = RunSpec(
        agent_import_path="evalkit_scripted.agent:ScriptedAgent",
        model="scripted/baseline",
        paths=[dataset],
        tasks=["a*", "beta"],
        attempts=3,
        concurrency=2,
        agent_kwargs={"variant": "candidate", "seed": 7},
        pass_env=["ANTHROPIC_API_KEY"],
        agent_timeout_multiplier=2.0,
        retry_exclude=["B", "A"],
        max_retries=1,
    )
    per_path, _ = resolve_tasks(spec)
    cfg = build_job_config(spec, "job-1", tmp_path / "runs", per_path)
    assert set(cfg) <= HARBOR_026_JOB_KEYS
    assert cfg["datasets"] == [{"path": str(dataset.resolve()), "task_names": ["alpha", "beta"]}]
    assert cfg["tasks"] == []
    assert cfg["agents"] == [
        {
            "import_path": "evalkit_scripted.agent:ScriptedAgent",
            "model_name": "scripted/baseline",
            "kwargs": {"variant": "candidate", "seed": 7},
            "env": {"ANTHROPIC_API_KEY": "${ANTHROPIC_API_KEY}"},
        }
    ]
    assert cfg["n_attempts"] == 3 and cfg["n_concurrent_trials"] == 2 and cfg["quiet"] is True
    assert cfg["timeout_multiplier"] == 1.0 and cfg["agent_timeout_multiplier"] == 2.0
    assert cfg["verifier_timeout_multiplier"] is None  # Harbor then applies the general one
    assert cfg["retry"] == {"max_retries": 1, "exclude_exceptions": ["A", "B"]}
    assert cfg["environment"] == {"type": "docker"}
    assert cfg["jobs_dir"] == str(tmp_path / "runs")
    json.dumps(cfg)  # serialisable


def test_single_task_registry_dataset_and_custom_environment(dataset: Path, tmp_path: Path) -> None:
    spec = RunSpec(agent="oracle", paths=[dataset / "beta"], env="daytona")
    cfg = build_job_config(spec, "j", tmp_path, resolve_tasks(spec)[0])
    assert cfg["tasks"] == [{"path": str((dataset / "beta").resolve())}] and cfg["datasets"] == []
    assert cfg["environment"] == {"type": "daytona"} and cfg["agents"] == [{"name": "oracle"}]
    spec = RunSpec(
        agent="nop",
        dataset="terminal-bench@2.0",
        tasks=["hello-*"],
        exclude_tasks=["x"],
        env="my.env:Env",
    )
    cfg = build_job_config(spec, "j", tmp_path, {})
    assert cfg["datasets"] == [
        {
            "name": "terminal-bench",
            "version": "2.0",
            "task_names": ["hello-*"],
            "exclude_task_names": ["x"],
        }
    ]
    assert cfg["environment"] == {"import_path": "my.env:Env"}


def test_default_job_name_is_valid_and_follows_the_settings() -> None:
    spec = RunSpec(
        agent_import_path="pkg.mod:My Agent!", model="openrouter/openai/gpt-5", dataset="d@1"
    )
    name = default_job_name(spec, "sha256:0123456789abcdef")
    assert JOB_NAME_RE.match(name) and name.endswith("__01234567")
    assert default_job_name(spec, "sha256:0123456789abcdef") == name
    assert default_job_name(spec, "sha256:ffff456789abcdef") != name


def test_commands() -> None:
    assert harbor_start_command("/h", Path("/j/c.json")) == ["/h", "run", "-c", "/j/c.json", "-y"]
    assert harbor_resume_command("/h", Path("/j")) == ["/h", "job", "resume", "-p", "/j"]
