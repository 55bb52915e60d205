"""Layer 1: files -> frames. See docs/architecture.md and each frame's columns.py.

``evalkit.load`` is both this package and the loading function: the module is callable
(``evalkit.load("runs/")`` is ``evalkit.load.load("runs/")``), so submodules stay importable
as ``evalkit.load.trials.columns`` and friends.
"""

import sys
import types

from evalkit.load.api import load
from evalkit.load.runs import Runs, register_findings_provider

__all__ = ["Runs", "load", "register_findings_provider"]


class _CallableModule(types.ModuleType):
    def __call__(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        return load(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
