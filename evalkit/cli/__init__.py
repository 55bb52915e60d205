"""Layer 6: the ``evalkit`` command line, a thin shell over the library.

Each command lives in its own module and only parses arguments, calls the library and
formats the result (``cli/output.py``). The modules below add their commands to
``evalkit.cli.app.app``; this is the one place that lists them, and where their
docstrings become their help.
"""

from __future__ import annotations

from evalkit.cli import (  # noqa: F401  (each module adds its commands to app)
    compare_cmd,
    export_cmd,
    inspect_cmds,
    leaderboard_cmd,
    loop_cmd,
    manage_cmd,
    report_cmd,
    run_cmd,
)
from evalkit.cli.app import app, main, use_docstrings_as_help

use_docstrings_as_help()

__all__ = ["app", "main"]
