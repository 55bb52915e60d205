"""The per-task table of a comparison (``cmp.tasks``) and its transitions.

One row per task in A ∪ B. Per side (suffix ``_a`` / ``_b``), over that side's trials of the
task (ALL attempts; never one trial per task):

* ``n_trials``: trial folders; ``attempts``: finished ones (outcome != "incomplete");
  ``n_incomplete``: the rest. Every rate below is over finished attempts;
* ``n_pass``, ``pass_rate``: attempts with reward >= 1 and their share;
* ``pass_majority``: the per-task pass used for buckets and the ship gate: the one
  attempt's pass when K = 1, a strict majority of passing attempts when K > 1 (so 1 of 2
  is NOT a pass: ties are resolved against the candidate claim of success);
* ``mean_reward``: mean reward, null counted as 0;
* ``outcome``: the modal outcome; ties go to the worse outcome in the order
  pass < partial < fail < timeout < error < no-reward < incomplete (consistent with the
  strict-majority rule: 1 pass + 1 fail is "fail"); ``outcomes``: the mix, e.g.
  "pass 3, fail 2";
* ``timeout_rate``, ``evidence_rate``: shares of timed-out / evidence-complete attempts;
* ``cost_usd``: mean cost per attempt, null unless EVERY attempt has a recorded cost (no
  invented partial cost, never 0 for unknown); ``cost_sum``: their sum, same rule;
* ``tokens`` (input incl. cached + output), ``duration_s``, ``turns``: means over the
  attempts where they are known;
* ``checksums``: the distinct task checksums recorded.

Then: ``side`` in {"both", "a_only", "b_only"}; ``checksum_status`` "same" (one checksum,
equal on both sides), "changed" (no checksum in common), "mixed" (several versions,
partly shared), "unknown" (not recorded on a side); ``comparable`` (both sides, a finished
attempt on each, and the task did not change unless checksums="ignore") and ``reason``
when it is not; B - A deltas ``d_reward``, ``d_pass_rate``, ``d_cost_usd`` (null when cost
is unknown on either side), ``d_tokens``, ``d_duration_s``, ``d_turns``, null for
non-comparable tasks; ``bucket`` (goose's four: both_pass, both_not_pass, only_a, only_b).
"""

from __future__ import annotations

from collections import Counter

import polars as pl

from evalkit.compare.select import OUTCOME_ORDER
from evalkit.stats.plan import majority_pass

SIDE_METRICS = (
    "n_trials",
    "attempts",
    "n_incomplete",
    "n_pass",
    "pass_rate",
    "pass_majority",
    "mean_reward",
    "outcome",
    "outcomes",
    "timeout_rate",
    "evidence_rate",
    "cost_usd",
    "cost_sum",
    "tokens",
    "duration_s",
    "turns",
    "checksums",
    "trial_ids",
)
DELTAS = {
    "d_reward": "mean_reward",
    "d_pass_rate": "pass_rate",
    "d_cost_usd": "cost_usd",
    "d_tokens": "tokens",
    "d_duration_s": "duration_s",
    "d_turns": "turns",
}
BUCKETS = ("both_pass", "both_not_pass", "only_a", "only_b")


def modal_outcome(outcomes: list[str] | None) -> str:
    """Most frequent outcome; ties go to the worse outcome (OUTCOME_ORDER)."""
    if not outcomes:
        return "incomplete"
    c = Counter(outcomes)
    rank = {o: i for i, o in enumerate(OUTCOME_ORDER)}
    return max(c, key=lambda o: (c[o], rank.get(o, len(rank))))


def outcome_mix(outcomes: list[str] | None) -> str:
    if not outcomes:
        return ""
    c = Counter(outcomes)
    rank = {o: i for i, o in enumerate(OUTCOME_ORDER)}
    return ", ".join(
        f"{o} {n}" for o, n in sorted(c.items(), key=lambda kv: (-kv[1], rank.get(kv[0], 99)))
    )


