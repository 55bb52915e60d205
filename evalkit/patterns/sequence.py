"""Structural detectors over the order of tool calls (mode 'structural').

Every rule is a Polars expression over :attr:`Context.calls` (one row per call, sorted by
trajectory then ``seq``); no Python loop runs per row. For speed, windows use global shifts
masked at trajectory boundaries (``gkey``) and single 64-bit keys (``sig_g``: the call
signature within its trajectory) instead of ``over()`` on string columns.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from evalkit.patterns.context import Context
from evalkit.patterns.prepare import basename, finding_columns, flagged_spans, run_id
from evalkit.patterns.registry import detector

G = ["trial_id", "traj"]


def label(ctx: Context) -> pl.Expr:
    """A short text for a call: its shell command, else name(arguments). Apply it to small
    (already filtered) frames: it cuts and cleans whole argument strings."""
    return ctx.snippet(
        pl.coalesce(
            pl.col("cmd"),
            pl.concat_str(
                [
                    pl.col("function_name").fill_null("?"),
                    pl.lit(" "),
                    pl.col("arguments").fill_null("").str.slice(0, 400),
                ]
            ),
        )
    )


def _lab_cols() -> list[str]:
    return ["cmd", "function_name", "arguments"]


def shift_in_group(col: str, n: int) -> pl.Expr:
    """``col`` shifted by ``n`` rows, null when that row belongs to another trajectory."""
    return pl.when(pl.col("gkey").shift(n) == pl.col("gkey")).then(pl.col(col).shift(n))


def _runs(
    c: pl.DataFrame, keys: tuple[str, ...], min_len: int, where: pl.Expr | None = None
) -> pl.DataFrame:
    """Maximal runs (>= ``min_len`` rows) of consecutive rows with equal ``keys`` within a
    trajectory, optionally only runs whose first row satisfies ``where``. Run lengths are
    counted on integer ids first; only the qualifying runs are aggregated."""
    c = c.with_columns(run_id(*keys).alias("_run"))
    heads = c.select("_run", (where if where is not None else pl.lit(True)).alias("_ok"))
    sizes = (
        heads.group_by("_run")
        .agg(pl.len().alias("n"), pl.col("_ok").first())
        .filter(pl.col("_ok") & (pl.col("n") >= min_len))
    )
    if sizes.height == 0:
        return c.head(0).select(
            "trial_id", "traj", "sig", pl.lit(0, pl.UInt32).alias("n"),
            pl.col("step_index").alias("step_start"), pl.col("step_index").alias("step_end"),
            *_lab_cols(),
        )  # fmt: skip
    return (
        c.filter(pl.col("_run").is_in(sizes.get_column("_run").implode()))
        .group_by("_run", maintain_order=True)
        .agg(
            pl.col("trial_id").first(),
            pl.col("traj").first(),
            pl.col("sig").first(),
            pl.len().alias("n"),
            pl.col("step_index").first().alias("step_start"),
            pl.col("step_index").last().alias("step_end"),
            *[pl.col(x).first() for x in _lab_cols()],
        )
        .drop("_run")
    )


_RETRY_COLS = ("trial_id", "traj", "sig", "step_start", "step_end", "severity", "confidence", "_rank",
               "n", "_what", *("cmd", "function_name", "arguments"))  # fmt: skip


@detector("retry_loop", version=1, _builtin=True)
def retry_loop(ctx: Context) -> pl.DataFrame:
    """The agent repeats the same call without changing anything.

    (a) >= min_failing_repeats consecutive identical calls (same tool + command / arguments)
    that all fail (OpenHands rule 2); (b) >= min_same_output_repeats consecutive identical
    calls with identical output (rule 1); (c) a period-2 ping-pong over cycle_calls calls with
    repeating outputs (rule 4); (d) the same call >= window_repeats times within any
    ``window`` consecutive calls (polling commands - sleep, tail, ls, git status, ... - count
    only when their output repeats too). One finding per loop; severity high for (a), medium
    for (b)/(c), low for (d).
    """
    p = ctx.params("retry_loop")
    c = ctx.calls.select(
        "trial_id", "traj", "gkey", "seq", "step_index", "sig", "sig_g", "obs_hash", "err", *_lab_cols()
    )  # fmt: skip
    if c.height == 0:
        return pl.DataFrame(schema={"trial_id": pl.String, "step_start": pl.Int64})
    a = _runs(c, ("sig", "err"), int(p["min_failing_repeats"]), where=pl.col("err"))
    b = _runs(c, ("sig", "obs_hash"), int(p["min_same_output_repeats"]))
    window_rule = ">= {} repeats within " + str(p["window"]) + " calls: {}"
    parts = [
        _retry_rule(a, "high", 0.95, 0, "{}x identical failing call: {}"),
        _retry_rule(b, "medium", 0.9, 1, "{}x identical call, identical output: {}"),
        _retry_rule(_period2_cycles(c, p["cycle_calls"]), "medium", 0.85, 2,
                    "period-2 cycle over {} calls, e.g. {}"),
        _retry_rule(_window_repeats(ctx, c, p), "low", 0.7, 3, window_rule),
    ]  # fmt: skip
    out = pl.concat(parts, how="vertical_relaxed")
    # one finding per (trial, traj, call): the strongest rule wins
    out = out.sort("_rank", "trial_id", "step_start").unique(
        ["trial_id", "traj", "sig"], keep="first", maintain_order=True
    )
    return out.select(
        "trial_id", "step_start", "step_end", "severity", "confidence",
        _fmt(pl.col("_what"), pl.col("n"), label(ctx)).alias("evidence"),
    )  # fmt: skip


def _retry_rule(df: pl.DataFrame, sev: str, conf: float, rank: int, what: str) -> pl.DataFrame:
    """Tag one retry_loop rule's spans with its severity, confidence, rank and template."""
    return df.with_columns(
        pl.lit(sev).alias("severity"), pl.lit(conf).alias("confidence"),
        pl.lit(rank).alias("_rank"), pl.lit(what).alias("_what"), pl.col("n").cast(pl.Int64),
    ).select(_RETRY_COLS)  # fmt: skip


