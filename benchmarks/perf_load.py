"""Loader measurements for benchmarks/run.py: floors, cold / warm / incremental loads,
trajectories and peak memory, all in this process, interleaved (one round runs every
contender once; medians over rounds), so machine load hits them alike.

Peak memory per operation is the growth of this process's peak RSS (VmHWM, reset through
/proc/self/clear_refs before each operation), i.e. what the operation itself needed on top
of what was already resident.
"""

from __future__ import annotations

import contextlib
import gc
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import orjson

import evalkit
from evalkit.load.steps.table import build_trajectories

ROOT = Path(__file__).resolve().parents[1]


def rss_kb() -> int:
    """Current resident set size (kB)."""
    return _status("VmRSS")


def _status(key: str) -> int:
    try:
        m = re.search(rf"{key}:\s+(\d+)", Path("/proc/self/status").read_text())
        return int(m.group(1)) if m else 0
    except OSError:
        return 0


def _reset_peak() -> bool:
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def timed(fn: Callable[[], object]) -> tuple[float, float | None]:
    """(wall seconds, peak RSS growth in MB or None when the OS cannot tell)."""
    gc.collect()
    base = rss_kb()
    can = _reset_peak()
    t = time.perf_counter()
    fn()
    dt = time.perf_counter() - t
    peak = _status("VmHWM") if can else 0
    return dt, ((peak - base) / 1024 if can and peak else None)


@contextlib.contextmanager
def cache_dir(path: Path, fresh: bool = False) -> Iterator[Path]:
    """Point evalkit's cache at ``path`` (emptied first when ``fresh``)."""
    if fresh:
        shutil.rmtree(path, ignore_errors=True)
    old = os.environ.get("EVALKIT_CACHE_DIR")
    os.environ["EVALKIT_CACHE_DIR"] = str(path)
    try:
        yield path
    finally:
        if old is None:
            os.environ.pop("EVALKIT_CACHE_DIR", None)
        else:
            os.environ["EVALKIT_CACHE_DIR"] = old


def result_files(root: Path) -> list[str]:
    return sorted(str(p) for p in root.glob("*/*/result.json"))


def read_floor(files: list[str]) -> None:
    """The floor: read every file once and orjson.loads it, nothing else."""
    for f in files:
        with open(f, "rb") as fh:
            orjson.loads(fh.read())


class Rounds:
    """Interleaved rounds: every contender runs once per round; medians at the end."""

    def __init__(self) -> None:
        self.t: dict[str, list[float]] = {}
        self.mb: dict[str, list[float]] = {}

    def run(self, name: str, fn: Callable[[], object]) -> None:
        dt, mb = timed(fn)
        self.t.setdefault(name, []).append(dt)
        if mb is not None:
            self.mb.setdefault(name, []).append(mb)

    def med(self, name: str) -> float:
        return statistics.median(self.t[name])

    def peak(self, name: str) -> float | None:
        return max(self.mb[name]) if self.mb.get(name) else None

    def summary(self) -> dict[str, dict]:
        return {
            k: {"median_s": self.med(k), "runs_s": v, "peak_mb": self.peak(k)}
            for k, v in self.t.items()
        }


def measure_loads(root: Path, repeats: int, work: Path) -> dict[str, dict]:
    """floor / cold (empty cache, writes it) / cold without cache / warm (whole-load result
    stored) / warm from the per-job tables (no whole-load result)."""
    files = result_files(root)
    cache = work / "cache-loads"
    r = Rounds()
    n = 0

    def load(**kw: object) -> None:
        nonlocal n
        n = evalkit.load(root, progress=False, **kw).trials.height

    with cache_dir(cache):  # warm-up: imports, page cache, first-call costs
        read_floor(files)
        load(cache=False)
    for _ in range(repeats):
        r.run("floor", lambda: read_floor(files))
        with cache_dir(cache, fresh=True):
            r.run("cold", load)
            r.run("warm", load)
            shutil.rmtree(cache / "v1" / "loads", ignore_errors=True)
            r.run("warm_jobs", load)
        r.run("cold_nocache", lambda: load(cache=False))
    assert n == len(files), (n, len(files))
    out = r.summary()
    out["files"] = {"n": len(files), "bytes": sum(os.path.getsize(f) for f in files)}
    return out


def trajectory_files(root: Path) -> list[str]:
    return sorted(str(p) for p in root.glob("*/*/agent/*.json"))


def _harbor_trajectory_parse() -> Callable[[bytes], object] | None:
    """Harbor's pydantic ``Trajectory.model_validate_json`` when Harbor is importable here."""
    try:
        from harbor.models.trajectories.trajectory import Trajectory  # type: ignore
    except ImportError:
        return None
    return Trajectory.model_validate_json


