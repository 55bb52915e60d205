"""Lazy module proxies for heavy optional imports (scipy.stats costs ~0.8 s at import).

``from evalkit._lazy import scipy_stats as stats`` behaves like ``from scipy import stats``
but imports scipy.stats on first attribute access, so ``import evalkit`` and the CLI start fast.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any


class _LazyModule:
    def __init__(self, name: str) -> None:
        self._name = name
        self._mod: ModuleType | None = None

    def __getattr__(self, attr: str) -> Any:
        if self._mod is None:
            self._mod = importlib.import_module(self._name)
        return getattr(self._mod, attr)

    def __repr__(self) -> str:
        return f"<lazy module {self._name!r}>"


scipy_stats = _LazyModule("scipy.stats")
scipy_special = _LazyModule("scipy.special")
