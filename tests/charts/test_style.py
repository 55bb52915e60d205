"""evalkit.charts._style: the shared look of the charts (colours, run orders and labels,
number formats, inline data).

Checked: the dollar axis format's decimals, frame() input checks, JSON-safe inline data,
middle-cut run labels, run colours by report position (never twice in a chart), the run
label / colour columns and scales, outcome and error-kind scales in their fixed order, run
ordering (given order, first start, name), the pass flag and chart heights. Many-run
behaviour already covered in test_many_runs.py is not repeated.
"""

from __future__ import annotations

import math
from datetime import UTC, date, datetime

import altair as alt
import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalkit.charts._style import (
    ERROR_KIND_COLORS,
    OTHER_COLOR,
    OTHER_RUNS,
    OUTCOME_COLORS,
    RUN_COLORS,
    data,
    empty_chart,
    error_kind_scale,
    frame,
    height_for,
    order_runs,
    outcome_scale,
    passed,
    run_colours,
    run_scale,
    short_label,
    short_labels,
    usd_axis_format,
    with_run_labels,
    wrap_title,
)

# -- usd_axis_format --------------------------------------------------------------------------


def test_usd_axis_format_has_at_least_cents() -> None:
    # span 1 over 5 ticks: step 0.2, -floor(log10 0.2) = 1 -> at least 2 decimals
    assert usd_axis_format([0.0, 1.0]) == "$,.2f"
    # span 100: step 20 -> -floor(1.3) = -1 -> 2
    assert usd_axis_format([0.0, 100.0]) == "$,.2f"


def test_usd_axis_format_adds_decimals_for_small_spans() -> None:
    # span 0.001: step 0.0002, log10 = -3.7, floor -4 -> 4 decimals
    assert usd_axis_format([0.001, 0.002]) == "$,.4f"
    # span 0.00006: step 1.2e-5, log10 = -4.9, floor -5 -> 5 decimals
    assert usd_axis_format([0.0, 0.00006]) == "$,.5f"


def test_usd_axis_format_caps_at_eight_decimals() -> None:
    # span 1e-12: step 2e-13 -> 13 decimals wanted, capped at 8
    assert usd_axis_format([1.0, 1.0 + 1e-12]) == "$,.8f"


def test_usd_axis_format_of_one_value_uses_the_value_as_span() -> None:
    # span 0 -> the value 0.0005 itself: step 1e-4 -> 4 decimals
    assert usd_axis_format([0.0005, 0.0005]) == "$,.4f"
    # zero / nothing finite: span 1.0 -> 2 decimals
    assert usd_axis_format([0.0]) == "$,.2f"
    assert usd_axis_format([]) == "$,.2f"


def test_usd_axis_format_ignores_none_nan_and_infinity() -> None:
    # only 0.001 and 0.002 count: as above, 4 decimals
    assert usd_axis_format([None, 0.001, math.nan, math.inf, 0.002, -math.inf]) == "$,.4f"


# -- frame / data -----------------------------------------------------------------------------


def test_frame_collects_a_lazyframe() -> None:
    lf = pl.DataFrame({"run": ["a"], "x": [1]}).lazy()
    out = frame(lf, "run")
    assert isinstance(out, pl.DataFrame) and out.to_dicts() == [{"run": "a", "x": 1}]


def test_frame_rejects_what_is_not_a_polars_frame() -> None:
    with pytest.raises(TypeError, match="got dict"):
        frame({"run": ["a"]})  # type: ignore[arg-type]


def test_frame_names_the_missing_columns() -> None:
    with pytest.raises(ValueError, match=r"\['reward', 'outcome'\]"):
        frame(pl.DataFrame({"run": ["a"]}), "run", "reward", "outcome")


def test_data_keeps_only_the_named_columns_once_in_order() -> None:
    df = pl.DataFrame({"a": [1], "b": [2], "c": [3]})
    d = data(df, ["c", "a", "c"]).to_dict()
    assert d == {"values": [{"c": 3, "a": 1}]}
    assert list(d["values"][0]) == ["c", "a"]


def test_data_makes_values_json_safe() -> None:
    df = pl.DataFrame({
        "x": [math.nan, math.inf, -math.inf, 1.5],
        "t": [datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)] * 4,
        "d": [date(2026, 1, 2)] * 4,
    })  # fmt: skip
    rows = data(df).to_dict()["values"]
    assert [r["x"] for r in rows] == [None, None, None, 1.5]
    assert rows[0]["t"] == "2026-01-02T03:04:05+00:00"
    assert rows[0]["d"] == "2026-01-02"


# -- labels -----------------------------------------------------------------------------------


