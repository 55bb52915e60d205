"""Generate large Harbor job trees by replicating the real fixture trials.

Every generated trial is a real result.json from tests/fixtures/harbor (skillsbench
claude-code trials and the openclaw dev-build trials) with fresh ids, task names, trial
names, start times and rewards drawn per task; a share of the trials also carries a real
ATIF trajectory (hermes-gateway, from the same fixtures) so trajectory parsing can be
measured too. The job folders get a config.json and a final result.json of Harbor's legacy
format.

    python benchmarks/gen_harbor.py OUT --trials 10000 --jobs 4 --attempts 5 [--seed 0]
        [--max-result-kb 16] [--atif]

``--max-result-kb`` keeps only the templates up to that size (the fixtures hold a few
180-260 KB openclaw result.json files with long verifier output; without them the written
files average ~5 KB, what a typical Harbor trial writes). ``--atif`` also draws trajectories
from the self-contained ATIF fixtures (tests/fixtures/atif: claude-code, terminus-2,
openhands, oracle; 1-84 KB) instead of only the small hermes ones. :func:`add_trials` appends
trials to an existing job folder (the incremental-reload benchmark).
"""

from __future__ import annotations

import argparse
import random
import shutil
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parents[1]
FIX = ROOT / "tests" / "fixtures" / "harbor"
ATIF = ROOT / "tests" / "fixtures" / "atif"
T0 = datetime(2026, 6, 1, tzinfo=UTC)
MODELS = ("anthropic/claude-sonnet-4-6", "openai/gpt-5-mini")


def _atif_mains() -> list[Path]:
    """Self-contained ATIF trajectories (no continuation or subagent files needed)."""
    out = []
    for p in sorted(ATIF.rglob("*.json")):
        if "native" in p.parts or ".cont-" in p.name or ".summarization-" in p.name:
            continue
        raw = p.read_bytes()
        if b"continued_trajectory_ref" in raw or b"subagent_traject" in raw:
            continue
        try:
            d = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue
        if isinstance(d, dict) and str(d.get("schema_version", "")).startswith("ATIF-"):
            out.append(p)
    return out


def _templates(
    max_result_kb: float | None = None, atif: bool = False
) -> tuple[list[dict], list[Path]]:
    results = []
    for p in sorted(FIX.rglob("result.json")):
        if max_result_kb is not None and p.stat().st_size > max_result_kb * 1024:
            continue
        try:
            d = orjson.loads(p.read_bytes())
        except orjson.JSONDecodeError:
            continue
        if isinstance(d, dict) and "trial_name" in d and isinstance(d.get("config"), dict):
            results.append(d)
    trajs = sorted(FIX.rglob("agent/trajectory.json"))
    if atif:
        trajs = sorted(set(trajs) | set(_atif_mains()))
    return results, trajs


def _trial(
    jd: Path,
    rng: random.Random,
    results: list[dict],
    trajs: list[Path],
    task: str,
    start: datetime,
    model: str,
    p_pass: float,
    traj_share: float,
) -> None:
    """Write one trial folder: a template result.json with fresh ids, maybe a trajectory."""
    job_name = jd.name
    d = orjson.loads(orjson.dumps(rng.choice(results)))
    short = uuid.UUID(int=rng.getrandbits(128)).hex[:7]
    trial_name = f"{task[:32].rstrip('_-')}__{short}"
    d.update(
        id=str(uuid.UUID(int=rng.getrandbits(128))),
        task_name=task,
        trial_name=trial_name,
        trial_uri=f"file:///jobs/{job_name}/{trial_name}",
        source="bench",
        started_at=start.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
        finished_at=(start + timedelta(seconds=rng.randint(30, 900))).strftime(
            "%Y-%m-%dT%H:%M:%S.%fZ"
        ),
    )
    d["agent_info"] = {
        "name": "claude-code",
        "version": "2.1",
        "model_info": {"name": model.split("/")[1], "provider": model.split("/")[0]},
    }
    if d.get("verifier_result") is not None or rng.random() < 0.9:
        d["verifier_result"] = {"rewards": {"reward": 1.0 if rng.random() < p_pass else 0.0}}
    td = jd / trial_name
    td.mkdir()
    (td / "result.json").write_bytes(orjson.dumps(d, option=orjson.OPT_INDENT_2))
    if trajs and rng.random() < traj_share:
        (td / "agent").mkdir()
        shutil.copyfile(rng.choice(trajs), td / "agent" / "trajectory.json")


