"""Simulated EACCES at the OS boundary (CI runs as root, and chmod does not stop root).

``denied(rules)`` patches ``open`` / ``io.open`` / ``os.open`` / ``os.scandir`` /
``os.listdir`` / ``os.stat`` / ``os.lstat`` for the duration of a block:

* ``(path, "read")``: opening the file, or listing the folder, fails with PermissionError
  (a file or folder without the r bit); ``stat`` still works, as it does for real.
* ``(path, "search")``: a folder without the x bit: anything *under* it fails to open,
  list or stat; the folder itself can still be stat'ed.

Readers that go through Rust or C without these functions (Polars reading the Parquet cache,
which lives outside the tree) are not affected.
"""

from __future__ import annotations

import builtins
import contextlib
import errno
import io
import os
from collections.abc import Iterator
from typing import Any


def _path(p: Any) -> str | None:
    if isinstance(p, int):
        return None
    try:
        s = os.fspath(p)
    except TypeError:
        return None
    if isinstance(s, bytes):
        s = os.fsdecode(s)
    return os.path.abspath(s)


class _Rules:
    def __init__(self, rules: list[tuple[str, str]]) -> None:
        self.read = {os.path.abspath(p) for p, how in rules if how == "read"}
        self.search = [os.path.abspath(p) + os.sep for p, how in rules if how == "search"]

    def under_search(self, p: str) -> bool:
        return any(p.startswith(s) for s in self.search)

    def check(self, p: Any, *, open_: bool) -> None:
        s = _path(p)
        if s is None:
            return
        if self.under_search(s) or (open_ and s in self.read):
            raise PermissionError(errno.EACCES, "Permission denied (simulated)", s)


@contextlib.contextmanager
def denied(rules: list[tuple[str, str]]) -> Iterator[None]:
    """Make the given paths unreadable (see the module docstring) inside the block."""
    if not rules:
        yield
        return
    r = _Rules(rules)
    real = {
        "open": builtins.open, "io_open": io.open, "os_open": os.open, "scandir": os.scandir,
        "listdir": os.listdir, "stat": os.stat, "lstat": os.lstat,
    }  # fmt: skip

    def _open(file: Any, *a: Any, **k: Any) -> Any:
        r.check(file, open_=True)
        return real["open"](file, *a, **k)

    def _os_open(path: Any, *a: Any, **k: Any) -> Any:
        if k.get("dir_fd") is None:
            r.check(path, open_=True)
        return real["os_open"](path, *a, **k)

    def _scandir(path: Any = ".") -> Any:
        r.check(path, open_=True)
        return real["scandir"](path)

    def _listdir(path: Any = ".") -> Any:
        r.check(path, open_=True)
        return real["listdir"](path)

    def _stat(path: Any, *a: Any, **k: Any) -> Any:
        if k.get("dir_fd") is None:
            r.check(path, open_=False)
        return real["stat"](path, *a, **k)

    def _lstat(path: Any, *a: Any, **k: Any) -> Any:
        if k.get("dir_fd") is None:
            r.check(path, open_=False)
        return real["lstat"](path, *a, **k)

    builtins.open = io.open = _open  # type: ignore[assignment]
    os.open, os.scandir, os.listdir = _os_open, _scandir, _listdir  # type: ignore[assignment]
    os.stat, os.lstat = _stat, _lstat  # type: ignore[assignment]
    try:
        yield
    finally:
        builtins.open, io.open = real["open"], real["io_open"]
        os.open, os.scandir, os.listdir = real["os_open"], real["scandir"], real["listdir"]
        os.stat, os.lstat = real["stat"], real["lstat"]
