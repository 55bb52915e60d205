"""What a user expects of the CLI: names resolved only when unambiguous (and said), unknown
values rejected with the valid ones (exit 2), no progress bars in pipes, help at 80
columns, and the task-version flag."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from evalkit.cli.app import app
from tests.conftest import HARBOR
from tests.factories import ROOT, nightly, skills_ab

RUNS = ROOT / "runs"


def run(*args: str, **kw):
    return CliRunner().invoke(app, list(args), catch_exceptions=False, **kw)


def test_prefix_resolves_only_when_unambiguous_and_says_which():
    r = run("compare", "scripted-b", "scripted-c", "--runs", str(RUNS), "--no-steps")
    assert r.exit_code == 0, r.output
    assert "A: 'scripted-b' -> scripted-baseline (the only name it starts)" in r.stderr
    assert "B: 'scripted-c' -> scripted-candidate" in r.stderr
    assert "A: scripted-baseline" in r.stdout
    r = run("compare", "scripted", "scripted-c", "--runs", str(RUNS), "--no-steps")
    assert r.exit_code == 2
    assert "'scripted' matches 2 names" in r.stderr and "scripted-baseline" in r.stderr


def test_unknown_run_lists_the_closest_names():
    r = run("compare", "scripted-baselin", "scripted-candidat", "--runs", str(RUNS))
    assert r.exit_code == 0  # unique prefixes
    r = run("compare", "scriptd-baseline", "scripted-candidate", "--runs", str(RUNS))
    assert r.exit_code == 2
    assert "no run or job named 'scriptd-baseline'; closest: scripted-baseline" in r.stderr


def test_show_and_task_reject_unknown_values():
    r = run("show", "scripted-baseline", "--runs", str(RUNS), "--status", "passed")
    assert r.exit_code == 2
    assert "--status: 'passed' is not one of: pass, partial, fail, timeout" in r.stderr
    r = run("show", "scripted-b", "--runs", str(RUNS), "--status", "fail")
    assert r.exit_code == 0
    assert "job: 'scripted-b' -> scripted-baseline (the only job it starts)" in r.stderr
    r = run("show", "scripted", "--runs", str(RUNS))
    assert r.exit_code == 2 and "matches 2 jobs" in r.stderr
    r = run("show", "scriptd-baseline", "--runs", str(RUNS))
    assert r.exit_code == 2 and "closest: scripted-baseline" in r.stderr
    r = run("task", "scripted-baseline", "sum-colum", "--runs", str(RUNS))
    assert r.exit_code == 2 and "closest: sum-column" in r.stderr


def test_checksums_flag(tmp_path):
    r = run("compare", "scripted-baseline", "scripted-candidate", "--runs", str(RUNS),
            "--checksums", "skip")  # fmt: skip
    assert r.exit_code == 2
    assert "--checksums: 'skip' is not one of: exclude, ignore" in r.stderr
    no, yes = skills_ab(tmp_path)
    r = run("compare", str(no), str(yes), "--no-steps")
    assert r.exit_code == 0, r.output
    assert "No meaningful comparison" in r.stdout
    assert "the configurations differ in nothing else" in r.stdout
    assert "--checksums ignore" in r.stdout
    r = run("compare", str(no), str(yes), "--no-steps", "--checksums", "ignore")
    assert "Paired figures, B - A over 12 comparable task(s)" in r.stdout
    assert "only B passes (fixed)       2" in r.stdout


def test_no_progress_bars_in_piped_output(tmp_path):
    """A folder big enough for the trial bar (>= 200 trials) and an empty cache: piped
    output has no bar, no carriage return."""
    runs = nightly(tmp_path / "runs", jobs=2, tasks=22, attempts=5, seed=3, traj_share=0.2)
    env = dict(os.environ, PYTHONIOENCODING="utf-8", EVALKIT_CACHE_DIR=str(tmp_path / "cache"))
    p = subprocess.run(
        [sys.executable, "-c", "from evalkit.cli import main; main()", "compare",
         "nightly-2026-06-01", "nightly-2026-06-02", "--runs", str(runs)],
        capture_output=True, text=True, env=env, timeout=300, check=False, cwd=ROOT,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert "Paired figures" in p.stdout
    for stream in (p.stdout, p.stderr):
        assert "\r" not in stream and "it/s" not in stream and "trial/s" not in stream


@pytest.mark.parametrize(
    "args",
    [(), ("compare",), ("report",), ("show",), ("list",), ("task",), ("bundle",), ("rm",)],
)
def test_help_fits_80_columns(args):
    env = {"COLUMNS": "80", "TERM": "dumb"}
    r = run(*args, "--help", env=env, terminal_width=80)
    assert r.exit_code == 0
    lines = r.output.splitlines()
    assert max(len(x) for x in lines) <= 80, max(lines, key=len)
    if not args:  # each command's summary is one sentence, not a docstring cut mid-line
        box = [x for x in lines if x.startswith("│ ") and x[2] != " "]
        assert len(box) >= 8
        for x in box:
            assert x.rstrip("│ ").endswith((".", ",", ":", "-", "(", ")")) or len(x) > 70, x


def test_compare_runs_on_the_real_fixture_folder():
    r = run("compare", "openclaw-gateway__claude-opus-4-6__pers", "openclaw-gateway__claude-sonnet-4-6__pers",
            "--runs", str(HARBOR), "--no-steps")  # fmt: skip
    assert r.exit_code == 2  # opus: __persistence and __persistent-runtime-tasks
    assert "matches 2 names" in r.stderr and "__persistent-runtime-tasks" in r.stderr
    r = run("compare", "openclaw-gateway__claude-opus-4-6__persistence",
            "openclaw-gateway__claude-sonnet-4-6__persistent-r", "--runs", str(HARBOR), "--no-steps")  # fmt: skip
    assert r.exit_code == 0, r.output
    assert "-> openclaw-gateway__claude-sonnet-4-6__persistent-runtime-tasks" in r.stderr


@pytest.mark.parametrize("width", [80, 120])
def test_every_command_help_rewraps_to_the_terminal(width):
    """No paragraph of any command's help keeps the docstring's line breaks: a line of the
    description is followed by another of the same paragraph only when the next word would
    not have fitted on it."""
    names = [c.name or c.callback.__name__ for c in app.registered_commands]
    assert len(names) >= 12
    for name in names:
        r = run(name, "--help", env={"COLUMNS": str(width), "TERM": "dumb"}, terminal_width=width)
        assert r.exit_code == 0, name
        lines = r.output.splitlines()
        head = [x.rstrip() for x in lines[: next(i for i, x in enumerate(lines) if "╭" in x)]]
        for x, nxt in itertools.pairwise(head[3:]):
            if x and nxt:
                assert len(x) + len(nxt.split()[0]) + 1 > width - 2, (name, x)
