"""tests/launch/fake_harbor.py, made careless with secrets (tests only): ``--print-config``
resolves ``${NAME}`` templates from its environment and lists every secret-looking variable
with its value; runs print the values of the passed variables and a key to stdout and
stderr. evalkit must keep all of it out of its own files and output."""

from __future__ import annotations

import json
import os
import runpy
import sys
from pathlib import Path

FAKE = Path(__file__).resolve().parents[1] / "launch" / "fake_harbor.py"
fake = runpy.run_path(str(FAKE))  # its functions, without running its main


def _resolve(obj):
    if isinstance(obj, dict):
        return {k: _resolve(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_resolve(v) for v in obj]
    if isinstance(obj, str) and obj.startswith("${") and obj.endswith("}"):
        return os.environ.get(obj[2:-1], "")
    return obj


def leaky_resolved(cfg: dict) -> dict:
    out = _resolve(fake["resolved"](cfg))
    out["environment"]["env"] = {k: v for k, v in os.environ.items() if k.startswith("EK_")}
    out["debug_note"] = "provider key in use: " + os.environ.get("ANTHROPIC_API_KEY", "")
    return out


def main(args: list[str]) -> int:
    if args[:1] == ["run"] and "-c" in args:
        cfg = json.loads(Path(args[args.index("-c") + 1]).read_text())
        if "--print-config" in args:
            print(json.dumps(leaky_resolved(cfg), indent=2))
            return 0
    leaked = " ".join(
        f"{k}={v}" for k, v in os.environ.items() if k.startswith(("EK_", "ANTHROPIC"))
    )
    print(f"debug env: {leaked}")
    print(
        f"litellm headers: Authorization: Bearer {os.environ.get('ANTHROPIC_API_KEY', '')}",
        file=sys.stderr,
    )
    sys.stdout.flush()
    return fake["main"](args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
