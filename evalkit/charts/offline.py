"""Offline chart rendering: one Vega bundle per notebook, a tiny snippet per chart.

``enable_offline()`` is the one call a notebook makes. It

1. displays the vega / vega-lite / vega-embed JavaScript bundle (from vl-convert, ~0.9 MB)
   ONCE, as an HTML output of the calling cell; the bundle defines ``window.vegaEmbed``;
2. enables the ``evalkit`` Altair renderer: each chart becomes a ``<div>`` plus a few lines
   of script that call ``window.vegaEmbed`` (no CDN, no per-chart copy of the bundle),
   with a static PNG of the chart (vl-convert) inside the ``<div>`` and beside it in the
   output, so viewers that run no JavaScript (GitHub, nbviewer) still show it. The report
   page, which carries the bundle, leaves the inner image out (``report/export.py``).

This works live in Jupyter (scripts of trusted outputs run in order) and in nbconvert HTML
(the outputs become one page; the bundle's script runs before the charts' scripts). Why
not Altair's own renderers (see docs/report.md): ``default`` / ``html`` load Vega from a
CDN (blank offline), ``html`` with ``template="inline"`` repeats the bundle in every chart,
and ``mimetype`` breaks papermill (nbformat rejects Altair 6's vega-lite v6 mimetype).
"""

from __future__ import annotations

import base64
import html
import json
import uuid
from functools import cache
from typing import Any

import altair as alt

from evalkit.load.shared.cache import read_asset, write_asset

RENDERER = "evalkit"
#: Marker at the start of the bundle script (tests and the report count it: once per report).
BUNDLE_MARKER = "evalkit: vega-embed bundle"
#: Class of a chart's static image (report/export.py drops it from pages that carry the bundle).
STATIC_CLASS = "evalkit-chart-static"
#: Class of the line that stands in for a chart drawn without a static image, where no
#: script runs (the chart's script removes it).
NOTE_CLASS = "evalkit-chart-note"
#: The last line of a complete cached bundle (a file cut short is built again).
BUNDLE_END = "\n/* end of the evalkit vega-embed bundle */\n"
EMBED_OPTIONS = {"renderer": "svg", "actions": False, "mode": "vega-lite"}

_STYLE = """<style>
.evalkit-chart { margin: 0.4em 0 1em 0; max-width: 100%; overflow-x: auto; }
.evalkit-chart .vega-embed { display: inline-block; }
.evalkit-chart-missing { color: #a00; font-style: italic; }
</style>"""


@cache
def _bundle_js() -> str:
    """vl-convert's Vega bundle, built once per vl-convert and Vega-Lite version and kept in
    evalkit's cache (building it takes about a second in every new kernel)."""
    import vl_convert as vlc
    from altair.utils._importers import vl_version_for_vl_convert

    vl = vl_version_for_vl_convert()
    name = f"vega-bundle-vl-convert-{vlc.__version__}-vega-lite-{vl}.js"
    js = read_asset(name)
    if js is None or not js.endswith(BUNDLE_END):
        js = vlc.javascript_bundle(vl_version=vl) + BUNDLE_END
        write_asset(name, js)
    if "</script" in js.lower():  # would end the inline <script> early
        js = js.replace("</script", "<\\/script").replace("</SCRIPT", "<\\/SCRIPT")
    return js


def bundle_html() -> str:
    """The bundle as an HTML snippet: a style block and one script (wrapped in a function
    so its top-level names cannot clash with anything else on the page)."""
    from altair.utils._importers import vl_version_for_vl_convert

    return (
        f'{_STYLE}\n<script type="text/javascript">/* {BUNDLE_MARKER} '
        f"(Vega-Lite {vl_version_for_vl_convert()}) */\n(function () {{\n{_bundle_js()}\n}})();\n"
        "</script>"
    )


