"""The bundled scripted agent's pure parts (agents/evalkit_scripted/plan.py, atif.py):
deterministic seeded episodes, common random numbers across variants, the behaviours the
analyses look for, and internally consistent ATIF. (The Harbor class itself runs in the
integration tier, where Harbor's validator checks every trajectory.)"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
AGENTS = ROOT / "agents"
SMOKE = ROOT / "benchmarks" / "smoke-tasks"

sys.path.insert(0, str(AGENTS))
from evalkit_scripted.atif import Trajectory  # noqa: E402
from evalkit_scripted.plan import (  # noqa: E402
    MISSING_TOOL_CMD,
    family_dirs,
    load_task,
    make_plan,
    split_blocks,
)

TASKS = {p.name: load_task(p) for p in sorted(SMOKE.iterdir()) if (p / "task.toml").is_file()}


def test_smoke_tasks_are_understood() -> None:
    assert len(TASKS) >= 10
    for task in TASKS.values():
        assert task.blocks and set(task.pass_rates) == {"baseline", "candidate"}
    assert TASKS["sum-column"].outputs == ["/app/total.txt"] and TASKS["sum-column"].inputs == [
        "/app/sales.csv"
    ]
    assert TASKS["project-skeleton"].inputs == []
    assert split_blocks("#!/bin/bash\n# c\nset -e\n\na\nb\n\n\nc\n") == ["a\nb", "c"]


def test_episodes_are_deterministic() -> None:
    t = TASKS["fix-script"]
    a = make_plan(t, variant="baseline", attempt=3, seed=1)
    b = make_plan(t, variant="baseline", attempt=3, seed=1)
    assert a == b
    assert make_plan(t, variant="baseline", attempt=4, seed=1).draw != a.draw


def test_common_random_numbers_across_variants() -> None:
    for task in TASKS.values():
        for attempt in range(1, 30):
            base = make_plan(task, variant="baseline", attempt=attempt)
            cand = make_plan(task, variant="candidate", attempt=attempt)
            assert base.draw == cand.draw
            if task.pass_rates["candidate"] >= task.pass_rates["baseline"] and base.succeed:
                assert cand.succeed


def test_success_rates_follow_the_declared_pass_rates() -> None:
    n = 400
    for task in TASKS.values():
        for variant in ("baseline", "candidate"):
            wins = sum(make_plan(task, variant=variant, attempt=i).succeed for i in range(1, n + 1))
            assert abs(wins / n - task.pass_rates[variant]) < 0.1, (task.name, variant)


def test_failing_episodes_exercise_the_analyses() -> None:
    traits: Counter[str] = Counter()
    modes: Counter[str] = Counter()
    for task in TASKS.values():
        for i in range(1, 40):
            plan = make_plan(task, variant="baseline", attempt=i, stall_rate=0.1)
            traits.update(plan.traits)
            modes[plan.mode] += 1
            if plan.mode == "retry_loop":
                cmds = [a.command for a in plan.actions if a.command]
                assert cmds.count(MISSING_TOOL_CMD) >= 3
            if plan.mode != "stall":
                assert plan.actions[-1].command is None  # ends with a final message
    for trait in (
        "retry_loop",
        "premature_completion",
        "unverified_claim",
        "hedge",
        "skipped_diagnostic",
        "verify",
        "explore",
        "give_up",
    ):
        assert traits[trait] > 0, trait
    assert set(modes) == {"solve", "retry_loop", "partial", "guess", "give_up", "stall"}


def test_partial_episode_claims_a_file_it_never_wrote() -> None:
    task = TASKS["hello-file"]
    plan = next(p for i in range(1, 500) if (p := make_plan(task, attempt=i)).mode == "partial")
    writes = " ".join(a.command for a in plan.actions if a.command)
    assert "/tmp/hello.txt" in writes and "> /app/hello.txt" not in writes
    assert "/app/hello.txt" in plan.actions[-1].message


def test_trajectory_metrics_add_up() -> None:
    traj = Trajectory("sess", "1.0.0", "scripted/baseline", "baseline")
    traj.add_system()
    traj.add_user("do it")
    s1 = traj.add_agent("look", "ls")
    traj.observe(s1, "a\nb\n", 0)
    s2 = traj.add_agent("fail", "false")
    traj.observe(s2, "", 1)
    traj.add_agent("done", None)
    d = traj.to_dict()
    assert [s["step_id"] for s in d["steps"]] == [1, 2, 3, 4, 5]
    agent_steps = [s for s in d["steps"] if s["source"] == "agent"]
    fm = d["final_metrics"]
    assert fm["total_prompt_tokens"] == sum(s["metrics"]["prompt_tokens"] for s in agent_steps)
    assert fm["total_completion_tokens"] == sum(
        s["metrics"]["completion_tokens"] for s in agent_steps
    )
    assert fm["total_cached_tokens"] == sum(s["metrics"]["cached_tokens"] for s in agent_steps)
    assert fm["total_cost_usd"] == pytest.approx(sum(s["metrics"]["cost_usd"] for s in agent_steps))
    obs = d["steps"][3]["observation"]["results"][0]
    assert obs["source_call_id"] == d["steps"][3]["tool_calls"][0]["tool_call_id"]
    assert obs["content"].endswith("[exit code 1]") and obs["extra"] == {"exit_code": 1}
    assert "tool_calls" not in d["steps"][4] and d["schema_version"].startswith("ATIF-v1.")


def test_agent_module_is_importable_by_path_only_in_harbors_env() -> None:
    # evalkit never imports harbor; the agent module does, lazily from the package
    import evalkit_scripted

    assert evalkit_scripted.__version__
    assert "harbor" not in sys.modules or "evalkit_scripted.agent" not in sys.modules
    assert Path(evalkit_scripted.__file__).parent.parent == AGENTS


def test_follow_up_jobs_number_attempts_with_their_candidate(tmp_path: Path) -> None:
    """A plan's follow-up job continues the candidate's attempts (it must not re-play them)."""
    for name in ("cand", "cand__plan-ab12-k2", "cand__plan-ab12-k4", "candidate", "other"):
        (tmp_path / name).mkdir()
    follow = tmp_path / "cand__plan-ab12-k4"
    family = [tmp_path / n for n in ("cand", "cand__plan-ab12-k2", "cand__plan-ab12-k4")]
    assert family_dirs(follow) == family
    assert family_dirs(tmp_path / "cand") == family
    assert family_dirs(tmp_path / "other") == [tmp_path / "other"]
