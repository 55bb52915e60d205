"""Executable stand-ins written by the launch tests (a fake docker, harbor, rsync ...)."""

from __future__ import annotations

import stat
from pathlib import Path


def executable(path: Path, text: str) -> Path:
    """``text`` written at ``path`` (folders made) and marked executable."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def sh_script(path: Path, body: str) -> Path:
    """An executable /bin/sh script at ``path``."""
    return executable(path, "#!/bin/sh\n" + body + "\n")
