"""HTML export: CDN references are stripped, remaining network resources are detected."""

from __future__ import annotations

from evalkit.report.export import BUNDLE_MARKER, external_resources, make_offline

PAGE = f"""<html><head>
<script src="https://cdnjs.cloudflare.com/ajax/libs/require.js/2.1.10/require.min.js"></script>
<script src="https://cdnjs.cloudflare.com/ajax/libs/mathjax/2.7.7/latest.js?config=TeX"> </script>
<script type="text/x-mathjax-config">MathJax.Hub.Config({{}});</script>
<link rel="stylesheet" href="https://fonts.example.com/font.css">
<link rel="icon" href="data:image/png;base64,AAAA">
<script type="module">
  const mermaid = (await import("https://cdnjs.cloudflare.com/ajax/libs/mermaid/11.10.0/mermaid.esm.min.mjs")).default;
</script>
<style>.a {{ background: url(data:image/svg+xml;base64,AAA); }}</style>
</head><body>
<script type="text/javascript">/* {BUNDLE_MARKER} */ (function(){{ var s = "https://vega.github.io/editor/"; }})();</script>
<a href="https://example.com/docs">a link is not a resource</a>
<script>var x = 1;</script>
</body></html>"""


def test_make_offline_strips_cdn_references() -> None:
    out = make_offline(PAGE)
    assert external_resources(out) == []
    assert "require.min.js" not in out and "mathjax" not in out.lower() and "mermaid" not in out
    assert "fonts.example.com" not in out
    assert BUNDLE_MARKER in out and "var x = 1;" in out  # inline scripts stay
    assert 'href="https://example.com/docs"' in out  # links stay
    assert "max-width" in out  # page CSS added


def test_external_resources_finds_every_kind() -> None:
    page = """<html><head><style>@import url("https://x.example/a.css"); .b { background: url(//cdn.example/i.png) }</style>
    <script src="//cdn.example/lib.js"></script>
    <script type="module">import x from "https://esm.example/m.js";</script>
    </head><body><img src="https://img.example/p.png"><iframe src="http://frame.example/"></iframe></body></html>"""
    found = external_resources(page)
    for u in (
        "https://x.example/a.css",
        "//cdn.example/i.png",
        "//cdn.example/lib.js",
        "https://esm.example/m.js",
        "https://img.example/p.png",
        "http://frame.example/",
    ):
        assert any(u in f for f in found), u


def test_static_chart_images_leave_a_page_that_carries_the_bundle() -> None:
    from evalkit.charts.offline import chart_html
    from evalkit.report.export import without_static_images

    spec = {"title": 'a "quoted" <title>', "mark": "point", "data": {"values": [{"x": 1}]}}
    chart = chart_html(spec, png="iVBORw0KGgo=")
    bundle = f'<script type="text/javascript">/* {BUNDLE_MARKER} */</script>'
    page = without_static_images(bundle + chart)
    assert "data:image/png" not in page and "<img" not in page
    assert 'class="evalkit-chart"' in page and "vegaEmbed" in page  # the chart itself stays
    assert without_static_images(chart) == chart  # no bundle: the image is all there is
    # nbconvert writes the outputs back with their attributes sorted
    resorted = '<img alt="a -&gt; b" class="evalkit-chart-static" src="data:image/png;base64,AAAA">'
    assert without_static_images(bundle + resorted) == bundle
