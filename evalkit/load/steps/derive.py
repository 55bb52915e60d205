"""Accumulated columns -> typed steps / tool_calls / trial_summary frames (vectorised).

Timestamps, exit codes, is_error and retries are computed here over whole frames (Polars
expressions), once per load, not per row in Python.
"""

from __future__ import annotations

import math

import polars as pl

from evalkit.load._columns import UTC_DATETIME, conform
from evalkit.load.steps.columns import (
    CALL_READ_SCHEMA,
    CALL_WORKING,
    STEP_COLUMNS,
    STEP_READ_SCHEMA,
    STEP_WORKING,
    TOOL_CALL_COLUMNS,
)
from evalkit.load.steps.commands import finish_tool_calls
from evalkit.load.trials.columns import COLUMNS as TRIAL_COLUMNS
from evalkit.load.trials.derive import tokens_not_recorded

#: The trials columns the trajectories fill (TrajectoryFrames.trial_summary), with their
#: declared dtypes.
_TRIAL_DTYPES = {c.name: c.dtype for c in TRIAL_COLUMNS}
SUMMARY_SCHEMA = {
    name: _TRIAL_DTYPES[name]
    for name in (
        "trial_id", "n_steps", "n_tool_calls", "n_turns", "metrics_mismatch", "tokens_not_recorded"
    )
}  # fmt: skip
_STEP_WORKING = [c.name for c in STEP_WORKING]
_CALL_WORKING = [c.name for c in CALL_WORKING]


def parse_timestamps(col: str = "_ts") -> pl.Expr:
    """ISO-8601 text -> UTC datetime. Offsets are honoured; naive values are read as UTC."""
    s = pl.col(col).str.replace(" ", "T", literal=True)
    return pl.coalesce(
        s.str.to_datetime(format="%+", time_zone="UTC", strict=False, time_unit="us"),
        s.str.to_datetime(
            format="%Y-%m-%dT%H:%M:%S%.f", time_zone="UTC", strict=False, time_unit="us"
        ),
    ).cast(UTC_DATETIME)


def raw_steps_frame(cols: dict[str, list]) -> pl.DataFrame:
    """STEP_FIELDS lists -> frame with the hidden _ts column (before :func:`finish_steps`)."""
    return pl.DataFrame(cols, schema=STEP_READ_SCHEMA, strict=False)


def finish_steps(df: pl.DataFrame) -> pl.DataFrame:
    """Raw steps (STEP_READ_SCHEMA, final row order) -> the typed steps frame."""
    df = df.with_columns(parse_timestamps().alias("timestamp")).drop(_STEP_WORKING)
    return conform(df, STEP_COLUMNS)


def steps_frame(cols: dict[str, list]) -> pl.DataFrame:
    """Typed steps frame from STEP_FIELDS lists (hidden _ts -> timestamp)."""
    return finish_steps(raw_steps_frame(cols))


def raw_calls_frame(cols: dict[str, list] | dict[str, list | tuple]) -> pl.DataFrame:
    """CALL_FIELDS lists -> frame with the hidden columns (before :func:`finish_calls`)."""
    return pl.DataFrame(cols, schema=CALL_READ_SCHEMA, strict=False)


def finish_calls(df: pl.DataFrame) -> pl.DataFrame:
    """Raw calls (CALL_READ_SCHEMA, final row order) -> typed tool_calls: exit_code,
    is_error and retried filled (retried depends on row order)."""
    df = finish_tool_calls(df)
    # retry signature: go-code passes canonical (key-sorted) arguments in _sig; ATIF uses the
    # arguments JSON text as recorded (an agent serialises the same call the same way)
    sig = pl.coalesce(
        pl.col("_sig"), pl.concat_str(pl.col("function_name"), pl.lit("\x00"), pl.col("arguments"))
    )
    df = df.with_columns(
        parse_timestamps().alias("timestamp"),
        pl.when(sig.is_not_null())
        .then(
            ~pl.struct(
                pl.col("trial_id", "trajectory", "task_step"), sig.alias("_k")
            ).is_first_distinct()
        )
        .otherwise(None)
        .alias("retried"),
    ).drop(_CALL_WORKING)
    return conform(df, TOOL_CALL_COLUMNS)


def calls_frame(cols: dict[str, list] | dict[str, list | tuple]) -> pl.DataFrame:
    """Typed tool_calls frame from CALL_FIELDS lists: exit_code, is_error, retried filled."""
    return finish_calls(raw_calls_frame(cols))


def _num(v) -> float | None:
    if v is None or isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    f = float(v)
    return f if math.isfinite(f) else None


