"""``evalkit compare`` and ``evalkit bundle`` through typer's CliRunner on fixture runs."""

from __future__ import annotations

import json
import shutil

import pytest
from typer.testing import CliRunner

import evalkit.cli.compare_cmd  # noqa: F401  (registers the commands)
from evalkit.cli.app import app
from tests.conftest import HARBOR, OPENCLAW

runner = CliRunner()
OPUS = "openclaw-gateway__claude-opus-4-6__persistence"
SONNET = "openclaw-gateway__claude-sonnet-4-6__persistence"


def run(*args: str):
    return runner.invoke(app, list(args), catch_exceptions=False)


def test_compare_prints_a_readable_comparison():
    r = run("compare", OPUS, SONNET, "--runs", str(HARBOR))
    assert r.exit_code == 0, r.output
    out = r.output
    assert f"A: {OPUS}  (9 job(s), 9 trials, 3 tasks, attempts/task 1-6)" in out
    assert "config: several variables changed: model" in out
    assert "Tasks: 2 shared (1 comparable), 1 only in A, 0 only in B" in out
    assert (
        "not comparable: harbor/heartbeat-status-watcher (task changed (checksum differs))" in out
    )
    assert "both not pass" in out and "only B passes (fixed)" in out
    assert "Paired figures, B - A over 1 comparable task(s):" in out
    assert "No meaningful comparison" in out  # 1 comparable task
    assert "ship gate (lam=2, alpha=0.05, tau=0.1): Hold: not enough evidence" in out
    assert "shipping needs >= 8 wins" in out
    assert "regression guard: merge" in out
    assert "decision: hold" in out


def test_gate_exit_codes(tmp_path):
    # Hold -> 1
    r = run("compare", OPUS, SONNET, "--runs", str(HARBOR), "--gate")
    assert r.exit_code == 1
    # the K = 5 job vs itself split is not possible by name; use two single-trial jobs where
    # A passes and B fails: 11-41-23 (heartbeat pass) vs 17-02-55 (heartbeat fail, other
    # checksum) with --checksums ignore -> 1 loss of 1 solved: rho = 1 > tau -> Don't ship (2)
    r = run(
        "compare",
        "2026-05-26__11-41-23",
        "2026-05-26__17-02-55",
        "--runs",
        str(OPENCLAW),
        "--checksums",
        "ignore",
        "--gate",
    )
    assert r.exit_code == 2, r.output
    assert "Don't ship" in r.output
    # B fixes it: Hold (one win is not evidence) -> 1; with alpha so loose that p = 2/3 < alpha
    # and lam = 1 (p = 1/2): Ship it -> 0
    args = ["compare", "2026-05-26__17-02-55", "2026-05-26__11-41-23", "--runs", str(OPENCLAW)]
    assert run(*args, "--checksums", "ignore", "--gate").exit_code == 1
    r = run(*args, "--checksums", "ignore", "--gate", "--lambda", "1", "--gate-alpha", "0.6")
    assert r.exit_code == 0, r.output
    assert "Ship it" in r.output


def test_json_file_and_stdout(tmp_path):
    f = tmp_path / "compare.json"
    r = run("compare", OPUS, SONNET, "--runs", str(HARBOR), "--json", str(f))
    assert r.exit_code == 0
    j = json.loads(f.read_text())
    assert j["decision"] == "hold" and j["pairedTasks"] == 1
    assert j["onlyInA"] == ["harbor/long-running-refresh-token-cache"]
    r = run("compare", OPUS, SONNET, "--runs", str(HARBOR), "--json", "-")
    assert json.loads(r.stdout)["meanRewardDelta"] == 0.0


def test_verbose_lists_tasks():
    r = run("compare", OPUS, SONNET, "--runs", str(HARBOR), "-v")
    assert "Per task" in r.output and "harbor/long-running-refresh-token-cache" in r.output
    assert "partial -> -" in r.output


def test_two_folders_as_two_runs(tmp_path):
    a, b = tmp_path / "before", tmp_path / "after"
    shutil.copytree(OPENCLAW / "2026-05-26__15-34-24", a / "2026-05-26__15-34-24")
    shutil.copytree(OPENCLAW / "2026-05-26__17-27-40", b / "2026-05-26__17-27-40")
    r = run("compare", str(a), str(b))
    assert r.exit_code == 0, r.output
    assert "A: before" in r.output and "B: after" in r.output
    assert "config: one variable changed: model" in r.output


def test_errors_exit_2():
    r = run("compare", OPUS, "no-such-run", "--runs", str(HARBOR))
    assert r.exit_code == 2 and "no run or job named" in r.output
    assert run("compare", "a", "b", "--runs", "/nonexistent/evalkit").exit_code == 2


def test_bundle_command(tmp_path):
    out = tmp_path / "bundle.md"
    r = run(
        "bundle",
        "2026-05-14__12-27-32__hermes-telegram-mirror-drop",
        "2026-05-26__01-59-53",
        "hermes-telegram-mirror-drop",
        "--runs",
        str(OPENCLAW),
        "--out",
        str(out),
    )
    assert r.exit_code == 0, r.output
    md = out.read_text()
    assert md.startswith("# Evidence bundle: hermes-telegram-mirror-drop")
    assert "## First divergence" in md
    r = run("bundle", OPUS, SONNET, "harbor/buffered-log-course-correct", "--runs", str(HARBOR))
    assert r.exit_code == 0 and "## Attempts" in r.stdout
    r = run("bundle", OPUS, SONNET, "nope", "--runs", str(HARBOR))
    assert r.exit_code == 2


@pytest.mark.parametrize("flag", ["--help"])
def test_help(flag):
    r = run("compare", flag)
    assert "--gate" in r.output and "--json" in r.output
