"""The package's imports (scripts/import_graph.py): no cycles, no module loaded by name, and
the checks find what they look for."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from scripts.import_graph import (
    ARCHITECTURE,
    LAYERS,
    cycles,
    diagram,
    import_graph,
    layer_violations,
    string_imports,
    with_diagram,
)


def _package(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / "evalkit" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def test_evalkit_has_no_import_cycles() -> None:
    assert cycles(import_graph()) == []


def test_a_cycle_closed_inside_a_function_is_found(tmp_path: Path) -> None:
    root = _package(
        tmp_path,
        {
            "__init__.py": "",
            "a.py": "from evalkit.b import f\n",
            "b.py": "def f():\n    from evalkit import a\n",
            "c.py": "from . import a\n",
        },
    )
    assert cycles(import_graph(root)) == [["evalkit.a", "evalkit.b"]]


def test_type_checking_imports_and_package_reexports_are_not_cycles(tmp_path: Path) -> None:
    root = _package(
        tmp_path,
        {
            "__init__.py": "from evalkit.a import f\n",
            "a.py": "from typing import TYPE_CHECKING\nimport evalkit\n"
            "if TYPE_CHECKING:\n    from evalkit.b import B\ndef f(): ...\n",
            "b.py": "from evalkit.a import f\n",
        },
    )
    graph = import_graph(root)
    assert graph["evalkit.a"] == {"evalkit"}
    assert cycles(graph) == []


def test_evalkit_loads_no_module_by_name() -> None:
    assert list(string_imports()) == []


def test_importlib_and_dunder_import_are_found(tmp_path: Path) -> None:
    root = _package(
        tmp_path,
        {
            "__init__.py": "",
            "a.py": "import importlib\nm = importlib.import_module('evalkit.b')\n",
            "b.py": "def f(name):\n    return __import__(f'evalkit.{name}')\n",
        },
    )
    found = {(file, code) for file, _, code in string_imports(root)}
    assert found == {
        ("evalkit/a.py", "import importlib"),
        ("evalkit/a.py", "importlib.import_module('evalkit.b')"),
        ("evalkit/b.py", "__import__(f'evalkit.{name}')"),
    }


def test_scipy_is_loaded_on_first_use_not_by_import_evalkit() -> None:
    code = (
        "import sys, evalkit, evalkit.cli\n"
        "assert 'scipy.stats' not in sys.modules\n"
        "from evalkit._lazy import scipy_stats\n"
        "assert scipy_stats.norm.ppf(0.5) == 0.0\n"
        "assert 'scipy.stats' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_no_package_imports_a_higher_layer() -> None:
    assert layer_violations(import_graph()) == []


def test_a_lower_layer_importing_a_higher_one_is_found(tmp_path: Path) -> None:
    root = _package(
        tmp_path,
        {
            "__init__.py": "",
            "load/__init__.py": "from evalkit.report.x import y\n",
            "report/__init__.py": "",
            "report/x.py": "y = 1\n",
        },
    )
    assert LAYERS["evalkit.load"] < LAYERS["evalkit.report"]
    assert layer_violations(import_graph(root)) == [("evalkit.load", "evalkit.report")]


def test_the_architecture_picture_is_current() -> None:
    """Regenerate with: python scripts/import_graph.py diagram"""
    doc = ARCHITECTURE.read_text(encoding="utf-8")
    assert with_diagram(doc, diagram()) == doc
