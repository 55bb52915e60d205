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


def _layer_encoding(spec: dict, channel: str) -> dict:
    return next(lay["encoding"][channel] for lay in spec["layer"] if channel in lay["encoding"])


def test_frontier_cost_ticks_read_apart_when_costs_are_close() -> None:
    rows = [
        {"run": f"r{i}", "task_name": f"t{t}", "reward": float(t < 10 + 3 * i), "cost_usd": c}
        for i, c in enumerate((0.0086, 0.0093))
        for t in range(20)
    ]
    lb = evalkit.stats.leaderboard(pl.DataFrame(rows), draws=200)
    x = _layer_encoding(frontier_chart(lb).to_dict(), "x")
    fmt = x["axis"]["format"].replace("$", "")
    ticks = [0.0086 + k * (0.0093 - 0.0086) / x["axis"]["tickCount"] for k in range(6)]
    labels = [format(t, fmt) for t in ticks]
    assert len(set(labels)) == len(labels), labels
    y = _layer_encoding(frontier_chart(lb).to_dict(), "y")
    assert x["scale"]["padding"] > 0 and y["scale"]["padding"] > 0  # no point on the frame
