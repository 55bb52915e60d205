"""Helpers for the rollout tests: fixture paths and synthetic rollout files."""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson

ROLLOUTS = Path(__file__).parents[2] / "fixtures" / "rollouts"
GOLDEN = ROLLOUTS / "run-toolcall-golden.DERIVED-rollout.jsonl"
GOLDEN_ID = "run_8cacf024-8246-4c1c-8d53-7764b878d664"


def ev(seq: int, typ: str, ts: str | None = None, **data) -> dict:
    """One rollout envelope line (ts defaults to a second-resolution time from seq)."""
    return {"ts": ts or f"2026-02-01T00:00:{seq:02d}Z", "seq": seq, "type": typ, "data": data}


def write_rollout(path: Path, events: list, *, raw_lines: dict[int, bytes] | None = None) -> Path:
    """Write events as JSON Lines; ``raw_lines`` inserts literal lines at given positions."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [orjson.dumps(e) if not isinstance(e, bytes) else e for e in events]
    for pos, raw in sorted((raw_lines or {}).items()):
        lines.insert(pos, raw)
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def fixture_folder(root: Path) -> Path:
    """<root>/rollouts/<date>/<run>.jsonl laid out from the copied go-code fixtures."""
    d = root / "rollouts"
    (d / "2026-07-27").mkdir(parents=True)
    (d / "2026-01-15").mkdir(parents=True)
    shutil.copy(GOLDEN, d / "2026-07-27" / f"{GOLDEN_ID}.jsonl")
    shutil.copy(ROLLOUTS / "simple-no-tool.jsonl", d / "2026-01-15")
    shutil.copy(ROLLOUTS / "tool-with-output-key.jsonl", d / "2026-01-15")
    return d


def trials_with_details(frames):
    """trials joined with the rollout-only run_details columns."""
    return frames.trials.join(frames.run_details, on="trial_id", how="left")