def test_short_label_cuts_in_the_middle_to_the_width() -> None:
    # width 10: tail (10-1)//2 = 4, head 10-1-4 = 5
    assert short_label("abcdefghijklmnop", width=10) == "abcde…mnop"
    assert short_label("abcdefghijklmnop", width=10, tail=2) == "abcdefg…op"
    assert short_label("abcdefghij", width=10) == "abcdefghij"  # fits: unchanged


def test_short_labels_grow_the_kept_end_until_unique() -> None:
    # width 10: tail 4 gives "xxxxx…0001" and tail 5 "xxxx…00001" for both; tail 6 keeps
    # "A00001" / "B00001" (head 10 - 1 - 6 = 3 characters)
    a, b = "xxxxxxxxxxA00001", "xxxxxxxxxxB00001"
    assert short_labels([a, b], width=10) == {a: "xxx…A00001", b: "xxx…B00001"}


def test_short_labels_fall_back_to_the_full_labels() -> None:
    # the labels differ only at position 5 and share a 20-character end: no head (<= 4
    # characters kept at tail >= 4) nor tail (<= 8 characters) tells them apart
    a, b = "aaaaaX" + "b" * 20, "aaaaaY" + "b" * 20
    assert short_labels([a, b], width=10) == {a: a, b: b}


@given(st.lists(st.text(min_size=1, max_size=60), min_size=1, max_size=20, unique=True))
def test_short_labels_never_exceed_the_width_unless_the_full_label_is_kept(labels) -> None:
    out = short_labels(labels)
    assert set(out) == set(labels)
    assert all(len(v) <= 30 or v == k for k, v in out.items())


def test_wrap_title_breaks_long_text_and_keeps_empty_as_one_line() -> None:
    words = " ".join(["word"] * 30)  # 30 * 5 - 1 = 149 characters
    lines = wrap_title(words, width=50)
    assert all(len(x) <= 50 for x in lines) and " ".join(lines) == words
    assert len(lines) == 3  # 10 words (49 characters) per line
    assert wrap_title("") == [""]


# -- colours ----------------------------------------------------------------------------------


def test_a_run_keeps_the_colour_of_its_report_position() -> None:
    order = ["a", "b", "c", "d"]
    # a chart showing only c and a: c is third in the report, a first
    assert run_colours(["c", "a"], order) == {"a": RUN_COLORS[0], "c": RUN_COLORS[2]}


def test_runs_whose_positions_collide_get_the_first_free_colour() -> None:
    order = [f"r{i}" for i in range(9)]  # r0 and r8 both prefer RUN_COLORS[0]
    assert run_colours(["r0", "r8"], order) == {"r0": RUN_COLORS[0], "r8": RUN_COLORS[1]}


def test_a_run_not_in_the_order_prefers_the_next_position() -> None:
    # "z" is not in the 3-run order: position 3 -> RUN_COLORS[3]
    assert run_colours(["z"], ["a", "b", "c"]) == {"z": RUN_COLORS[3]}


def test_with_more_runs_than_colours_no_run_is_grey() -> None:
    runs = [f"r{i}" for i in range(9)]
    c = run_colours(runs)
    assert set(c) == set(runs[2:])  # the newest 7 of 9
    assert "#999999" not in c.values() and len(set(c.values())) == 7


def test_run_scale_is_keyed_by_full_labels() -> None:
    s = run_scale(["b", "a"], ["a", "b"]).to_dict()
    assert s == {"domain": ["b", "a"], "range": [RUN_COLORS[1], RUN_COLORS[0]]}


def test_with_run_labels_adds_label_and_colour_columns() -> None:
    long = "x" * 40
    df = pl.DataFrame({"run": [long, "b", "b"], "v": [1, 2, 3]})
    out, labels, scale = with_run_labels(df, "run", ["b", long])
    short = "x" * 15 + "…" + "x" * 14  # width 30: tail 29 // 2 = 14, head 30 - 1 - 14
    assert labels == ["b", short]
    assert out.select("run", "_label", "_colour").rows() == [
        (long, short, short),
        ("b", "b", "b"),
        ("b", "b", "b"),
    ]
    assert scale.to_dict() == {"domain": ["b", short], "range": [RUN_COLORS[0], RUN_COLORS[1]]}


def test_with_run_labels_draws_other_runs_first_and_lists_them_last() -> None:
    runs = [f"r{i}" for i in range(9)]  # r0 and r1 lose their colour
    df = pl.DataFrame({"run": list(reversed(runs))})
    out, _, scale = with_run_labels(df, "run", runs, runs)
    colour = out["_colour"].to_list()
    assert colour[:2] == [OTHER_RUNS, OTHER_RUNS] and out["run"].to_list()[:2] == ["r1", "r0"]
    assert out["run"].to_list()[2:] == [f"r{i}" for i in range(8, 1, -1)]  # order kept
    s = scale.to_dict()
    assert s["domain"][-1] == OTHER_RUNS and s["range"][-1] == OTHER_COLOR
    assert s["domain"][:-1] == runs[2:]


