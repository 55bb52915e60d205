"""notebooks/*.ipynb are committed clean: no outputs, no execution counts, a cell tagged
``parameters``, the python3 kernelspec, and only thin calls into evalkit (logic lives in the
package, not in notebook cells)."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))
#: Longest code cell allowed (lines of code, comments aside): notebooks call evalkit, they do
#: not compute.
MAX_CELL_LINES = 14


def test_the_three_notebooks_exist() -> None:
    assert {p.stem for p in NOTEBOOKS} >= {"nightly", "compare", "explore"}


def _is_setting(stmt: ast.stmt) -> bool:
    """``name = <literal>`` (or annotated): what papermill can override."""
    if isinstance(stmt, ast.Assign):
        value, targets = stmt.value, stmt.targets
    elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
        value, targets = stmt.value, [stmt.target]
    else:
        return False
    try:
        ast.literal_eval(value)
    except ValueError:
        return False
    return all(isinstance(t, ast.Name) for t in targets)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_is_clean(path: Path) -> None:
    nb = json.loads(path.read_text(encoding="utf-8"))
    assert nb["metadata"]["kernelspec"]["name"] == "python3"
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    for c in code:
        src = "".join(c["source"]) if isinstance(c["source"], list) else c["source"]
        assert c.get("outputs") == [], (
            f"{path.name}: a cell has outputs (clear them before committing)"
        )
        assert c.get("execution_count") is None, f"{path.name}: a cell has an execution count"
        tree = ast.parse(src)
        if "parameters" in c.get("metadata", {}).get("tags", []):
            # any number of settings, but settings only: names bound to literal values
            assert all(_is_setting(s) for s in tree.body), (
                f"{path.name}: the parameters cell may only assign literal values"
            )
            continue
        code_lines = [ln for ln in src.splitlines() if not ln.lstrip().startswith("#")]
        assert len(code_lines) <= MAX_CELL_LINES, (
            f"{path.name}: a code cell is long; move logic into evalkit"
        )
    tagged = [c for c in code if "parameters" in c.get("metadata", {}).get("tags", [])]
    assert len(tagged) == 1, f"{path.name}: needs exactly one cell tagged 'parameters'"
    assert "papermill" not in nb["metadata"], f"{path.name}: papermill metadata (an executed copy?)"
    assert any(c["cell_type"] == "markdown" for c in nb["cells"]), (
        f"{path.name}: explain the sections"
    )
