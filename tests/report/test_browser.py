"""The rendered nightly report in headless Chromium: a screenshot, charts drawn (SVG inside
every Vega container), the gate section present, and no network request from the page.

Network check: a copy of the report gets a Content-Security-Policy that allows nothing from
the network (``default-src 'none'``) plus a probe that records every CSP violation and every
entry of the Resource Timing API; both lists must stay empty. Chromium also runs with
``--host-resolver-rules`` that resolve no host, so nothing could load anyway.

Skipped when Chromium is missing, unless EVALKIT_BROWSER=1 (CI): then it fails.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.slow]

FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-quic", "--no-first-run", "--disable-sync",
    "--disable-extensions", "--hide-scrollbars", "--virtual-time-budget=15000",
    "--host-resolver-rules=MAP * ~NOTFOUND",
]  # fmt: skip

PROBE = """<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline' 'unsafe-eval'; style-src 'unsafe-inline'; img-src data:; font-src data:">
<script>
window.__ek = {blocked: [], resources: []};
document.addEventListener('securitypolicyviolation', function (e) { window.__ek.blocked.push(e.blockedURI + ' (' + e.violatedDirective + ')'); });
window.addEventListener('load', function () {
  setTimeout(function () {
    window.__ek.resources = performance.getEntriesByType('resource').map(function (r) { return r.name; });
    var pre = document.createElement('pre'); pre.id = 'ek-probe';
    pre.textContent = JSON.stringify(window.__ek); document.body.appendChild(pre);
  }, 3000);
});
</script>"""


def chromium() -> str:
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None and os.path.exists("/usr/bin/chromium"):
        exe = "/usr/bin/chromium"
    if exe is None:
        if os.environ.get("EVALKIT_BROWSER") == "1":
            pytest.fail(
                "EVALKIT_BROWSER=1 but Chromium is not installed (apt-get install -y chromium)"
            )
        pytest.skip("Chromium not installed (set EVALKIT_BROWSER=1 to make this a failure)")
    return exe


class _Charts(HTMLParser):
    """Counts Vega containers (div.evalkit-chart) and those holding an <svg> or <canvas>."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[tuple[str, bool]] = []
        self.charts = 0
        self.drawn = 0
        self.missing = 0
        self._has: list[bool] = []
        self.gate = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        cls = (a.get("class") or "").split()
        if a.get("id") == "evalkit-gate":
            self.gate = True
        is_chart = tag == "div" and "evalkit-chart" in cls
        if is_chart:
            self.charts += 1
            self.missing += "evalkit-chart-missing" in cls
            self._has.append(False)
        if tag in ("svg", "canvas") and self._has and any(c for _, c in self.stack):
            self._has[-1] = True
        if tag not in (
            "meta",
            "br",
            "img",
            "input",
            "link",
            "hr",
            "path",
            "rect",
            "line",
            "circle",
        ):
            self.stack.append((tag, is_chart))

    def handle_endtag(self, tag: str) -> None:
        while self.stack:
            t, is_chart = self.stack.pop()
            if is_chart:
                self.drawn += self._has.pop()
            if t == tag:
                break


def _run(exe: str, args: list[str], tmp: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [exe, *FLAGS, f"--user-data-dir={tmp / 'profile'}", *args],
        capture_output=True, text=True, timeout=240, check=False,
    )  # fmt: skip


def test_report_in_chromium(nightly_report, tmp_path: Path) -> None:
    exe = chromium()
    page = nightly_report.html.read_text()
    probed = tmp_path / "probed.html"
    probed.write_text(page.replace("<head>", "<head>\n" + PROBE, 1))

    shot = tmp_path / "report.png"
    r = _run(exe, ["--window-size=1280,2200", f"--screenshot={shot}", probed.as_uri()], tmp_path)
    assert shot.exists(), r.stderr[-2000:]
    png = shot.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 30_000  # a page, not a blank

    r = _run(exe, ["--dump-dom", probed.as_uri()], tmp_path)
    dom = r.stdout
    assert "ek-probe" in dom, r.stderr[-2000:]
    p = _Charts()
    p.feed(dom)
    assert p.charts >= 8, "expected the report's charts"
    assert p.drawn == p.charts and p.missing == 0, f"{p.drawn} of {p.charts} charts drawn"
    assert p.gate, "gate section missing"
    start = dom.index('id="ek-probe"')
    probe = json.loads(
        dom[dom.index(">", start) + 1 : dom.index("</pre>", start)]
        .replace("&quot;", '"')
        .replace("&amp;", "&")
    )
    assert probe["blocked"] == [], probe["blocked"]
    assert [u for u in probe["resources"] if not u.startswith(("data:", "blob:"))] == []
