"""Layer 6: the ``evalkit`` command line, a thin shell over the library.

Each command lives in its own module and only parses arguments, calls the library and
formats the result (``cli/output.py``).
"""

from __future__ import annotations

from evalkit.cli.app import app, main

__all__ = ["app", "main"]
