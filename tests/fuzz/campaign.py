"""The loader fuzz campaign: ``python -m tests.fuzz.campaign --cases 10000`` (``make fuzz``).

Each case mutates a copy of the seed tree (``tests/fuzz/corpus.py``; ops from
``tests/fuzz/mutate.py``), loads it with ``evalkit.load`` and reads every frame
(``tests/fuzz/check.py``). Cases run in worker processes; a case that takes longer than
``--timeout`` seconds is a hang: its worker is killed and replaced. Crashes, guarantee
violations and hangs are written as replayable crashers (``--crashers DIR``); move the
ones worth keeping to ``tests/fixtures/crashers/`` once fixed (``tests/fuzz/test_crashers.py``
replays every one there). A summary (cases, time, outcomes, families, field-path coverage
of the wrong-type sweep) is printed and, with ``--json FILE``, written.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import multiprocessing as mp
import os
import shutil
import signal
import sys
import tempfile
import time
from collections import Counter
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any

from tests.fuzz.crashers import save_crasher
from tests.fuzz.fieldpaths import field_paths
from tests.fuzz.mutate import generate

DEFAULT_SEED = 20261130
CACHE_EVERY = 8  # every 8th case (offset 3) loads with the cache: cold, warm, uncached


def uses_cache(index: int, every: int = CACHE_EVERY) -> bool:
    return every > 0 and index % every == 3


def families(ops: list[dict[str, Any]]) -> list[str]:
    return [o["family"] for o in ops if o.get("family")]


def _worker(conn: Connection, seed: int, cache_every: int, workroot: str) -> None:
    os.environ["EVALKIT_CACHE_DIR"] = tempfile.mkdtemp(prefix="cache-", dir=workroot)
    os.environ["EVALKIT_FUZZ_TMP"] = workroot  # the seed tree too: removed with workroot
    from tests.fuzz.check import run_case

    while True:
        i = conn.recv()
        if i is None:
            return
        ops = generate(seed, i)
        with tempfile.TemporaryDirectory(prefix=f"case{i}-", dir=workroot) as d:
            r = run_case(ops, Path(d), cache=uses_cache(i, cache_every))
        conn.send(
            {"index": i, "status": r.status, "seconds": r.seconds, "problems": r.problems,
             "trace": r.trace, "families": families(ops)}
        )  # fmt: skip


class _Pool:
    def __init__(self, n: int, seed: int, cache_every: int, workroot: str) -> None:
        self.ctx = mp.get_context("spawn")  # never fork a process that runs Polars threads
        self.args = (seed, cache_every, workroot)
        self.slots: list[dict[str, Any]] = [self._spawn() for _ in range(n)]

    def _spawn(self) -> dict[str, Any]:
        parent, child = self.ctx.Pipe()
        p = self.ctx.Process(target=_worker, args=(child, *self.args), daemon=True)
        p.start()
        child.close()
        return {"proc": p, "conn": parent, "case": None, "t0": 0.0}

    def replace(self, slot: dict[str, Any]) -> None:
        slot["proc"].kill()
        slot["proc"].join(5)
        slot.update(self._spawn())

    def close(self) -> None:
        for s in self.slots:
            with contextlib.suppress(OSError):
                s["conn"].send(None)
            s["proc"].join(5)
            if s["proc"].is_alive():
                s["proc"].kill()


def run(
    cases: int,
    seed: int = DEFAULT_SEED,
    *,
    start: int = 0,
    workers: int = 2,
    timeout: float = 60.0,
    cache_every: int = CACHE_EVERY,
    crashers: Path | None = None,
    progress: bool = True,
) -> dict[str, Any]:
    """Run cases ``start .. start+cases-1`` of campaign ``seed``; returns the summary."""
    t0 = time.perf_counter()
    workroot = tempfile.mkdtemp(prefix="evalkit-fuzz-")
    pending = list(range(start, start + cases))[::-1]
    status: Counter[str] = Counter()
    fams: Counter[str] = Counter()
    bad: list[dict[str, Any]] = []
    slowest = (0.0, -1)
    done = 0
    pool = _Pool(max(1, workers), seed, cache_every, workroot)

    def record(res: dict[str, Any]) -> None:
        nonlocal done, slowest
        done += 1
        status[res["status"]] += 1
        fams.update(res["families"])
        slowest = max(slowest, (res["seconds"], res["index"]))
        if res["status"] != "ok":
            bad.append(res)
            if crashers is not None:
                res["saved"] = str(
                    save_crasher(crashers, seed, res["index"], generate(seed, res["index"]), res)
                )
            print(
                f"\ncase {res['index']}: {res['status']} {res['problems'][:2]} {res['trace'][-600:]}",
                file=sys.stderr,
            )
        if progress and done % 100 == 0:
            rate = done / (time.perf_counter() - t0)
            print(
                f"\r{done}/{cases} cases, {dict(status)}, {rate:.1f}/s",
                end="",
                file=sys.stderr,
                flush=True,
            )

    try:
        while pending or any(s["case"] is not None for s in pool.slots):
            for s in pool.slots:
                if s["case"] is None and pending:
                    s["case"], s["t0"] = pending.pop(), time.perf_counter()
                    s["conn"].send(s["case"])
            busy = {s["conn"]: s for s in pool.slots if s["case"] is not None}
            for conn in wait(list(busy), timeout=1.0):
                s = busy[conn]
                try:
                    record(conn.recv())
                except (EOFError, OSError):  # the worker died (a segfault, the OOM killer)
                    record({"index": s["case"], "status": "crash", "seconds": time.perf_counter() - s["t0"],
                            "problems": ["worker process died"], "trace": "", "families": families(generate(seed, s["case"]))})  # fmt: skip
                    pool.replace(s)
                s["case"] = None
            now = time.perf_counter()
            for s in pool.slots:
                if s["case"] is not None and now - s["t0"] > timeout:
                    record({"index": s["case"], "status": "hang", "seconds": now - s["t0"],
                            "problems": [f"no result after {timeout:.0f} s"], "trace": "",
                            "families": families(generate(seed, s["case"]))})  # fmt: skip
                    pool.replace(s)
                    s["case"] = None
    finally:
        pool.close()
        shutil.rmtree(workroot, ignore_errors=True)
    if progress:
        print(file=sys.stderr)
    sweep = field_paths()
    n_type = len([i for i in range(start, start + cases) if i % 4 == 0])
    return {
        "seed": seed,
        "cases": done,
        "first_case": start,
        "seconds": round(time.perf_counter() - t0, 1),
        "workers": workers,
        "status": dict(status),
        "families": dict(sorted(fams.items())),
        "wrong_type_field_paths": {"swept": min(n_type, len(sweep)), "total": len(sweep)},
        "slowest_case": {"index": slowest[1], "seconds": round(slowest[0], 2)},
        "failures": [
            {k: r[k] for k in ("index", "status", "problems", "families") if k in r} for r in bad
        ],
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m tests.fuzz.campaign", description=__doc__.split("\n\n")[0]
    )
    ap.add_argument("--cases", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED)
    ap.add_argument("--start", type=int, default=0, help="first case index")
    ap.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1))
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds before a case is a hang")
    ap.add_argument("--cache-every", type=int, default=CACHE_EVERY)
    ap.add_argument("--crashers", type=Path, default=Path(".fuzz/crashers"))
    ap.add_argument("--json", type=Path, default=None, help="write the summary here")
    a = ap.parse_args(argv)

    def _term(signum: int, frame: Any) -> None:  # kill -TERM: stop the workers, clean up
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, _term)
    summary = run(a.cases, a.seed, start=a.start, workers=a.workers, timeout=a.timeout,
                  cache_every=a.cache_every, crashers=a.crashers)  # fmt: skip
    text = json.dumps(summary, indent=2)
    print(text)
    if a.json:
        a.json.parent.mkdir(parents=True, exist_ok=True)
        a.json.write_text(text + "\n")
    return 0 if set(summary["status"]) <= {"ok"} else 1


if __name__ == "__main__":
    sys.exit(main())
