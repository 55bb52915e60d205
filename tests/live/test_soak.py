"""The soak (benchmarks/soak.py) at CI length: loads, comparisons and report sections while
a writer process adds, rewrites and deletes trials. The 30-minute run is in the benchmark
runner (``benchmarks/run.py``; ``benchmarks/soak.py`` alone)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


def _soak(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.syspath_prepend(str(BENCH))
    spec = importlib.util.spec_from_file_location("soak", BENCH / "soak.py")
    soak = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "soak", soak)
    spec.loader.exec_module(soak)
    return soak


def test_memory_rule_flags_growth_and_passes_noise(monkeypatch: pytest.MonkeyPatch) -> None:
    soak = _soak(monkeypatch)
    noisy = [(float(t), 300.0 + (17 * t) % 40) for t in range(300)]  # +-20 MB, no trend
    flat = soak.memory_figures(noisy)
    assert soak.memory_problem(flat) is None
    assert abs(flat["rss_mb_per_min"]) < 10
    leak = [(float(t), 300.0 + 1.0 * t) for t in range(300)]  # 1 MB a round
    grown = soak.memory_figures(leak)
    assert grown["rss_mb_per_min"] == pytest.approx(60.0)
    assert soak.memory_problem(grown) and "memory grew" in soak.memory_problem(grown)


def test_writer_keeps_the_job_at_a_steady_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    soak = _soak(monkeypatch)
    job = tmp_path / "job"
    (job / "seed__AAAAAAA").mkdir(parents=True)
    (job / "seed__AAAAAAA" / "result.json").write_text('{"reward": 0.0}')
    import time

    soak.writer(str(job), time.time() + 3, seed=1, max_added=5)
    assert 1 <= len(soak._trial_dirs(job)) <= 6  # the seed trial and at most 5 added


@pytest.mark.slow
def test_soak_short(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    soak = _soak(monkeypatch)
    monkeypatch.setenv("EVALKIT_CACHE_DIR", str(tmp_path / "cache"))
    res = soak.run(seconds=30, trials=60, work=tmp_path)
    assert res["problems"] == [], res["problems"][:5]
    assert res["rounds"] >= 1 and res["report_rounds"] >= 1  # a round is slower on a busy machine
