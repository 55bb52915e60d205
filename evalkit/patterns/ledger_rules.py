"""Mode 'trainerd': rules that check each agent message, or each call, against a ledger of the
tool calls made before it: go-code's own rules (rollouts-gates-qc.md §1.6-1.7).

* retry_loop: the runner's rule (``internal/harness/runner_step_engine.go``): key = tool
  name + NUL + the raw arguments string (no canonicalisation); the call that brings a key's
  count to 3 emits one finding, once per key, successful or not.
* hedge_assertion, unverified_file_claim, premature_completion, architecture_assumption,
  skipped_diagnostic: the conclusion-watcher's phrase heuristics
  (``plugins/conclusion-watcher/detectors.go``, ``ledger.go``): case-insensitive substring
  matches on each agent message (``strings.ToLower``), checked against a ledger of the tool
  calls made before the message. Confidences as in go-code (1.0 / 0.8 / 0.9 / 0.75 /
  1.0 or 0.85); severity from trainerd's weights (<= 0.5 low, 1.0 medium, > 1 high).

The detectors of the default (structural) mode share these six names but are other rules,
so each mode keeps its own: structural ``retry_loop`` looks for consecutive identical calls
that fail or repeat their output (and ping-pong and windowed repeats), not for the third call
of a raw-argument key; structural
``hedge_assertion`` reads closing messages only, with word-boundary regexes and an excuse
filter; structural ``unverified_file_claim`` looks for a claimed *write* that no call wrote,
not a hedged mention of a file that no call read; structural ``premature_completion``,
``architecture_assumption`` and ``skipped_diagnostic`` use the verification, probe and
diagnostic columns of :mod:`evalkit.patterns.prepare` instead of go-code's tool lists and
three-call window. What the two modes share is called, not copied: the phrase and group
helpers of :mod:`evalkit.patterns.prepare` and :func:`~evalkit.patterns.sequence.shift_in_group`,
and the output columns (:func:`~evalkit.patterns.prepare.finding_columns`).

Differences we cannot avoid, documented in docs/patterns.md: the watcher runs live, so
"the ledger" here is every call of an earlier step (plus, for skipped_diagnostic, the calls of
the same step up to the current one); tool names are the recorded ones (go-code's are
``bash``, ``read_file``, ...; map others with ``config={"trainerd": {"tool_aliases": {...}}}``).
"""

from __future__ import annotations

from typing import Any

import polars as pl

from evalkit.patterns.context import Context
from evalkit.patterns.prepare import (
    _group1_all,
    any_of,
    basename,
    finding_columns,
    within_group_index,
)
from evalkit.patterns.registry import detector
from evalkit.patterns.sequence import shift_in_group

_T = ["trial_id", "traj"]


def _severity(ctx: Context, name: str) -> pl.Expr:
    t = ctx.params("trainerd")
    w = t["weights"].get(name, t["default_weight"])
    return pl.lit("low" if w <= 0.5 else ("medium" if w <= 1.0 else "high"))


def _tool(ctx: Context) -> pl.Expr:
    aliases = ctx.params("trainerd")["tool_aliases"]
    fn = pl.col("function_name").fill_null("")
    return fn.replace(aliases) if aliases else fn


def _msgs(ctx: Context, phrases: tuple[str, ...] | list[str]) -> pl.DataFrame:
    """Agent messages containing any of ``phrases`` (go-code: strings.ToLower + Contains),
    with the lower-cased text in ``_low``. An ASCII case-insensitive scan picks the candidates
    first, so the (expensive) lower-casing only runs on them."""
    m = ctx.msgs.select("trial_id", "traj", "gkey", "step_index", "message", "from_finish")
    m = m.filter(
        ~pl.col("from_finish")
        & (pl.col("message") != "")
        & pl.col("message").str.contains(any_of(phrases, ignore_case=True))
    )
    m = m.with_columns(pl.col("message").str.to_lowercase().alias("_low"))
    return m.filter(pl.col("_low").str.contains(any_of(phrases)))