def test_with_run_labels_scale_lists_only_present_runs() -> None:
    df = pl.DataFrame({"run": ["b"]})
    _, labels, scale = with_run_labels(df, "run", ["a", "b", "c"])
    assert labels == ["a", "b", "c"]  # axis sort: every run
    assert scale.to_dict() == {"domain": ["b"], "range": [RUN_COLORS[1]]}


def test_outcome_scale_follows_the_fixed_order_not_the_data() -> None:
    s = outcome_scale(["error", "pass", "bogus", "fail"]).to_dict()
    assert s["domain"] == ["pass", "fail", "error"]
    assert s["range"] == [OUTCOME_COLORS["pass"], OUTCOME_COLORS["fail"], OUTCOME_COLORS["error"]]
    assert outcome_scale().to_dict()["domain"] == [
        "pass", "partial", "fail", "timeout", "error", "no-reward", "incomplete",
    ]  # fmt: skip


def test_error_kind_scale_follows_the_fixed_order() -> None:
    s = error_kind_scale(["provider", "agent", "none"]).to_dict()
    assert s == {
        "domain": ["agent", "provider"],
        "range": [ERROR_KIND_COLORS["agent"], ERROR_KIND_COLORS["provider"]],
    }
    assert len(error_kind_scale().to_dict()["domain"]) == 7


def test_palettes_are_okabe_ito_and_distinct() -> None:
    okabe_ito = {
        "#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7", "#000000",
    }  # fmt: skip
    assert set(RUN_COLORS) - {"#999999"} <= okabe_ito
    assert "#F0E442" not in RUN_COLORS  # no yellow (unreadable on white)
    assert len(set(RUN_COLORS)) == len(RUN_COLORS)
    assert len(set(ERROR_KIND_COLORS.values())) == len(ERROR_KIND_COLORS)


# -- run order --------------------------------------------------------------------------------


def test_order_runs_puts_the_given_order_first_then_the_rest() -> None:
    df = pl.DataFrame({"run": ["c", "a", "b", None]})
    # "zz" is not present and is dropped; b and c are not in the order and follow as found
    assert order_runs(df, "run", ["a", "zz"]) == ["a", "c", "b"]


def test_order_runs_is_the_one_run_order() -> None:
    t = [datetime(2026, 1, d, tzinfo=UTC) for d in (1, 2, 3)]
    df = pl.DataFrame({
        "run": ["late", "early", "late", "nostart", "mid"],
        "started_at": [t[0], t[1], t[2], None, t[2]],
    })  # fmt: skip
    # latest starts: early Jan 2, late and mid Jan 3 (a tie: by name), nostart unknown
    # (first: unknown is never the newest); load.runs.run_order is the rule
    assert order_runs(df, "run", None) == ["nostart", "early", "late", "mid"]


def test_order_runs_by_name_without_start_times() -> None:
    df = pl.DataFrame({"run": ["b", "c", "a", "b", None]})
    assert order_runs(df, "run", None) == ["a", "b", "c"]


# -- passed / height --------------------------------------------------------------------------


def test_passed_is_reward_at_least_one_and_null_fails() -> None:
    df = pl.DataFrame({"reward": [1.0, 0.999, None, 1.5, 0.0]})
    assert df.select(passed())["reward"].to_list() == [1.0, 0.0, 0.0, 1.0, 0.0]


def test_height_for_has_a_floor_and_a_cap() -> None:
    assert height_for(2) == 60  # 2 * 22 = 44 < floor 60
    assert height_for(5) == 110  # 5 * 22
    assert height_for(3, per=34) == 102
    assert height_for(1000) == 2400  # 22000 capped


def test_chart_alias_covers_layers_and_concatenations() -> None:
    c = alt.Chart(alt.Data(values=[{"a": 1}])).mark_point().encode(x="a:Q")
    from evalkit.charts._style import Chart

    for ch in (c, c + c, c | c, c & c):
        assert isinstance(ch, Chart)


def test_an_empty_chart_without_a_title_is_a_valid_spec() -> None:
    # title "" (the default) must not become title=None, which Vega-Lite refuses
    spec = empty_chart("Nothing to draw.").to_dict()
    assert "title" not in spec and spec["data"]["values"] == [{"m": "Nothing to draw."}]
    assert empty_chart("x", "T").to_dict()["title"] == "T"
