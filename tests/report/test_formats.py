"""The same report as Markdown with images (for a pull request) and as PDF (Chromium's
print, checked page by page with pdftoppm)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import nbformat
import pytest

from evalkit.report.formats import FORMATS, to_markdown, to_pdf
from tests.report.test_browser import chromium

pytestmark = pytest.mark.slow


def test_markdown_has_tables_and_chart_images(nightly_report, tmp_path: Path) -> None:
    nb = nbformat.read(str(nightly_report.notebook), as_version=4)
    md = to_markdown(nb, tmp_path / "report.md")
    text = md.read_text()
    images = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", text)
    assert len(images) >= 3, "charts are images"
    for rel in images:
        png = tmp_path / rel
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", rel
        assert not Path(rel).is_absolute()  # links work where the folder is copied
    assert "<table" in text and "Ship gate" in text and re.search(r"\d+(\.\d+)?\s*%", text)
    assert "<script" not in text and "vega-embed bundle" not in text
    assert "from evalkit import report" not in text  # no code


def test_pdf_prints_the_report(nightly_report, tmp_path: Path) -> None:
    chromium()  # skips (fails in CI) without Chromium
    pdftoppm = shutil.which("pdftoppm")
    if pdftoppm is None:
        pytest.skip("pdftoppm (poppler-utils) not installed")
    pdf = to_pdf(nightly_report.html, tmp_path / "report.pdf")
    assert pdf.read_bytes()[:5] == b"%PDF-"
    subprocess.run([pdftoppm, "-png", "-r", "40", str(pdf), str(tmp_path / "page")], check=True)
    pages = sorted(tmp_path.glob("page-*.png"))
    assert len(pages) >= 2, "the whole report, not one screen"
    text = subprocess.run(
        ["pdftotext", str(pdf), "-"], capture_output=True, text=True, check=False
    ).stdout
    if text:  # pdftotext ships with pdftoppm
        assert "Ship gate" in text or "Runs" in text


def test_formats_named_once() -> None:
    assert FORMATS == ("html", "ipynb", "pdf", "md")
