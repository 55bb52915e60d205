"""evalkit.charts.patterns: anti-pattern rates per detector and run, with intervals.

Checked on the Vega-Lite spec: one row per (run, detector) with its rate and interval,
detectors sorted by name on y, runs as y offsets in run order, the x domain (10 % above the
highest interval end, at least 10 %, at most 100 %), the height, custom column names, the
tooltips (counts and CI method when present) and the message for no findings. The presence
of the basic tooltip fields is in test_charts.py.
"""

from __future__ import annotations

import json

import polars as pl
import pytest

from evalkit.charts._style import RUN_COLORS
from evalkit.charts.patterns import antipattern_rates


def _rates(ci_high: list[float] | None = None) -> pl.DataFrame:
    return pl.DataFrame({
        "run": ["b", "b", "b", "a", "a", "a"],
        "detector": ["stuck", "hedge", "retry_loop"] * 2,
        "rate": [0.1, 0.2, 0.3, 0.05, 0.1, 0.15],
        "ci_low": [0.0, 0.1, 0.2, 0.0, 0.05, 0.1],
        "ci_high": ci_high or [0.2, 0.3, 0.4, 0.1, 0.2, 0.25],
    })  # fmt: skip


def test_rates_are_plotted_per_run_and_detector() -> None:
    spec = antipattern_rates(_rates()).to_dict()
    rows = {
        (r["run"], r["detector"]): (r["rate"], r["ci_low"], r["ci_high"])
        for r in spec["data"]["values"]
    }
    assert rows[("b", "retry_loop")] == (0.3, 0.2, 0.4)
    assert rows[("a", "hedge")] == (0.1, 0.05, 0.2)
    assert len(rows) == 6
    rule, point = spec["layer"]
    assert rule["encoding"]["x"]["field"] == "ci_low" and rule["encoding"]["x2"] == {
        "field": "ci_high"
    }
    assert point["encoding"]["x"]["field"] == "rate"


def test_detectors_sorted_by_name_and_runs_in_run_order() -> None:
    spec = antipattern_rates(_rates()).to_dict()
    enc = spec["layer"][1]["encoding"]
    assert enc["y"]["field"] == "detector"
    assert enc["y"]["sort"] == ["hedge", "retry_loop", "stuck"]
    assert enc["yOffset"]["field"] == "_label" and enc["yOffset"]["sort"] == ["a", "b"]
    assert enc["color"]["scale"] == {"domain": ["a", "b"], "range": [RUN_COLORS[0], RUN_COLORS[1]]}
    ordered = antipattern_rates(_rates(), order=["b", "a"]).to_dict()
    assert ordered["layer"][0]["encoding"]["yOffset"]["sort"] == ["b", "a"]


@pytest.mark.parametrize(
    ("top", "domain_end"),
    [
        (0.4, 0.44),  # 0.4 * 1.1
        (0.05, 0.1),  # 0.055 is below the 10 % floor
        (0.95, 1.0),  # 1.045 is capped at 100 %
    ],
)
def test_x_domain_leaves_room_above_the_highest_interval(top: float, domain_end: float) -> None:
    highs = [top * 0.5] * 5 + [top]
    spec = antipattern_rates(_rates(highs)).to_dict()
    x = spec["layer"][0]["encoding"]["x"]
    assert x["scale"]["domain"] == [0, pytest.approx(domain_end)]
    assert x["axis"] == {"format": ".0%"} and x["title"] == "share of trials flagged"


def test_height_grows_with_detectors_times_runs() -> None:
    assert antipattern_rates(_rates()).to_dict()["height"] == 96  # 3 detectors * 2 runs * 16
    one = _rates().head(1)
    assert antipattern_rates(one).to_dict()["height"] == 80  # 16, raised to the floor 80


def test_title_and_subtitle() -> None:
    spec = antipattern_rates(_rates(), title="Flags").to_dict()
    assert spec["title"] == {
        "text": "Flags",
        "subtitle": "share of trials with at least one finding; bars: confidence interval",
    }


def test_counts_and_method_go_in_the_tooltip_when_present() -> None:
    r = _rates().with_columns(
        pl.lit(2).alias("n_flagged"),
        pl.lit(20).alias("n_trials"),
        pl.lit("wilson").alias("ci_method"),
    )
    spec = antipattern_rates(r).to_dict()
    tips = {t["field"]: t for t in spec["layer"][0]["encoding"]["tooltip"]}
    assert list(tips) == [
        "detector",
        "run",
        "rate",
        "ci_low",
        "ci_high",
        "n_flagged",
        "n_trials",
        "ci_method",
    ]
    assert tips["rate"]["title"] == "share of trials flagged" and tips["rate"]["format"] == ".1%"
    assert tips["ci_method"]["type"] == "nominal" and tips["n_trials"]["type"] == "quantitative"
    row = spec["data"]["values"][0]
    assert (row["n_flagged"], row["n_trials"], row["ci_method"]) == (2, 20, "wilson")


def test_without_counts_the_tooltip_has_only_the_rate_columns() -> None:
    spec = antipattern_rates(_rates()).to_dict()
    fields = [t["field"] for t in spec["layer"][1]["encoding"]["tooltip"]]
    assert fields == ["detector", "run", "rate", "ci_low", "ci_high"]


def test_custom_column_names() -> None:
    r = _rates().rename(
        {"run": "model", "detector": "rule", "rate": "r", "ci_low": "lo", "ci_high": "hi"}
    )
    spec = antipattern_rates(
        r, by="model", detector="rule", rate="r", ci_low="lo", ci_high="hi"
    ).to_dict()
    rule, point = spec["layer"]
    assert rule["encoding"]["y"]["field"] == "rule" and rule["encoding"]["x2"] == {"field": "hi"}
    assert point["encoding"]["x"]["field"] == "r"
    assert set(spec["data"]["values"][0]) == {"model", "rule", "r", "lo", "hi", "_label", "_colour"}


def test_no_findings_says_so() -> None:
    spec = antipattern_rates(_rates().head(0), title="Flags").to_dict()
    assert spec["title"] == "Flags"
    assert json.dumps(spec["data"]) == '{"values": [{"m": "No anti-pattern findings."}]}'


def test_missing_columns_are_named() -> None:
    with pytest.raises(ValueError, match="ci_high"):
        antipattern_rates(_rates().drop("ci_high"))


def test_lazy_input_gives_the_same_chart() -> None:
    assert antipattern_rates(_rates().lazy()).to_dict() == antipattern_rates(_rates()).to_dict()
