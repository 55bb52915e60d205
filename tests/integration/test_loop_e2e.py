"""The nightly loop end to end with real Docker and Harbor on the smoke tasks: a scripted
baseline; a weaker candidate (nop: breaks what the baseline solves) that the loop stops
with Don't ship; a stronger scripted candidate whose loop is interrupted (Ctrl-C: a job that
loads), then rerun with the same settings (resumed, not duplicated), and on a Hold the plan
is run as follow-up job(s) whose trials join the candidate before the gate decides again."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import evalkit
from evalkit.launch import STATE_FILE, RunSpec, run
from evalkit.launch.loop import nightly_loop

pytestmark = pytest.mark.integration
SMOKE = Path(__file__).resolve().parents[2] / "benchmarks" / "smoke-tasks"
TASKS = sorted(p.name for p in SMOKE.iterdir() if (p / "task.toml").is_file())
SCRIPTED = "evalkit_scripted.agent:ScriptedAgent"


@pytest.fixture(scope="module")
def runs_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("loop-runs")


def _spec(runs_root: Path, name: str, **kw: object) -> RunSpec:
    base = {"paths": [SMOKE], "attempts": 1, "concurrency": 4, "runs_root": runs_root}
    return RunSpec(**{**base, "job_name": name, **kw})  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def baseline(tier: str, runs_root: Path) -> Path:
    run(_spec(runs_root, "baseline", agent_import_path=SCRIPTED, model="scripted/baseline"),
        progress=False)  # fmt: skip
    return runs_root / "baseline"


def test_weaker_candidate_is_stopped(baseline: Path, runs_root: Path, tmp_path: Path) -> None:
    res = nightly_loop(
        _spec(runs_root, "weaker", agent="nop"), "baseline", out=tmp_path, progress=False
    )
    assert res.verdict == "Don't ship" and res.exit_code == 2
    s = json.loads(res.summary_path.read_text())
    assert s["gates"]["ship"]["losses"] > 0 and s["plan"] is None


@pytest.mark.skipif(
    os.environ.get("EVALKIT_INTEGRATION_LONG") != "1",
    reason="long (Ctrl-C, resume, plan, follow-up job, second look through real Harbor): "
    "set EVALKIT_INTEGRATION_LONG=1; not yet seen to pass end to end in one run",
)
def test_stronger_candidate_interrupted_resumed_planned_decided(
    baseline: Path, runs_root: Path, tmp_path: Path
) -> None:
    job = runs_root / "stronger"
    cmd = [
        sys.executable, "-c", "from evalkit.cli import main; main()", "loop",
        "--baseline", "baseline", "--agent-import-path", SCRIPTED, "--model",
        "scripted/candidate", "--path", str(SMOKE), "-k", "1", "-n", "4", "--runs",
        str(runs_root), "--job-name", "stronger", "--out", str(tmp_path), "--no-progress",
    ]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 240
    while len(list(job.glob("*/result.json"))) < 3 and proc.poll() is None:
        assert time.monotonic() < deadline, "no trial result in 240 s"
        time.sleep(0.2)
    assert proc.poll() is None, proc.communicate()[0]
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=180)
    assert proc.returncode == 130, out
    assert json.loads((job / STATE_FILE).read_text())["state"] == "interrupted"
    partial = evalkit.load(job, progress=False, cache=False)
    assert 1 <= partial.trials.height < len(TASKS)

    spec = _spec(runs_root, "stronger", agent_import_path=SCRIPTED, model="scripted/candidate")
    res = nightly_loop(spec, "baseline", out=tmp_path, follow_plan=True, progress=False)
    assert res.launches[0]["action"] == "resume"
    main = evalkit.load(job, progress=False, cache=False).trials
    assert main.height == len(TASKS) and main["task_name"].n_unique() == len(TASKS)
    # first look: the candidate fixes one task and breaks none at one attempt: Hold
    first = res.looks[0]
    assert first["gates"]["ship"]["verdict"] == "Hold: not enough evidence"
    planned = first["plan"]["attempts_per_task"]
    assert planned and len(res.launches) > 1 and len(res.looks) == 2
    # the plan ran as follow-up job(s): exactly the planned attempts, joined to the candidate
    follow = res.candidate_jobs[1:]
    assert follow and all(p.name.startswith("stronger__plan-") for p in follow)
    got: dict[str, int] = {}
    for p in follow:
        for r in p.glob("*/result.json"):
            t = json.loads(r.read_text())["task_name"]
            got[t] = got.get(t, 0) + 1
    assert got == planned
    second = res.looks[1]
    assert set(second["candidate"]["jobs"]) == {p.name for p in res.candidate_jobs}
    assert second["candidate"]["paired"]["n_trials"] == len(TASKS) + sum(planned.values())
    # the second look decides or holds with a new plan (on 12 smoke tasks "Ship it" needs 8
    # wins and the baseline leaves only 4 unsolved: only Don't ship can decide here)
    assert res.verdict == second["gates"]["ship"]["verdict"]
    assert res.verdict != "Hold: not enough evidence" or second["plan"] is not None
    assert res.exit_code == {"Ship it": 0, "Don't ship": 2}.get(res.verdict, 1)
