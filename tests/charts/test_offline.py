"""evalkit.charts.offline: charts rendered without a network (one Vega bundle per notebook,
a small vegaEmbed snippet per chart, a static PNG inside and beside it).

Checked: the script-safe JSON of a spec, the chart snippet (container id, static image and
its escaped alt text, embed options), the title a chart is named by, the display bundle with
and without a PNG, the bundle's own escaping of ``</script``, and that enable_offline switches
renderer and theme and shows the bundle only in an IPython session. The hostile-task-name
escaping, the single bundle marker and the renderer's use by a chart are in test_charts.py.
"""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime

import altair as alt
import pytest

from evalkit.charts import offline

SPEC = {
    "$schema": "https://vega.github.io/schema/vega-lite/v6.json",
    "data": {"values": [{"a": 1}, {"a": 2}]},
    "mark": "point",
    "encoding": {"x": {"field": "a", "type": "quantitative"}},
    "title": "Tiny",
}


@pytest.fixture
def restore_altair():
    """Put Altair's renderer and theme back after a test that switches them."""
    renderer, theme = alt.renderers.active, alt.theme.active
    yield
    alt.renderers.enable(renderer)
    alt.theme.enable(theme)


# -- _script_json -----------------------------------------------------------------------------


def test_script_json_escapes_what_could_end_or_confuse_a_script() -> None:
    obj = {"t": "</script><!-- & \u2028\u2029"}
    out = offline._script_json(obj)
    for raw in ("<", ">", "&", "\u2028", "\u2029"):
        assert raw not in out
    assert "\\u003c/script\\u003e" in out and "\\u0026" in out
    assert json.loads(out) == obj  # still the same data once parsed


def test_script_json_refuses_nan_and_writes_other_values_as_text() -> None:
    with pytest.raises(ValueError):
        offline._script_json({"x": float("nan")})
    when = datetime(2026, 1, 2, tzinfo=UTC)
    assert json.loads(offline._script_json({"t": when})) == {"t": str(when)}


# -- _title -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("title", "want"),
    [
        ("Plain", "Plain"),
        ({"text": "From dict", "subtitle": ["x"]}, "From dict"),
        ({"text": ["two", "lines"]}, "two lines"),
        (["a", "b"], "a b"),
        (None, "untitled"),
        ("", "untitled"),
    ],
)
def test_title_of_a_spec(title, want) -> None:
    assert offline._title({"title": title}) == want


def test_title_of_a_spec_without_one_is_untitled() -> None:
    assert offline._title({}) == "untitled"


# -- chart_html -------------------------------------------------------------------------------


def test_chart_html_targets_its_own_container() -> None:
    html = offline.chart_html(SPEC, div_id="chart-1")
    assert '<div class="evalkit-chart" id="chart-1"><span class="evalkit-chart-note">' in html
    assert 'document.getElementById("chart-1")' in html
    assert f"var opt = {json.dumps(offline.EMBED_OPTIONS)};" in html
    assert offline.EMBED_OPTIONS == {"renderer": "svg", "actions": False, "mode": "vega-lite"}
    assert "<img" not in html  # no png given


def test_a_chart_without_its_png_says_where_it_can_be_seen_until_drawn() -> None:
    html = offline.chart_html(SPEC, div_id="c")
    note = (
        '<span class="evalkit-chart-note">Chart: Tiny (drawn by script: open the '
        "report's HTML page, or trust this notebook and run it).</span>"
    )
    assert f'<div class="evalkit-chart" id="c">{note}</div>' in html
    # where a script runs, the note goes first: the chart or its error takes its place
    assert 'var note = el.querySelector(".evalkit-chart-note");\n  if (note) note.remove();' in html


def test_the_renderer_leaves_the_png_out_when_told(monkeypatch: pytest.MonkeyPatch) -> None:
    drawn = []
    monkeypatch.setattr(offline, "static_png", lambda spec: drawn.append(1) or "UE5H")
    chart = alt.Chart(alt.Data(values=[{"x": 1}])).mark_point().encode(x="x:Q")
    try:
        offline.enable_offline(display_bundle=False, static_images=False)
        bundle = chart._repr_mimebundle_()
        bundle = bundle[0] if isinstance(bundle, tuple) else bundle
        assert sorted(bundle) == ["text/html", "text/plain"] and drawn == []
        assert offline.chart_bundle(SPEC)["text/html"].count("evalkit-chart-note") >= 1
        offline.enable_offline(display_bundle=False)  # the default draws it
        bundle = chart._repr_mimebundle_()
        bundle = bundle[0] if isinstance(bundle, tuple) else bundle
        assert bundle["image/png"] == "UE5H" and drawn == [1]
    finally:
        offline.enable_offline(display_bundle=False)


def test_chart_html_gives_each_chart_a_new_id() -> None:
    a, b = offline.chart_html(SPEC), offline.chart_html(SPEC)
    ida = a.split('id="', 1)[1].split('"', 1)[0]
    idb = b.split('id="', 1)[1].split('"', 1)[0]
    assert ida.startswith("evalkit-chart-") and ida != idb


