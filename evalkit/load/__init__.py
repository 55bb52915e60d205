"""Layer 1: files -> frames. See docs/architecture.md and each frame's columns.py."""

from evalkit.load.api import load
from evalkit.load.runs import Runs, register_findings_provider

__all__ = ["Runs", "load", "register_findings_provider"]
