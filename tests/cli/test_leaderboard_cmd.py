"""``evalkit leaderboard`` (table, json, csv; bad values exit 2) and ``compare --exclude-flaky``
on the bundled runs."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from evalkit.cli import app
from tests.factories import ROOT

RUNS = ROOT / "runs"


def run(*args: str):
    return CliRunner().invoke(app, list(args), catch_exceptions=False)


def test_json_ranks_the_scripted_runs_and_leaves_out_the_other_benchmark() -> None:
    r = run("leaderboard", "--runs", str(RUNS), "--by", "job", "-f", "json", "--draws", "300")
    assert r.exit_code == 0, r.output
    rows = json.loads(r.stdout)
    assert [x["run"] for x in rows] == ["scripted-candidate", "scripted-baseline"]
    assert rows[0]["rank"] == 1 and rows[0]["n_tasks"] == 12 and rows[0]["n_trials"] == 60
    assert rows[0]["score"] == 0.75  # 45 of 60 attempts pass (tests/compare: same runs)
    assert abs(sum(rows[0]["p_rank"]) - 1) < 1e-9
    assert "skillsbench-minimax-claude-code" in r.stderr
    # integrity counts from the detectors: the scripted agent never runs a test
    assert rows[0]["tampered_passes"] == 0 and rows[0]["green_fails"] == 0
    assert rows[0]["passes_unverified"] == rows[0]["n_passes"] == 45


def test_table_and_csv() -> None:
    r = run("leaderboard", "--runs", str(RUNS), "--draws", "200")
    assert r.exit_code == 0, r.output
    assert "12 shared tasks" in r.stdout and "tier 1" in r.stdout
    r = run(
        "leaderboard", "--runs", str(RUNS), "-f", "csv", "--metric", "pass_at_1", "--draws", "200"
    )
    assert r.exit_code == 0
    header = r.stdout.splitlines()[0].split(",")
    assert header[:4] == ["run", "score", "ci_low", "ci_high"]


def test_bad_values_exit_2(tmp_path) -> None:
    assert run("leaderboard", "--runs", str(RUNS), "--by", "model").exit_code == 2
    assert run("leaderboard", "--runs", str(RUNS), "--metric", "nope").exit_code == 2
    assert run("leaderboard", "--runs", str(tmp_path / "missing")).exit_code == 2


def test_compare_exclude_flaky_lists_the_tasks_in_compare_json() -> None:
    r = run(
        "compare", "scripted-baseline", "scripted-candidate", "--runs", str(RUNS),
        "--exclude-flaky", "--json", "-",
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert data["excludedTasks"] and "rename-extensions" in data["excludedTasks"]
    assert data["pairedTasks"] == 12 - len(data["excludedTasks"])
    assert f"Left out {len(data['excludedTasks'])} flaky" in r.stderr
    cand = data["integrity"]["candidate"]  # over the compared (non-flaky) tasks' trials
    assert cand["passesWithoutVerification"] == cand["nPasses"] > 0
    assert data["integrity"]["baseline"]["tamperedPasses"] == 0