def _period2_cycles(c: pl.DataFrame, min_calls: Any) -> pl.DataFrame:
    """Spans where x[i] == x[i-2] (call and output) and x[i] != x[i-1], >= min_calls long."""
    alt = (
        (shift_in_group("sig", 2) == pl.col("sig"))
        & (shift_in_group("obs_hash", 2) == pl.col("obs_hash"))
        & (pl.col("sig") != pl.col("sig").shift(1))
    ).fill_null(False)
    cyc = c.with_columns(alt.alias("_alt"), pl.col("step_index").shift(2).alias("_s2"))
    return flagged_spans(
        cyc,
        "_alt",
        pl.col("traj").first(),
        pl.col("sig").first(),
        (pl.len() + 2).alias("n"),
        pl.col("_s2").first().alias("step_start"),
        pl.col("step_index").last().alias("step_end"),
        *[pl.col(x).first() for x in _lab_cols()],
    ).filter(pl.col("n") >= min_calls)


def _window_repeats(ctx: Context, c: pl.DataFrame, p: dict[str, Any]) -> pl.DataFrame:
    """The same call >= window_repeats times within ``window`` consecutive calls.

    Polling commands are keyed on (call, output). Sorted by key, the (k-1)-th earlier
    occurrence is a plain shift.
    """
    k = int(p["window_repeats"])
    poll = pl.col("cmd").str.contains(ctx.common["polling_regex"]).fill_null(False)
    key = pl.when(poll).then(pl.col("sig_g").xor(pl.col("obs_hash"))).otherwise(pl.col("sig_g"))
    d = c.select(
        pl.int_range(pl.len(), dtype=pl.UInt32).alias("_i"), key.alias("_k"), "seq", "step_index"
    ).sort("_k", maintain_order=True)
    same = pl.col("_k").shift(k - 1) == pl.col("_k")
    d = d.with_columns(
        pl.when(same).then(pl.col("seq").shift(k - 1)).alias("_back"),
        pl.when(same).then(pl.col("step_index").shift(k - 1)).alias("_bstep"),
    ).filter((pl.col("seq") - pl.col("_back")) < p["window"])
    d = d.group_by("_k", maintain_order=True).agg(
        pl.col("_i").first(),
        pl.col("_bstep").min().alias("step_start"),
        pl.col("step_index").max().alias("step_end"),
        (pl.len() + k - 1).alias("n"),
    )
    return pl.concat(
        [c[d.get_column("_i")].select("trial_id", "traj", "sig", *_lab_cols()), d.drop("_i", "_k")],
        how="horizontal",
    )


