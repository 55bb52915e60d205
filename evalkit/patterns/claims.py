"""Structural detectors about what the agent says when it stops (mode 'structural').

"Closing messages" are the last agent message of each turn (a user message starts a turn;
single-task runs have one turn) plus the message argument of finish / submit calls.
"""

from __future__ import annotations

import polars as pl

from evalkit.patterns.context import Context
from evalkit.patterns.prepare import basename, finding_columns
from evalkit.patterns.registry import detector
from evalkit.patterns.sequence import G, label


def _with_reward(ctx: Context, df: pl.DataFrame) -> pl.DataFrame:
    return df.join(
        ctx.trial_info.select("trial_id", "reward", "exception_type"), on="trial_id", how="left"
    )


@detector("hedge_assertion", version=1, _builtin=True)
def hedge_assertion(ctx: Context) -> pl.DataFrame:
    """A closing message hedges about the result instead of checking it.

    "should work now", "probably fixes", "I believe it passes", "seems to work", "I'm not
    sure" in a closing message. A hedge next to a reported failure (tests fail, build error)
    is an honest report and not flagged. Severity high when the trial's reward is 0.
    """
    p = ctx.params("hedge_assertion")
    m = ctx.msgs.filter(pl.col("is_closing"))
    m = m.filter(
        pl.col("message").str.contains(p["hedge_regex"])
        & ~pl.col("message").str.contains(p["excuse_regex"])
    )
    m = _with_reward(ctx, m)
    return m.select(
        *finding_columns(
            pl.when(pl.col("reward") <= 0).then(pl.lit("high")).otherwise(pl.lit("medium")),
            0.6,
            pl.format(
                "hedge '{}' in: {}",
                pl.col("message").str.extract(p["hedge_regex"], 1),
                ctx.snippet(pl.col("message")),
            ),
        )
    )


def _claims(ctx: Context) -> pl.DataFrame:
    """Per analysed trajectory: the final closing message, whether it (or a finish call)
    claims completion, and the step the agent stopped at."""
    rx = ctx.common["completion_regex"]
    fm = (
        ctx.final_msgs.sort("step_index")
        .group_by(G)
        .agg(
            pl.col("message").filter(pl.col("message").str.contains(rx)).last().alias("claim"),
            pl.col("message").last().alias("final"),
            pl.col("step_index").max().alias("final_step"),
        )
    )
    fin = (
        ctx.calls.select(*G, "step_index", "function_name", "is_finish")
        .filter(pl.col("is_finish"))
        .group_by(G)
        .agg(
            pl.col("step_index").min().alias("finish_step"),
            pl.col("function_name").first().alias("finish"),
        )
    )
    last = (
        ctx.msgs.filter(~pl.col("from_finish"))
        .sort("step_index")
        .group_by(G)
        .agg(
            pl.col("n_tool_calls").last().alias("_ltc"),
            pl.col("step_index").max().alias("last_step"),
        )
    )
    out = last.join(fm, on=G, how="left").join(fin, on=G, how="left")
    return out.with_columns(
        (pl.col("finish").is_not_null() | (pl.col("_ltc") == 0)).alias("stopped"),
        (pl.col("claim").is_not_null() | pl.col("finish").is_not_null()).alias("claimed"),
    )


def _last_writes(c: pl.DataFrame) -> pl.DataFrame:
    """Per trajectory: the seq, step and file basename of the last write call."""
    return (
        c.filter(pl.col("is_write"))
        .group_by(G)
        .agg(
            pl.col("seq").last().alias("_eseq"),
            pl.col("step_index").last().alias("_estep"),
            basename(pl.col("w_paths").last().list.first()).alias("_ebase"),
        )
    )


def _verifications_after_last_write(ctx: Context, c: pl.DataFrame) -> pl.DataFrame:
    """Per trajectory: count, last error, step and label of verification calls after the
    last write (a test / check command, or a call that reads or runs the last written file)."""
    # per trajectory, broadcast the last write (the frame is sorted by trajectory, then seq)
    last_w = pl.when(pl.col("is_write")).then(pl.col("w_paths").list.first())
    after = c.with_columns(
        pl.when(pl.col("is_write")).then(pl.col("seq")).max().over("gkey").alias("_eseq"),
        basename(last_w.drop_nulls().last().over("gkey")).alias("_ebase"),
    ).filter(pl.col("_eseq").is_null() | (pl.col("seq") > pl.col("_eseq")))
    mention = (
        ~pl.col("is_write")
        & (pl.col("is_shell") | (pl.col("r_paths").list.len() > 0))
        & pl.coalesce("cmd", "arguments")
        .str.contains(pl.col("_ebase").fill_null("\x00"), literal=True)
        .fill_null(False)
    )
    ver = pl.col("is_verify") | (pl.col("_ebase").is_not_null() & mention)
    return (
        after.filter(ver)
        .sort("seq")
        .group_by(G)
        .agg(
            pl.len().alias("_nv"),
            pl.col("err").last().alias("_verr"),
            pl.col("step_index").last().alias("_vstep"),
            pl.col("cmd").last(),
            pl.col("function_name").last(),
            pl.col("arguments").last(),
        )
        .with_columns(label(ctx).alias("_vl"))
        .drop("cmd", "function_name", "arguments")
    )


