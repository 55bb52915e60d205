"""Soak: loads, compares and report sections run while another process changes a job.

    .venv/bin/python benchmarks/soak.py                  # 30 minutes (benchmarks/run.py runs it too)
    .venv/bin/python benchmarks/soak.py --seconds 40     # the CI length (tests/live/test_soak.py)

Local files only, no network. Two jobs come from ``gen_harbor.generate``. A writer process
adds trial folders to the second job, rewrites their result.json in place in two chunks
with a pause (Harbor's ``write_text`` is not atomic) and deletes trial folders, at random
short intervals. Meanwhile this process loops: ``evalkit.load`` with the cache on, a
comparison of the two jobs, and every few rounds the report's first screen and runs table.
Each round checks:

* nothing raised;
* every trial folder present both before and after the load is a trials row or is covered
  by a load error (a folder that appeared or vanished during the load may be either);
* trial ids are unique.

The writer keeps the job at a steady size (at most ``MAX_ADDED`` added folders; then it
rewrites and deletes), so the data a round loads does not grow and memory must stay flat:
the resident size of this process is sampled after every round, and the median of the last
third of the samples may exceed that of the first third by at most ``MAX_GROWTH`` plus
``SLACK_MB`` (:func:`memory_problem`). The figures (thirds, peak, slope in MB per minute
over the last two thirds) are returned with the rounds. Problems are returned, never
raised, so the runner can print them; the test asserts there are none.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

MAX_GROWTH = 0.25
SLACK_MB = 64.0
MAX_ADDED = 100  # added trial folders the writer keeps at most: the job stays a steady size


def _rss_mb() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _trial_dirs(job: Path) -> set[str]:
    try:
        return {str(p) for p in job.iterdir() if "__" in p.name and p.is_dir()}
    except OSError:
        return set()


def _write_in_two_chunks(path: Path, data: bytes, rng: random.Random) -> None:
    with open(path, "wb") as fh:
        fh.write(data[: len(data) // 2])
        fh.flush()
        time.sleep(rng.uniform(0, 0.01))
        fh.write(data[len(data) // 2 :])


def writer(job: str, stop_at: float, seed: int, max_added: int = MAX_ADDED) -> None:
    """Add, rewrite and delete trial folders of ``job`` until ``stop_at`` (time.time()),
    keeping at most ``max_added`` added folders."""
    rng = random.Random(seed)
    jd = Path(job)
    seeds = sorted(_trial_dirs(jd))
    added: list[Path] = []
    n = 0
    while time.time() < stop_at:
        op = rng.random()
        try:
            if not added or (op < 0.45 and len(added) < max_added):
                src = Path(rng.choice(seeds))
                n += 1
                dst = jd / f"soak-{n:05d}__{rng.randrange(16**7):07x}"
                dst.mkdir()
                _write_in_two_chunks(dst / "result.json", (src / "result.json").read_bytes(), rng)
                added.append(dst)
            elif 0.45 <= op < 0.8:
                p = rng.choice(added) / "result.json"
                data = p.read_bytes()
                _write_in_two_chunks(p, data.replace(b'"reward": 0.0', b'"reward": 1.0'), rng)
            else:
                shutil.rmtree(added.pop(rng.randrange(len(added))), ignore_errors=True)
        except OSError:
            pass
        time.sleep(rng.uniform(0, 0.05))


def _accounted(runs: object, stable: set[str]) -> list[str]:
    dirs = set(runs.trials["trial_dir"].drop_nulls().to_list())  # type: ignore[attr-defined]
    errs = [p.rstrip("/") for p in runs.load_errors["path"].drop_nulls().to_list()]  # type: ignore[attr-defined]
    lost = []
    for d in stable - dirs:
        if not any(e == d or e.startswith(d + "/") for e in errs):
            lost.append(d)
    return lost


def memory_figures(samples: list[tuple[float, float]]) -> dict[str, float]:
    """Medians of the first and last third of ``(seconds, rss_mb)`` samples, the peak, and
    the least-squares slope (MB per minute) over the last two thirds (after warm-up)."""
    rss = [m for _, m in samples]
    third = max(1, len(rss) // 3)
    tail = samples[third:] if len(samples) - third >= 2 else samples
    slope = 0.0
    if len(tail) >= 2 and tail[-1][0] > tail[0][0]:
        slope = statistics.linear_regression([t for t, _ in tail], [m for _, m in tail]).slope * 60
    return {
        "rss_mb_first_third": round(statistics.median(rss[:third]), 1),
        "rss_mb_last_third": round(statistics.median(rss[-third:]), 1),
        "rss_mb_peak": round(max(rss), 1),
        "rss_mb_per_min": round(slope, 2),
        "rss_samples": len(rss),
        "rss_mb_by_sixth": [
            round(
                statistics.median(
                    rss[i * len(rss) // 6 : max(i * len(rss) // 6 + 1, (i + 1) * len(rss) // 6)]
                ),
                1,
            )
            for i in range(6)
        ],
    }


def memory_problem(figures: dict[str, float]) -> str | None:
    """The flat-memory rule: the last third's median RSS within ``MAX_GROWTH`` + ``SLACK_MB``
    of the first third's."""
    first, last = figures["rss_mb_first_third"], figures["rss_mb_last_third"]
    if last > first * (1 + MAX_GROWTH) + SLACK_MB:
        return f"memory grew: median RSS {first:.0f} MB -> {last:.0f} MB"
    return None