def _first_phrase(phrases: tuple[str, ...]) -> pl.Expr:
    return pl.coalesce(
        [pl.when(pl.col("_low").str.contains(ph, literal=True)).then(pl.lit(ph)) for ph in phrases]
    )


def _last3(ctx: Context, flag: pl.Expr, name: str) -> pl.DataFrame:
    """Per (trajectory, step): whether any of the latest ``ledger_window`` calls up to the end
    of that step has ``flag``; as-of joinable on the message step (key ``_k`` = step + 1)."""
    n = int(ctx.params("trainerd")["ledger_window"])
    c = ctx.calls.select("gkey", "step_index", "function_name", "arguments")
    c = c.with_columns(_tool(ctx).alias("tool")).with_columns(flag.fill_null(False).alias("_f"))
    win = pl.col("_f")
    for j in range(1, n):
        win = win | shift_in_group("_f", j).fill_null(False)
    c = c.with_columns(win.alias(name))
    last_of_step = (pl.col("step_index") != pl.col("step_index").shift(-1)) | (
        pl.col("gkey") != pl.col("gkey").shift(-1)
    )
    return (
        c.filter(last_of_step.fill_null(True))
        .select("gkey", name, (pl.col("step_index") + 1).alias("_k"))
        .sort("_k")
    )


def _with_last3(ctx: Context, m: pl.DataFrame, flag: pl.Expr, name: str) -> pl.DataFrame:
    l3 = _last3(ctx, flag, name)
    m = m.with_columns(pl.col("step_index").alias("_k")).sort("_k")
    m = m.join_asof(l3, on="_k", by="gkey", strategy="backward", check_sortedness=False)
    return m.with_columns(pl.col(name).fill_null(False))


def _out(
    ctx: Context, df: pl.DataFrame, name: str, conf: float | pl.Expr, ev: pl.Expr
) -> pl.DataFrame:
    return df.select(*finding_columns(_severity(ctx, name), conf, ev))


@detector("retry_loop", modes=("trainerd",), version=1, _builtin=True)
def retry_loop(ctx: Context) -> pl.DataFrame:
    """go-code runner: the 3rd identical (tool, raw arguments) call; once per key."""
    th = int(ctx.params("trainerd")["retry_threshold"])
    key = pl.concat_str([_tool(ctx), pl.col("arguments").fill_null("")], separator="\x00").hash(17)
    c = ctx.calls.select("trial_id", "gkey", "seq", "step_index", "function_name", "arguments")
    # count per (trajectory, key) in call order: sort by key (stable), position within runs
    c = c.with_columns(key.xor(pl.col("gkey")).alias("_key")).sort(
        "_key", "seq", maintain_order=True
    )
    c = c.with_columns((within_group_index("_key") + 1).alias("_n")).filter(pl.col("_n") == th)
    return _out(
        ctx, c, "retry_loop", 1.0, pl.format("retry_loop: {} (call_count {})", _tool(ctx), "_n")
    )


@detector("hedge_assertion", modes=("trainerd",), version=1, _builtin=True)
def hedge_assertion(ctx: Context) -> pl.DataFrame:
    """conclusion-watcher: an agent message containing a hedge phrase ("should be", ...)."""
    ph = tuple(ctx.params("trainerd")["hedge_phrases"])
    m = _msgs(ctx, ph).with_columns(_first_phrase(ph).alias("_ph"))
    return _out(ctx, m, "hedge_assertion", 1.0, pl.col("_ph"))


@detector("premature_completion", modes=("trainerd",), version=1, _builtin=True)
def premature_completion(ctx: Context) -> pl.DataFrame:
    """conclusion-watcher: a completion phrase with no verification in the last 3 calls."""
    t = ctx.params("trainerd")
    ph = tuple(t["completion_phrases"])
    m = _msgs(ctx, ph).with_columns(_first_phrase(ph).alias("_ph"))
    tool = pl.col("tool")
    ver = tool.is_in(list(t["verification_tools"])) | (
        pl.when(tool == t["bash_tool"])
        .then(pl.col("arguments"))
        .str.contains(any_of(t["verification_bash_substrings"], ignore_case=True))
        .fill_null(False)
    )
    m = _with_last3(ctx, m, ver, "_v").filter(~pl.col("_v"))
    return _out(ctx, m, "premature_completion", 0.9, pl.col("_ph"))


