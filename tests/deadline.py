"""Run a call in a daemon thread with a deadline, so a hang (a FIFO opened for reading, a
symlink loop) fails the test instead of blocking the suite."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any


def with_deadline(fn: Callable[[], Any], seconds: float, what: str = "call") -> Any:
    """``fn()``'s result (or its exception), failing when it runs longer than ``seconds``."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["r"] = fn()
        except BaseException as e:  # re-raised in the caller's thread
            box["e"] = e

    th = threading.Thread(target=run, daemon=True)
    th.start()
    th.join(seconds)
    assert not th.is_alive(), f"{what} still running after {seconds} s (blocked?)"
    if "e" in box:
        raise box["e"]
    return box["r"]