def final_totals(fms: list[tuple[dict, tuple[int, int] | None]]) -> dict[str, float | None]:
    """Sum final_metrics over task steps (prompt normalised to include cached before v1.2)."""
    keys = (
        "total_prompt_tokens",
        "total_completion_tokens",
        "total_cached_tokens",
        "total_cost_usd",
    )
    out: dict[str, float | None] = dict.fromkeys(keys)
    for fm, ver in fms:
        vals = {k: _num(fm.get(k)) for k in keys}
        if ver is not None and ver < (1, 2) and vals["total_prompt_tokens"] is not None:
            vals["total_prompt_tokens"] += vals["total_cached_tokens"] or 0
        for k, v in vals.items():
            if v is not None:
                out[k] = (out[k] or 0) + v
    return out


def _count_text(v: pl.Expr) -> pl.Expr:
    """A token count as text: an integer when it fits Int64, else the float (1e30 from a
    broken file must not fail the strict cast; both branches of when/then are evaluated)."""
    return v.cast(pl.Int64, strict=False).cast(pl.String).fill_null(v.cast(pl.String))


#: (name, final_metrics total in the index, result.json total in trials) compared.
_COMPARED = (
    ("prompt_tokens", "fm_prompt", "n_input_tokens"),
    ("completion_tokens", "fm_completion", "n_output_tokens"),
    ("cached_tokens", "fm_cached", "n_cache_tokens"),
    ("cost_usd", "fm_cost", "cost_usd"),
)


def _comparisons() -> list[tuple[str, pl.Expr, pl.Expr, pl.Expr]]:
    """(name, atif value, result value, differs) of each compared total."""
    out = []
    for name, a, r in _COMPARED[:3]:
        av, rv = pl.col(a).cast(pl.Float64), pl.col(r).cast(pl.Float64)
        out.append((name, av, rv, av.is_not_null() & rv.is_not_null() & (av != rv)))
    a, r = pl.col("fm_cost").cast(pl.Float64), pl.col("cost_usd").cast(pl.Float64)
    tol = pl.max_horizontal(pl.lit(1e-9), 1e-6 * pl.max_horizontal(a.abs(), r.abs()))
    out.append(("cost_usd", a, r, a.is_not_null() & r.is_not_null() & ((a - r).abs() > tol)))
    return out


def metrics_mismatch_expr() -> pl.Expr:
    """Null when ATIF final_metrics totals agree with result.json (or cannot be compared),
    else e.g. 'prompt_tokens: atif 485630 vs result 485000; cost_usd: atif 0.46 vs result 0.5'.

    Needs fm_prompt / fm_completion / fm_cached / fm_cost (final_metrics totals) and the
    trials columns n_input_tokens / n_output_tokens / n_cache_tokens / cost_usd. Only fields
    present on both sides are compared; tokens must match exactly, cost within 1e-6
    relative (1e-9 absolute).
    """
    parts = []
    for name, a, r, differs in _comparisons():
        if name == "cost_usd":
            a, r = a.round(6), r.round(6)
        else:
            a, r = _count_text(a), _count_text(r)
        parts.append(pl.when(differs).then(pl.format(f"{name}: atif {{}} vs result {{}}", a, r)))
    out = pl.concat_str(parts, separator="; ", ignore_nulls=True)
    return pl.when(out.str.len_chars() > 0).then(out).otherwise(None)


def summary_frame(rows: dict[str, list]) -> pl.DataFrame:
    """trial_summary frame from column lists (keys of SUMMARY_SCHEMA)."""
    return pl.DataFrame(rows, schema=SUMMARY_SCHEMA)


_MISMATCH = metrics_mismatch_expr().alias("metrics_mismatch")
#: The load's flag made exact with what the trajectory holds: its steps and its totals.
#: (Null without steps parsed: the load's flag stands.)
_UNRECORDED = (
    pl.when(pl.col("n_steps").is_not_null())
    .then(
        tokens_not_recorded(
            ran=pl.col("n_steps") > 0,
            trajectory_totals=(pl.col("fm_prompt"), pl.col("fm_completion")),
        )
    )
    .alias("tokens_not_recorded")
)
_RESULT_TOTALS = ("n_input_tokens", "n_output_tokens", "n_cache_tokens", "cost_usd")


def trial_summary(index: pl.DataFrame, trials: pl.DataFrame) -> pl.DataFrame:
    """trial_summary (SUMMARY_SCHEMA) from the trajectory index (trial_id, n_steps,
    n_tool_calls, n_turns, fm_* final_metrics totals) and the trials frame (result.json
    totals for metrics_mismatch and tokens_not_recorded; a missing column compares as
    unknown)."""
    have = set(trials.columns)
    tok = trials.select(
        "trial_id", *[pl.col(c) if c in have else pl.lit(None).alias(c) for c in _RESULT_TOTALS]
    ).unique("trial_id", keep="first", maintain_order=True)
    out = index.join(tok, on="trial_id", how="left", maintain_order="left").select(
        "trial_id", "n_steps", "n_tool_calls", "n_turns", _MISMATCH, _UNRECORDED
    )
    return out.cast(SUMMARY_SCHEMA)  # type: ignore[arg-type]
