"""Stored crashers: a fuzz case as ``<dir>/<name>/case.json`` plus its byte blobs.

``case.json`` holds the ops (``tests/fuzz/mutate.py``) with each op's bytes moved to
``blobs/<n>.bin.gz``, what the case did when it was found (``found``) and, once fixed,
what fixed it (``fixed_by``). :func:`load_crasher` returns the ops again, ready for
``tests.fuzz.check.run_case``; the seed tree they apply to is rebuilt from the fixtures.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

from tests.fuzz.mutate import Op

ROOT = Path(__file__).resolve().parents[1] / "fixtures" / "crashers"


def save_crasher(
    where: Path,
    seed: int,
    index: int,
    ops: list[Op],
    result: dict[str, Any],
    name: str | None = None,
) -> Path:
    """Write a case under ``where`` (``<seed>-<index>`` unless ``name``); returns its folder."""
    d = where / (name or f"{seed}-{index}")
    blobs = d / "blobs"
    blobs.mkdir(parents=True, exist_ok=True)
    stored = []
    for n, op in enumerate(ops):
        op = dict(op)
        data = op.pop("data", None)
        if data is not None:
            (blobs / f"{n}.bin.gz").write_bytes(gzip.compress(data, mtime=0))
            op["data_file"] = f"blobs/{n}.bin.gz"
        stored.append(op)
    case = {
        "seed": seed,
        "index": index,
        "found": {k: result.get(k) for k in ("status", "problems") if k in result}
        | {"trace_tail": (result.get("trace") or "")[-1500:]},
        "fixed_by": result.get("fixed_by"),
        "ops": stored,
    }
    (d / "case.json").write_text(json.dumps(case, indent=2) + "\n")
    return d


def load_crasher(d: Path) -> tuple[dict[str, Any], list[Op]]:
    """(case metadata, ops with their bytes) of a stored crasher folder."""
    case = json.loads((d / "case.json").read_text())
    ops = []
    for op in case["ops"]:
        op = dict(op)
        if "data_file" in op:
            op["data"] = gzip.decompress((d / op.pop("data_file")).read_bytes())
        ops.append(op)
    return case, ops


def stored(root: Path = ROOT) -> list[Path]:
    """Every stored crasher folder, by name."""
    return sorted(p.parent for p in root.glob("*/case.json")) if root.is_dir() else []
