"""Per-file pydantic parse with Harbor's own models: TrialResult for each trial's
result.json (the way goose's reporter reads a job), or with ``--trajectories`` Trajectory for
each trial's agent/trajectory.json.

Runs in Harbor's environment (Python >= 3.12, ``pip install harbor``). Called by
``benchmarks/run.py`` and ``bench_trajectories.py``; prints one JSON line:
``{"seconds": [...], "files": N, "ok": N, "failed": N, "harbor": "0.26.0"}``.

    HARBOR_PYTHON benchmarks/harbor_pydantic.py ROOT [--repeats 1] [--trajectories]
"""

from __future__ import annotations

import argparse
import json
import time
from importlib.metadata import version
from pathlib import Path

from harbor.models.trajectories.trajectory import Trajectory
from harbor.models.trial.result import TrialResult


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("root", type=Path)
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--trajectories", action="store_true")
    a = ap.parse_args()
    if a.trajectories:
        files, model = sorted(a.root.glob("*/*/agent/trajectory.json")), Trajectory
    else:  # trial files (job files are one up)
        files, model = sorted(a.root.glob("*/*/result.json")), TrialResult
    seconds, ok, failed = [], 0, 0
    for _ in range(a.repeats):
        ok = failed = 0
        t = time.perf_counter()
        for f in files:
            try:
                model.model_validate_json(f.read_bytes())
                ok += 1
            except Exception:  # a file Harbor's model rejects still cost a parse
                failed += 1
        seconds.append(time.perf_counter() - t)
    out = {"seconds": seconds, "files": len(files), "ok": ok, "failed": failed}
    print(json.dumps({**out, "harbor": version("harbor")}))


if __name__ == "__main__":
    main()
