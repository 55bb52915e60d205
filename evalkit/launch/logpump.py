"""Harbor's output into ``<job>/evalkit-harbor.log`` without secrets.

Runs as a process of its own (``python -m evalkit.launch.logpump LOG [NAME ...]``) reading
Harbor's stdout + stderr from a pipe, so the log keeps filling (and Harbor keeps a reader)
even if evalkit itself is killed. Every line goes through ``redact_text`` with the values of
the variables NAME ... (the ones passed to the run, the provider's keys) and of every
secret-looking variable of its environment, which is Harbor's.
"""

from __future__ import annotations

import os
import sys
from typing import BinaryIO

from evalkit.load.shared.redact import env_secret_values, redact_text

MAX_LINE = 1 << 20  # a line longer than this is written in pieces


def pump(src: BinaryIO, log_path: str, secrets: tuple[str, ...]) -> None:
    """Copy ``src`` to ``log_path`` (appending) line by line, redacted, until EOF."""
    with open(log_path, "a", encoding="utf-8") as log:
        for raw in iter(lambda: src.readline(MAX_LINE), b""):
            log.write(redact_text(raw.decode("utf-8", errors="replace"), secrets))
            log.flush()


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args:
        print("usage: python -m evalkit.launch.logpump LOG [NAME ...]", file=sys.stderr)
        return 2
    pump(sys.stdin.buffer, args[0], env_secret_values(os.environ, names=args[1:]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
