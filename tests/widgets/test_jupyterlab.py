"""explore.ipynb in a real JupyterLab, as a user opens it: the server starts at the
checkout's root (a copy: explore.ipynb and runs/), the notebook's kernel in notebooks/, no
runs_dir is given; headless
Chromium runs every cell (JupyterLab's own "run all" command over the DevTools protocol)
and the trial browser must list the repository's trials.

Needs the ``lab`` extra (jupyterlab) and Chromium: skipped without them, unless
EVALKIT_BROWSER=1 (CI), which makes a missing Chromium a failure.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.report.test_browser import chromium

pytestmark = [pytest.mark.browser, pytest.mark.slow]
pytest.importorskip("jupyterlab")

ROOT = Path(__file__).resolve().parents[2]
#: What the page shows, for a failure message.
STATE = """JSON.stringify({app: !!window.jupyterapp, title: document.title,
  widget: window.__nb?.title?.label,
  kernel: window.__nb?.sessionContext?.kernelDisplayStatus,
  dialog: document.querySelector('.jp-Dialog')?.innerText?.slice(0, 300),
  errors: [...document.querySelectorAll('.jp-OutputArea-output[data-mime-type*=error]')]
    .map(e => e.innerText.slice(0, 300))})"""
TRIALS_LISTED = "document.querySelectorAll('.ekw-mono select option').length"


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_http(url: str, seconds: float) -> str:
    end = time.monotonic() + seconds
    while True:
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                return r.read().decode()
        except OSError:
            if time.monotonic() > end:
                raise
            time.sleep(0.5)


class Page:
    """A minimal Chrome DevTools Protocol client over tornado's websocket."""

    def __init__(self, ws) -> None:
        self.ws, self.ids = ws, itertools.count(1)

    async def call(self, method: str, **params):
        i = next(self.ids)
        await self.ws.write_message(json.dumps({"id": i, "method": method, "params": params}))
        while True:
            msg = json.loads(await self.ws.read_message())
            if msg.get("id") == i:
                if "error" in msg:
                    raise RuntimeError(msg["error"])
                return msg["result"]

    async def js(self, expr: str):
        r = await self.call("Runtime.evaluate", expression=expr, awaitPromise=True,
                            returnByValue=True)  # fmt: skip
        return r["result"].get("value")

    async def until(self, expr: str, seconds: float):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            v = await self.js(expr)
            if v:
                return v
            await asyncio.sleep(1)
        state = await self.js(STATE)
        raise AssertionError(f"timed out waiting for: {expr}; page: {state}")


async def _drive(devtools: int, lab_url: str, shot: Path) -> tuple[int, str]:
    from tornado.websocket import websocket_connect

    pages = json.loads(_wait_http(f"http://127.0.0.1:{devtools}/json/list", 60))
    url = next(p["webSocketDebuggerUrl"] for p in pages if p.get("type") == "page")
    page = Page(await websocket_connect(url, max_message_size=64 << 20))
    await page.call("Page.enable")
    await page.call("Page.navigate", url=lab_url)
    await page.until("window.jupyterapp !== undefined", 120)
    opened = (
        "jupyterapp.restored.then(() => jupyterapp.commands.execute('docmanager:open', "
        "{path: 'notebooks/explore.ipynb', factory: 'Notebook'})).then(w => { window.__nb = w; "
        "jupyterapp.shell.activateById(w.id); return w.sessionContext.ready; }).then(() => true)"
    )
    await page.js(opened)
    await page.until("window.__nb.sessionContext.session?.kernel?.status === 'idle'", 240)
    await page.js("jupyterapp.commands.execute('notebook:run-all-cells').then(() => true)")
    n = await page.until(f"{TRIALS_LISTED} > 0 && {TRIALS_LISTED}", 300)
    text = await page.js("document.querySelector('.ekw-mono select').innerText")
    await page.js("document.querySelector('.ekw-mono').scrollIntoView()")
    png = await page.call("Page.captureScreenshot", format="png")
    import base64

    shot.write_bytes(base64.b64decode(png["data"]))
    return n, text


def _checkout(tmp_path: Path) -> Path:
    """A copy of notebooks/explore.ipynb with the repository's runs/ beside it, so nothing
    JupyterLab saves can touch the repository."""
    repo = tmp_path / "repo"
    (repo / "notebooks").mkdir(parents=True)
    shutil.copy(ROOT / "notebooks" / "explore.ipynb", repo / "notebooks" / "explore.ipynb")
    (repo / "runs").symlink_to(ROOT / "runs", target_is_directory=True)
    settings = tmp_path / "settings" / "@jupyterlab" / "docmanager-extension"
    settings.mkdir(parents=True)
    (settings / "plugin.jupyterlab-settings").write_text('{"autosave": false}')
    return repo


def test_explore_in_jupyterlab_lists_trials(tmp_path: Path) -> None:
    exe = chromium()
    repo = _checkout(tmp_path)
    port, devtools, token = _port(), _port(), secrets.token_hex(16)
    env = {k: v for k, v in os.environ.items() if k != "EVALKIT_RUNS"}
    env |= {"JUPYTER_CONFIG_DIR": str(tmp_path / "cfg"), "JUPYTER_RUNTIME_DIR": str(tmp_path / "rt"),
            "JUPYTERLAB_WORKSPACES_DIR": str(tmp_path / "ws"),
            "JUPYTERLAB_SETTINGS_DIR": str(tmp_path / "settings")}  # fmt: skip
    log = (tmp_path / "lab.log").open("w")
    lab = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", f"--ServerApp.port={port}",
         "--ServerApp.ip=127.0.0.1", f"--IdentityProvider.token={token}",
         f"--ServerApp.root_dir={repo}", "--LabApp.expose_app_in_browser=True",
         *(["--allow-root"] if os.geteuid() == 0 else [])],
        cwd=repo, env=env, stdout=subprocess.DEVNULL, stderr=log,
    )  # fmt: skip
    flags = ["--headless", "--disable-gpu", "--no-first-run", "--window-size=1400,1000",
             f"--remote-debugging-port={devtools}", f"--user-data-dir={tmp_path / 'chrome'}"]  # fmt: skip
    if os.geteuid() == 0:
        flags.append("--no-sandbox")
    browser = subprocess.Popen([exe, *flags, "about:blank"], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        _wait_http(f"http://127.0.0.1:{port}/api/status?token={token}", 120)
        lab_url = f"http://127.0.0.1:{port}/lab?token={token}"
        shot = Path(os.environ.get("EVALKIT_SCREENSHOT_DIR", tmp_path)) / "jupyterlab-explore.png"
        n, listed = asyncio.run(_drive(devtools, lab_url, shot))
    finally:
        browser.terminate()
        lab.terminate()
        browser.wait(30)
        lab.wait(30)
        log.close()
    assert n > 50, (n, (tmp_path / "lab.log").read_text()[-2000:])
    assert "scripted" in listed  # the repository's runs/, found from notebooks/