def _fmt(template: pl.Expr, n: pl.Expr, lab: pl.Expr) -> pl.Expr:
    """'{}x ... {}' templates filled with n and the call label."""
    parts = template.str.split("{}")
    return pl.concat_str(
        [
            parts.list.get(0),
            n.cast(pl.String),
            parts.list.get(1),
            lab,
            parts.list.get(2, null_on_oob=True).fill_null(""),
        ]
    )


#: The first error-looking line (bounded repetitions keep this linear on long outputs).
_ERR_LINE = (
    r"([^\n]{0,160}(?:[Ee]rror|ERROR|FAIL|[Ff]ailed|fatal|panic|Exception|not found|denied|"
    r"No such|[Ii]nvalid|[Cc]annot)[^\n]{0,80})"
)


@detector("repeated_failed_command", version=1, _builtin=True)
def repeated_failed_command(ctx: Context) -> pl.DataFrame:
    """The same call fails the same way >= min_repeats times anywhere in the trajectory.

    Same call = same tool + command (shell) or arguments; same way = same exit code and same
    first error line (digits masked). Non-consecutive, so it generalises retry_loop (a).
    Severity: low for 2, medium for 3-4, high for >= 5.
    """
    p = ctx.params("repeated_failed_command")
    e = ctx.calls.select(
        "trial_id", "sig_g", "exit_code", "step_index", "observation", "err", *_lab_cols()
    ).filter(pl.col("err"))
    obs = pl.col("observation").str.slice(0, 4000)
    last_line = pl.col("observation").str.tail(300).str.extract(r"([^\n]*\S[^\n]*)\s*$", 1)
    line = pl.coalesce(obs.str.extract(_ERR_LINE, 1), last_line)
    e = e.with_columns(
        line.str.replace_all(r"\d+", "#").str.strip_chars().fill_null("").alias("_line")
    )
    g = e.group_by("sig_g", "exit_code", "_line", maintain_order=True).agg(
        pl.col("trial_id").first(),
        pl.len().alias("n"),
        pl.col("step_index").min().alias("step_start"),
        pl.col("step_index").max().alias("step_end"),
        *[pl.col(x).first() for x in _lab_cols()],
    )
    n = pl.col("n")
    return g.filter(n >= p["min_repeats"]).select(
        "trial_id",
        "step_start",
        "step_end",
        pl.when(n >= 5)
        .then(pl.lit("high"))
        .when(n >= 3)
        .then(pl.lit("medium"))
        .otherwise(pl.lit("low"))
        .alias("severity"),
        pl.lit(0.9).alias("confidence"),
        pl.format(
            "failed {}x with the same error ({}): {}", n, ctx.snippet(pl.col("_line")), label(ctx)
        ).alias("evidence"),
    )


@detector("skipped_diagnostic", version=1, _builtin=True)
def skipped_diagnostic(ctx: Context) -> pl.DataFrame:
    """After a failing call the agent acts without looking at the failure.

    Within the next ``lookahead`` calls there is no diagnostic action (a read / inspection
    of anything, a verbose re-run) and at least one blind action: the identical call again,
    an edit of a file the error output does not name, or finishing / stopping right away.
    """
    p = ctx.params("skipped_diagnostic")
    k = int(p["lookahead"])
    c = ctx.calls.select(
        "trial_id", "gkey", "seq", "step_index", "sig", "err", "is_write", "is_finish", "observation",
        *_lab_cols(), _is_diagnostic(ctx, p).alias("diag"),
        basename(pl.col("w_paths").list.first()).alias("wbase"),
    )  # fmt: skip
    cols = ["sig", "diag", "is_write", "wbase", "is_finish", "step_index"]
    c = c.with_columns(
        [shift_in_group(x, -j).alias(f"{x}_{j}") for j in range(1, k + 1) for x in cols]
    )
    c = c.filter(pl.col("err"))
    any_diag, blind, why = _next_calls_diagnostic_blind_why(k)
    stopped = pl.col("sig_1").is_null()
    c = c.with_columns(
        (~any_diag & (blind | stopped)).alias("_hit"),
        pl.coalesce([*why, pl.when(stopped).then(pl.lit("stopped"))]).alias("_why"),
        pl.coalesce(
            [pl.col(f"step_index_{j}") for j in range(k, 0, -1)] + [pl.col("step_index")]
        ).alias("_end"),
    ).filter(pl.col("_hit"))
    return c.unique(["gkey", "sig"], keep="first", maintain_order=True).select(
        *finding_columns(
            pl.when(stopped).then(pl.lit("low")).otherwise(pl.lit("medium")),
            0.6,
            pl.format("error in {} -> {}", label(ctx), "_why"),
            end="_end",
        )
    )


