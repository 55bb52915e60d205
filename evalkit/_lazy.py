"""scipy.stats and scipy.special, imported on first use.

``from evalkit._lazy import scipy_stats as stats`` behaves like ``from scipy import stats``
but imports scipy on the first attribute access, so ``import evalkit`` and the CLI commands
that compute no statistic do not pay for loading scipy. The imports are ordinary ``from``
statements inside the loaders below.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any


class _LazyModule:
    def __init__(self, load: Callable[[], ModuleType]) -> None:
        self._load = load
        self._mod: ModuleType | None = None

    def __getattr__(self, attr: str) -> Any:
        if self._mod is None:
            self._mod = self._load()
        return getattr(self._mod, attr)

    def __repr__(self) -> str:
        return f"<lazy module {self._load.__name__}>"


def _scipy_stats() -> ModuleType:
    from scipy import stats

    return stats


def _scipy_special() -> ModuleType:
    from scipy import special

    return special


scipy_stats = _LazyModule(_scipy_stats)
scipy_special = _LazyModule(_scipy_special)