def generate(
    out: Path,
    trials: int,
    jobs: int = 4,
    attempts: int = 5,
    seed: int = 0,
    traj_share: float = 0.3,
    max_result_kb: float | None = None,
    atif: bool = False,
) -> Path:
    """Write ``jobs`` job folders with ``trials`` trials in total under ``out``."""
    rng = random.Random(seed)
    results, trajs = _templates(max_result_kb, atif)
    out.mkdir(parents=True, exist_ok=True)
    per_job = max(1, trials // jobs)
    n_tasks = max(1, per_job // attempts)
    tasks = [
        f"task-{i:05d}-{rng.choice(['fix', 'build', 'parse', 'serve', 'port'])}"
        for i in range(n_tasks)
    ]
    difficulty = {t: rng.betavariate(0.5, 0.5) for t in tasks}
    for j in range(jobs):
        job_name = f"bench-job-{j:02d}"
        jd = out / job_name
        jd.mkdir(exist_ok=True)
        model = MODELS[j % 2]
        cfg = {
            "job_name": job_name,
            "jobs_dir": str(out),
            "n_attempts": attempts,
            "timeout_multiplier": 1.0,
            "n_concurrent_trials": 8,
            "agents": [{"name": "claude-code", "model_name": model}],
            "datasets": [{"name": "bench", "version": "1.0"}],
            "environment": {"type": "docker"},
        }
        (jd / "config.json").write_bytes(orjson.dumps(cfg, option=orjson.OPT_INDENT_2))
        count = 0
        for ti, task in enumerate(tasks):
            for a in range(attempts):
                if count >= per_job:
                    break
                start = T0 + timedelta(days=j, seconds=ti * 60 + a * 7)
                p = min(1.0, difficulty[task] + (0.1 if j % 2 else 0.0))
                _trial(jd, rng, results, trajs, task, start, model, p, traj_share)
                count += 1
        res = {
            "id": str(uuid.uuid4()),
            "started_at": (T0 + timedelta(days=j)).strftime("%Y-%m-%dT%H:%M:%S.%f"),
            "finished_at": (T0 + timedelta(days=j, hours=20)).strftime("%Y-%m-%dT%H:%M:%S.%f"),
            "n_total_trials": count,
            "stats": {"n_trials": count, "n_errors": 0, "evals": {}},
        }
        (jd / "result.json").write_bytes(orjson.dumps(res, option=orjson.OPT_INDENT_2))
    return out


def add_trials(
    job_dir: Path,
    n: int,
    seed: int = 1,
    traj_share: float = 0.3,
    max_result_kb: float | None = None,
    atif: bool = False,
) -> None:
    """Append ``n`` trials of new tasks to an existing job folder (job files unchanged)."""
    rng = random.Random(seed)
    results, trajs = _templates(max_result_kb, atif)
    for i in range(n):
        task = f"added-{seed:03d}-{i:05d}"
        start = T0 + timedelta(days=40, seconds=i * 11)
        _trial(job_dir, rng, results, trajs, task, start, MODELS[0], 0.5, traj_share)


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("out", type=Path)
    ap.add_argument("--trials", type=int, default=10_000)
    ap.add_argument("--jobs", type=int, default=4)
    ap.add_argument("--attempts", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--traj-share", type=float, default=0.3)
    ap.add_argument("--max-result-kb", type=float, default=None)
    ap.add_argument("--atif", action="store_true", help="also ATIF fixture trajectories")
    a = ap.parse_args()
    generate(a.out, a.trials, a.jobs, a.attempts, a.seed, a.traj_share, a.max_result_kb, a.atif)
    print(a.out)


if __name__ == "__main__":
    main()
