"""Executed notebook -> one self-contained HTML file that renders offline.

nbconvert's ``lab`` template (inputs excluded) references require.js, MathJax and mermaid on
a CDN. Reports use none of them (charts come with their own inline Vega bundle, see
``evalkit/charts/offline.py``), so those references are removed; :func:`external_resources`
lists anything still pointing at the network (a test keeps that list empty).
"""

from __future__ import annotations

import re
from typing import Any

#: Start of the Vega bundle's script (evalkit/charts/offline.py defines the same text; a test
#: checks they agree). Kept here so exporting does not import Altair.
BUNDLE_MARKER = "evalkit: vega-embed bundle"
#: Class of a chart's static image (evalkit/charts/offline.py: STATIC_CLASS, same check).
STATIC_CLASS = "evalkit-chart-static"
# attributes in any order: nbconvert writes outputs back sorted (attribute values escape ">")
_STATIC_IMAGE = re.compile(rf'<img\b[^>]*\bclass="{STATIC_CLASS}"[^>]*>')

_SCRIPT = re.compile(r"<script\b([^>]*)>(.*?)</script\s*>", re.I | re.S)
_LINK = re.compile(r"<link\b[^>]*>", re.I)
_EXTERNAL = re.compile(r"""^\s*(?:https?:)?//""", re.I)
_SRC = re.compile(r"""\bsrc\s*=\s*["']([^"']*)["']""", re.I)
_HREF = re.compile(r"""\bhref\s*=\s*["']([^"']*)["']""", re.I)
_REMOTE_IMPORT = re.compile(r"""(?:\bimport\s*\(\s*|\bfrom\s+)["'](?:https?:)?//""")
_CSS_URL = re.compile(r"""url\(\s*["']?((?:https?:)?//[^"')\s]+)""", re.I)
_STYLE = re.compile(r"<style\b[^>]*>(.*?)</style\s*>", re.I | re.S)
_TAG_SRC = re.compile(
    r"""<(img|iframe|audio|video|source|embed|object)\b[^>]*\b(?:src|data)\s*=\s*["']((?:https?:)?//[^"']+)""",
    re.I,
)

PAGE_CSS = """<style>
body { background: #fff; }
main, body > .jp-Notebook { max-width: 1180px; margin: 0 auto; }
.jp-OutputArea-output pre { white-space: pre-wrap; }
@media print { .jp-Cell { break-inside: avoid-page; } details { display: block; } }
</style>"""


def _strip_scripts(html: str) -> str:
    def keep(m: re.Match[str]) -> str:
        attrs, body = m.group(1), m.group(2)
        src = _SRC.search(attrs)
        if src and _EXTERNAL.match(src.group(1)):
            return ""
        if BUNDLE_MARKER in body[:300]:
            return m.group(0)
        if _REMOTE_IMPORT.search(body):
            return ""  # e.g. nbconvert's mermaid loader (dynamic import from a CDN)
        if "text/x-mathjax-config" in attrs:
            return ""  # MathJax itself is gone
        return m.group(0)

    return _SCRIPT.sub(keep, html)


def _strip_links(html: str) -> str:
    def keep(m: re.Match[str]) -> str:
        href = _HREF.search(m.group(0))
        return "" if href and _EXTERNAL.match(href.group(1)) else m.group(0)

    return _LINK.sub(keep, html)


def make_offline(html: str) -> str:
    """Remove the CDN scripts / stylesheets nbconvert adds and add the page CSS."""
    html = _strip_links(_strip_scripts(html))
    return html.replace("</head>", PAGE_CSS + "\n</head>", 1)


def external_resources(html: str) -> list[str]:
    """Every network resource the page would load to render: script / iframe / img ... src,
    stylesheet links, CSS url() and @import, ES module imports. Plain <a href> links are not
    resources and are not listed."""
    found: list[str] = []
    for m in _SCRIPT.finditer(html):
        src = _SRC.search(m.group(1))
        if src and _EXTERNAL.match(src.group(1)):
            found.append(src.group(1))
        body = m.group(2)
        for im in re.finditer(
            r"""(?:\bimport\s*\(\s*|\bimport\s+[^;]*?\bfrom\s+)["']((?:https?:)?//[^"']+)""", body
        ):
            found.append(im.group(1))
    for m in _LINK.finditer(html):
        href = _HREF.search(m.group(0))
        if href and _EXTERNAL.match(href.group(1)):
            found.append(href.group(1))
    for m in _STYLE.finditer(html):
        found.extend(u.group(1) for u in _CSS_URL.finditer(m.group(1)))
        found.extend(
            u.group(0)
            for u in re.finditer(
                r"""@import\s+(?:url\()?\s*["']?(?:https?:)?//[^"')\s;]+""", m.group(1)
            )
        )
    found.extend(m.group(2) for m in _TAG_SRC.finditer(html))
    return found


def to_html(nb: Any, title: str) -> str:
    """The report page: outputs only (no code, no prompts), offline."""
    from nbconvert import HTMLExporter  # imported here: slow, and only needed to export

    exp = HTMLExporter(
        template_name="lab",
        exclude_input=True,
        exclude_output_prompt=True,
        exclude_input_prompt=True,
    )
    body, _ = exp.from_notebook_node(nb, resources={"metadata": {"name": title}})
    return make_offline(without_static_images(body))


def without_static_images(html: str) -> str:
    """The page without the charts' static images when it carries the Vega bundle: every
    chart is then drawn where it stands, and the images (most of a many-run page's bytes)
    stay in the executed .ipynb for viewers that run no script."""
    return _STATIC_IMAGE.sub("", html) if BUNDLE_MARKER in html else html
