"""The seeded CI subset of the fuzz campaign: 512 cases in this process (the full campaign,
``python -m tests.fuzz.campaign --cases 10000``, runs them in killable worker processes).

Case ``i`` of the subset is case ``i`` of the full campaign (same seed), so a failure here
replays there and vice versa. Every case must load without an exception and keep every
guarantee of ``tests/fuzz/check.py``; a case over the deadline fails as a hang.
"""

from __future__ import annotations

import faulthandler
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from tests.fuzz.campaign import DEFAULT_SEED, families
from tests.fuzz.check import run_case
from tests.fuzz.mutate import generate

N_CASES = int(os.environ.get("EVALKIT_FUZZ_CASES", "512"))
CASE_DEADLINE_S = 60
CACHE_EVERY = 16  # fewer cached (3-load) cases than the full campaign's 8: CI time
# findings (the anti-pattern detectors: ~70 % of a case's time) on every other case here;
# the full campaign computes them on every case


def test_fuzz_subset() -> None:
    t0 = time.perf_counter()
    status: Counter[str] = Counter()
    fams: Counter[str] = Counter()
    failures = []
    for i in range(N_CASES):
        ops = generate(DEFAULT_SEED, i)
        fams.update(families(ops))
        # a hang fails loudly with every thread's stack instead of blocking CI
        faulthandler.dump_traceback_later(CASE_DEADLINE_S * 3, exit=True)
        try:
            with tempfile.TemporaryDirectory(prefix=f"fuzz{i}-") as d:
                r = run_case(ops, Path(d), cache=i % CACHE_EVERY == 3, findings=i % 2 == 1)
        finally:
            faulthandler.cancel_dump_traceback_later()
        status[r.status] += 1
        if r.seconds > CASE_DEADLINE_S:
            failures.append((i, "slow", [f"{r.seconds:.1f} s"], families(ops)))
        elif r.status != "ok":
            failures.append((i, r.status, [*r.problems, r.trace[-800:]], families(ops)))
    took = time.perf_counter() - t0
    print(f"fuzz subset: {N_CASES} cases in {took:.1f} s, {dict(status)}", file=sys.stderr)
    assert len(set(fams)) >= 20, f"too few mutation families exercised: {sorted(fams)}"
    assert not failures, (
        f"{len(failures)} failing case(s) of seed {DEFAULT_SEED} "
        f"(replay: python -m tests.fuzz.campaign --start I --cases 1): {failures[:5]}"
    )