def _script_json(obj: Any) -> str:
    """JSON that is safe inside a <script> element (chart data is untrusted text)."""
    return (
        json.dumps(obj, allow_nan=False, default=str)
        .replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


def static_png(spec: dict[str, Any], scale: float = 1.0) -> str | None:
    """The chart drawn as a PNG by vl-convert, base64; None when vl-convert cannot draw it."""
    import vl_convert as vlc
    from altair.utils._importers import vl_version_for_vl_convert

    try:
        png = vlc.vegalite_to_png(spec, vl_version=vl_version_for_vl_convert(), scale=scale)
    except ValueError:
        return None
    return base64.b64encode(png).decode("ascii")


def chart_html(spec: dict[str, Any], div_id: str | None = None, png: str | None = None) -> str:
    """The HTML for one chart: a container and a call to the already-loaded vegaEmbed.

    ``png`` (base64): a static image shown inside the container until Vega has drawn the
    interactive chart, and kept where no script runs (GitHub, nbviewer, mail). Without it,
    a line of text says where the chart can be seen, until Vega replaces it.
    """
    div_id = div_id or f"evalkit-chart-{uuid.uuid4().hex[:12]}"
    title = html.escape(_title(spec), quote=True)
    img = (
        f'<img class="{STATIC_CLASS}" alt="{title}" src="data:image/png;base64,{png}">'
        if png
        else f'<span class="{NOTE_CLASS}">Chart: {title} (drawn by script: open the '
        "report's HTML page, or trust this notebook and run it).</span>"
    )
    return f"""<div class="evalkit-chart" id="{div_id}">{img}</div>
<script type="text/javascript">
(function () {{
  var el = document.getElementById("{div_id}");
  var still = el.querySelector(".{STATIC_CLASS}");
  var note = el.querySelector(".{NOTE_CLASS}");
  if (note) note.remove();  // a script runs here: the chart or its error replaces the note
  var spec = {_script_json(spec)};
  var opt = {json.dumps(EMBED_OPTIONS)};
  if (window.vegaEmbed) {{
    var target = document.createElement("div");
    el.appendChild(target);
    window.vegaEmbed(target, spec, opt).then(function () {{
      if (still) still.remove();
    }}).catch(function (err) {{
      if (still) return;
      el.className += " evalkit-chart-missing";
      el.textContent = "Chart failed to render: " + err;
    }});
  }} else if (!still) {{
    el.className += " evalkit-chart-missing";
    el.textContent = "Chart not shown: the Vega bundle is missing (call evalkit.charts.enable_offline() first).";
  }}
}})();
</script>"""


def _title(spec: dict[str, Any]) -> str:
    title = spec.get("title")
    if isinstance(title, dict):
        title = title.get("text")
    if isinstance(title, list):
        title = " ".join(map(str, title))
    return str(title or "untitled")


def chart_bundle(spec: dict[str, Any], static_images: bool | None = None) -> dict[str, str]:
    """One chart's display data: the interactive HTML (with the static image inside), the
    static PNG beside it (viewers that prefer images) and a text line. ``static_images``:
    draw the PNG (None: as :func:`enable_offline` was told)."""
    if static_images is None:
        static_images = alt.renderers.options.get("static_images", True)
    png = static_png(spec) if static_images else None
    out = {"text/html": chart_html(spec, png=png), "text/plain": f"<chart: {_title(spec)}>"}
    if png:
        out["image/png"] = png
    return out


def _renderer(spec: dict[str, Any], static_images: bool = True, **_meta: Any) -> dict[str, str]:
    return chart_bundle(spec, static_images)


def register() -> None:
    """Register (not enable) the ``evalkit`` renderer with Altair."""
    alt.renderers.register(RENDERER, _renderer)


def enable_offline(*, display_bundle: bool = True, static_images: bool = True) -> None:
    """Render Altair charts offline: show the Vega bundle once, then tiny per-chart snippets.

    Call it once, early in a notebook (the bundle is an output of the calling cell; charts
    drawn before it have no Vega to use). ``display_bundle=False`` only switches the
    renderer (for a page that already carries the bundle). ``static_images=False`` leaves
    out each chart's PNG (vl-convert): faster, for outputs that run the charts' scripts.
    """
    register()
    alt.renderers.enable(RENDERER, static_images=static_images)
    from evalkit.charts.theme import enable_theme

    enable_theme()
    if display_bundle:
        try:
            from IPython import get_ipython
            from IPython.display import display
        except ImportError:  # pragma: no cover - IPython ships with ipykernel
            return
        if get_ipython() is not None:
            display({"text/html": bundle_html(), "text/plain": ""}, raw=True)
