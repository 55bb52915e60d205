"""Speed of build_trajectories against the read floor (not collected by pytest).

    .venv/bin/python benchmarks/bench_atif_tree.py [--rep N] [--runs K]

Lays the ATIF fixture tree (tests/fixtures/atif: claude-code, terminus-2, openhands, oracle,
examples, hermes; continuation and summarization files next to their main file; non-ATIF
lists included) out as Harbor trial folders, ``--rep`` copies of it, then times, interleaved
and best of ``--runs``:

* floor: read every trajectory file's bytes and ``orjson.loads`` them, twice;
* parse: ``build_trajectories(trials, cache=False, progress=False)`` (frames included).

``--harbor`` adds the Harbor fixture runs (tests/fixtures/harbor: 109 trials, 11 of them
with a trajectory; every trial folder is looked at, the floor counts only the trajectory
files), so the whole fixture tree is loaded.

The figure quoted in docs/trajectories.md is parse / floor: best against best, and the
median of the ratios of the interleaved pairs (less sensitive to one lucky run).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import orjson
import polars as pl

from evalkit.load.steps.table import build_trajectories

FIX = Path(__file__).parents[1] / "tests" / "fixtures" / "atif"
HARBOR = FIX.parent / "harbor"


def fixture_mains() -> list[list[tuple[Path, str]]]:
    """Each main ATIF fixture with its continuation / summarization siblings, as
    (source file, name in agent/) lists; native logs and siblings alone are skipped."""
    mains = []
    for f in sorted(FIX.rglob("*.json")):
        b = f.name
        if (
            "native" in f.parts
            or ".cont-" in b
            or ".summarization-" in b
            or b.endswith(".traces.json")
        ):
            continue
        files = [(f, "trajectory.json")]
        if b.endswith("trajectory.json"):
            pre = b[: -len("trajectory.json")]
            files += [(g, g.name[len(pre) :]) for g in f.parent.glob(pre + "trajectory.*.json")]
        mains.append(files)
    return mains


def lay_out(root: Path, rep: int) -> pl.DataFrame:
    mains = fixture_mains()
    rows = []
    for r in range(rep):
        for i, files in enumerate(mains):
            td = root / f"job{r % 10}" / f"trial{r}_{i}"
            (td / "agent").mkdir(parents=True)
            for src, name in files:
                shutil.copy(src, td / "agent" / name)
            rows.append((f"{r}_{i}", str(td), f"job{r % 10}", str(td.parent)))
    return pl.DataFrame(rows, schema=["trial_id", "trial_dir", "job_id", "job_dir"], orient="row")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rep", type=int, default=1)
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--harbor", action="store_true", help="add the Harbor fixture runs")
    a = ap.parse_args()
    root = Path(tempfile.mkdtemp())
    try:
        trials = lay_out(root, a.rep)
        files = [str(p) for p in root.rglob("*.json")]
        if a.harbor:
            import evalkit

            h = evalkit.load(str(HARBOR), cache=False, progress=False).trials
            h = h.with_columns(  # as evalkit.load passes them (result.json totals included)
                pl.col("trial_dir").map_elements(os.path.dirname, pl.String).alias("job_dir")
            )
            trials = pl.concat([trials, h], how="diagonal_relaxed")
            files += [str(p) for p in HARBOR.rglob("agent/trajectory*.json")]
        nbytes = sum(os.path.getsize(f) for f in files)

        def floor() -> float:
            t = time.perf_counter()
            for _ in range(2):
                for f in files:
                    with open(f, "rb") as fh:
                        orjson.loads(fh.read())
            return time.perf_counter() - t

        def parse() -> float:
            t = time.perf_counter()
            build_trajectories(trials, cache=False, progress=False)
            return time.perf_counter() - t

        floor(), parse()  # warm the page cache and imports
        fl, pa = [], []
        for _ in range(a.runs):
            fl.append(floor())
            pa.append(parse())
        f2, p = min(fl), min(pa)
        pair = statistics.median(x / y for x, y in zip(pa, fl, strict=True))
        tf = build_trajectories(trials, cache=False, progress=False)
        print(
            f"trials={trials.height} files={len(files)} bytes={nbytes / 1e6:.2f}MB "
            f"steps={tf.steps.height} calls={tf.tool_calls.height} | "
            f"floor (read+orjson.loads x2)={f2 * 1e3:.1f}ms parse={p * 1e3:.1f}ms "
            f"parse/floor2x={p / f2:.2f} (median of pairs {pair:.2f}) parse/floor1x={2 * p / f2:.2f}"
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
