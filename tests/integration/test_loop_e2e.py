"""The nightly loop end to end with real Docker and Harbor on the smoke tasks.

* A scripted baseline, and a weaker candidate (nop: breaks what the baseline solves) that
  the loop stops with Don't ship.
* A stronger scripted candidate against the nop run (the build that solves nothing: on the
  12 smoke tasks the scripted baseline leaves only 4 unsolved at one attempt, and Ship it
  at lam = 2, alpha = 0.05 needs 8 wins, so only a weak baseline leaves room for it). Its
  seed is chosen so one attempt per task gives 7 wins: Hold with a plan. The loop is
  interrupted (Ctrl-C: a job that loads), rerun with the same settings (resumed, not
  duplicated), ``evalkit run --plan summary.json`` runs exactly the planned attempts as
  follow-up job(s), and ``evalkit loop`` again (nothing left to launch) reports the
  candidate with their trials joined and exits with the gate's code: Ship it, 0.
"""

from __future__ import annotations

import json
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
#: one attempt per task wins 7 of 12 against nop (Hold); 2 more flip 4 of the 5 it failed
STRONGER_SEED = 54


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


@pytest.fixture(scope="module")
def weaker(baseline: Path, runs_root: Path, tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("weaker-report")
    return nightly_loop(_spec(runs_root, "weaker", agent="nop"), "baseline", out=out,
                        progress=False)  # fmt: skip


def test_weaker_candidate_is_stopped(weaker) -> None:
    assert weaker.verdict == "Don't ship" and weaker.exit_code == 2
    s = json.loads(weaker.summary_path.read_text())
    assert s["gates"]["ship"]["losses"] > 0 and s["plan"] is None


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-c", "from evalkit.cli import main; main()", *args]


def _loop_cmd(runs_root: Path, out: Path) -> list[str]:
    return _cli(
        "loop", "--baseline", "weaker", "--agent-import-path", SCRIPTED, "--model",
        "scripted/candidate", "--ak", f"seed={STRONGER_SEED}", "--path", str(SMOKE), "-k", "1",
        "-n", "4", "--runs", str(runs_root), "--job-name", "stronger", "--out", str(out),
        "--no-progress",
    )  # fmt: skip


def _interrupt_after(cmd: list[str], job: Path, results: int) -> str:
    """Start ``cmd``, Ctrl-C it once ``results`` trials have a result; its output."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 240
    while len(list(job.glob("*/result.json"))) < results and proc.poll() is None:
        assert time.monotonic() < deadline, "no trial result in 240 s"
        time.sleep(0.2)
    assert proc.poll() is None, proc.communicate()[0]
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=180)
    assert proc.returncode == 130, out
    return out


def _results_per_task(jobs: list[Path]) -> dict[str, int]:
    got: dict[str, int] = {}
    for p in jobs:
        for r in p.glob("*/result.json"):
            t = json.loads(r.read_text())["task_name"]
            got[t] = got.get(t, 0) + 1
    return got


def test_stronger_candidate_interrupted_resumed_planned_decided(
    weaker, runs_root: Path, tmp_path: Path
) -> None:
    job = runs_root / "stronger"
    _interrupt_after(_loop_cmd(runs_root, tmp_path / "interrupted"), job, results=3)
    assert json.loads((job / STATE_FILE).read_text())["state"] == "interrupted"
    partial = evalkit.load(job, progress=False, cache=False)
    assert 1 <= partial.trials.height < len(TASKS)

    # the same settings resume: every task once, nothing duplicated; first look: Hold + plan
    spec = _spec(runs_root, "stronger", agent_import_path=SCRIPTED, model="scripted/candidate",
                 agent_kwargs={"seed": STRONGER_SEED})  # fmt: skip
    res = nightly_loop(spec, "weaker", out=tmp_path / "first", progress=False)
    assert [x["action"] for x in res.launches] == ["resume"]
    main = evalkit.load(job, progress=False, cache=False).trials
    assert main.height == len(TASKS) and main["task_name"].n_unique() == len(TASKS)
    first = res.summary["gates"]["ship"]
    assert (first["verdict"], res.exit_code) == ("Hold: not enough evidence", 1)
    assert first["wins"] == 7 and first["losses"] == 0
    planned = res.plan["attempts_per_task"]
    assert planned and res.plan["p_decide"] > 0

    # the plan as follow-up job(s): exactly the planned attempts, on the planned tasks only
    done = subprocess.run(_cli("run", "--plan", str(res.summary_path), "--runs", str(runs_root),
                               "--no-progress"), capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    follow = sorted(runs_root.glob("stronger__plan-*"))
    assert follow and _results_per_task(follow) == planned

    # the loop again: nothing to launch; the follow-up trials join the candidate; it decides
    out = tmp_path / "second"
    again = subprocess.run(_loop_cmd(runs_root, out), capture_output=True, text=True)
    second = json.loads(next(out.rglob("summary.json")).read_text())
    assert second["candidate"]["jobs"] == [p.name for p in [job, *follow]]
    assert second["candidate"]["paired"]["n_trials"] == len(TASKS) + sum(planned.values())
    assert second["gates"]["ship"]["verdict"] == "Ship it", again.stdout + again.stderr
    assert again.returncode == 0, again.stdout + again.stderr
    assert _results_per_task([job]) == dict.fromkeys(TASKS, 1)
