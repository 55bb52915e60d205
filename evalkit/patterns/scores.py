"""trainerd's per-trial scores (go-code ``internal/training``; rollouts-gates-qc.md §1.5-1.6).

* ``first_try_rate`` = calls not retried / calls, 0 when there are no calls (not 1). A call
  is retried when an identical call (same tool, same arguments after Go's ``json.Marshal`` of
  the decoded map: keys sorted, ``<>&`` escaped, numbers as float64) came earlier in the same
  trial, whether or not the earlier call succeeded. Arguments that are not a JSON object
  canonicalise to ``null`` (Go's Unmarshal into a map fails), so they all collide, as in
  go-code. For go-code rollouts only completed calls count (trainerd counts at
  ``tool.call.completed``).
* ``tool_quality`` = first_try_rate x (1 - min(1, weighted_sum / 5)); weighted_sum sums
  trainerd's weights over the trial's anti-pattern findings (retry_loop 0.5,
  premature_completion 1.25, others 1.0).
* ``efficiency`` = 1 / (1 + steps x 0.1 + cost x 10) clipped to [0, 1], steps = the step of
  go-code's run.completed / run.failed (``harness_steps`` of the rollout reader's run_details)
  else n_steps, and 1 when that is not > 0; unknown cost = 0 (trainerd's Scorer, printed by
  ``trainerd score``).
* ``efficiency_db`` = min(1, 1 / (steps x cost)) with steps <= 0 -> 1 and cost <= 0 -> 0.001:
  the *other* efficiency trainerd stores in its SQLite ``traces.efficiency_score``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import orjson
import polars as pl

from evalkit.patterns.config import TRAINERD
from evalkit.patterns.context import coerce_frames

_FLOATY = re.compile(r"\d[.eE]")


def _int_floats(v: Any) -> Any:
    if isinstance(v, float):
        return int(v) if v.is_integer() and abs(v) < 2**63 else v
    if isinstance(v, dict):
        return {k: _int_floats(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_int_floats(x) for x in v]
    return v


def go_canonical(raw: str | None) -> str:
    """Go's ``json.Marshal(args)`` after ``json.Unmarshal(raw, &map[string]any)``, as text
    whose equality matches Go's (integral floats print as ints, like Go's float64 5 -> 5)."""
    if raw is None:
        return "null"
    try:
        v = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return "null"
    if not isinstance(v, dict):
        return "null"
    if _FLOATY.search(raw):
        v = _int_floats(v)
    s = orjson.dumps(v, option=orjson.OPT_SORT_KEYS).decode()
    return (
        s.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
        .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    )  # fmt: skip


def _canonical_column(args: pl.Series) -> pl.Series:
    """go_canonical over the distinct argument strings only (the one step not vectorised)."""
    uniq = args.unique()
    mapping = {s: go_canonical(s) for s in uniq.to_list()}
    return args.replace_strict(mapping, return_dtype=pl.String, default="null")


def first_try_rate(tool_calls: pl.DataFrame, trials: pl.DataFrame | None = None) -> pl.DataFrame:
    """trial_id, n_tool_calls, n_retried, first_try_rate (main trajectory only)."""
    tc = tool_calls
    if "is_main" in tc.columns:
        tc = tc.filter(pl.col("is_main").fill_null(True))
    if (
        trials is not None
        and "source_format" in trials.columns
        and "observation_source" in tc.columns
    ):
        go = trials.filter(pl.col("source_format") == "go-code").select("trial_id")
        tc = tc.join(go.with_columns(pl.lit(True).alias("_go")), on="trial_id", how="left").filter(
            ~pl.col("_go").fill_null(False) | pl.col("observation_source").is_not_null()
        )
    order = [c for c in ("trial_id", "step_index", "call_index") if c in tc.columns]
    tc = tc.sort(order)
    canon = _canonical_column(tc.get_column("arguments").cast(pl.String))
    tc = tc.with_columns(
        pl.concat_str([pl.col("function_name").fill_null(""), canon], separator="\x00").alias(
            "_sig"
        )
    )
    tc = tc.with_columns((pl.int_range(pl.len()).over("trial_id", "_sig") > 0).alias("_retried"))
    out = tc.group_by("trial_id").agg(
        pl.len().cast(pl.Int64).alias("n_tool_calls"),
        pl.col("_retried").sum().cast(pl.Int64).alias("n_retried"),
    )
    return out.with_columns(
        ((pl.col("n_tool_calls") - pl.col("n_retried")) / pl.col("n_tool_calls")).alias(
            "first_try_rate"
        )
    )


def trial_scores(
    data: Any = None,
    *,
    steps: pl.DataFrame | None = None,
    tool_calls: pl.DataFrame | None = None,
    trials: pl.DataFrame | None = None,
    findings: pl.DataFrame | None = None,
    weights: Mapping[str, float] | None = None,
) -> pl.DataFrame:
    """One row per trial: trainerd's FirstTryRate, tool_quality, efficiency (and efficiency_db).

    ``findings``: the anti-patterns to weigh. Default: for go-code rollouts the findings they
    recorded (``tool.antipattern`` events: what trainerd itself counts), for every other trial
    the trainerd-mode detections of :func:`evalkit.patterns.detect`. ``findings_source`` says
    which. Trials come from ``trials`` (all of them, also those without tool calls: FirstTryRate
    0), else from the trial ids seen in steps / tool_calls.
    """
    st, tc, tr = coerce_frames(data, steps=steps, tool_calls=tool_calls, trials=trials)
    w = dict(TRAINERD["weights"])
    w.update(weights or {})
    ids = pl.concat(
        [tr.select("trial_id"), st.select("trial_id"), tc.select("trial_id")],
        how="vertical_relaxed",
    ).unique(maintain_order=True)
    if findings is None:
        f, src = _default_findings(data, st, tc, tr, ids)
    else:
        f = findings.select("trial_id", "detector")
        src = ids.with_columns(pl.lit("given").alias("findings_source"))
    out = (
        ids.join(src, on="trial_id", how="left")
        .join(first_try_rate(tc, tr), on="trial_id", how="left")
        .join(_weighted_findings(f, w), on="trial_id", how="left")
        .join(_step_and_cost_info(data, tr), on="trial_id", how="left")
        .join(_agent_step_counts(st), on="trial_id", how="left")
    )
    return _scores(_with_filled_counts(out))


def _default_findings(
    data: Any, st: pl.DataFrame, tc: pl.DataFrame, tr: pl.DataFrame, ids: pl.DataFrame
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The findings to weigh when none are given (recorded for go-code rollouts, trainerd-mode
    detections for the rest), and each trial's ``findings_source``."""
    from evalkit.patterns.detect import detect

    fmt = tr.select("trial_id", "source_format").unique("trial_id")
    det = detect(steps=st, tool_calls=tc, trials=tr, mode="trainerd")
    rec = pl.DataFrame(schema=det.schema)
    recorded_all = getattr(data, "findings", None) if hasattr(data, "tool_calls") else None
    if isinstance(recorded_all, pl.DataFrame) and recorded_all.height:
        rec = recorded_all.filter(pl.col("source") == "recorded")
    go = fmt.filter(pl.col("source_format") == "go-code").select("trial_id")
    det = det.join(go, on="trial_id", how="anti").with_columns(
        pl.lit("detected:trainerd").alias("_fs")
    )
    rec = (
        rec.join(go, on="trial_id", how="semi")
        .select("trial_id", "detector")
        .with_columns(pl.lit("recorded").alias("_fs"))
    )
    f = pl.concat([det.select("trial_id", "detector", "_fs"), rec], how="vertical_relaxed")
    src = ids.join(fmt, on="trial_id", how="left").select(
        "trial_id",
        pl.when(pl.col("source_format") == "go-code")
        .then(pl.lit("recorded"))
        .otherwise(pl.lit("detected:trainerd"))
        .alias("findings_source"),
    )
    return f, src