def _is_diagnostic(ctx: Context, p: dict[str, Any]) -> pl.Expr:
    """A call that looks at something: it reads a path, is a read tool, or runs an
    inspection or verbose command."""
    return (
        (pl.col("r_paths").list.len() > 0)
        | pl.col("fn").is_in(list(ctx.common["read_tools"]))
        | pl.col("cmd").str.contains(ctx.common["inspect_regex"]).fill_null(False)
        | pl.col("cmd").str.contains(p["verbose_regex"]).fill_null(False)
    )


def _next_calls_diagnostic_blind_why(k: int) -> tuple[pl.Expr, pl.Expr, list[pl.Expr]]:
    """Over the next ``k`` calls (columns ``<x>_<j>``): whether any is diagnostic, whether any
    is blind (the same call again, an edit of a file the error does not name, finishing),
    and the reason of each blind one."""
    any_diag = pl.lit(False)
    blind = pl.lit(False)
    why = []
    for j in range(1, k + 1):
        exists = pl.col(f"sig_{j}").is_not_null()
        any_diag = any_diag | (exists & pl.col(f"diag_{j}"))
        repeat = exists & (pl.col(f"sig_{j}") == pl.col("sig"))
        unrelated = (
            exists
            & pl.col(f"is_write_{j}")
            & ~pl.col("observation")
            .fill_null("")
            .str.contains(pl.col(f"wbase_{j}").fill_null("\x00"), literal=True)
        )
        fin = exists & pl.col(f"is_finish_{j}")
        blind = blind | repeat | unrelated | fin
        why += [
            pl.when(repeat).then(pl.lit("repeated the same call")),
            pl.when(unrelated).then(
                pl.format("edited {} (not named in the error)", pl.col(f"wbase_{j}"))
            ),
            pl.when(fin).then(pl.lit("finished")),
        ]
    return any_diag, blind, why


@detector("ignored_error_output", version=1, _builtin=True)
def ignored_error_output(ctx: Context) -> pl.DataFrame:
    """A call fails and the agent's next message reports success without acknowledging it.

    The next agent message after the failing step matches the success regex and contains
    none of the acknowledgement words (error, fail, issue, but, however, expected, ...).
    """
    p = ctx.params("ignored_error_output")
    errs = (
        ctx.calls.select("trial_id", "gkey", "step_index", "observation", "err", *_lab_cols())
        .filter(pl.col("err"))
        .unique(["gkey", "step_index"], keep="first", maintain_order=True)
        .with_columns((pl.col("step_index") + 1).alias("_k"))
        .sort("_k")
    )
    m = (
        ctx.msgs.select("gkey", "step_index", "message", "from_finish")
        .filter((pl.col("message").str.contains(r"\S")) & ~pl.col("from_finish"))
        .select(
            "gkey",
            pl.col("step_index").alias("_k"),
            pl.col("step_index").alias("msg_step"),
            "message",
        )
        .sort("_k")
    )
    j = errs.join_asof(m, on="_k", by="gkey", strategy="forward", check_sortedness=False)
    msg = pl.col("message")
    hit = msg.str.contains(p["success_regex"]) & ~msg.str.contains(p["acknowledge_regex"])
    j = j.filter(hit.fill_null(False)).unique(
        ["gkey", "msg_step"], keep="first", maintain_order=True
    )
    return j.select(
        *finding_columns(
            "medium",
            0.6,
            pl.format(
                "error in {} ({}) then: {}",
                label(ctx),
                ctx.snippet(pl.col("observation").str.slice(0, 300)),
                ctx.snippet(msg),
            ),
            end="msg_step",
        )
    )