def run(seconds: float = 1800, trials: int = 200, work: Path | None = None, seed: int = 0) -> dict:
    """Soak for ``seconds``; returns rounds, figures and the problems found."""
    import gen_harbor

    import evalkit
    from evalkit import report
    from evalkit.compare import compare

    base = Path(work or tempfile.mkdtemp(prefix="evalkit-soak-"))
    root = base / "runs"
    shutil.rmtree(root, ignore_errors=True)
    gen_harbor.generate(root, trials=trials, jobs=2, attempts=2, seed=seed)
    os.environ.setdefault("EVALKIT_CACHE_DIR", str(base / "cache"))
    jobs = sorted(p for p in root.iterdir() if p.is_dir())
    live = jobs[-1]
    stop_at = time.time() + seconds
    proc = mp.get_context("spawn").Process(target=writer, args=(str(live), stop_at, seed))
    proc.start()
    problems: list[str] = []
    rss: list[tuple[float, float]] = []
    t0 = time.time()
    rounds = reports = last_trials = 0
    try:
        while time.time() < stop_at:
            rounds += 1
            before = _trial_dirs(live)
            try:
                runs = evalkit.load(root, run="job", progress=False)
                last_trials = runs.trials.height
                after = _trial_dirs(live)
                lost = _accounted(runs, before & after)
                if lost:
                    problems.append(f"round {rounds}: {len(lost)} trial(s) unaccounted: {lost[:3]}")
                if runs.trials["trial_id"].is_duplicated().any():
                    problems.append(f"round {rounds}: duplicate trial ids")
                compare(runs, jobs[0].name, live.name)
                if rounds % 5 == 1:
                    ctx = report.load_context(
                        root, candidate=live.name, baseline=jobs[0].name, run_by="job"
                    )
                    report.answer(ctx).html()
                    report.runs_table(ctx).html()
                    reports += 1
            except Exception as e:  # the point of the soak: any exception is a finding
                where = traceback.extract_tb(e.__traceback__)[-1]
                problems.append(
                    f"round {rounds}: {type(e).__name__}: {e} ({where.filename}:{where.lineno})"
                )
            rss.append((time.time() - t0, _rss_mb()))
    finally:
        proc.join(timeout=seconds + 30)
        if proc.is_alive():
            proc.terminate()
    mem = memory_figures(rss)
    if grew := memory_problem(mem):
        problems.append(grew)
    return {
        "seconds": seconds,
        "rounds": rounds,
        "report_rounds": reports,
        "trials_at_end": len(_trial_dirs(live)),
        "trials_loaded_last": last_trials,
        **mem,
        "problems": problems,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=1800)
    ap.add_argument("--trials", type=int, default=200)
    ap.add_argument("--work", type=Path, default=None)
    ap.add_argument("--json", type=Path, default=None, help="write the result here")
    a = ap.parse_args()
    res = run(a.seconds, a.trials, a.work)
    for k, v in res.items():
        print(f"{k}: {v}")
    if a.json:
        a.json.write_text(json.dumps(res, indent=2) + "\n")
    sys.exit(1 if res["problems"] else 0)


if __name__ == "__main__":
    main()
