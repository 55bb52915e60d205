"""``evalkit run``: mounts :func:`evalkit.launch.cli.run_command` (all logic lives there)."""

from __future__ import annotations

from evalkit.cli.app import app
from evalkit.launch.cli import run_command

app.command("run")(run_command)
