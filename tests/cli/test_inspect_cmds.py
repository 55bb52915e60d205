"""evalkit.cli.inspect_cmds: ``evalkit list`` (one row per job), ``show`` (a job's header and
one row per trial, ``--status`` filter) and ``task`` (every attempt of one task: rewards,
times, tokens, evidence, error, verifier and agent log tails), each as a table or
json / csv, and how a job or task name that matches nothing, or too much, is answered.

Run through typer's CliRunner over real fixtures: harbor-edges/partial-credit (run-a:
rewards 1, 0.667, 0.333, 1, 0.5, 30 s and 1000 / 200 tokens per trial; run-b) and the
skillsbench no_skills job (17 trials with a timeout, errors and a verifier log).
tests/cli/test_cli_behaviour.py covers prefix resolution and --status values, test_output.py
the runs folder lookup, test_csv.py csv, tests/security the escaping: not repeated here."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

import evalkit
from evalkit.cli import app
from tests.conftest import FIXTURES, SKILLSBENCH_JOB

PARTIAL = FIXTURES / "harbor-edges" / "partial-credit"
SKILLS = SKILLSBENCH_JOB.parent  # the folder holding the no_skills job


def run(*args: str | Path):
    return CliRunner().invoke(app, [str(a) for a in args], catch_exceptions=False)


# -- typos -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("typo", "meant"), [("lst", "list"), ("sho", "show"), ("tsak", "task")])
def test_a_misspelt_command_names_the_one_meant(typo: str, meant: str) -> None:
    r = run(typo, PARTIAL)
    assert r.exit_code == 2 and f"No such command '{typo}'. Did you mean '{meant}'?" in r.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["list", PARTIAL, "--fromat", "json"],
        ["show", "run-a", "--runs", PARTIAL, "--fromat", "json"],
        ["task", "run-a", "alpha", "--runs", PARTIAL, "--fromat", "json"],
    ],
    ids=["list", "show", "task"],
)
def test_a_misspelt_option_is_refused_with_the_right_one(args: list) -> None:
    r = run(*args)
    assert r.exit_code == 2 and "No such option: --fromat" in r.stderr and "--format" in r.stderr
    assert r.stdout == ""


@pytest.mark.parametrize(
    "args",
    [
        ["list", PARTIAL, "-f", "jsn"],
        ["show", "run-a", "--runs", PARTIAL, "-f", "yaml"],
        ["task", "run-a", "alpha", "--runs", PARTIAL, "--format", "CSV"],
    ],
    ids=["list", "show", "task"],
)
def test_an_unknown_format_lists_the_valid_ones(args: list) -> None:
    r = run(*args)
    assert r.exit_code == 2
    assert "--format must be one of table, json, csv, csv-raw" in r.stderr and r.stdout == ""


def test_a_misspelt_status_value_is_refused() -> None:
    r = run("show", "run-a", "--runs", PARTIAL, "--status", "partal")
    assert r.exit_code == 2 and "--status: 'partal' is not one of: pass, partial" in r.stderr


# -- list ------------------------------------------------------------------------------------


def test_list_json_has_one_row_per_job_with_its_counts() -> None:
    rows = {r["job_name"]: r for r in json.loads(run("list", PARTIAL, "-f", "json").stdout)}
    assert sorted(rows) == ["run-a", "run-b"]
    a = rows["run-a"]
    # rewards 1, .667, .333, 1, .5: two passes (reward >= 1), three partial credits
    assert (a["n_trials"], a["tasks"], a["pass"], a["partial"], a["fail"]) == (5, 5, 2, 3, 0)
    assert a["pass_rate"] == pytest.approx(2 / 5)
    assert a["mean_reward"] == pytest.approx((1 + 0.667 + 0.333 + 1 + 0.5) / 5)  # 0.7
    assert a["compute_s"] == pytest.approx(5 * 30.0)
    assert (a["n_input_tokens"], a["n_output_tokens"]) == (5 * 1000, 5 * 200)
    assert a["state"] == "complete" and a["model_name"] == "anthropic/claude-sonnet-4-6"


def test_list_table_shows_short_model_names_and_formatted_figures(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    r = run("list", PARTIAL)
    assert r.exit_code == 0, r.output
    assert f"2 jobs, 10 trials in {PARTIAL}" in r.stdout
    row = next(x for x in r.stdout.splitlines() if "run-a" in x)
    cells = [c.strip() for c in row.strip("│").split("│")]
    # job, state, model (after the last '/'), trials, tasks, k, pass, part, fail, tout,
    # err, inc, pass%, reward, compute (150 s = 2.5 min), tok_in, tok_out, cost
    assert cells == ["run-a", "complete", "claude-sonnet-4-6", "5", "5", "1", "2", "3", "0", "0",
                     "0", "0", "40.0%", "0.7", "2.5m", "5000", "1000", "unknown"]  # fmt: skip
    assert "load error" not in r.stdout


def test_list_csv_is_the_same_rows_as_json() -> None:
    header, *rows = run("list", PARTIAL, "-f", "csv").stdout.splitlines()
    assert header.split(",")[:3] == ["job_name", "state", "run"] and len(rows) == 2


def test_list_reports_load_errors_after_the_table(tmp_path: Path) -> None:
    shutil.copytree(PARTIAL / "run-a", tmp_path / "runs" / "run-a")
    bad = tmp_path / "runs" / "run-a" / "bravo__a1aaaaa" / "result.json"
    bad.write_text("{broken")
    r = run("list", tmp_path / "runs")
    assert r.exit_code == 0, r.output
    assert r.stdout.index("run-a") < r.stdout.index("1 load error(s); see runs.load_errors")
    assert str(bad) in r.stdout.replace("\n", "")
    # machine formats stay parseable: no note mixed in
    assert len(json.loads(run("list", tmp_path / "runs", "-f", "json").stdout)) == 1


# -- show ------------------------------------------------------------------------------------


def test_show_header_sums_the_jobs_trials() -> None:
    r = run("show", "run-a", "--runs", PARTIAL)
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert lines[0] == "run-a  (complete)"
    assert "agent: claude-code   model: anthropic/claude-sonnet-4-6" in lines[1]
    # 5 x 30 s = 2.5 min of compute; every count of a zero outcome is left out
    assert "compute: 2.5m   trials: 5 (declared 5), tasks: 5, attempts/task up to 1" in lines[2]
    assert "outcomes: pass 2, partial 3   pass rate: 40.0%   mean reward: 0.7" in lines[3]
    assert "tokens in/cache/out: 5000 / 0 / 1000   cost: unknown (0/5 trials priced)" in lines[4]
    assert "error kinds" not in r.stdout and r.stderr == ""
    tasks = [x.split("│")[1].strip() for x in lines if x.startswith("│")]
    assert tasks == [
        "harbor/alpha",
        "harbor/bravo",
        "harbor/charlie",
        "harbor/delta",
        "harbor/echo",
    ]


def test_show_lists_error_kinds_and_every_nonzero_outcome() -> None:
    r = run("show", "no_skills", "--runs", SKILLS)
    assert r.exit_code == 0, r.output
    # 17 trials: 6 pass, 4 partial, 4 fail, 1 timeout, 2 errors; 6 / 17 = 35.3 %
    assert "outcomes: pass 6, partial 4, fail 4, timeout 1, error 2   pass rate: 35.3%" in r.stdout
    assert "trials: 17 (declared 425), tasks: 5, attempts/task up to 5" in r.stdout
    assert "error kinds: agent:2, unknown:1, verifier:1" in r.stdout


def test_show_status_keeps_only_that_outcome() -> None:
    rows = json.loads(
        run("show", "run-a", "--runs", PARTIAL, "--status", "partial", "-f", "json").stdout
    )
    assert [(r["trial_name"], r["reward"]) for r in rows] == [
        ("bravo__a1aaaaa", 0.667),
        ("charlie__a2aaaaa", 0.333),
        ("echo__a4aaaaa", 0.5),
    ]
    r = run("show", "no_skills", "--runs", SKILLS, "--status", "timeout", "-f", "json")
    (only,) = json.loads(r.stdout)
    assert only["task_name"] == "earthquake-phase-association" and only["attempt"] == 4
    assert only["error"].startswith("AgentTimeoutError: Agent execution timed out")
    empty = run("show", "run-a", "--runs", PARTIAL, "--status", "error", "-f", "json")
    assert empty.exit_code == 0 and json.loads(empty.stdout) == []


def test_show_takes_a_job_folder_or_id_without_a_note() -> None:
    for key in (PARTIAL / "run-b", _job_id(PARTIAL, "run-b")):
        r = run("show", key, "--runs", PARTIAL, "-f", "json")
        assert r.exit_code == 0, r.output
        assert {x["trial_name"][0] for x in json.loads(r.stdout)} == {"a", "b", "c", "d", "e"}
        assert {x["trial_name"].split("__")[1][0] for x in json.loads(r.stdout)} == {"b"}
        assert r.stderr == ""


def _job_id(root: Path, name: str) -> str:
    jobs = evalkit.load(root, progress=False).jobs
    return jobs.filter(jobs["job_name"] == name)["job_id"][0]


def test_a_name_matching_several_jobs_or_none_exits_2_with_the_candidates() -> None:
    r = run("show", "run-", "--runs", PARTIAL)
    assert r.exit_code == 2 and "'run-' matches 2 jobs: run-a, run-b" in r.stderr
    # Harbor's own job id is shared by both copies of the job
    r = run("show", "11111111-2222-3333-4444-555555555555", "--runs", PARTIAL)
    assert r.exit_code == 2 and "matches 2 jobs" in r.stderr
    r = run("show", "zzzzzz", "--runs", PARTIAL)
    assert r.exit_code == 2 and "No job matching 'zzzzzz'. jobs: run-a, run-b" in r.stderr
    r = run("task", "rn-b", "alpha", "--runs", PARTIAL)
    assert r.exit_code == 2 and "No job matching 'rn-b'. closest: run-b" in r.stderr
    assert r.stdout == ""


# -- task ------------------------------------------------------------------------------------


def test_task_finds_a_registry_task_by_its_bare_name() -> None:
    r = run("task", "run-a", "bravo", "--runs", PARTIAL)
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines()[0] == "bravo in run-a: 1 attempt(s)"
    assert "attempt 1: bravo__a1aaaaa" in r.stdout
    assert "outcome: partial  error kind: none  reward: 0.667  rewards: reward=0.667" in r.stdout
    assert "tokens in/cache/out: 1000 / 0 / 200" in r.stdout
    assert "evidence: trajectory=False reward=True verifier=False" in r.stdout
    full = run("task", "run-a", "harbor/bravo", "--runs", PARTIAL)
    assert full.stdout.replace("harbor/bravo", "bravo") == r.stdout


def test_task_shows_every_attempt_in_order_with_the_verifier_tail() -> None:
    r = run("task", "no_skills", "3d-scan-calc", "--runs", SKILLS, "-n", "2")
    assert r.exit_code == 0, r.output
    assert "3d-scan-calc in no_skills: 5 attempt(s)" in r.stdout
    attempts = [
        x.split("attempt ")[1].split(":")[0]
        for x in r.stdout.splitlines()
        if " attempt " in x and "─" in x
    ]
    assert attempts == ["1", "2", "3", "4", "5"]
    # only 3d-scan-calc__F8Fc7fn has verifier/test-stdout.txt; its last two lines
    assert r.stdout.count("verifier/test-stdout.txt (last 2 lines):") == 1
    tail = r.stdout.split("verifier/test-stdout.txt (last 2 lines):\n")[1].splitlines()
    assert tail[0].strip() == "PASSED ../tests/test_outputs.py::TestOutputs::test_values_correct"
    assert tail[1].strip().startswith("=====") and "2 passed in 0.02s" in tail[1]
    assert len(tail) == 2


def test_task_shows_the_error_of_an_errored_attempt() -> None:
    r = run("task", "no_skills", "pg-essay-to-audiobook", "--runs", SKILLS)
    assert r.exit_code == 0, r.output
    assert "outcome: error  error kind: unknown  reward: -  rewards: -" in r.stdout
    after = r.stdout.split("  error:\n")[1].splitlines()[0]
    assert (
        after
        == "    ValueError: Environment variable 'OPENAI_API_KEY' not found in host environment"
    )


def test_task_shows_the_tail_of_each_agent_log(tmp_path: Path) -> None:
    job = tmp_path / "runs" / "run-a"
    shutil.copytree(PARTIAL / "run-a", job)
    agent = job / "alpha__a0aaaaa" / "agent"
    agent.mkdir()
    (agent / "claude-code.txt").write_text("".join(f"l{i}\n" for i in range(1, 6)))  # 5 x 3 bytes
    (agent / "events.jsonl").write_text('{"e": 1}\n')
    (agent / "blob.bin").write_text("not a log\n")
    r = run("task", "run-a", "alpha", "--runs", tmp_path / "runs", "--tail", "2")
    assert r.exit_code == 0, r.output
    text = r.stdout
    assert "agent/claude-code.txt (15 bytes), last 2 lines:\n    l4\n    l5" in text
    assert "agent/events.jsonl (9 bytes), last 2 lines:" in text
    assert "blob.bin" not in text and "l3" not in text


def test_task_json_is_one_row_per_attempt_without_local_config() -> None:
    r = run("task", "no_skills", "dialogue-parser", "--runs", SKILLS, "-f", "json")
    rows = json.loads(r.stdout)
    assert [x["attempt"] for x in rows] == [1, 2, 3, 4, 5]
    # rewards 0.833, 0.833, 1, 0.5, 0.833 (SOURCES.md: 1.0, 0.833 x3, 0.5)
    assert sorted(x["reward"] for x in rows) == [0.5, 0.833, 0.833, 0.833, 1.0]
    assert "trial_dir" not in rows[0] and "config_json" not in rows[0]
    assert rows[0]["job_name"] == "no_skills" and rows[0]["task_name"] == "dialogue-parser"


def test_an_unknown_task_exits_2_with_the_closest_names() -> None:
    r = run("task", "run-a", "alpah", "--runs", PARTIAL)
    assert (
        r.exit_code == 2 and "No trials of task 'alpah' in run-a. closest: harbor/alpha" in r.stderr
    )
    r = run("task", "run-a", "zzzzzzzz", "--runs", PARTIAL)
    assert r.exit_code == 2
    assert (
        "tasks: harbor/alpha, harbor/bravo, harbor/charlie, harbor/delta, harbor/echo" in r.stderr
    )
    r = run("task", "run-a", "bravo", "--runs", PARTIAL, "-f", "json", "--tail", "x")
    assert r.exit_code == 2 and "--tail" in r.stderr  # not an integer


def test_show_takes_harbors_job_id_without_a_prefix_note() -> None:
    # the id in the job's own result.json is an exact key, not a prefix of the name
    harbor_id = json.loads((SKILLSBENCH_JOB / "result.json").read_text())["id"]
    r = run("show", harbor_id, "--runs", SKILLS, "-f", "json")
    assert r.exit_code == 0, r.output
    assert r.stderr == ""
