"""Trajectory targets of issue 17 on a generated tree, in one interleaved run.

    .venv/bin/python benchmarks/bench_trajectories.py [--n 10000] [--rounds 5] [--work DIR]
        [--harbor-python PATH]

Contenders per round (``perf_load.measure_trajectories``): the floor (read + orjson.loads
every trajectory file), the cold parse (``build_trajectories``, cache off), the second
``evalkit.load(root).steps`` with the cache on and nothing changed, and Harbor's pydantic
``Trajectory.model_validate_json`` (in Harbor's own interpreter: ``--harbor-python``,
``$EVALKIT_HARBOR_PYTHON`` or the CI venv). Prints medians and the ratios
that docs/performance.md quotes; ``--json`` writes every figure.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import perf_load
import perf_peers
from run import tree


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--work", type=Path, default=Path(".bench"))
    ap.add_argument("--json", type=Path)
    ap.add_argument("--harbor-python", help="Python of a venv with harbor (default: the CI one)")
    a = ap.parse_args()
    work = perf_load.scratch(a.work)
    root = tree(work, a.n)
    harbor = perf_peers.harbor_python(a.harbor_python)
    res = perf_load.measure_trajectories(root, a.rounds, work, harbor)
    f = res["files"]
    med = {k: v["median_s"] for k, v in res.items() if k != "files"}
    floor = med["traj_floor"]
    print(
        f"{a.n:,} trials: {f['n']:,} trajectory files, {f['bytes'] / 1e6:.1f} MB, {f['steps']:,} steps"
    )
    for k, v in med.items():
        print(f"  {k:24s} {v * 1e3:8.1f} ms  {v / floor:5.2f} x floor")
    print(f"  cold parse / second load: {med['traj_parse'] / med['traj_second_load']:.1f}x")
    if "traj_harbor_pydantic" in med:
        print(
            f"  cold parse / Harbor pydantic: {med['traj_parse'] / med['traj_harbor_pydantic']:.2f}"
        )
    else:
        print(f"  Harbor pydantic: {f['harbor_pydantic']}")
    if a.json:
        a.json.write_text(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