@detector("premature_completion", version=1, _builtin=True)
def premature_completion(ctx: Context) -> pl.DataFrame:
    """The agent stops (closing message or finish call) without checking its last change.

    (i) files were written and no verification followed the last write (a test / check
    command, or a call that reads or runs the last written file), or (ii) the last
    verification failed. Trials that ended on a timeout or context error did not stop by
    choice and are skipped. Severity high when the agent also claims completion.
    """
    c = ctx.calls.select(
        *G, "gkey", "seq", "step_index", "is_write", "is_verify", "is_shell", "r_paths", "err",
        "w_paths", "cmd", "function_name", "arguments",
    )  # fmt: skip
    le = _last_writes(c)
    v = _verifications_after_last_write(ctx, c)
    s = _claims(ctx).join(le, on=G, how="left").join(v, on=G, how="left")
    s = _with_reward(ctx, s)
    exc = list(ctx.params("timeout_burn")["exceptions"]) + list(
        ctx.params("context_exhaustion")["exceptions"]
    )
    unverified = pl.col("_eseq").is_not_null() & pl.col("_nv").fill_null(0).eq(0)
    failed = pl.col("_verr").fill_null(False)
    s = s.filter(
        pl.col("stopped")
        & (unverified | failed)
        & ~pl.col("exception_type").is_in(exc).fill_null(False)
    )
    claim_txt = pl.coalesce(pl.col("claim"), pl.format("called {}", "finish"), pl.lit("no claim"))
    return s.select(
        "trial_id",
        pl.coalesce("_estep", "_vstep", "last_step").alias("step_start"),
        pl.max_horizontal("last_step", "final_step", "finish_step").alias("step_end"),
        pl.when(pl.col("claimed"))
        .then(pl.lit("high"))
        .otherwise(pl.lit("medium"))
        .alias("severity"),
        pl.when(pl.col("claimed")).then(0.8).otherwise(0.6).alias("confidence"),
        pl.format(
            "{}; stopped with: {}",
            pl.when(unverified)
            .then(pl.format("no verification after writing {}", "_ebase"))
            .otherwise(pl.format("last check failed: {}", "_vl")),
            ctx.snippet(claim_txt),
        ).alias("evidence"),
    )


@detector("false_success_claim", version=1, _builtin=True)
def false_success_claim(ctx: Context) -> pl.DataFrame:
    """The agent ends claiming success (or calls finish) and the verifier gave reward 0.

    Outcome-conditioned: needs ``trials.reward``; trials without a reward are skipped. The
    claim is the completion regex on the final closing message, or a finish / submit call.
    """
    p = ctx.params("false_success_claim")
    s = _with_reward(ctx, _claims(ctx)).filter(
        pl.col("claimed") & pl.col("reward").is_not_null() & (pl.col("reward") <= p["max_reward"])
    )
    return s.select(
        "trial_id",
        pl.coalesce("final_step", "finish_step").alias("step_start"),
        pl.max_horizontal("final_step", "finish_step").alias("step_end"),
        pl.lit("high").alias("severity"),
        pl.lit(0.9).alias("confidence"),
        pl.format(
            "claimed completion ({}) but reward {}",
            ctx.snippet(pl.coalesce(pl.col("claim"), pl.format("called {}", "finish"))),
            "reward",
        ).alias("evidence"),
    )


@detector("giving_up", version=1, _builtin=True)
def giving_up(ctx: Context) -> pl.DataFrame:
    """A closing message abstains: inability, refusal, uncertainty or a clarification request.

    HAL's abstention families and weights (inability 1.0, uncertainty 0.7, clarification
    0.5, refusal 1.0); strength = min(1, sum of matched weights / 3); flagged when strength
    >= threshold or an inability / refusal phrase matches. Severity medium for inability /
    refusal, else low; confidence = strength.
    """
    p = ctx.params("giving_up")
    m = ctx.msgs.filter(pl.col("is_closing"))
    m = m.filter(pl.col("message").str.contains(r"\S"))
    msg = pl.col("message").str.to_lowercase()
    total = pl.lit(0.0)
    hard = pl.lit(False)
    first = []
    for fam, (weight, pats) in p["families"].items():
        for pat in pats:
            hit = msg.str.contains(pat)
            total = total + hit.cast(pl.Float64) * weight
            if fam in ("inability", "refusal"):
                hard = hard | hit
            first.append(
                pl.when(hit).then(msg.str.extract(f"([^.\\n]{{0,40}}{pat}[^.\\n]{{0,60}})", 1))
            )
    strength = pl.min_horizontal(pl.lit(1.0), total / 3)
    m = m.with_columns(strength.alias("_s"), hard.alias("_hard"), pl.coalesce(first).alias("_ev"))
    m = m.filter((pl.col("_s") >= p["threshold"]) | pl.col("_hard"))
    return m.unique(["trial_id", "traj"], keep="last", maintain_order=True).select(
        *finding_columns(
            pl.when(pl.col("_hard")).then(pl.lit("medium")).otherwise(pl.lit("low")),
            pl.max_horizontal("_s", pl.lit(0.3)),
            pl.format("abstains: {}", ctx.snippet(pl.col("_ev"))),
        )
    )
