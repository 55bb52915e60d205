"""The nightly report on a nightly-shaped history, against a load of the same tree.

Generates (or reuses) a history with gen_nightly.py, then, each in a fresh process with its
own evalkit cache, measures in one run: ``evalkit.load`` of the tree with an empty cache and
cached (the yardstick), and ``evalkit report nightly`` with an empty cache and cached: wall
time, peak RSS (the process and the report kernel it waited for) and the HTML size.

    python benchmarks/bench_report.py --jobs 40 --tasks 500 --attempts 5   # 100k trials
    python benchmarks/bench_report.py --tree DIR --rounds 2 --python PATH --json out.json

``--python``: the interpreter of another evalkit checkout, to measure it in the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
LOAD = "import sys, evalkit; r = evalkit.load(sys.argv[1], run='job', progress=False); print(r)"
REPORT = "from evalkit.cli import main; main()"


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """Wall seconds, peak RSS (GB, the process and every child it waited for), stderr."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"failed ({proc.returncode}): {' '.join(cmd)}\n{err[-2000:]}")
    return wall, usage.ru_maxrss / 1024**2, err


def one_round(python: str, tree: Path, work: Path, params: list[str]) -> dict[str, float]:
    """Load cold, load cached, report cold, report cached: each with a fresh cache dir."""
    env = dict(os.environ)
    out: dict[str, float] = {}
    for what, cmd in (
        ("load", [python, "-c", LOAD, str(tree)]),
        ("report", [python, "-c", REPORT, "report", "nightly", "--runs", str(tree),
                    "--out", str(work / "reports"), *params]),
    ):  # fmt: skip
        env["EVALKIT_CACHE_DIR"] = str(work / f"cache-{what}")
        shutil.rmtree(env["EVALKIT_CACHE_DIR"], ignore_errors=True)
        for state in ("empty", "cached"):
            wall, rss, err = timed(cmd, env)
            out[f"{what}_{state}_s"], out[f"{what}_{state}_rss_gb"] = wall, rss
            split = re.search(r"execute ([\d.]+) s, export ([\d.]+) s", err)
            if split:  # the report's own split: notebook execution, HTML export
                out[f"{what}_{state}_execute_s"] = float(split.group(1))
                out[f"{what}_{state}_export_s"] = float(split.group(2))
    html = sorted((work / "reports").glob("*.html"))
    out["html_mb"] = html[-1].stat().st_size / 1024**2 if html else float("nan")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    ap.add_argument("--tree", type=Path, help="an existing runs folder (else one is generated)")
    ap.add_argument("--jobs", type=int, default=20)
    ap.add_argument("--tasks", type=int, default=100)
    ap.add_argument("--attempts", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--python", action="append", default=None, help="interpreter(s) to measure")
    ap.add_argument(
        "--param", "-p", nargs=2, action="append", default=[], metavar=("NAME", "VALUE")
    )
    ap.add_argument("--json", type=Path)
    a = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="evalkit-bench-report-"))
    tree = a.tree
    if tree is None:
        tree = work / "runs"
        subprocess.run([sys.executable, str(BENCH / "gen_nightly.py"), str(tree), "--jobs", str(a.jobs),
                        "--tasks", str(a.tasks), "--attempts", str(a.attempts)], check=True,
                       stdout=subprocess.DEVNULL)  # fmt: skip
    params = [x for name, value in a.param for x in ("-p", name, value)]
    pythons = a.python or [sys.executable]
    print(f"tree {tree}; load average {os.getloadavg()[0]:.1f}", flush=True)
    results: dict[str, list[dict[str, float]]] = {p: [] for p in pythons}
    try:
        for r in range(a.rounds):
            for py in pythons:  # interleaved: machine load hits every interpreter alike
                res = one_round(py, tree, work / f"w{pythons.index(py)}", params)
                results[py].append(res)
                print(f"round {r + 1} {py}: " + ", ".join(f"{k} {v:.2f}" for k, v in res.items()), flush=True)  # fmt: skip
    finally:
        print(f"load average {os.getloadavg()[0]:.1f}")
        shutil.rmtree(work, ignore_errors=True)
    if a.json:
        a.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