def measure_trajectories(
    root: Path, repeats: int, work: Path, harbor_python: str | None = None
) -> dict[str, dict]:
    """Trajectories, interleaved in one run: the floor (read + orjson.loads every
    trajectory file), the cold parse (build_trajectories, cache off), Harbor's pydantic
    parse of the main files (here when importable, else in ``harbor_python``, its
    interpreter start and imports excluded), and ``evalkit.load(root).steps`` a second
    time with the cache on and nothing changed (the normal API)."""
    with cache_dir(work / "cache-traj", fresh=True):
        trials = evalkit.load(root, progress=False, cache=False).trials
    files = trajectory_files(root)
    mains = [f for f in files if f.endswith("/agent/trajectory.json")]
    pydantic = _harbor_trajectory_parse()
    r = Rounds()
    steps = 0

    def parse() -> None:
        nonlocal steps
        steps = build_trajectories(trials, cache=False, progress=False).steps.height

    def harbor() -> None:
        for f in mains:
            with open(f, "rb") as fh:
                data = fh.read()
            with contextlib.suppress(Exception):  # a rejected file still cost a parse
                pydantic(data)  # type: ignore[misc]

    def second_load() -> None:
        _ = evalkit.load(root, progress=False).steps

    read_floor(files)
    parse()
    with cache_dir(work / "cache-traj-warm", fresh=True):
        _ = evalkit.load(root, progress=False).steps  # the first load writes the caches
        for _ in range(repeats):
            r.run("traj_floor", lambda: read_floor(files))
            r.run("traj_parse", parse)
            r.run("traj_second_load", second_load)
            if pydantic is not None:
                r.run("traj_harbor_pydantic", harbor)
            elif harbor_python:
                _harbor_round(r, harbor_python, root)
    out = r.summary()
    out["files"] = {
        "n": len(files),
        "bytes": sum(os.path.getsize(f) for f in files),
        "steps": steps,
        "harbor_pydantic": "measured"
        if "traj_harbor_pydantic" in out
        else "harbor not importable (pass --harbor-python)",
    }
    return out


def _harbor_round(r: Rounds, python: str, root: Path) -> None:
    """One round of Harbor's Trajectory parse in Harbor's own interpreter."""
    import perf_peers

    got = perf_peers.pydantic_parse(python, root, 1, trajectories=True)
    if "error" in got:
        raise SystemExit(f"Harbor's pydantic parse failed: {got['error']}")
    r.t.setdefault("traj_harbor_pydantic", []).extend(got["seconds"])


def measure_incremental(job: Path, repeats: int, work: Path, add: int = 100) -> dict[str, dict]:
    """A cached job gains ``add`` trials: reload time vs a cold load of the same job."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import gen_harbor

    cache = work / "cache-incr"
    r = Rounds()
    before = sum(1 for q in job.iterdir() if q.is_dir())
    with cache_dir(cache, fresh=True):
        evalkit.load(job, progress=False)
        for k in range(repeats):
            with cache_dir(work / "cache-incr-cold", fresh=True):
                r.run("job_cold", lambda: evalkit.load(job, progress=False))
            gen_harbor.add_trials(job, add, seed=1000 + k, max_result_kb=16, atif=True)
            got: list[evalkit.Runs] = []
            r.run("job_plus", lambda got=got: got.append(evalkit.load(job, progress=False)))
            assert got[0].trials.height == before + add
            for p in job.glob(f"added-{1000 + k:03d}-*"):
                shutil.rmtree(p)
            evalkit.load(job, progress=False)  # back to the cached state (not timed)
            r.run("job_warm", lambda: evalkit.load(job, progress=False))
    return r.summary()


def rss_subprocess(root: Path, work: Path) -> dict[str, float]:
    """Peak RSS (MB) of a fresh process that loads ``root`` (trials frame only, no cache),
    and of one that only imports evalkit (the interpreter + libraries share)."""
    probe = (
        "import re, sys, evalkit\n"
        "if sys.argv[1] != '-':\n"
        "    evalkit.load(sys.argv[1], cache=False, progress=False)\n"
        "s = open('/proc/self/status').read()\n"
        "print(int(re.search(r'VmHWM:\\s+(\\d+)', s).group(1)))\n"
    )
    env = {**os.environ, "EVALKIT_CACHE_DIR": str(work / "cache-rss")}
    out = {}
    for name, arg in (("import_only", "-"), ("load", str(root))):
        p = subprocess.run(
            [sys.executable, "-c", probe, arg], capture_output=True, text=True, env=env
        )
        out[name] = int(p.stdout.strip() or 0) / 1024 if p.returncode == 0 else float("nan")
    return out


def scratch(work: Path | None) -> Path:
    if work is not None:
        work.mkdir(parents=True, exist_ok=True)
        return work
    return Path(tempfile.gettempdir()) / "evalkit-bench"