@detector("architecture_assumption", modes=("trainerd",), version=1, _builtin=True)
def architecture_assumption(ctx: Context) -> pl.DataFrame:
    """conclusion-watcher: a design claim ("the flow is", ...) with no exploration in the last
    3 calls."""
    t = ctx.params("trainerd")
    ph = tuple(t["architecture_phrases"])
    m = _msgs(ctx, ph).with_columns(_first_phrase(ph).alias("_ph"))
    m = _with_last3(ctx, m, pl.col("tool").is_in(list(t["exploration_tools"])), "_e").filter(
        ~pl.col("_e")
    )
    return _out(ctx, m, "architecture_assumption", 0.75, pl.col("_ph"))


def _go_clean(e: pl.Expr) -> pl.Expr:
    """Approximately Go's filepath.Clean, then strip './'."""
    return (
        e.str.replace_all(r"/+", "/")
        .str.replace_all(r"/(\./)+", "/")
        .str.replace(r"^(\./)+", "")
        .str.replace(r"(.)/$", "$1")
    )


@detector("unverified_file_claim", modes=("trainerd",), version=1, _builtin=True)
def unverified_file_claim(ctx: Context) -> pl.DataFrame:
    """conclusion-watcher: a hedged message naming a file the ledger has not seen."""
    t = ctx.params("trainerd")
    claims = _hedged_path_claims(ctx, t)
    if claims.height == 0:
        return _out(ctx, claims, "unverified_file_claim", 0.8, pl.col("_p"))
    known = _claims_seen_earlier(claims, _ledger_path_keys(ctx, t, claims))
    uns = claims.join(known, on=[*_T, "step_index", "_pos"], how="anti")
    uns = uns.sort("_pos").unique([*_T, "step_index"], keep="first", maintain_order=True)
    return _out(ctx, uns, "unverified_file_claim", 0.8, pl.col("_p"))


def _hedged_path_claims(ctx: Context, t: dict[str, Any]) -> pl.DataFrame:
    """One row per path named in a hedged message: the path ``_p`` at position ``_pos``, its
    cleaned form ``_c`` and basename ``_b``."""
    m = _msgs(ctx, tuple(t["hedge_phrases"]))
    return (
        m.select(
            "trial_id",
            "traj",
            "step_index",
            pl.col("message").str.extract_all(t["path_regex"]).alias("_p"),
        )
        .with_columns(pl.int_ranges(pl.col("_p").list.len()).alias("_pos"))
        .explode("_p", "_pos")
        .filter(pl.col("_p").is_not_null())
        .with_columns(_go_clean(pl.col("_p")).alias("_c"))
        .with_columns(basename(pl.col("_c")).alias("_b"))
    )


def _ledger_path_keys(ctx: Context, t: dict[str, Any], claims: pl.DataFrame) -> pl.DataFrame:
    """Paths the ledger has seen in the claiming trajectories, each as its cleaned form and as
    its basename (``_key``), with the step that saw it (``_ss``)."""
    c = ctx.calls.join(claims.select("trial_id").unique(), on="trial_id", how="semi")
    c = c.with_columns(_tool(ctx).alias("tool"))
    # post-tool hook: outputFilePathRe on every line of any tool's output (group 1)
    seen_out = c.select(
        *_T, "step_index", _group1_all(pl.col("observation"), t["output_path_regex"]).alias("_s")
    )
    seen = (
        pl.concat([_explored_path_args(c, t), seen_out], how="vertical_relaxed")
        .explode("_s")
        .filter(pl.col("_s").is_not_null())
        .with_columns(_go_clean(pl.col("_s")).alias("_s"))
    )
    return pl.concat(
        [
            seen.select(*_T, "step_index", pl.col("_s").alias("_key")),
            seen.select(*_T, "step_index", basename(pl.col("_s")).alias("_key")),
        ]
    ).rename({"step_index": "_ss"})