def side_tasks(t: pl.DataFrame) -> pl.DataFrame:
    """Aggregate one side's per-trial frame (select.per_trial) to one row per task."""
    f = pl.col("finished")

    def strict(col: str, how: str) -> pl.Expr:
        x = pl.col(col).filter(f)
        agg = x.mean() if how == "mean" else x.sum()
        return (
            pl.when((x.null_count() == 0) & (f.sum() > 0))
            .then(agg)
            .otherwise(None)
            .alias(col if how == "mean" else "cost_sum")
        )

    g = (
        t.sort("task_name", "attempt", "started_at", nulls_last=True)
        .group_by("task_name", maintain_order=True)
        .agg(
            pl.len().cast(pl.Int64).alias("n_trials"),
            f.sum().cast(pl.Int64).alias("attempts"),
            (~f).sum().cast(pl.Int64).alias("n_incomplete"),
            pl.col("passed").filter(f).sum().cast(pl.Int64).alias("n_pass"),
            pl.col("reward0").filter(f).mean().alias("mean_reward"),
            pl.col("is_timeout").filter(f).mean().alias("timeout_rate"),
            pl.col("evidence").filter(f).mean().alias("evidence_rate"),
            strict("cost_usd", "mean"),
            strict("cost_usd", "sum"),
            pl.col("tokens").filter(f).mean().alias("tokens"),
            pl.col("duration_s").filter(f).mean().alias("duration_s"),
            pl.col("turns").filter(f).mean().alias("turns"),
            pl.col("task_checksum").drop_nulls().unique().sort().alias("checksums"),
            pl.col("outcome").filter(f).alias("_outcomes"),
            pl.col("trial_id").alias("trial_ids"),
        )
    )
    outs = g["_outcomes"].to_list()
    g = g.with_columns(
        pl.Series("outcome", [modal_outcome(o) for o in outs], dtype=pl.String),
        pl.Series("outcomes", [outcome_mix(o) for o in outs], dtype=pl.String),
        pl.when(pl.col("attempts") > 0)
        .then(pl.col("n_pass") / pl.col("attempts"))
        .alias("pass_rate"),
        pl.when(pl.col("attempts") > 0)
        .then(majority_pass(pl.col("n_pass"), pl.col("attempts")))
        .alias("pass_majority"),
    ).drop("_outcomes")
    return g.select("task_name", *SIDE_METRICS)


def _checksum_status(a: list[str] | None, b: list[str] | None) -> str:
    sa, sb = set(a or []), set(b or [])
    if not sa or not sb:
        return "unknown"
    if sa == sb and len(sa) == 1:
        return "same"
    if not sa & sb:
        return "changed"
    return "mixed"


def task_table(ta: pl.DataFrame, tb: pl.DataFrame, checksums: str = "exclude") -> pl.DataFrame:
    """Join the two sides' per-task rows (module docstring for every column)."""
    if checksums not in ("exclude", "ignore"):
        raise ValueError("checksums must be 'exclude' or 'ignore'")
    j = _with_side_and_checksum_status(_joined_sides(ta, tb))
    j = j.with_columns(_not_comparable_reason(checksums).alias("reason")).with_columns(
        pl.col("reason").is_null().alias("comparable")
    )
    j = j.with_columns(_deltas()).with_columns(_bucket().alias("bucket"))
    return _in_column_and_row_order(j)


def _joined_sides(ta: pl.DataFrame, tb: pl.DataFrame) -> pl.DataFrame:
    """Both sides' per-task rows (suffixes ``_a`` / ``_b``), full-joined on the task name."""
    a = side_tasks(ta).rename({c: f"{c}_a" for c in SIDE_METRICS})
    b = side_tasks(tb).rename({c: f"{c}_b" for c in SIDE_METRICS})
    return a.join(b, on="task_name", how="full", coalesce=True)


def _with_side_and_checksum_status(j: pl.DataFrame) -> pl.DataFrame:
    """Add ``side`` (both / a_only / b_only) and ``checksum_status`` to the joined rows."""
    in_a, in_b = pl.col("n_trials_a").is_not_null(), pl.col("n_trials_b").is_not_null()
    return j.with_columns(
        pl.when(in_a & in_b)
        .then(pl.lit("both"))
        .when(in_a)
        .then(pl.lit("a_only"))
        .otherwise(pl.lit("b_only"))
        .alias("side"),
        pl.Series(
            "checksum_status",
            [
                _checksum_status(x, y)
                for x, y in zip(j["checksums_a"].to_list(), j["checksums_b"].to_list(), strict=True)
            ],
            dtype=pl.String,
        ),
    )


