"""The report does work in proportion to the runs it shows, and its figures for those runs
stay what they were (tests/fixtures/report/runs-summary.json)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evalkit import report
from evalkit.report.summary_json import summary

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "fixtures" / "report" / "runs-summary.json"


def _differences(want: Any, got: Any, where: str = "") -> list[str]:
    """Where ``got`` differs from ``want`` on the fields ``want`` has (new fields are fine)."""
    if isinstance(want, dict) and isinstance(got, dict):
        return [d for k, v in want.items() for d in _differences(v, got.get(k), f"{where}.{k}")]
    if isinstance(want, list) and isinstance(got, list) and len(want) == len(got):
        pairs = enumerate(zip(want, got, strict=True))
        return [d for i, (v, g) in pairs for d in _differences(v, g, f"{where}[{i}]")]
    return [] if want == got else [f"{where}: {want!r} -> {got!r}"]


def test_summary_of_runs_keeps_every_figure() -> None:
    ctx = report.load_context(ROOT / "runs")
    got = json.loads(json.dumps(summary(ctx)))
    assert _differences(json.loads(GOLDEN.read_text()), got) == []
