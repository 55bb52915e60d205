"""``evalkit run --plan summary.json``: a Hold's plan becomes follow-up job(s) with the
candidate's settings, whose trials join the candidate run (fake Harbor, no Docker)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import polars as pl
import pytest
import typer
from typer.testing import CliRunner

import evalkit
from evalkit.launch import RunSpec, run
from evalkit.launch.cli import run_command
from evalkit.launch.followup import FollowUpError, followup_specs

PLAN = {"alpha": 2, "beta": 2, "gamma-x": 4}


@pytest.fixture
def app() -> typer.Typer:
    a = typer.Typer()
    a.command("run")(run_command)
    a.command("noop")(lambda: None)
    return a


@pytest.fixture
def candidate(dataset: Path, tmp_path: Path, fake_harbor: Path) -> Path:
    """A finished candidate job (one attempt per task) and a summary whose plan holds."""
    root = tmp_path / "runs"
    spec = RunSpec(
        agent="oracle", paths=[dataset], attempts=1, runs_root=root, job_name="cand",
        agent_kwargs={"seed": 3}, timeout_multiplier=1.5,
    )  # fmt: skip
    run(spec, progress=False, check_environment=False)
    summary = {"candidate": {"label": "x", "jobs": ["cand"]}, "plan": {"attempts_per_task": PLAN}}
    (tmp_path / "summary.json").write_text(json.dumps(summary))
    return root


def test_specs_copy_the_candidate_and_group_by_attempts(candidate: Path, tmp_path: Path) -> None:
    summary = json.loads((tmp_path / "summary.json").read_text())
    specs = followup_specs(summary, candidate)
    assert [(s.attempts, list(s.tasks)) for s in specs] == [
        (2, ["alpha", "beta"]),
        (4, ["gamma-x"]),
    ]
    for s in specs:
        assert s.agent == "oracle" and s.agent_kwargs == {"seed": 3}
        assert s.timeout_multiplier == 1.5 and s.runs_root == candidate
        assert s.job_name.startswith("cand__plan-")
    assert followup_specs(summary, candidate)[0].job_name == specs[0].job_name  # stable name


def test_dry_run_shows_exactly_the_plan(
    app: typer.Typer, candidate: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the machine's Docker is not under test here: a dry run with a reachable engine
    checks = sys.modules["evalkit.launch.preflight"]  # the module, not the same-named function
    monkeypatch.setattr(checks, "check_docker", lambda *a, **k: None)
    before = sorted(p.name for p in candidate.iterdir())
    res = CliRunner().invoke(
        app,
        ["run", "--plan", str(tmp_path / "summary.json"), "--runs", str(candidate), "--dry-run"],
    )
    assert res.exit_code == 0, res.output
    assert res.output.count("# Harbor job config") == 2
    assert '"n_attempts": 2' in res.output and '"n_attempts": 4' in res.output
    assert '"gamma-x"' in res.output
    assert sorted(p.name for p in candidate.iterdir()) == before  # nothing written


def test_followup_trials_join_the_candidate_run(candidate: Path, tmp_path: Path) -> None:
    summary = json.loads((tmp_path / "summary.json").read_text())
    for s in followup_specs(summary, candidate):
        run(s, progress=False, check_environment=False)
    runs = evalkit.load(candidate, progress=False)
    t = runs.trials.filter(pl.col("job_name").str.starts_with("cand"))
    assert t["run"].n_unique() == 1  # the candidate's run label: one run in the next analysis
    per_task = dict(t.group_by("task_name").len().iter_rows())
    assert per_task == {"alpha": 3, "beta": 3, "gamma-x": 5}
    # the same plan again: complete, no duplicate attempt
    for s in followup_specs(summary, candidate):
        again = run(s, progress=False, check_environment=False)
        assert again.options["launch"]["action"] == "complete"


def test_no_plan_or_no_candidate_is_a_clear_error(
    app: typer.Typer, candidate: Path, tmp_path: Path
) -> None:
    with pytest.raises(FollowUpError, match="no plan"):
        followup_specs({"candidate": {"jobs": ["cand"]}, "plan": None}, candidate)
    with pytest.raises(FollowUpError, match="manifest"):
        followup_specs(
            {"candidate": {"jobs": ["other"]}, "plan": {"attempts_per_task": PLAN}}, candidate
        )
    (tmp_path / "bad.json").write_text("{")
    res = CliRunner().invoke(
        app, ["run", "--plan", str(tmp_path / "bad.json"), "--runs", str(candidate)]
    )
    assert res.exit_code == 2 and "cannot read" in res.output
