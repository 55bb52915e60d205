"""Peak memory of parsing 1,000,000 trajectory steps, against the size of the frames it makes.

Generates one job of ``--trials`` trials whose ATIF trajectories repeat the steps of the
self-contained ATIF fixtures up to ``--steps`` steps in all, then, in a fresh process, loads
it (cache off) and reads ``runs.steps`` and ``runs.tool_calls``. Prints the process's peak
RSS growth during the parse (VmHWM, reset before it) beside the frames' own size (Polars'
``estimated_size``) and their ratio.

    .venv/bin/python benchmarks/bench_steps_memory.py [--steps 1000000] [--trials 500] [--work DIR]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).parent))

import gen_harbor

PROBE = """
import json, re, sys, evalkit
def hwm():
    return int(re.search(r"VmHWM:\\s+(\\d+)", open("/proc/self/status").read()).group(1)) / 1024
def reset():
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
runs = evalkit.load(sys.argv[1], cache=False, progress=False)
_ = runs.trials
reset()
before = hwm()
steps, calls = runs.steps, runs.tool_calls
print(json.dumps({"peak_growth_mb": hwm() - before, "steps": steps.height, "tool_calls": calls.height,
                  "frames_mb": (steps.estimated_size() + calls.estimated_size()) / 1024**2}))
"""


def _step_pool() -> list[dict]:
    """Every step of the self-contained ATIF fixtures (tool calls and observations kept)."""
    steps = []
    for p in gen_harbor._atif_mains():
        steps.extend(orjson.loads(p.read_bytes()).get("steps") or [])
    return [s for s in steps if isinstance(s, dict)]


def generate(root: Path, n_steps: int, n_trials: int) -> None:
    """One job folder: ``n_trials`` trials sharing ``n_steps`` steps, one main trajectory each."""
    pool = _step_pool()
    template = orjson.loads(gen_harbor._atif_mains()[0].read_bytes())
    job = root / "2026-01-01__00-00-00"
    job.mkdir(parents=True)
    per = n_steps // n_trials
    for t in range(n_trials):
        steps = [{**pool[(t * per + i) % len(pool)], "step_id": i + 1} for i in range(per)]
        td = job / f"task-{t:05d}__{t:07d}"
        (td / "agent").mkdir(parents=True)
        doc = {**template, "steps": steps}
        (td / "agent" / "trajectory.json").write_bytes(orjson.dumps(doc))
        (td / "result.json").write_text(json.dumps({"task_name": f"task-{t:05d}"}))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=1_000_000)
    ap.add_argument("--trials", type=int, default=500)
    ap.add_argument("--work", type=Path)
    a = ap.parse_args()
    work = a.work or Path(tempfile.mkdtemp(prefix="evalkit-steps-memory-"))
    root = work / "runs"
    try:
        if not root.exists():
            generate(root, a.steps, a.trials)
        out = subprocess.run([sys.executable, "-c", PROBE, str(root)], check=True,
                             capture_output=True, text=True).stdout  # fmt: skip
        got = json.loads(out.strip().splitlines()[-1])
        got["ratio"] = got["peak_growth_mb"] / got["frames_mb"]
        print(json.dumps(got, indent=1))
    finally:
        if a.work is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