def _weighted_findings(f: pl.DataFrame, w: Mapping[str, float]) -> pl.DataFrame:
    """Per trial: how many findings, and the sum of their trainerd weights."""
    return f.group_by("trial_id").agg(
        pl.len().cast(pl.Int64).alias("anti_pattern_count"),
        pl.col("detector")
        .replace_strict(w, default=TRAINERD["default_weight"], return_dtype=pl.Float64)
        .sum()
        .alias("weighted_sum"),
    )


def _agent_step_counts(st: pl.DataFrame) -> pl.DataFrame:
    return (
        st.filter(pl.col("source") == "agent")
        .group_by("trial_id")
        .agg(pl.len().cast(pl.Int64).alias("_ns"))
    )


def _step_and_cost_info(data: Any, tr: pl.DataFrame) -> pl.DataFrame:
    """Per trial: n_steps, cost_usd and harness_steps (go-code: trainerd's Steps is the step of
    run.completed / run.failed, from the trial or the rollout's run_details)."""
    info = tr.select("trial_id", "n_steps", "cost_usd").unique("trial_id")
    details = getattr(data, "run_details", None)
    hs = tr.select("trial_id", pl.lit(None, pl.Int64).alias("harness_steps"))
    if "harness_steps" in tr.columns:
        hs = tr.select("trial_id", pl.col("harness_steps").cast(pl.Int64))
    elif isinstance(details, pl.DataFrame) and "harness_steps" in details.columns:
        hs = details.select("trial_id", pl.col("harness_steps").cast(pl.Int64))
    return info.join(hs.unique("trial_id"), on="trial_id", how="left")


