"""Integrity of a run's passes and fails, per trial and counted per run.

* tampered pass: the trial passed (reward >= 1) and the ``test_tampering`` detector flagged
  it (the agent edited, deleted or read the tests or the verifier's inputs);
* green fail: the agent's own last verification call (tests / checks: the ``is_verify`` rule
  every detector uses) ran without an error, and the verifier failed it (reward < 1);
* pass without verification: the trial passed and the trajectory has tool calls but none
  of them verifies anything.

Trials without tool calls (no trajectory) have no verification facts: they count in
``n_with_calls`` of neither of the last two.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import polars as pl

from evalkit.patterns.config import DEFAULTS, merge_config
from evalkit.patterns.context import Context, coerce_frames
from evalkit.patterns.detect import detect
from evalkit.patterns.registry import registered
from evalkit.stats.intervals import proportion_ci

__all__ = ["INTEGRITY_COUNTS", "integrity_counts", "integrity_flags"]

#: Count columns of :func:`integrity_counts` (each with ``<name>_low`` / ``_high``).
INTEGRITY_COUNTS = ("tampered_passes", "green_fails", "passes_unverified")


def _context(data: Any, config: Mapping[str, Mapping[str, Any]] | None) -> Context:
    defaults: dict[str, dict[str, Any]] = {k: dict(v) for k, v in DEFAULTS.items()}
    for d in registered():
        defaults.setdefault(d.name, dict(d.params))
    st, tc, tr = coerce_frames(data)
    return Context(st, tc, tr, merge_config(config, defaults), "structural")


def integrity_flags(
    data: Any, *, config: Mapping[str, Mapping[str, Any]] | None = None
) -> pl.DataFrame:
    """One row per trial: trial_id, passed, has_calls, tampered_pass, green_fail,
    pass_unverified (booleans; the last two null without tool calls).

    ``data``: a :class:`~evalkit.load.runs.Runs` or a mapping with steps, tool_calls and
    trials (as :func:`evalkit.patterns.detect`).
    """
    ctx = _context(data, config)
    tampered = detect(data, detectors=["test_tampering"], config=config)
    tampered_ids = tampered["trial_id"].unique().to_list()
    calls = ctx.calls
    per_trial = (
        calls.sort("trial_id", "seq")
        .group_by("trial_id")
        .agg(
            pl.col("is_verify").any().alias("_any_verify"),
            pl.col("err").filter(pl.col("is_verify")).last().alias("_last_verify_err"),
        )
    )
    r = pl.col("reward").cast(pl.Float64)
    passed = r.fill_null(0.0) >= 1
    has_calls = pl.col("_any_verify").is_not_null()
    return (
        ctx.trial_info.select("trial_id", "reward")
        .join(per_trial, on="trial_id", how="left")
        .select(
            "trial_id",
            passed.alias("passed"),
            has_calls.alias("has_calls"),
            (passed & pl.col("trial_id").is_in(tampered_ids)).alias("tampered_pass"),
            pl.when(has_calls)
            .then(r.is_not_null() & (r < 1) & (pl.col("_last_verify_err") == False))  # noqa: E712
            .alias("green_fail"),
            pl.when(has_calls).then(passed & ~pl.col("_any_verify")).alias("pass_unverified"),
        )
    )


def integrity_counts(
    data: Any,
    by: str = "run",
    *,
    confidence: float = 0.95,
    flags: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """Per run (``by`` column of the trials): n_trials, n_passes, n_with_calls and the three
    counts with an exact mid-p interval for the count (share of the denominator, scaled back):
    tampered_passes out of passes, green_fails out of trials with calls,
    passes_unverified out of passes with calls. ``flags``: precomputed
    :func:`integrity_flags`."""
    f = integrity_flags(data) if flags is None else flags
    trials = data.trials if hasattr(data, "trials") else data["trials"]
    g = (
        trials.select("trial_id", pl.col(by).cast(pl.String))
        .join(f, on="trial_id", how="inner")
        .group_by(by)
        .agg(
            pl.len().alias("n_trials"),
            pl.col("passed").sum().alias("n_passes"),
            pl.col("has_calls").sum().alias("n_with_calls"),
            (pl.col("passed") & pl.col("has_calls")).sum().alias("_passes_calls"),
            pl.col("tampered_pass").sum().alias("tampered_passes"),
            pl.col("green_fail").fill_null(False).sum().alias("green_fails"),
            pl.col("pass_unverified").fill_null(False).sum().alias("passes_unverified"),
        )
        .sort(by)
    )
    denominators = {
        "tampered_passes": "n_passes",
        "green_fails": "n_with_calls",
        "passes_unverified": "_passes_calls",
    }
    cols = []
    for name, den in denominators.items():
        x, n = g[name].to_numpy().astype(float), g[den].to_numpy().astype(float)
        ok = n > 0
        lo, hi = np.full(x.size, np.nan), np.full(x.size, np.nan)
        if ok.any():
            ci = proportion_ci(x[ok], n[ok], confidence=confidence, method="mid-p")
            lo[ok], hi[ok] = np.asarray(ci[0]) * n[ok], np.asarray(ci[1]) * n[ok]
        cols += [
            pl.Series(f"{name}_low", lo).fill_nan(None),
            pl.Series(f"{name}_high", hi).fill_nan(None),
        ]
    counts = [c for c in g.columns if c != by and not c.startswith("_")]
    return g.with_columns(pl.col(counts).cast(pl.Int64), *cols).drop("_passes_calls")
