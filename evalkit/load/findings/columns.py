"""The findings frame: one row per anti-pattern finding.

Produced by ``evalkit.patterns`` (source 'detected') and by the rollout reader from
go-code's ``tool.antipattern`` events (source 'recorded'). Declared here, at the load level,
because both producers must agree on it.
"""

from __future__ import annotations

import polars as pl

from evalkit.load._columns import Column

COLUMNS: tuple[Column, ...] = (
    Column("trial_id", pl.String, "Trial the finding is about.", True),
    Column("detector", pl.String, "Detector name, e.g. retry_loop, unverified_file_claim.", True),
    Column("step_start", pl.Int64, "First step_index of the evidence.", True),
    Column("step_end", pl.Int64, "Last step_index of the evidence.", True),
    Column("severity", pl.String, "low / medium / high.", True),
    Column("confidence", pl.Float64, "0..1: how sure the rule is (heuristics < structural facts)."),
    Column("evidence", pl.String, "Short snippet showing why (commands, claim text).", True),
    Column(
        "rule_version",
        pl.String,
        "Detector rule version, e.g. 'structural-1' or 'trainerd-1'.",
        True,
    ),
    Column(
        "source",
        pl.String,
        "'detected' (evalkit) or 'recorded' (from a rollout's tool.antipattern events).",
    ),
    Column("mode", pl.String, "'structural' or 'trainerd' (null for recorded findings)."),
)
