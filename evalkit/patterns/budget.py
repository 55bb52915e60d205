"""Structural detectors about the trial's budgets: context window and wall-clock time."""

from __future__ import annotations

from typing import Any

import polars as pl

from evalkit.patterns.context import Context
from evalkit.patterns.prepare import finding_columns
from evalkit.patterns.registry import detector
from evalkit.patterns.sequence import label

_OUT = ("trial_id", "step_start", "step_end", "severity", "confidence", "evidence")


def _last_steps(ctx: Context) -> pl.DataFrame:
    return ctx.steps.group_by("trial_id").agg(pl.col("step_index").max().alias("_last"))


@detector("context_exhaustion", version=1, _builtin=True)
def context_exhaustion(ctx: Context) -> pl.DataFrame:
    """The trial ran into its context window.

    High: a context-length exception (ContextWindowExceededError, ...) or a context-limit
    message in a system / user message, step observation or failing tool output. Medium:
    prompt_tokens >= limit_share x context_limit (only when ``context_limit`` is configured,
    an int or {model_name: int}). Low: the history was summarised / compacted / condensed
    (a summarisation sub-trajectory or a system note). One finding per trial, the strongest.
    """
    p = ctx.params("context_exhaustion")
    grp = f"({p['context_regex']})"
    later = _steps_after_first_agent_step(ctx)
    parts = [
        _context_exceptions(ctx, p["exceptions"], p["context_regex"]),
        _context_messages(ctx, later, grp),
        _context_tool_errors(ctx, grp),
        _near_context_limit(ctx, p["context_limit"], p["limit_share"]),
        _condensed_history(ctx, later, p["condense_regex"]),
    ]
    out = pl.concat(
        [x.select(*_OUT, "_rank") for x in parts if x is not None], how="vertical_relaxed"
    )
    return (
        out.sort("_rank", "step_start")
        .unique("trial_id", keep="first", maintain_order=True)
        .drop("_rank")
    )


def _context_exceptions(ctx: Context, exceptions: Any, rx: str) -> pl.DataFrame:
    """Trials that ended on a context-length exception (rank 0)."""
    t = ctx.trial_info.filter(
        pl.col("exception_type").is_in(list(exceptions)).fill_null(False)
        | pl.col("exception_message").str.contains(rx).fill_null(False)
    ).join(_last_steps(ctx), on="trial_id", how="left")
    return t.select(
        *finding_columns(
            "high",
            0.95,
            pl.format(
                "{}: {}",
                "exception_type",
                ctx.snippet(pl.col("exception_message").fill_null("")),
            ),
            start="_last",
        ),
        pl.lit(0).alias("_rank"),
    )


def _steps_after_first_agent_step(ctx: Context) -> pl.DataFrame:
    """Non-agent steps and steps with an observation, after the agent's first step (the
    prompts before it describe the agent, they are not events)."""
    first = (
        ctx.steps.filter(pl.col("source") == "agent")
        .group_by("trial_id")
        .agg(pl.col("step_index").min().alias("_first"))
    )
    cand = (pl.col("source") != "agent") | pl.col("observation").is_not_null()
    return (
        ctx.steps.filter(cand)
        .join(first, on="trial_id", how="left")
        .filter(pl.col("step_index") > pl.col("_first").fill_null(-1))
    )


def _context_messages(ctx: Context, later: pl.DataFrame, grp: str) -> pl.DataFrame:
    """A context-limit message in a system / user message or a step observation (rank 1)."""
    text = pl.when(pl.col("source") != "agent").then(pl.col("message"))
    hit = later.with_columns(
        pl.coalesce(text.str.extract(grp, 1), pl.col("observation").str.extract(grp, 1)).alias("_m")
    ).filter(pl.col("_m").is_not_null())
    return _first(hit, "high", 0.9, pl.format("context limit: {}", ctx.snippet(pl.col("_m"))), 1)


def _context_tool_errors(ctx: Context, grp: str) -> pl.DataFrame:
    """A context-limit message in a failing tool call's output (rank 1)."""
    e = (
        ctx.calls.select("trial_id", "step_index", "observation", "err")
        .filter(pl.col("err"))
        .with_columns(pl.col("observation").str.slice(0, 20000).str.extract(grp, 1).alias("_m"))
        .filter(pl.col("_m").is_not_null())
    )
    ev = pl.format("context limit in tool output: {}", ctx.snippet(pl.col("_m")))
    return _first(e, "high", 0.9, ev, 1)


def _near_context_limit(ctx: Context, limit: Any, share: float) -> pl.DataFrame | None:
    """A prompt of at least ``share`` of the configured context limit (rank 2; None when no
    limit is configured)."""
    if not limit:
        return None
    if isinstance(limit, dict):
        lim = pl.col("model_name").replace_strict(limit, default=None, return_dtype=pl.Float64)
    else:
        lim = pl.lit(float(limit))
    big = ctx.steps.filter(pl.col("prompt_tokens") >= share * lim)
    ev = pl.format(
        "prompt_tokens {} >= {}% of the context limit", "prompt_tokens", pl.lit(int(share * 100))
    )
    return _first(big, "medium", 0.8, ev, 2)


