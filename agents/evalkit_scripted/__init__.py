"""evalkit's deterministic scripted agent for Harbor (a stand-in for an LLM coding agent).

Harbor loads it by import path::

    harbor run -p benchmarks/smoke-tasks \\
        --agent-import-path evalkit_scripted.agent:ScriptedAgent \\
        -m scripted/baseline --ak variant=baseline

This package lives outside ``evalkit`` on purpose: it runs inside Harbor's own Python
(>= 3.12) environment and imports ``harbor``; evalkit never imports it. ``plan`` and
``atif`` are pure (no Harbor import) so they can be unit-tested anywhere.

``evalkit_scripted:ScriptedAgent`` also works (resolved lazily here).
"""

from __future__ import annotations

from typing import Any

__all__ = ["ScriptedAgent"]
__version__ = "1.0.0"


def __getattr__(name: str) -> Any:
    if name == "ScriptedAgent":
        from evalkit_scripted.agent import ScriptedAgent

        return ScriptedAgent
    raise AttributeError(name)
