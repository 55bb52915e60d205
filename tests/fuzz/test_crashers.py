"""Every stored crasher (tests/fixtures/crashers/) replays cleanly: no exception, every
guarantee of ``tests/fuzz/check.py`` holds, and it finishes (a found hang would block)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from tests.fuzz.check import Result, run_case
from tests.fuzz.crashers import load_crasher, stored

DEADLINE_S = 120
CASES = stored()


def test_crashers_are_stored() -> None:
    assert len(CASES) >= 10


@pytest.mark.parametrize("case_dir", CASES, ids=[p.name for p in CASES])
def test_crasher_replays_cleanly(case_dir: Path, tmp_path: Path) -> None:
    meta, ops = load_crasher(case_dir)
    box: dict[str, Result] = {}
    th = threading.Thread(
        target=lambda: box.setdefault("r", run_case(ops, tmp_path, cache=True)), daemon=True
    )
    th.start()
    th.join(DEADLINE_S)
    assert not th.is_alive(), f"{case_dir.name} still running after {DEADLINE_S} s"
    r = box["r"]
    assert r.status == "ok", f"{case_dir.name} (found: {meta['found']}): {r.problems} {r.trace}"
