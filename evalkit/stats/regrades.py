"""Regrades: a trial's reward before and after its verifier re-ran on the same agent work.

``harbor job regrade`` / ``harbor trial regrade`` copy a finished trial's agent logs and
artifacts into a new trial and run only the verifier again; the new trial's config records
its source (the trials column ``regrade_of``). The agent's work is the same by construction,
so a reward that changes while the task (its checksum, which covers the tests) is unchanged
is the verifier's own noise: :func:`verifier_instability`.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from evalkit.stats._frames import as_by_list, as_lazy, check_columns, collect
from evalkit.stats.intervals import proportion_ci

__all__ = ["INSTABILITY_COLUMNS", "REGRADE_PAIR_COLUMNS", "regrade_pairs", "verifier_instability"]

#: Columns of :func:`regrade_pairs`, one row per regrade trial.
REGRADE_PAIR_COLUMNS: dict[str, str] = {
    "run": "Run of the source trial (the regrade's own run when the source is not loaded).",
    "task_name": "Task of the regrade trial.",
    "trial_id": "The regrade trial (trials.trial_id).",
    "trial_name": "The regrade trial's name.",
    "regrade_run": "Run label of the regrade trial (default labels end in '__regrade').",
    "source_trial_id": "The source trial (trials.trial_id); null when it is not loaded.",
    "reward_before": "The source trial's reward; null when not loaded or not rewarded.",
    "reward_after": "The regrade's reward; null when its verifier gave none.",
    "task_changed": "True when both trials record a task checksum and they differ (the "
    "tests changed, so a new reward is expected); null when either is unknown.",
    "reward_changed": "True when the two rewards differ; null when either is missing.",
}

#: Columns of :func:`verifier_instability`, after the ``by`` columns.
INSTABILITY_COLUMNS: dict[str, str] = {
    "n_regrades": "Regrade trials in the group.",
    "n_compared": "Of those, with both rewards and the task not known to have changed.",
    "n_unstable": "Of the compared, how many changed reward.",
    "unstable_rate": "n_unstable / n_compared (null when nothing was compared).",
    "ci_low": "Wilson interval of unstable_rate, low end.",
    "ci_high": "Wilson interval of unstable_rate, high end.",
    "n_task_changed": "Regrades whose task checksum differs from the source's (left out).",
    "n_unpaired": "Regrades whose source trial or either reward is missing (left out).",
}

_NEEDED = ("run", "task_name", "trial_id", "trial_name", "trial_dir", "result_id", "reward",
           "task_checksum", "regrade_of")  # fmt: skip


def _sources(lf: pl.LazyFrame) -> pl.LazyFrame:
    """Every trial keyed by what a regrade may name it by: its result id or its folder.

    Copies of a job share result ids (and rewards); the first folder in path order is kept."""
    cols = [
        pl.col("run").alias("_src_run"),
        pl.col("trial_id").alias("source_trial_id"),
        pl.col("reward").alias("reward_before"),
        pl.col("task_checksum").alias("_src_checksum"),
    ]
    by_id = lf.select(pl.col("result_id").alias("_key"), *cols)
    by_dir = lf.select(pl.col("trial_dir").alias("_key"), *cols)
    return (
        pl.concat([by_id, by_dir])
        .filter(pl.col("_key").is_not_null())
        .sort("_key", "source_trial_id")
        .unique("_key", keep="first", maintain_order=True)
    )


def regrade_pairs(trials: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
    """One row per regrade trial with its source's reward beside its own
    (:data:`REGRADE_PAIR_COLUMNS`). A source outside the frame leaves the source columns null."""
    lf = as_lazy(trials)
    check_columns(lf, _NEEDED)
    regrades = lf.filter(pl.col("regrade_of").is_not_null())
    both = (pl.col("task_checksum").is_not_null()) & pl.col("_src_checksum").is_not_null()
    out = regrades.join(_sources(lf), left_on="regrade_of", right_on="_key", how="left")
    out = out.select(
        pl.coalesce("_src_run", "run").alias("run"),
        "task_name",
        "trial_id",
        "trial_name",
        pl.col("run").alias("regrade_run"),
        "source_trial_id",
        "reward_before",
        pl.col("reward").alias("reward_after"),
        pl.when(both)
        .then(pl.col("task_checksum") != pl.col("_src_checksum"))
        .alias("task_changed"),
        ((pl.col("reward") - pl.col("reward_before")).abs() > 1e-9).alias("reward_changed"),
    )
    return collect(out.sort("run", "task_name", "trial_name"))


def verifier_instability(
    trials: pl.DataFrame | pl.LazyFrame,
    by: str | Sequence[str] = "run",
    *,
    confidence: float = 0.95,
) -> pl.DataFrame:
    """How often a regrade changed the reward while the agent's work and the task stayed
    the same, per ``by`` group (``"run"``, ``"task_name"`` or both): the by columns, then
    :data:`INSTABILITY_COLUMNS`. Empty when the frame holds no regrades."""
    keys = as_by_list(by)
    unknown = set(keys) - set(REGRADE_PAIR_COLUMNS)
    if not keys or unknown:
        raise ValueError(f"by: name regrade_pairs columns, e.g. 'run'; got {by!r}")
    pairs = regrade_pairs(trials)
    moved = pl.col("task_changed").fill_null(False)
    compared = pl.col("reward_changed").is_not_null() & ~moved
    agg = pairs.group_by(keys, maintain_order=True).agg(
        pl.len().cast(pl.Int64).alias("n_regrades"),
        compared.sum().cast(pl.Int64).alias("n_compared"),
        (compared & pl.col("reward_changed")).sum().cast(pl.Int64).alias("n_unstable"),
        moved.sum().cast(pl.Int64).alias("n_task_changed"),
        (pl.col("reward_changed").is_null() & ~moved).sum().cast(pl.Int64).alias("n_unpaired"),
    )
    lo, hi = proportion_ci(
        agg["n_unstable"].to_numpy(), agg["n_compared"].to_numpy(), confidence=confidence
    )
    rate = pl.when(pl.col("n_compared") > 0).then(pl.col("n_unstable") / pl.col("n_compared"))
    agg = agg.with_columns(
        rate.alias("unstable_rate"),
        pl.Series("ci_low", lo, dtype=pl.Float64).fill_nan(None),
        pl.Series("ci_high", hi, dtype=pl.Float64).fill_nan(None),
    )
    return agg.select(*keys, *INSTABILITY_COLUMNS).sort(keys)
