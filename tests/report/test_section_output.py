"""SectionOutput: the HTML of a section with chart placeholders, its charts, and how it
displays itself in a notebook (HTML runs between charts, one display call per run)."""

from __future__ import annotations

import altair as alt
import pytest

from evalkit.report import section_output as so
from evalkit.report.section_output import SectionOutput


def _chart(title=None) -> alt.Chart:
    c = alt.Chart(alt.Data(values=[{"x": 1}, {"x": 2}])).mark_point().encode(x="x:Q")
    return c.properties(title=title) if title is not None else c


def test_html_puts_a_placeholder_named_after_each_chart_title() -> None:
    plain = _chart("Pass rate")
    titled = _chart(alt.Title("Leaderboard", subtitle="2 runs"))
    untitled = _chart()
    layered = untitled + untitled
    out = SectionOutput(["<p>a</p>", plain, "<p>b</p>", titled, untitled, layered])
    # wrap() joins the parts with newlines inside <div class="ek">; a string title is used as
    # is, an alt.Title by its text (not the subtitle), no title by the chart's class name
    assert out.html() == (
        '<div class="ek"><p>a</p>\n'
        "<!-- chart: Pass rate -->\n"
        "<p>b</p>\n"
        "<!-- chart: Leaderboard -->\n"
        "<!-- chart: Chart -->\n"
        "<!-- chart: LayerChart --></div>"
    )


def test_charts_keeps_only_the_charts_in_order() -> None:
    a, b = _chart("A"), _chart("B")
    out = SectionOutput(["<p>x</p>", a, "<p>y</p>", b, "<p>z</p>"])
    got = out.charts()
    assert len(got) == 2 and got[0] is a and got[1] is b
    assert SectionOutput(["<p>only text</p>"]).charts() == []
    # still a list: sections extend one another
    assert isinstance(out, list) and len(out) == 5


def test_notebook_display_groups_html_between_charts(monkeypatch: pytest.MonkeyPatch) -> None:
    import IPython.display

    shown: list[tuple[dict, bool]] = []
    monkeypatch.setattr(IPython.display, "display", lambda obj, raw=False: shown.append((obj, raw)))
    monkeypatch.setattr(so, "_chart_bundle", lambda ch: {"chart": so._title(ch)})
    out = SectionOutput([_chart("first"), "<p>a</p>", "<p>b</p>", _chart("mid"), "<p>c</p>"])
    out._ipython_display_()
    # a leading chart gets no empty HTML before it; "a" and "b" go out as one HTML block,
    # then the chart, then the trailing "c"; every display is raw
    assert shown == [
        ({"chart": "first"}, True),
        ({"text/html": '<div class="ek"><p>a</p>\n<p>b</p></div>'}, True),
        ({"chart": "mid"}, True),
        ({"text/html": '<div class="ek"><p>c</p></div>'}, True),
    ]


def test_chart_bundle_uses_the_offline_renderer_only_when_it_is_active(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from evalkit.charts import offline

    seen: list[dict] = []
    monkeypatch.setattr(offline, "chart_bundle", lambda spec: seen.append(spec) or {"x": "y"})
    ch = _chart("T")
    alt.renderers.enable("default")
    try:
        bundle = so._chart_bundle(ch)
        assert "text/html" in bundle and seen == []  # Altair's own renderer, not offline
        offline.register()
        alt.renderers.enable(offline.RENDERER)
        assert so._chart_bundle(ch) == {"x": "y"}
        # the offline renderer gets the chart's spec (validation skipped)
        assert seen == [ch.to_dict(validate=False)]
        assert seen[0]["title"] == "T" and seen[0]["data"]["values"] == [{"x": 1}, {"x": 2}]
    finally:
        alt.renderers.enable("default")


def test_placeholder_of_a_multi_line_title_and_one_that_would_close_the_comment() -> None:
    lines = _chart(["Pass rate", "by run"])
    in_title = _chart(alt.Title(["Runs", "a --> <b>x</b>"]))
    assert SectionOutput([lines, in_title]).html() == (
        '<div class="ek"><!-- chart: Pass rate by run -->\n'
        "<!-- chart: Runs a - -&gt; &lt;b&gt;x&lt;/b&gt; --></div>"
    )
