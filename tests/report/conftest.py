"""Shared report fixtures: a small nightly-style runs tree (benchmarks/gen_nightly.py, from
real fixture trials) and the nightly report rendered from it once per session."""

from __future__ import annotations

import importlib.util
import json
import sys
from datetime import date
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DAY = date(2026, 6, 5)
EVIL_TASK = "fix-<b>x</b><script>alert(1)</script>"


def _gen_nightly():
    spec = importlib.util.spec_from_file_location(
        "gen_nightly", ROOT / "benchmarks" / "gen_nightly.py"
    )
    mod = importlib.util.module_from_spec(spec)
    sys.modules["gen_nightly"] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="session")
def nightly_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """3 nights x 10 tasks x 3 attempts; one task name is hostile HTML."""
    out = tmp_path_factory.mktemp("runs")
    _gen_nightly().generate(out, jobs=3, tasks=10, attempts=3, seed=7, traj_share=0.5)
    first = None
    for p in sorted(out.glob("*/*/result.json")):
        d = json.loads(p.read_text())
        first = first or d["task_name"]
        if d["task_name"] == first:
            d["task_name"] = EVIL_TASK
            p.write_text(json.dumps(d))
    return out


@pytest.fixture(scope="session")
def nightly_report(nightly_runs: Path, tmp_path_factory: pytest.TempPathFactory):
    from evalkit.report import render

    out = tmp_path_factory.mktemp("reports")
    return render("nightly", nightly_runs, out, day=DAY)
