"""RunSpec validation: every problem at once, names (never values) of missing keys, job
folders that cannot leave the runs root, exact task selection."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.launch.spec import (
    RunSpec,
    job_dir_for,
    missing_keys,
    resolve_tasks,
    select_tasks,
    validate,
)


def kinds(problems: list) -> list[str]:
    return [p.kind for p in problems]


def test_valid_spec_has_no_problem(dataset: Path, tmp_path: Path) -> None:
    spec = RunSpec(agent="oracle", paths=[dataset], runs_root=tmp_path / "runs")
    assert validate(spec, environ={}) == []


def test_every_problem_is_reported_at_once(tmp_path: Path) -> None:
    spec = RunSpec(
        agent="claude-code",
        agent_import_path="x:Y",
        model="no-slash",
        attempts=0,
        concurrency=0,
        timeout_multiplier=0,
        job_name="-bad",
        pass_env=["OK_NAME", "not a name"],
        runs_root=tmp_path,
    )
    probs = validate(spec, environ={})
    text = "\n".join(map(str, probs))
    for needle in ("exactly one of agent", "provider/model", "dataset (name@version) or paths", "attempts", "concurrency",
                   "timeout_multiplier", "invalid job name", "not environment variable names", "OK_NAME"):  # fmt: skip
        assert needle in text, needle
    assert len(probs) >= 9


def test_missing_provider_keys_are_named_and_values_never_shown(dataset: Path) -> None:
    env = {"DATABRICKS_HOST": "https://example.invalid", "OPENAI_API_KEY": "sk-secret-value-123456"}
    spec = RunSpec(agent="goose", model="databricks/dbrx", paths=[dataset])
    probs = validate(spec, environ=env)
    assert kinds(probs) == ["keys"]
    assert "DATABRICKS_TOKEN" in probs[0].message and "DATABRICKS_HOST" not in probs[0].message
    assert "sk-secret" not in str(probs) and "example.invalid" not in str(probs)
    assert missing_keys("google", {"GEMINI_API_KEY": "x"}) == []
    assert missing_keys("google", {}) == ["GOOGLE_API_KEY or GEMINI_API_KEY"]
    assert missing_keys("scripted", {}) == [] and missing_keys("unknown-provider", {}) == []


def test_model_rules(dataset: Path) -> None:
    ok = ["anthropic/claude-sonnet-4-6", "openrouter/openai/gpt-5", "scripted/baseline"]
    for m in ok:
        assert not [
            p
            for p in validate(
                RunSpec(agent="nop", model=m, paths=[dataset]),
                environ={"ANTHROPIC_API_KEY": "k", "OPENROUTER_API_KEY": "k"},
            )
        ]
    assert any(
        "needs a model" in p.message
        for p in validate(RunSpec(agent="codex", paths=[dataset]), environ={})
    )
    assert not validate(RunSpec(agent_import_path="pkg.mod:Agent", paths=[dataset]), environ={})


@pytest.mark.parametrize("name", ["..", "a/b", "../x", "", " x", ".hidden", "x y"])
def test_job_names_that_could_escape_are_refused(name: str, tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        job_dir_for(tmp_path, name)


def test_symlinked_job_folder_cannot_leave_the_runs_root(tmp_path: Path) -> None:
    root = tmp_path / "runs"
    root.mkdir()
    (root / "evil").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(ValueError, match="not directly inside"):
        job_dir_for(root, "evil")
    assert job_dir_for(root, "good.job-1") == (root / "good.job-1").resolve()


def test_task_selection_is_exact(dataset: Path) -> None:
    per_path, probs = resolve_tasks(
        RunSpec(agent="oracle", paths=[dataset], tasks=["a*", "gamma-?"], exclude_tasks=["alp*"])
    )
    assert probs == [] and per_path == {dataset: ["gamma-x"]}
    per_path, probs = resolve_tasks(RunSpec(agent="oracle", paths=[dataset / "beta"]))
    assert per_path == {dataset / "beta": ["beta"]}
    _, probs = resolve_tasks(RunSpec(agent="oracle", paths=[dataset], tasks=["zeta"]))
    assert "zeta" in probs[0].message
    _, probs = resolve_tasks(RunSpec(agent="oracle", paths=[dataset.parent / "missing"]))
    assert "does not exist" in probs[0].message
    assert select_tasks(["a", "b"], [], ["b"]) == ["a"]


def test_effective_timeouts_fill_in_the_general_multiplier() -> None:
    spec = RunSpec(
        agent="oracle", dataset="d@1", timeout_multiplier=2.0, verifier_timeout_multiplier=0.5
    )
    t = spec.effective_timeouts()
    assert t == {
        "timeout_multiplier": 2.0,
        "agent_timeout_multiplier": 2.0,
        "verifier_timeout_multiplier": 0.5,
        "agent_setup_timeout_multiplier": 2.0,
        "environment_build_timeout_multiplier": 2.0,
    }
