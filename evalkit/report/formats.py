"""The same report as PDF (Chromium prints the offline HTML) and as Markdown with images.

Which to share where (docs/report.md): HTML for a browser (interactive charts, offline),
the executed notebook for Jupyter users, PDF for mail and archives, Markdown for a pull
request or a wiki (tables as HTML, charts as PNG files beside the .md).
"""

from __future__ import annotations

import base64
import copy
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

FORMATS = ("html", "ipynb", "pdf", "md")
#: Where Chromium is looked for when $EVALKIT_CHROMIUM is not set.
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
#: Page outputs with no content of their own (the Vega bundle, style sheets).
_ONLY_CODE = re.compile(r"^\s*(?:<(style|script)\b.*?</\1\s*>\s*)+$", re.S | re.I)


class FormatError(RuntimeError):
    """A format could not be written (the message says what is missing)."""


def chromium() -> str | None:
    """Chromium's executable: $EVALKIT_CHROMIUM, else the first of CHROMIUM_NAMES on PATH."""
    env = os.environ.get("EVALKIT_CHROMIUM")
    if env:
        return env
    return next((p for p in map(shutil.which, CHROMIUM_NAMES) if p), None)


def to_pdf(html: Path, pdf: Path, timeout: float = 180) -> Path:
    """Print the offline report page with headless Chromium (charts drawn, no network)."""
    exe = chromium()
    if exe is None:
        raise FormatError(
            "PDF needs Chromium (apt-get install chromium, or set EVALKIT_CHROMIUM); "
            "the HTML report prints to PDF from any browser too"
        )
    flags = [
        "--headless", "--disable-gpu", "--no-first-run", "--disable-extensions",
        "--disable-background-networking", "--host-resolver-rules=MAP * ~NOTFOUND",
        "--virtual-time-budget=20000", "--no-pdf-header-footer", "--print-to-pdf-no-header",
        f"--print-to-pdf={pdf.resolve()}",
    ]  # fmt: skip
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        flags.append("--no-sandbox")  # Chromium refuses to run as root with its sandbox
    pdf.unlink(missing_ok=True)
    res = subprocess.run(
        [exe, *flags, html.resolve().as_uri()], capture_output=True, text=True, timeout=timeout
    )
    if not pdf.exists() or pdf.stat().st_size == 0:
        tail = "\n".join(res.stderr.strip().splitlines()[-5:])
        raise FormatError(f"Chromium wrote no PDF (exit {res.returncode}): {tail}")
    return pdf


def _for_markdown(nb: Any) -> Any:
    """A copy of the executed notebook as Markdown should show it: no code, no bundle or
    style-only outputs, and charts as their static PNG instead of their script."""
    nb = copy.deepcopy(nb)
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        cell.source = ""
        kept = []
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if "image/png" in data:
                data.pop("text/html", None)
            elif _ONLY_CODE.match(str(data.get("text/html", ""))) or out.get("name") == "stderr":
                continue
            kept.append(out)
        cell.outputs = kept
    return nb


def to_markdown(nb: Any, md: Path) -> Path:
    """Write the report as Markdown: tables stay HTML (GitHub and GitLab render them),
    every chart a PNG in ``<stem>_files/`` referenced by a relative link."""
    from nbconvert import MarkdownExporter

    exp = MarkdownExporter(exclude_input=True, exclude_input_prompt=True)
    files_dir = f"{md.stem}_files"
    body, res = exp.from_notebook_node(
        _for_markdown(nb), resources={"output_files_dir": files_dir, "unique_key": md.stem}
    )
    for name, data in res.get("outputs", {}).items():
        target = md.parent / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data if isinstance(data, bytes) else base64.b64decode(data))
    md.write_text(re.sub(r"\n{3,}", "\n\n", body).strip() + "\n", encoding="utf-8")
    return md