def _with_filled_counts(out: pl.DataFrame) -> pl.DataFrame:
    """Missing counts as 0, the step count trainerd divides by (at least 1) and the penalty."""
    div = float(TRAINERD["penalty_divisor"])
    steps_e = pl.coalesce("harness_steps", "n_steps", "_ns").fill_null(0)
    steps_e = pl.when(steps_e > 0).then(steps_e).otherwise(1).cast(pl.Float64)
    cost = pl.col("cost_usd").fill_null(0.0)
    return out.with_columns(
        pl.col("n_tool_calls").fill_null(0),
        pl.col("n_retried").fill_null(0),
        pl.col("first_try_rate").fill_null(0.0),
        pl.col("anti_pattern_count").fill_null(0),
        pl.col("weighted_sum").fill_null(0.0),
        steps_e.alias("steps"),
        pl.col("cost_usd").is_not_null().alias("cost_known"),
        cost.alias("_cost"),
    ).with_columns(pl.min_horizontal(pl.lit(1.0), pl.col("weighted_sum") / div).alias("penalty"))


def _scores(out: pl.DataFrame) -> pl.DataFrame:
    """trainerd's tool_quality, efficiency and efficiency_db from the filled counts."""
    return out.select(
        "trial_id",
        "n_tool_calls",
        "n_retried",
        "first_try_rate",
        "anti_pattern_count",
        "weighted_sum",
        "penalty",
        (pl.col("first_try_rate") * (1 - pl.col("penalty"))).alias("tool_quality"),
        "steps",
        "cost_usd",
        "cost_known",
        (1.0 / (1.0 + pl.col("steps") * 0.1 + pl.col("_cost") * 10))
        .clip(0.0, 1.0)
        .alias("efficiency"),
        pl.min_horizontal(
            pl.lit(1.0),
            1.0
            / (
                pl.col("steps")
                * pl.when(pl.col("_cost") > 0).then(pl.col("_cost")).otherwise(0.001)
            ),
        ).alias("efficiency_db"),
        "findings_source",
    )
