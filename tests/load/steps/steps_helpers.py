"""Helpers for the trajectory tests: fixture paths, tiny ATIF documents, trials frames."""

from __future__ import annotations

from pathlib import Path

import orjson
import polars as pl

ATIF = Path(__file__).parents[2] / "fixtures" / "atif"
GOLDEN = ATIF / "harbor-golden"
HERMES = ATIF / "hermes" / "openclaw-dev-jobs"
NATIVE = ATIF / "native"


def atif_doc(steps: list[dict], version: str = "ATIF-v1.7", **root) -> dict:
    """A minimal ATIF document around ``steps``."""
    doc = {
        "schema_version": version,
        "session_id": "s",
        "agent": {"name": "a", "version": "1"},
        "steps": steps,
    }
    doc.update(root)
    return doc


def write_json(path: Path, obj) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(orjson.dumps(obj))
    return path


def trials_frame(trial_dirs: list[Path], **cols) -> pl.DataFrame:
    """A trials frame as the loader would pass it (trial_id = folder name)."""
    n = len(trial_dirs)
    data = {
        "trial_id": [d.name for d in trial_dirs],
        "trial_dir": [str(d) for d in trial_dirs],
        "job_id": [d.parent.name for d in trial_dirs],
        "job_dir": [str(d.parent) for d in trial_dirs],
        "source_format": ["harbor"] * n,
        "agent_name": cols.pop("agent_name", ["agent"] * n),
        "n_input_tokens": cols.pop("n_input_tokens", [None] * n),
        "n_cache_tokens": cols.pop("n_cache_tokens", [None] * n),
        "n_output_tokens": cols.pop("n_output_tokens", [None] * n),
        "cost_usd": cols.pop("cost_usd", [None] * n),
    }
    schema = {
        "trial_id": pl.String, "trial_dir": pl.String, "job_id": pl.String, "job_dir": pl.String,
        "source_format": pl.String, "agent_name": pl.String, "n_input_tokens": pl.Int64,
        "n_cache_tokens": pl.Int64, "n_output_tokens": pl.Int64, "cost_usd": pl.Float64,
    }  # fmt: skip
    return pl.DataFrame(data, schema=schema)