def _explored_path_args(c: pl.DataFrame, t: dict[str, Any]) -> pl.DataFrame:
    """The ``path`` and ``paths`` arguments of the exploration tools' calls, as lists ``_s``."""
    expl = c.filter(pl.col("tool").is_in(list(t["exploration_tools"])))
    return pl.concat(
        [
            expl.select(
                *_T,
                "step_index",
                pl.concat_list(pl.col("arguments").str.json_path_match("$.path")).alias("_s"),
            ),
            expl.select(
                *_T,
                "step_index",
                pl.col("arguments")
                .str.json_path_match("$.paths")
                .str.json_decode(pl.List(pl.String))
                .alias("_s"),
            ),
        ]
    )


def _claims_seen_earlier(claims: pl.DataFrame, keys: pl.DataFrame) -> pl.DataFrame:
    """The claims (trajectory, step, position) whose cleaned path or basename the ledger saw
    at an earlier step."""
    hit = []
    for col in ("_c", "_b"):
        hit.append(
            claims.join(keys, left_on=[*_T, col], right_on=[*_T, "_key"])
            .filter(pl.col("_ss") < pl.col("step_index"))
            .select(*_T, "step_index", "_pos")
        )
    return pl.concat(hit).unique()


@detector("skipped_diagnostic", modes=("trainerd",), version=1, _builtin=True)
def skipped_diagnostic(ctx: Context) -> pl.DataFrame:
    """conclusion-watcher pre-tool hook: a write / destructive call with no diagnostic tool in
    the current or previous step (the current call counts, so bash never fires)."""
    t = ctx.params("trainerd")
    c = ctx.calls.select(*_T, "gkey", "seq", "step_index", "function_name", "arguments")
    c = c.with_columns(_tool(ctx).alias("tool"))
    is_bash = pl.col("tool") == t["bash_tool"]
    write = pl.col("tool").is_in(list(t["write_tools"]))
    cmd = pl.when(is_bash).then(pl.col("arguments").str.json_path_match("$.command")).fill_null("")
    destructive = is_bash & cmd.str.contains(any_of(t["destructive_bash_substrings"]))
    # candidates first (rare); the ledger checks then run on their trajectories only
    cand = c.filter(write | destructive)
    if cand.height == 0:
        return _out(ctx, cand, "skipped_diagnostic", 1.0, pl.col("tool"))  # empty
    gk = cand.get_column("gkey").unique().implode()
    diag = c.filter(pl.col("gkey").is_in(gk) & pl.col("tool").is_in(list(t["diagnostic_tools"])))
    diag = diag.select("gkey", pl.col("step_index").alias("_ds"), pl.col("seq").alias("_dseq"))
    # previous step = the previous agent turn (the watcher counts post-message calls)
    turns = (
        ctx.msgs.select("gkey", "step_index", "from_finish")
        .filter(pl.col("gkey").is_in(gk) & ~pl.col("from_finish"))
        .unique(["gkey", "step_index"], maintain_order=True)
        .with_columns(shift_in_group("step_index", 1).alias("_prev"))
        .select("gkey", "step_index", "_prev")
    )
    cand = cand.join(turns, on=["gkey", "step_index"], how="left")
    # the current call is recorded before the check: seq <= the candidate's
    cur = (
        cand.join(diag, left_on=["gkey", "step_index"], right_on=["gkey", "_ds"])
        .filter(pl.col("_dseq") <= pl.col("seq"))
        .select("gkey", "seq")
    )
    prev = cand.join(diag, left_on=["gkey", "_prev"], right_on=["gkey", "_ds"]).select(
        "gkey", "seq"
    )
    c = cand.join(pl.concat([cur, prev]).unique(), on=["gkey", "seq"], how="anti")
    return _out(
        ctx, c, "skipped_diagnostic",
        pl.when(write).then(1.0).otherwise(0.85),
        pl.when(write)
        .then(pl.format("{} without prior diagnostic", "tool"))
        .otherwise(pl.format("destructive bash: {}", cmd)),
    )  # fmt: skip
