"""The soak (benchmarks/soak.py) at CI length: loads, comparisons and report sections while
a writer process adds, rewrites and deletes trials. The 30-minute run is in the benchmark
runner (``benchmarks/run.py``; ``benchmarks/soak.py`` alone)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"

pytestmark = pytest.mark.slow


def test_soak_short(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(BENCH))
    monkeypatch.setenv("EVALKIT_CACHE_DIR", str(tmp_path / "cache"))
    spec = importlib.util.spec_from_file_location("soak", BENCH / "soak.py")
    soak = importlib.util.module_from_spec(spec)
    sys.modules["soak"] = soak
    spec.loader.exec_module(soak)
    res = soak.run(seconds=30, trials=60, work=tmp_path)
    assert res["problems"] == [], res["problems"][:5]
    assert res["rounds"] >= 1 and res["report_rounds"] >= 1  # a round is slower on a busy machine