def _not_comparable_reason(checksums: str) -> pl.Expr:
    """Why a task is not comparable (the first rule that applies), null when it is."""
    changed = pl.col("checksum_status").is_in(["changed", "mixed"]) & pl.lit(checksums == "exclude")
    return (
        pl.when(pl.col("task_name").is_null())
        .then(pl.lit("task name unknown (trials without a task id are never paired)"))
        .when(pl.col("side") == "a_only")
        .then(pl.lit("only in A"))
        .when(pl.col("side") == "b_only")
        .then(pl.lit("only in B"))
        .when(pl.col("attempts_a") == 0)
        .then(pl.lit("no finished attempt in A"))
        .when(pl.col("attempts_b") == 0)
        .then(pl.lit("no finished attempt in B"))
        .when(changed & (pl.col("checksum_status") == "changed"))
        .then(pl.lit("task changed (checksum differs)"))
        .when(changed)
        .then(pl.lit("task versions mixed (several checksums)"))
        .otherwise(None)
    )


def _deltas() -> list[pl.Expr]:
    """The B - A deltas of DELTAS, null for non-comparable tasks."""
    ok = pl.col("comparable")
    return [
        pl.when(ok).then(pl.col(f"{src}_b") - pl.col(f"{src}_a")).otherwise(None).alias(d)
        for d, src in DELTAS.items()
    ]


def _bucket() -> pl.Expr:
    """Goose's bucket of a comparable task from both sides' ``pass_majority``; null otherwise."""
    pa, pb = pl.col("pass_majority_a"), pl.col("pass_majority_b")
    return (
        pl.when(~pl.col("comparable"))
        .then(None)
        .when(pa & pb)
        .then(pl.lit("both_pass"))
        .when(~pa & ~pb)
        .then(pl.lit("both_not_pass"))
        .when(pa)
        .then(pl.lit("only_a"))
        .otherwise(pl.lit("only_b"))
    )


def _in_column_and_row_order(j: pl.DataFrame) -> pl.DataFrame:
    """The table's columns in contract order; rows both, a_only, b_only, then by task name."""
    first = ["task_name", "side", "comparable", "reason", "checksum_status", "bucket"]
    cols = (
        first
        + [f"{c}_{s}" for c in SIDE_METRICS[:8] for s in ("a", "b")]
        + list(DELTAS)
        + [f"{c}_{s}" for c in SIDE_METRICS[8:] for s in ("a", "b")]
    )
    return j.select(cols).sort(
        pl.col("side").replace_strict({"both": 0, "a_only": 1, "b_only": 2}, return_dtype=pl.Int8),
        "task_name",
    )


def transitions(tasks: pl.DataFrame) -> pl.DataFrame:
    """Modal outcome of A x modal outcome of B over comparable tasks: outcome_a, outcome_b,
    n (tasks) and tasks (their names), ordered best to worst on both axes."""
    rank = {o: i for i, o in enumerate(OUTCOME_ORDER)}
    t = tasks.filter(pl.col("comparable"))
    g = (
        t.group_by("outcome_a", "outcome_b")
        .agg(pl.len().cast(pl.Int64).alias("n"), pl.col("task_name").sort().alias("tasks"))
        .with_columns(
            pl.col("outcome_a")
            .replace_strict(rank, default=99, return_dtype=pl.Int64)
            .alias("_ra"),
            pl.col("outcome_b")
            .replace_strict(rank, default=99, return_dtype=pl.Int64)
            .alias("_rb"),
        )
        .sort("_ra", "_rb")
        .drop("_ra", "_rb")
    )
    return g


def transition_matrix(trans: pl.DataFrame) -> pl.DataFrame:
    """The transitions as a square count table: rows outcome of A, one column per outcome
    of B (only outcomes that occur)."""
    seen = set(trans["outcome_a"].to_list()) | set(trans["outcome_b"].to_list())
    order = [o for o in OUTCOME_ORDER if o in seen] + sorted(seen - set(OUTCOME_ORDER))
    counts = {(r["outcome_a"], r["outcome_b"]): r["n"] for r in trans.iter_rows(named=True)}
    return pl.DataFrame(
        {"A \\ B": order} | {ob: [counts.get((oa, ob), 0) for oa in order] for ob in order},
        schema={"A \\ B": pl.String} | dict.fromkeys(order, pl.Int64),
    )
