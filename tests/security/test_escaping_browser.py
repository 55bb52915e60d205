"""Trajectory and verifier content renders as text, in headless Chromium.

The hostile runs folder (``hostile.py``) carries HTML/JS payloads in a task name, exception
messages, verifier output and every text field of its trajectories. Each payload would set
``document.title`` to ``PWNED`` and add an ``<ek-pwned>`` element if it ever ran. The nightly
report (nbconvert HTML) and the widgets' HTML values are opened in Chromium with a probe that
records, after load and a pause: the title, ``<ek-pwned>`` elements, event-handler attributes,
``javascript:`` URLs, iframes / objects / embeds / bases / metas added by content, and every
network request (CSP violations and Resource Timing); all must be absent, and the payload
text must be on the page as text.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from tests.report.test_browser import FLAGS, chromium
from tests.security.hostile import EVIL_TASK, GLOB, PAYLOADS

pytestmark = [pytest.mark.browser, pytest.mark.slow]

TITLE = "ek-escaping-probe"
PROBE = """<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline' 'unsafe-eval'; style-src 'unsafe-inline'; img-src data:; font-src data:">
<script>
window.__ek = {blocked: []};
document.addEventListener('securitypolicyviolation', function (e) { window.__ek.blocked.push(e.blockedURI + ' (' + e.violatedDirective + ')'); });
window.addEventListener('load', function () {
  setTimeout(function () {
    var all = Array.prototype.slice.call(document.querySelectorAll('*'));
    var handlers = [], jsurls = [];
    all.forEach(function (el) {
      Array.prototype.forEach.call(el.attributes, function (a) {
        if (/^on/i.test(a.name)) handlers.push(el.tagName + ' ' + a.name);
        if (/^\\s*javascript:/i.test(a.value)) jsurls.push(el.tagName + ' ' + a.name);
      });
    });
    var r = {
      title: document.title,
      pwned: document.getElementsByTagName('ek-pwned').length,
      handlers: handlers, jsurls: jsurls,
      frames: document.querySelectorAll('iframe, object, embed, frame').length,
      bases: document.querySelectorAll('base').length,
      refresh: document.querySelectorAll('meta[http-equiv=refresh]').length,
      evilScripts: Array.prototype.filter.call(document.scripts, function (s) { return /^\\s*(top\\.)?document\\.title/.test(s.text); }).length,
      blocked: window.__ek.blocked,
      resources: performance.getEntriesByType('resource').map(function (e) { return e.name; }),
      text: document.body.textContent
    };
    var pre = document.createElement('pre'); pre.id = 'ek-probe';
    pre.textContent = JSON.stringify(r); document.body.appendChild(pre);
  }, 2500);
});
</script>"""


def _probe(page: str, tmp: Path, name: str) -> dict:
    exe = chromium()
    page = re.sub(r"<title>.*?</title>", "", page, count=1, flags=re.S)
    head = f"<head>\n<title>{TITLE}</title>\n{PROBE}"
    page = (
        page.replace("<head>", head, 1)
        if "<head>" in page
        else f"<html>{head}</head><body>{page}</body></html>"
    )
    f = tmp / f"{name}.html"
    f.write_text(page, encoding="utf-8")
    r = subprocess.run(
        [exe, *FLAGS, f"--user-data-dir={tmp / ('profile-' + name)}", "--dump-dom", f.as_uri()],
        capture_output=True, text=True, timeout=240, check=False,
    )  # fmt: skip
    dom = r.stdout
    assert 'id="ek-probe"' in dom, r.stderr[-2000:]
    start = dom.index('id="ek-probe"')
    raw = dom[dom.index(">", start) + 1 : dom.index("</pre>", start)]
    for a, b in (("&lt;", "<"), ("&gt;", ">"), ("&quot;", '"'), ("&amp;", "&")):
        raw = raw.replace(a, b)
    return json.loads(raw)


def _assert_inert(r: dict, must_show: list[str]) -> None:
    assert r["title"] == TITLE, f"a payload changed document.title to {r['title']!r}"
    assert r["pwned"] == 0, "a payload created an element"
    assert r["evilScripts"] == 0, "a payload became a <script> element"
    assert r["handlers"] == [], f"event-handler attributes from content: {r['handlers'][:5]}"
    assert r["jsurls"] == [], f"javascript: URLs from content: {r['jsurls'][:5]}"
    assert r["frames"] == 0 and r["bases"] == 0 and r["refresh"] == 0
    assert r["blocked"] == [], f"network loads attempted: {r['blocked'][:5]}"
    assert [u for u in r["resources"] if not u.startswith(("data:", "blob:"))] == []
    for text in must_show:
        assert text in r["text"], f"payload not shown as text: {text[:60]!r}"


def test_report_renders_payloads_as_text(hostile_report, tmp_path: Path) -> None:
    page = hostile_report.html.read_text(encoding="utf-8")
    assert "Broken: A passed, B does not (1)" in page  # the hostile task's evidence is in
    r = _probe(page, tmp_path, "report")
    _assert_inert(r, [EVIL_TASK, GLOB, "onerror=", "ontoggle=", "javascript:", "</script><script>"])


def test_evidence_bundle_in_a_markdown_viewer_that_allows_html(
    hostile_runs: Path, tmp_path: Path
) -> None:
    """The bundle's Markdown, rendered as a viewer that lets raw HTML through would: no
    payload runs, and the shell glob keeps its asterisks (no italics)."""
    import mistune

    import evalkit
    from evalkit.compare import evidence_bundle

    runs = evalkit.load(hostile_runs, progress=False)
    md = evidence_bundle(runs, "base-night", "cand-night", EVIL_TASK)
    html = mistune.create_markdown(escape=False, plugins=["table"])(md)
    assert "<em>" not in html
    r = _probe(html, tmp_path, "bundle")
    _assert_inert(r, [EVIL_TASK, GLOB, "onerror="])


def test_executed_notebook_outputs_carry_no_live_markup(hostile_report) -> None:
    """What Jupyter would render from the executed .ipynb: the same escaped HTML."""
    nb = json.loads(hostile_report.notebook.read_text(encoding="utf-8"))
    html = [
        "".join(o["data"]["text/html"])
        for c in nb["cells"]
        for o in c.get("outputs", [])
        if "text/html" in o.get("data", {})
    ]
    joined = "\n".join(html)
    assert "PWNED" in joined  # the payload text is there...
    for p in PAYLOADS:  # ...but never as markup
        assert "<" not in p or p not in joined, p[:60]
    assert not re.search(r"<(script|img|svg|iframe|details|input|meta|a|b)\b[^>]*PWNED", joined)


def _widget_html(runs) -> list[str]:
    import ipywidgets as W

    from evalkit.widgets import CompareExplorer, TrialBrowser

    b = TrialBrowser(runs)
    evil = runs.trials.filter(
        (runs.trials["task_name"] == EVIL_TASK) & (runs.trials["job_name"] == "cand-night")
    )["trial_id"][0]
    b.select(evil)
    b.stepper.all_steps.value = True
    x = CompareExplorer(runs)
    x.a.value, x.b.value = runs.run_labels[0], runs.run_labels[1]
    x.compare()
    x.select_task(EVIL_TASK)
    out = []

    def walk(w) -> None:
        if isinstance(w, W.HTML):
            out.append(w.value)
        for child in getattr(w, "children", ()):
            walk(child)

    walk(b)
    walk(x)
    return out


def test_widgets_render_payloads_as_text(hostile_runs: Path, tmp_path: Path) -> None:
    import evalkit

    runs = evalkit.load(hostile_runs, run="job", progress=False, cache=False)
    values = _widget_html(runs)
    assert len(values) >= 10
    body = "\n<hr>\n".join(values)
    assert "PWNED" in body
    r = _probe(body, tmp_path, "widgets")
    _assert_inert(
        r, [EVIL_TASK, "onerror=", "ontoggle=", "javascript:", "</script><script>", "```"]
    )
