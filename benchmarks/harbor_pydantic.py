"""Per-file pydantic parse of trial result.json files with Harbor's own TrialResult model.

Runs in Harbor's environment (Python >= 3.12, ``pip install harbor``), the way goose's
reporter reads a job: ``TrialResult.model_validate_json`` on each trial's result.json.
Called by ``benchmarks/run.py``; prints one JSON line:
``{"seconds": [...], "files": N, "ok": N, "failed": N, "harbor": "0.26.0"}``.

    HARBOR_PYTHON benchmarks/harbor_pydantic.py ROOT [--repeats 1]
"""

from __future__ import annotations

import argparse
import json
import time
from importlib.metadata import version
from pathlib import Path

from harbor.models.trial.result import TrialResult


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("root", type=Path)
    ap.add_argument("--repeats", type=int, default=1)
    a = ap.parse_args()
    files = sorted(a.root.glob("*/*/result.json"))  # trial files (job files are one up)
    seconds, ok, failed = [], 0, 0
    for _ in range(a.repeats):
        ok = failed = 0
        t = time.perf_counter()
        for f in files:
            try:
                TrialResult.model_validate_json(f.read_bytes())
                ok += 1
            except Exception:  # a file Harbor's model rejects still cost a parse
                failed += 1
        seconds.append(time.perf_counter() - t)
    out = {"seconds": seconds, "files": len(files), "ok": ok, "failed": failed}
    print(json.dumps({**out, "harbor": version("harbor")}))


if __name__ == "__main__":
    main()
