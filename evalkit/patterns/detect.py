"""``detect()``: run the registered detectors of one mode over trajectory frames."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import polars as pl

from evalkit.load._columns import conform, empty
from evalkit.load.findings.columns import COLUMNS as FINDING_COLUMNS
from evalkit.load.shared.redact import env_secret_values, redact_text
from evalkit.patterns.config import DEFAULTS, merge_config
from evalkit.patterns.context import Context, coerce_frames
from evalkit.patterns.registry import MODES, registered

_SEVERITIES = ("low", "medium", "high")


def detect(
    data: Any = None,
    *,
    steps: pl.DataFrame | None = None,
    tool_calls: pl.DataFrame | None = None,
    trials: pl.DataFrame | None = None,
    mode: str | Sequence[str] = "structural",
    detectors: Iterable[str] | None = None,
    config: Mapping[str, Mapping[str, Any]] | None = None,
) -> pl.DataFrame:
    """Findings of every detector of ``mode`` (or of the named ``detectors``).

    ``data`` is a :class:`~evalkit.load.runs.Runs` (its steps, tool_calls and trials), a
    mapping with those keys, or a tool_calls frame; keyword frames override. Only the
    contract columns are required (trial_id, step_index, call_index, function_name,
    arguments, ...; see docs/patterns.md for what each detector reads); missing columns are
    treated as null, and detectors that need a missing frame (e.g. trials.reward for
    false_success_claim) find nothing.

    ``mode``: 'structural' (default: evalkit's rules, every detector) or 'trainerd' (go-code's
    six types with its phrase heuristics and retry rule, so numbers match go-code), or a
    sequence of both (the frames are prepared once; the ``mode`` column tells them apart).
    ``config`` overrides thresholds / phrase lists: ``{detector_name: {param: value}}``,
    plus the ``common`` and ``trainerd`` sections (see evalkit/patterns/config.py).

    Returns a frame with the findings columns (evalkit/load/findings/columns.py): one row per
    finding, source 'detected', evidence redacted and cut short.
    """
    modes = (mode,) if isinstance(mode, str) else tuple(mode)
    for m in modes:
        if m not in MODES:
            raise ValueError(f"mode must be one of {MODES} (or a sequence of them), got {m!r}")
    dets = [d for m in modes for d in registered(m)]
    if detectors is not None:
        wanted = list(detectors)
        known = {d.name for d in dets}
        unknown = [n for n in wanted if n not in known]
        if unknown:
            raise ValueError(
                f"unknown detector(s) for mode {mode!r}: {unknown}; known: {sorted(known)}"
            )
        dets = [d for d in dets if d.name in wanted]
    defaults: dict[str, dict[str, Any]] = {k: dict(v) for k, v in DEFAULTS.items()}
    for d in registered():
        defaults.setdefault(d.name, dict(d.params))
    cfg = merge_config(config, defaults)
    st, tc, tr = coerce_frames(data, steps=steps, tool_calls=tool_calls, trials=trials)
    ctx = Context(st, tc, tr, cfg, modes[0])
    parts = []
    for d in dets:
        ctx.mode = d.mode
        parts.append(_finish(d.fn(ctx), d.name, d.rule_version, d.mode))
    parts = [p for p in parts if p.height]
    if not parts:
        return empty(FINDING_COLUMNS)
    out = pl.concat(parts, how="vertical_relaxed")
    return _redact(out).sort("trial_id", "step_start", "detector", maintain_order=True)


def _finish(df: pl.DataFrame, name: str, rule_version: str, mode: str) -> pl.DataFrame:
    """Fill defaults, add the bookkeeping columns, conform to the findings schema."""
    cols = df.columns
    if "trial_id" not in cols or "step_start" not in cols:
        raise ValueError(f"detector {name!r} must return trial_id and step_start columns")
    df = df.with_columns(
        pl.col("step_start").cast(pl.Int64),
        (pl.col("step_end") if "step_end" in cols else pl.col("step_start"))
        .cast(pl.Int64)
        .alias("step_end"),
        (pl.col("severity") if "severity" in cols else pl.lit("medium"))
        .cast(pl.String)
        .alias("severity"),
        (pl.col("confidence") if "confidence" in cols else pl.lit(0.5))
        .cast(pl.Float64)
        .alias("confidence"),
        (pl.col("evidence") if "evidence" in cols else pl.lit(""))
        .cast(pl.String)
        .fill_null("")
        .alias("evidence"),
        pl.lit(name).alias("detector"),
        pl.lit(rule_version).alias("rule_version"),
        pl.lit("detected").alias("source"),
        pl.lit(mode).alias("mode"),
    )
    bad = df.filter(~pl.col("severity").is_in(_SEVERITIES))
    if bad.height:
        raise ValueError(f"detector {name!r} returned severities outside {_SEVERITIES}")
    return conform(df, FINDING_COLUMNS, extra=False)


def _redact(df: pl.DataFrame) -> pl.DataFrame:
    """Secrets never leave in evidence: redact_text on each distinct snippet."""
    ev = df.get_column("evidence")
    uniq = ev.unique()
    secret = env_secret_values()
    mapping = {s: redact_text(s, secret) for s in uniq.to_list() if s is not None}
    changed = {k: v for k, v in mapping.items() if k != v}
    if not changed:
        return df
    return df.with_columns(pl.col("evidence").replace(changed))
