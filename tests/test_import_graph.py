"""The package's import graph (scripts/import_graph.py): no cycles, and the checker finds one."""

from __future__ import annotations

from pathlib import Path

from scripts.import_graph import cycles, import_graph


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
