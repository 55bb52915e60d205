"""Measurements against peers and of the analysis layers, for benchmarks/run.py.

* Harbor's pydantic TrialResult, per file, in Harbor's own environment (subprocess).
* benchmarks/bench_bootstrap.py (evalkit's paired bootstrap vs scipy.stats.bootstrap),
  benchmarks/bench_detectors.py (every detector over N tool calls) and
  benchmarks/gen_nightly.py + ``evalkit report nightly``: run as they are, their own
  output parsed for the figures.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks"
HARBOR_HOWTO = (
    "Harbor needs Python >= 3.12, in its own environment, e.g.\n"
    "  UV_PYTHON_DOWNLOADS=never uv venv --python /root/.pyenv/versions/3.12.1/bin/python3.12 DIR\n"
    "  uv pip install --python DIR/bin/python harbor\n"
    "then pass --harbor-python DIR/bin/python (or set EVALKIT_HARBOR_PYTHON); "
    ".ci/integration.sh sets one up in .ci/work/harbor-venv"
)


def harbor_python(given: str | None) -> str | None:
    """Harbor's interpreter: --harbor-python, $EVALKIT_HARBOR_PYTHON, or the CI venv."""
    for cand in (given, os.environ.get("EVALKIT_HARBOR_PYTHON")):
        if cand:
            return cand
    ci = ROOT / ".ci" / "work" / "harbor-venv" / "bin" / "python"
    return str(ci) if ci.exists() else None


def pydantic_parse(python: str, root: Path, repeats: int = 1, trajectories: bool = False) -> dict:
    """Seconds of per-file ``TrialResult.model_validate_json`` over the trial files of
    ``root`` (``trajectories``: ``Trajectory`` over agent/trajectory.json), import and
    interpreter start excluded, or {"error": ...}."""
    cmd = [python, str(BENCH / "harbor_pydantic.py"), str(root), "--repeats", str(repeats)]
    try:
        p = subprocess.run(
            cmd + (["--trajectories"] if trajectories else []),
            capture_output=True,
            text=True,
            timeout=1800,
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        return {"error": f"{type(e).__name__}: {e}"}
    if p.returncode != 0:
        return {"error": (p.stderr.strip().splitlines() or ["failed"])[-1]}
    return json.loads(p.stdout.strip().splitlines()[-1])


def _run(cmd: list[str], timeout: float = 3600) -> tuple[float, str]:
    t = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    dt = time.perf_counter() - t
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:3])} failed:\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}")
    return dt, p.stdout


def bootstrap(quick: bool) -> dict:
    """bench_bootstrap.py: medians (ms) and the scipy / evalkit ratios it prints."""
    args = ["--repeats", "3", "--resamples", "2000"] if quick else []
    _, out = _run([sys.executable, str(BENCH / "bench_bootstrap.py"), *args])
    res: dict = {"output": out}
    for name, key in (
        (r"scipy BCa / evalkit\s+=\s*([\d.]+)x", "scipy_bca_over_evalkit"),
        (r"scipy percentile / evalkit\s+=\s*([\d.]+)x", "scipy_pct_over_evalkit"),
        (r"scipy percentile / evalkit paired_core = ([\d.]+)x", "scipy_pct_over_paired_core"),
    ):
        m = re.search(name, out)
        res[key] = float(m.group(1)) if m else None
    for label in ("evalkit percentile", "scipy.stats.bootstrap percentile"):
        m = re.search(rf"^{re.escape(label)}\s+([\d.]+)", out, re.M)
        res[f"{label} ms"] = float(m.group(1)) if m else None
    return res


def detectors(calls: int) -> dict:
    """bench_detectors.py over ``calls`` rows: wall and CPU seconds of all detectors."""
    _, out = _run([sys.executable, str(BENCH / "bench_detectors.py"), "--calls", str(calls)])
    m = re.search(r"all detectors .*?: ([\d.]+) s wall, ([\d.]+) s CPU for ([\d,]+) rows", out)
    res: dict = {"output": out, "calls": calls}
    if m:
        res.update(wall_s=float(m.group(1)), cpu_s=float(m.group(2)))
        res["rows"] = int(m.group(3).replace(",", ""))
    return res


def atif_tree(rep: int, runs: int) -> dict:
    """benchmarks/bench_atif_tree.py: the ATIF fixture tree (claude-code, terminus-2,
    openhands, ... with continuations and subagents) x ``rep``; best of ``runs``."""
    script = ROOT / "benchmarks" / "bench_atif_tree.py"
    _, out = _run([sys.executable, str(script), "--rep", str(rep), "--runs", str(runs)])
    res: dict = {"output": out.strip(), "rep": rep}
    for key, pat in (
        ("parse_over_floor", r"parse/floor1x=([\d.]+)"),
        ("parse_ms", r"parse=([\d.]+)ms"),
        ("floor2x_ms", r"floor \(read\+orjson.loads x2\)=([\d.]+)ms"),
        ("mb", r"bytes=([\d.]+)MB"),
        ("steps", r"steps=(\d+)"),
    ):
        m = re.search(pat, out)
        res[key] = float(m.group(1)) if m else None
    return res


def _evalkit_cli() -> list[str]:
    exe = Path(sys.executable).with_name("evalkit")
    return (
        [str(exe)]
        if exe.exists()
        else [sys.executable, "-c", "from evalkit.cli import main; main()"]
    )


def nightly(work: Path, jobs: int, tasks: int, attempts: int) -> dict:
    """gen_nightly.py then ``evalkit report nightly`` twice (empty cache, then warm)."""
    tree = work / f"nightly-{jobs}x{tasks}x{attempts}"
    if not (tree / ".complete").exists():
        shutil.rmtree(tree, ignore_errors=True)
        _run([sys.executable, str(BENCH / "gen_nightly.py"), str(tree), "--jobs", str(jobs),
              "--tasks", str(tasks), "--attempts", str(attempts)])  # fmt: skip
        (tree / ".complete").write_text("")
    cache, out = work / "cache-nightly", work / "reports"
    shutil.rmtree(cache, ignore_errors=True)
    shutil.rmtree(out, ignore_errors=True)
    cmd = [*_evalkit_cli(), "report", "nightly", "--runs", str(tree), "--out", str(out)]
    old = os.environ.get("EVALKIT_CACHE_DIR")
    os.environ["EVALKIT_CACHE_DIR"] = str(cache)
    try:
        first, _ = _run(cmd)
        second, _ = _run(cmd)
    finally:
        if old is None:
            os.environ.pop("EVALKIT_CACHE_DIR", None)
        else:
            os.environ["EVALKIT_CACHE_DIR"] = old
    html = sorted(out.glob("*.html"))
    return {
        "trials": jobs * tasks * attempts,
        "first_s": first,
        "second_s": second,
        "html_kb": html[-1].stat().st_size / 1024 if html else None,
    }