def _condensed_history(ctx: Context, later: pl.DataFrame, condense_regex: str) -> pl.DataFrame:
    """The history was summarised / compacted / condensed (rank 3)."""
    cond = later.filter(
        pl.col("traj").str.contains(r"(?i)summar|compact|condens")
        | (
            (pl.col("source") != "agent")
            & pl.col("message").str.contains(condense_regex).fill_null(False)
        )
    )
    ev = pl.format(
        "history summarised / compacted: {}",
        ctx.snippet(pl.coalesce(pl.col("message"), pl.col("traj"))),
    )
    return _first(cond, "low", 0.6, ev, 3)


def _first(df: pl.DataFrame, sev: str, conf: float, ev: pl.Expr, rank: int) -> pl.DataFrame:
    return (
        df.sort("step_index")
        .with_columns(ev.alias("evidence"))
        .unique("trial_id", keep="first", maintain_order=True)
        .select(*finding_columns(sev, conf, "evidence"), pl.lit(rank).alias("_rank"))
    )


@detector("timeout_burn", version=2, _builtin=True)
def timeout_burn(ctx: Context) -> pl.DataFrame:
    """The trial timed out while the agent was waiting rather than working.

    The trial ended with an agent timeout (exception_type in ``exceptions`` or outcome
    'timeout') and the trajectory has a sleep of >= long_sleep_s, or >= min_wait_calls
    waiting / polling calls (sleep, wait, watch, tail -f, until/while loops, terminal waits
    with a ``duration``), or one call that took >= budget_share of the agent phase.
    """
    p = ctx.params("timeout_burn")
    t = ctx.trial_info.filter(
        pl.col("exception_type").is_in(list(p["exceptions"])).fill_null(False)
        | (pl.col("outcome") == "timeout").fill_null(False)
    ).select("trial_id", "exception_type", pl.coalesce("agent_s", "duration_s").alias("_budget"))
    if t.height == 0:
        return pl.DataFrame(schema=_schema())
    c = ctx.calls.select(
        "trial_id", "step_index", "cmd", "function_name", "arguments", "duration_ms"
    ).filter(pl.col("trial_id").is_in(t.get_column("trial_id").implode()))
    c = c.join(t, on="trial_id")
    sleep_s = pl.col("cmd").str.extract(p["sleep_regex"], 3).cast(pl.Float64, strict=False)
    dur = pl.col("arguments").str.json_path_match("$.duration").cast(pl.Float64, strict=False)
    terminal_wait = (
        pl.col("cmd").is_null()
        & (dur >= 1.0).fill_null(False)
        & pl.col("arguments").str.contains("keystrokes").fill_null(False)
    )
    wait = pl.col("cmd").str.contains(p["wait_regex"]).fill_null(False) | terminal_wait
    long_call = (pl.col("duration_ms") >= p["budget_share"] * pl.col("_budget") * 1000).fill_null(
        False
    )
    c = c.with_columns(
        pl.max_horizontal(sleep_s, pl.when(terminal_wait).then(dur)).alias("_wait_s"), wait.alias("_wait"), long_call.alias("_long"),
        label(ctx).alias("label"),
    )  # fmt: skip
    g = c.group_by("trial_id", maintain_order=True).agg(
        pl.col("exception_type").first(),
        pl.col("_wait").sum().alias("_nw"),
        pl.col("_wait_s").max().alias("_maxs"),
        pl.col("_wait_s").sum().alias("_sums"),
        pl.col("_long").any().alias("_anylong"),
        pl.col("label").filter(pl.col("_wait") | pl.col("_long")).first().alias("_ex"),
        pl.col("step_index").filter(pl.col("_wait") | pl.col("_long")).min().alias("step_start"),
        pl.col("step_index").max().alias("step_end"),
    )
    hit = (
        (pl.col("_maxs") >= p["long_sleep_s"]).fill_null(False)
        | (pl.col("_nw") >= p["min_wait_calls"])
        | pl.col("_anylong")
    )
    return g.filter(hit).select(
        "trial_id",
        pl.coalesce("step_start", "step_end").alias("step_start"),
        "step_end",
        pl.when(pl.col("_anylong") | (pl.col("_maxs") >= p["long_sleep_s"])).then(pl.lit("high")).otherwise(pl.lit("medium")).alias("severity"),
        pl.lit(0.75).alias("confidence"),
        pl.format(
            "{}; {} waiting calls ({} s of explicit waits), e.g. {}",
            pl.col("exception_type").fill_null("timeout"), "_nw", pl.col("_sums").fill_null(0).round(1), "_ex",
        ).alias("evidence"),
    )  # fmt: skip


def _schema() -> dict[str, pl.DataType]:
    return {
        "trial_id": pl.String, "step_start": pl.Int64, "step_end": pl.Int64, "severity": pl.String,
        "confidence": pl.Float64, "evidence": pl.String,
    }  # fmt: skip
