"""The import graph between evalkit modules, read from the source (no module is imported).

    python scripts/import_graph.py cycles     # print import cycles between modules; exit 1 if any
    python scripts/import_graph.py strings    # print modules loaded by name; exit 1 if any
    python scripts/import_graph.py long [N]   # functions longer than N lines (default 60)

Every ``import`` that runs counts, also those inside functions: a cycle closed by a deferred
import is still two modules that cannot be understood one without the other. Imports under
``if TYPE_CHECKING:`` only name a type for an annotation and never run, so they are not
edges (import-linter's ``exclude_type_checking_imports``). A package's ``__init__``
re-exporting its own modules is not a cycle.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "evalkit"


def module_files(root: Path = ROOT) -> dict[str, Path]:
    """Module name -> source file, for every module of the package."""
    out: dict[str, Path] = {}
    for path in sorted((root / PACKAGE).rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _absolute(module: str, node: ast.ImportFrom, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def _is_type_checking(node: ast.AST) -> bool:
    if not isinstance(node, ast.If):
        return False
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _runtime_nodes(tree: ast.AST) -> Iterator[ast.AST]:
    """Every node of ``tree`` except those under ``if TYPE_CHECKING:``."""
    todo = [tree]
    while todo:
        node = todo.pop()
        yield node
        if _is_type_checking(node):
            todo.extend(node.orelse)
        else:
            todo.extend(ast.iter_child_nodes(node))


def imported_modules(module: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The package modules ``module`` imports when it runs (top level or in functions)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in _runtime_nodes(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            target = _absolute(module, node, is_package)
            names = [target, *(f"{target}.{alias.name}" for alias in node.names)]
        else:
            continue
        for name in names:
            if name in modules:
                found.add(name)
    found.discard(module)
    return found


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """Module -> the package modules it imports."""
    modules = module_files(root)
    return {name: imported_modules(name, path, modules) for name, path in modules.items()}


def _is_own_package(a: str, b: str) -> bool:
    return b.startswith(a + ".") or a.startswith(b + ".")


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan), package re-exports aside."""
    edges = {a: {b for b in bs if not _is_own_package(a, b)} for a, bs in graph.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                group.append(top)
                if top == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    sys.setrecursionlimit(10_000)
    for node in sorted(edges):
        if node not in index:
            visit(node)
    return sorted(groups)


def string_imports(root: Path = ROOT) -> Iterator[tuple[str, int, str]]:
    """(file, line, code) of every module loaded by name: importlib, __import__."""
    for path in module_files(root).values():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            hit = None
            if isinstance(node, ast.Import | ast.ImportFrom):
                names = [a.name for a in node.names]
                mod = node.module if isinstance(node, ast.ImportFrom) else None
                if "importlib" in names or mod == "importlib":
                    hit = "import importlib"
            elif isinstance(node, ast.Call):
                func = node.func
                name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
                if name in {"__import__", "import_module"}:
                    hit = ast.unparse(node)
            if hit:
                yield str(path.relative_to(root)), node.lineno, hit


def long_functions(limit: int = 60, root: Path = ROOT) -> list[tuple[int, str]]:
    """(lines, "module:function") of every function longer than ``limit`` lines."""
    out = []
    for module, path in module_files(root).items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = node.end_lineno - node.lineno + 1
                if length > limit:
                    out.append((length, f"{module}:{node.name}"))
    return sorted(out, reverse=True)


def main(argv: list[str]) -> int:
    command = argv[0] if argv else "cycles"
    if command == "cycles":
        found = cycles(import_graph())
        for group in found:
            print(" <-> ".join(group))
        return 1 if found else 0
    if command == "strings":
        hits = list(string_imports())
        for file, line, code in hits:
            print(f"{file}:{line}: {code}")
        return 1 if hits else 0
    if command == "long":
        limit = int(argv[1]) if len(argv) > 1 else 60
        found = long_functions(limit)
        for length, name in found:
            print(f"{length:4d} {name}")
        print(f"{len(found)} functions over {limit} lines")
        return 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
