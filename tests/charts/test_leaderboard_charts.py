"""The leaderboard chart set: valid Vega-Lite, short labels, frontier only with cost."""

from __future__ import annotations

import polars as pl

import evalkit
from evalkit import charts
from evalkit.charts.leaderboard import frontier_chart

LONG = "claude-code-sonnet-4-6-extended-thinking-prompt-experiment"


def board(with_cost: bool) -> pl.DataFrame:
    rows = []
    for i, rate in enumerate((0.8, 0.6, 0.4)):
        for t in range(20):
            rows.append(
                {
                    "run": f"{LONG}-{i}",
                    "task_name": f"t{t}",
                    "reward": float(t < rate * 20),
                    "cost_usd": 0.1 * (i + 1) if with_cost else None,
                }
            )
    return evalkit.stats.leaderboard(pl.DataFrame(rows), draws=200)


def test_chart_set_validates_and_uses_short_labels() -> None:
    lb = board(with_cost=True)
    set_ = charts.leaderboard_charts(lb)
    assert len(set_) == 3
    for c in set_:
        spec = c.to_dict()  # validates against the Vega-Lite schema
        values = spec.get("data", {}).get("values") or spec["layer"][0]["data"]["values"]
        assert all(len(v["_label"]) <= 40 for v in values)
        assert any(v["run"].startswith(LONG) for v in values)  # full name kept for tooltips


def test_no_frontier_without_cost() -> None:
    lb = board(with_cost=False)
    assert frontier_chart(lb) is None
    assert len(charts.leaderboard_charts(lb)) == 2
