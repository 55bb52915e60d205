"""The report does work in proportion to the runs it shows, and its figures for those runs
stay what they were (tests/fixtures/report/runs-summary.json)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from evalkit import charts, report
from evalkit.report import failures, many_runs
from evalkit.report.context import detail_runs
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
    if isinstance(want, float) and isinstance(got, float):
        # sums of the same floats in another order (a frame regrouped or filtered) differ
        # in the last bits: the figure is the same
        same = math.isclose(want, got, rel_tol=1e-12) or (math.isnan(want) and math.isnan(got))
        return [] if same else [f"{where}: {want!r} -> {got!r}"]
    return [] if want == got else [f"{where}: {want!r} -> {got!r}"]


def test_summary_of_runs_keeps_every_figure() -> None:
    ctx = report.load_context(ROOT / "runs")
    got = json.loads(json.dumps(summary(ctx)))
    assert _differences(json.loads(GOLDEN.read_text()), got) == []


def _figures(ctx: report.Context) -> dict[str, Any]:
    s = json.loads(json.dumps(summary(ctx)))
    runs = {r["run"]: r for r in s["report"]["runs"]}
    pair = [runs[r] for r in ctx.pair]
    return {k: v for k, v in s.items() if k != "report"} | {"pair": pair}


def test_runs_not_shown_in_detail_are_not_parsed_and_figures_stay(nightly_runs: Path) -> None:
    every = report.load_context(nightly_runs, detail_runs=0)
    two = report.load_context(nightly_runs, detail_runs=2)
    assert every.left_out == [] and every.history is None
    assert two.detail == list(two.pair) and two.left_out == [two.order[0]]
    wanted = set(two.trials.filter(pl.col("run").is_in(two.detail))["trial_id"].to_list())
    assert set(two.runs.steps["trial_id"].to_list()) <= wanted
    assert set(two.runs.findings["trial_id"].to_list()) <= wanted
    assert two.trials.height == every.trials.height  # the runs table still has every run
    old = two.trials.filter(pl.col("run") == two.order[0])
    assert old["n_turns"].is_null().all() and old["has_trajectory"].any()
    assert _differences(_figures(every), _figures(two)) == []
    note = report.header(two).html()
    assert "2 of 3 runs are shown in detail" in note and "detail_runs 0" in note
    assert "shown in detail only" in report.taxonomy(two).html()
    assert "detail_runs" not in report.header(every).html()


def test_detail_runs_keeps_the_pair_and_the_newest() -> None:
    order = ["r1", "r2", "r3", "r4", "r5"]
    assert detail_runs(order, ("r1", "r5"), 3) == ["r1", "r4", "r5"]
    assert detail_runs(order, ("r4", "r5"), 3) == ["r3", "r4", "r5"]
    assert detail_runs(order, (None, "r5"), 0) == order
    assert detail_runs(order, ("r2", "r3"), 9) == order


def test_heatmap_keeps_the_tasks_that_differ_and_says_so(
    nightly_runs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ctx = report.load_context(nightly_runs)
    monkeypatch.setattr(failures, "HEATMAP_TASKS", 4)
    parts = failures.heatmap(ctx)
    assert "4 of 10 tasks" in parts.html() and "evalkit task" in parts.html()
    spec = parts.charts()[0].to_dict()
    shown = {v["task_name"] for v in spec["data"]["values"]}
    keep = failures.informative_tasks(ctx.trials, 4, ctx.pair)
    assert shown == set(keep)
    cells = charts.task_cells(ctx.trials)
    # spreads as the report ranks them (rounded: equal spreads tie)
    spread = cells.group_by("task_name").agg(
        pl.col("pass_rate").std(ddof=0).fill_null(0.0).round(9)
    )
    left = spread.filter(~pl.col("task_name").is_in(keep))["pass_rate"].max()
    assert spread.filter(pl.col("task_name").is_in(keep))["pass_rate"].min() >= left


def test_leaderboard_ranks_every_run_when_some_are_not_detailed(nightly_runs: Path) -> None:
    two = report.load_context(nightly_runs, detail_runs=2)
    html = many_runs.leaderboard(two, draws=200).html()
    assert all(r in html for r in two.order) and "detail_runs 0" in html
