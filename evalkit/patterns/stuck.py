"""no_progress (stuck): windows of calls that repeat themselves, and the long tail."""

from __future__ import annotations

import polars as pl

from evalkit.patterns.context import Context
from evalkit.patterns.prepare import finding_columns, flagged_spans
from evalkit.patterns.registry import detector


@detector("no_progress", version=2, _builtin=True)
def no_progress(ctx: Context) -> pl.DataFrame:
    """Stuck: a window of calls that repeats itself and writes nothing new.

    In a rolling window of ``window`` calls, >= repeat_share of the calls repeat an earlier
    call of the trajectory, or >= same_output_share return an output seen before, and no
    new file is written. Also the long tail: a trial known not to have passed (reward < 1,
    or outcome timeout / error) with more steps than the tail_quantile of the passing trials
    of the same task (needs >= tail_min_passing of them).
    """
    p = ctx.params("no_progress")
    w = int(p["window"])
    c = ctx.calls.select(
        "trial_id", "gkey", "seq", "step_index", "sig_g", "obs_g", "is_write",
        pl.col("w_paths").list.first().hash(13).xor(pl.col("gkey")).alias("_w0"),
    )  # fmt: skip
    c = c.with_columns(
        (~pl.col("sig_g").is_first_distinct()).cast(pl.Float64).alias("_rep"),
        (~pl.col("obs_g").is_first_distinct()).cast(pl.Float64).alias("_seen"),
        (pl.col("is_write") & pl.col("_w0").is_first_distinct()).cast(pl.Float64).alias("_new"),
    )
    full = pl.col("seq") >= w - 1  # the window lies inside the trajectory
    c = c.with_columns(
        pl.when(full).then(pl.col("_rep").rolling_mean(w)).alias("_rm"),
        pl.when(full).then(pl.col("_seen").rolling_mean(w)).alias("_sm"),
        pl.when(full).then(pl.col("_new").rolling_sum(w)).alias("_nw"),
        pl.when(full).then(pl.col("step_index").shift(w - 1)).alias("_wstart"),
    )
    flag = ((pl.col("_rm") >= p["repeat_share"]) | (pl.col("_sm") >= p["same_output_share"])) & (
        pl.col("_nw") == 0
    )
    c = c.with_columns(flag.fill_null(False).alias("_f"))
    spans = flagged_spans(
        c,
        "_f",
        pl.col("_wstart").first().alias("step_start"),
        pl.col("step_index").last().alias("step_end"),
        (pl.len() + w - 1).alias("n"),
        pl.col("_rm").max(),
    ).select(
        *finding_columns(
            pl.when(pl.col("n") >= 3 * w).then(pl.lit("high")).otherwise(pl.lit("medium")),
            0.7,
            pl.format(
                "{} calls without progress ({}% repeated calls, no new file written)",
                "n",
                (pl.col("_rm") * 100).round(0).cast(pl.Int64),
            ),
            start="step_start",
            end="step_end",
        )
    )
    return pl.concat([spans, _long_tail(ctx, p)], how="vertical_relaxed")


def _long_tail(ctx: Context, p: dict) -> pl.DataFrame:
    t = ctx.trial_info.filter(pl.col("task_name").is_not_null() & pl.col("n_steps").is_not_null())
    passing = pl.col("reward") >= 1
    q = (
        t.filter(passing)
        .group_by("task_name")
        .agg(
            pl.col("n_steps").quantile(p["tail_quantile"], "linear").alias("_q"),
            pl.len().alias("_np"),
        )
        .filter(pl.col("_np") >= p["tail_min_passing"])
    )
    # known not to have passed: a reward below 1, or no reward because the agent timed out
    # or crashed (a trial cancelled before its verifier ran is not known to have failed)
    not_passed = (pl.col("reward") < 1) | pl.col("outcome").is_in(["timeout", "error"])
    out = t.join(q, on="task_name").filter(
        not_passed.fill_null(False) & (pl.col("n_steps") > pl.col("_q"))
    )
    return out.select(
        "trial_id",
        pl.lit(0, pl.Int64).alias("step_start"),
        (pl.col("n_steps") - 1).cast(pl.Int64).alias("step_end"),
        pl.lit("low").alias("severity"),
        pl.lit(0.4).alias("confidence"),
        pl.format("long tail: {} steps > p{} of passing trials of the task ({})", "n_steps",
                  pl.lit(int(p["tail_quantile"] * 100)), pl.col("_q").round(1)).alias("evidence"),
    )  # fmt: skip