def test_chart_html_embeds_the_spec_as_script_safe_json() -> None:
    spec = {**SPEC, "title": "a </script> b"}
    html = offline.chart_html(spec, div_id="c")
    line = next(x for x in html.splitlines() if x.strip().startswith("var spec = "))
    assert json.loads(line.strip()[len("var spec = ") : -1]) == spec


def test_chart_html_puts_the_static_image_inside_with_escaped_alt_text() -> None:
    spec = {**SPEC, "title": 'Costs "A" <vs> B'}
    html = offline.chart_html(spec, div_id="c", png="QUJD")
    img = (
        f'<img class="{offline.STATIC_CLASS}" alt="Costs &quot;A&quot; &lt;vs&gt; B" '
        'src="data:image/png;base64,QUJD">'
    )
    assert f'<div class="evalkit-chart" id="c">{img}</div>' in html
    assert f'querySelector(".{offline.STATIC_CLASS}")' in html


def test_chart_html_says_when_the_bundle_is_missing() -> None:
    html = offline.chart_html(SPEC, div_id="c")
    assert "call evalkit.charts.enable_offline() first" in html
    assert "cdn" not in html.lower() and "<script src" not in html


# -- static_png / chart_bundle ------------------------------------------------------------------


def test_static_png_draws_a_png() -> None:
    png = offline.static_png(SPEC)
    assert png is not None
    assert base64.b64decode(png).startswith(b"\x89PNG\r\n\x1a\n")


def test_static_png_of_an_invalid_spec_is_none() -> None:
    assert offline.static_png({"mark": "no-such-mark"}) is None


def test_chart_bundle_has_html_text_and_the_same_png() -> None:
    out = offline.chart_bundle(SPEC)
    assert set(out) == {"text/html", "text/plain", "image/png"}
    assert out["text/plain"] == "<chart: Tiny>"
    assert f"base64,{out['image/png']}" in out["text/html"]


def test_chart_bundle_without_a_png_leaves_the_image_out(monkeypatch) -> None:
    monkeypatch.setattr(offline, "static_png", lambda spec, scale=1.0: None)
    out = offline.chart_bundle(SPEC)
    assert set(out) == {"text/html", "text/plain"} and "<img" not in out["text/html"]
    assert offline._renderer(SPEC, embed_options={}).keys() == out.keys()


# -- bundle -----------------------------------------------------------------------------------


def test_bundle_js_escapes_a_closing_script_tag(monkeypatch, tmp_path) -> None:
    import vl_convert

    monkeypatch.setenv("EVALKIT_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(
        vl_convert, "javascript_bundle", lambda **kw: "var a='</script>'; var b='</SCRIPT>';"
    )
    js = offline._bundle_js.__wrapped__()
    assert js == "var a='<\\/script>'; var b='<\\/SCRIPT>';" + offline.BUNDLE_END


def test_the_bundle_is_built_once_and_kept_in_the_cache(monkeypatch, tmp_path) -> None:
    import vl_convert

    monkeypatch.setenv("EVALKIT_CACHE_DIR", str(tmp_path))
    built: list[int] = []
    monkeypatch.setattr(vl_convert, "javascript_bundle", lambda **kw: built.append(1) or "B;")
    first = offline._bundle_js.__wrapped__()
    second = offline._bundle_js.__wrapped__()  # a new kernel: read from the cache
    assert first == second == "B;" + offline.BUNDLE_END and built == [1]
    (kept,) = (tmp_path / "assets").iterdir()
    assert kept.name.startswith(f"vega-bundle-vl-convert-{vl_convert.__version__}-vega-lite-")
    kept.write_text("B")  # cut short: built again
    assert offline._bundle_js.__wrapped__() == first and built == [1, 1]


def test_bundle_html_wraps_the_bundle_in_a_function(monkeypatch) -> None:
    monkeypatch.setattr(offline, "_bundle_js", lambda: "window.vegaEmbed = 1;")
    html = offline.bundle_html()
    assert html.startswith("<style>")
    body = html.split('<script type="text/javascript">', 1)[1]
    assert body.startswith(f"/* {offline.BUNDLE_MARKER} (Vega-Lite ")
    assert "(function () {\nwindow.vegaEmbed = 1;\n})();\n</script>" in body


# -- register / enable_offline ------------------------------------------------------------------


def test_enable_offline_switches_renderer_and_theme(restore_altair) -> None:
    offline.enable_offline(display_bundle=False)
    assert offline.RENDERER in alt.renderers.names()
    assert alt.renderers.active == "evalkit" and alt.theme.active == "evalkit"


def test_enable_offline_shows_the_bundle_once_in_an_ipython_session(
    monkeypatch, restore_altair
) -> None:
    import IPython
    import IPython.display

    shown: list[tuple] = []
    monkeypatch.setattr(offline, "bundle_html", lambda: "<script>BUNDLE</script>")
    monkeypatch.setattr(IPython.display, "display", lambda *a, **k: shown.append((a, k)))
    monkeypatch.setattr(IPython, "get_ipython", lambda: None)
    offline.enable_offline()
    assert shown == []  # no session: nothing to display into
    monkeypatch.setattr(IPython, "get_ipython", lambda: object())
    offline.enable_offline()
    assert shown == [(({"text/html": "<script>BUNDLE</script>", "text/plain": ""},), {"raw": True})]
    offline.enable_offline(display_bundle=False)
    assert len(shown) == 1
