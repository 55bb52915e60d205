"""Every notebook has its jupytext percent pair (notebooks/NAME.py) and the two agree cell
by cell, so a review reads a notebook change as a code change. Fix a failure with
``.venv/bin/jupytext --sync notebooks/*.ipynb``."""

from __future__ import annotations

from pathlib import Path

import jupytext
import pytest

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
IPYNB = sorted(NOTEBOOKS.glob("*.ipynb"))


def cells(nb) -> list[tuple[str, str, list[str]]]:
    return [(c.cell_type, c.source.strip(), sorted(c.metadata.get("tags", []))) for c in nb.cells]


def test_every_script_has_its_notebook() -> None:
    scripts = {p.stem for p in NOTEBOOKS.glob("*.py")}
    assert scripts == {p.stem for p in IPYNB}


@pytest.mark.parametrize("path", IPYNB, ids=lambda p: p.name)
def test_pair_in_sync(path: Path) -> None:
    py = path.with_suffix(".py")
    assert py.exists(), f"{py.name} missing: run jupytext --sync notebooks/*.ipynb"
    text = py.read_text(encoding="utf-8")
    assert text.startswith("# ---\n# jupyter:") and "\n# %%" in text  # percent format
    nb, script = jupytext.read(path), jupytext.reads(text, fmt="py:percent")
    assert cells(script) == cells(nb), f"{path.name} and {py.name} differ: run jupytext --sync"


def test_a_changed_cell_is_caught(tmp_path: Path) -> None:
    nb = jupytext.read(IPYNB[0])
    text = jupytext.writes(nb, fmt="py:percent").replace("import", "import  ", 1)
    assert cells(jupytext.reads(text, fmt="py:percent")) != cells(nb)
