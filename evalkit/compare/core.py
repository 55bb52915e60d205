"""``compare(runs_or_trials, a, b)``: run A (baseline) against run B (candidate).

Uses ALL attempts of every task (goose kept one trial per task; we never do). Everything
"paired" (deltas, statistics, gates, compare.json) is over the *comparable* tasks: tasks
both runs have, with a finished attempt on each side, whose task checksum did not change
(``checksums="ignore"`` to compare changed tasks anyway). Tasks on one side only are
listed, never averaged in. See ``evalkit/compare/tasks.py`` for every column of
``cmp.tasks`` and the K > 1 rules (strict majority for pass, worst-outcome tie rule for the
modal outcome), and docs/compare.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import polars as pl

from evalkit.compare.config_diff import config_diff
from evalkit.compare.gates import GateResult, ship_gate
from evalkit.compare.guard import GuardMetrics, GuardResult, regression_guard
from evalkit.compare.headline import (
    LARGE_EFFECT,
    MIN_SHARED_TASKS,
    Evidence,
    Figure,
    evidence,
    headline,
)
from evalkit.compare.json_output import compare_json
from evalkit.compare.select import (
    OPTIONAL_COLUMNS,
    OUTCOME_ORDER,
    complete_columns,
    per_trial,
    select_side,
    trials_of,
)
from evalkit.compare.tasks import BUCKETS, task_table, transition_matrix, transitions
from evalkit.stats.paired import paired
from evalkit.stats.plan import Plan
from evalkit.stats.plan import plan as plan_after_hold

Side = str | Sequence[str]
#: The task-version rule: leave out tasks whose checksum differs, or compare them anyway.
CHECKSUMS = ("exclude", "ignore")


@dataclass
class Comparison:
    """The result of :func:`compare`.

    Attributes:
        a, b: the side labels (run label, job name, or "x + y" for a list).
        trials: every trial of both sides with the columns compare reads
            (``select.OPTIONAL_COLUMNS`` and the task column), ``side`` = "A" / "B", plus
            compare's per-trial columns (passed, reward0, finished, is_timeout, evidence,
            tokens, turns).
        tasks: one row per task in A ∪ B (evalkit/compare/tasks.py).
        transitions: modal outcome of A x of B over comparable tasks: outcome_a,
            outcome_b, n, tasks.
        options: lam, alpha, tau (ship gate), checksums, confidence, seed.
    """

    a: str
    b: str
    trials: pl.DataFrame
    tasks: pl.DataFrame
    transitions: pl.DataFrame
    options: dict[str, Any] = field(default_factory=dict)
    a_kind: str = "run"
    b_kind: str = "run"
    runs: Any = None

    # -- task lists -------------------------------------------------------------------
    def _tasks_where(self, expr: pl.Expr) -> list[str]:
        return sorted(self.tasks.filter(expr)["task_name"].drop_nulls().to_list())

    @property
    def paired_tasks(self) -> list[str]:
        """Comparable tasks (both sides, finished attempts, unchanged task)."""
        return self._tasks_where(pl.col("comparable"))

    @property
    def buckets(self) -> dict[str, list[str]]:
        """goose's four buckets over comparable tasks, by per-task pass (strict majority
        for K > 1): both_pass, both_not_pass, only_a (broken), only_b (fixed)."""
        return {k: self._tasks_where(pl.col("bucket") == k) for k in BUCKETS}

    @property
    def fixed(self) -> list[str]:
        """Tasks A did not pass and B passed (the ship gate's wins)."""
        return self.buckets["only_b"]

    @property
    def broken(self) -> list[str]:
        """Tasks A passed and B did not (the ship gate's losses)."""
        return self.buckets["only_a"]

    @property
    def only_in_a(self) -> list[str]:
        return self._tasks_where(pl.col("side") == "a_only")

    @property
    def only_in_b(self) -> list[str]:
        return self._tasks_where(pl.col("side") == "b_only")

    @property
    def not_comparable(self) -> dict[str, str]:
        """Tasks both runs have that are left out of the paired figures, with the reason."""
        t = self.tasks.filter(
            ((pl.col("side") == "both") & ~pl.col("comparable")) | pl.col("task_name").is_null()
        )
        return {
            (k if k is not None else "(unknown task)"): v
            for k, v in zip(t["task_name"].to_list(), t["reason"].to_list(), strict=True)
        }

    def transition_matrix(self) -> pl.DataFrame:
        """The transitions as a square table (rows: outcome of A; columns: outcome of B)."""
        return transition_matrix(self.transitions)

    # -- whole-side figures -------------------------------------------------------------
    def outcome_counts(self) -> pl.DataFrame:
        """goose's status counts over ALL trials of each side: outcome, a, b, diff (B - A)."""
        c = self.trials.group_by("side", "outcome").len()
        rows = []
        for o in OUTCOME_ORDER:
            na = c.filter((pl.col("side") == "A") & (pl.col("outcome") == o))["len"].sum()
            nb = c.filter((pl.col("side") == "B") & (pl.col("outcome") == o))["len"].sum()
            rows.append((o, int(na), int(nb), int(nb) - int(na)))
        return pl.DataFrame(
            rows,
            schema={"outcome": pl.String, "a": pl.Int64, "b": pl.Int64, "diff": pl.Int64},
            orient="row",
        )

    def side_summary(self, paired: bool = True) -> dict[str, dict[str, Any]]:
        """Per side ("a", "b"): figures over the comparable tasks (``paired=True``) or over
        each side's own tasks. Rates are task-weighted: each task's per-attempt rate, then
        the mean over tasks (equal to the trial mean when every task has K attempts).

        n_tasks, n_trials (finished attempts), n_incomplete, attempts_min / attempts_max,
        solved (tasks passed by per-task majority), mean_reward, pass_rate, timeout_rate,
        evidence_rate, cost_per_attempt (USD, null if any attempt's cost is unknown),
        cost_per_pass (total cost / passing attempts; null if a cost is unknown or nothing
        passed), tokens, duration_s, turns (means of the per-task means, known values).
        """
        out = {}
        for s in ("a", "b"):
            t = self.tasks.filter(
                pl.col("comparable") if paired else pl.col(f"n_trials_{s}").is_not_null()
            )
            t = t.filter(pl.col(f"attempts_{s}") > 0) if not paired else t
            n = t.height

            def mean(c: str, t: pl.DataFrame = t, s: str = s) -> float | None:
                v = t[f"{c}_{s}"]
                return float(v.mean()) if v.len() and v.null_count() < v.len() else None  # type: ignore[arg-type]

            cost_known = n > 0 and t[f"cost_sum_{s}"].null_count() == 0
            n_pass = int(t[f"n_pass_{s}"].sum()) if n else 0
            cost_total = float(t[f"cost_sum_{s}"].sum()) if cost_known else None
            out[s] = {
                "n_tasks": n,
                "n_trials": int(t[f"attempts_{s}"].sum()) if n else 0,
                "n_incomplete": int(t[f"n_incomplete_{s}"].sum()) if n else 0,
                "attempts_min": int(t[f"attempts_{s}"].min()) if n else None,  # type: ignore[arg-type]
                "attempts_max": int(t[f"attempts_{s}"].max()) if n else None,  # type: ignore[arg-type]
                "solved": int(t[f"pass_majority_{s}"].sum()) if n else 0,
                "n_pass": n_pass,
                "mean_reward": mean("mean_reward"),
                "pass_rate": mean("pass_rate"),
                "timeout_rate": mean("timeout_rate"),
                "evidence_rate": mean("evidence_rate"),
                "cost_per_attempt": mean("cost_usd") if cost_known else None,
                "cost_total": cost_total,
                "cost_per_pass": cost_total / n_pass if cost_total is not None and n_pass else None,
                "tokens": mean("tokens"),
                "duration_s": mean("duration_s"),
                "turns": mean("turns"),
            }
        return out

    # -- statistics and gates -------------------------------------------------------------
    def paired_frame(self) -> pl.DataFrame:
        """Finished trials of comparable tasks: side ("A"/"B"), task_name, attempt, reward
        (null as 0), passed (1.0 / 0.0): the input of the paired statistics."""
        keep = set(self.paired_tasks)
        return (
            self.trials.filter(pl.col("finished") & pl.col("task_name").is_in(list(keep)))
            .select(
                "side",
                "task_name",
                "attempt",
                pl.col("reward0").alias("reward"),
                pl.col("passed").cast(pl.Float64).alias("passed"),
            )
            .sort("side", "task_name", "attempt")
        )

    def _paired(self, metric: str) -> Any:
        df = self.paired_frame()
        if df.height == 0:
            return None
        return paired(
            df,
            "A",
            "B",
            by="side",
            task="task_name",
            reward="reward",
            confidence=self.options.get("confidence", 0.95),
            seed=self.options.get("seed", 0),
            metric=metric,
        )

    @cached_property
    def stats(self) -> Any:
        """``evalkit.stats.paired`` on the mean reward over comparable tasks (B - A):
        n_tasks, mean_a, mean_b, diff, ci_low, ci_high, p_value, method, mcnemar_*
        (None when there is no comparable task)."""
        return self._paired("reward")

    @cached_property
    def pass_stats(self) -> Any:
        """``evalkit.stats.paired(metric="pass")``: the pass-rate delta (reward >= 1) with
        its CI; for one binary attempt per task also the exact McNemar p-values (None when
        there is no comparable task)."""
        return self._paired("pass")

    @cached_property
    def figures(self) -> list[Figure]:
        """The compared figures, B - A with intervals, in their display units
        (:func:`evalkit.compare.headline.headline`): one source for the CLI, the report and
        compare.json."""
        return headline(self)

    def evidence(
        self, min_shared_tasks: int = MIN_SHARED_TASKS, large_effect: float = LARGE_EFFECT
    ) -> Evidence:
        """Whether this comparison means anything (:func:`evalkit.compare.headline.evidence`)."""
        return evidence(self, min_shared_tasks, large_effect)

    def gate(
        self, lam: float | None = None, alpha: float | None = None, tau: float | None = None
    ) -> GateResult:
        """The ship gate on this comparison: wins = fixed, losses = broken, a_solved = tasks
        A passes, over comparable tasks (per-task pass: strict majority when K > 1)."""
        o = self.options
        t = self.tasks.filter(pl.col("comparable"))
        return ship_gate(
            len(self.fixed),
            len(self.broken),
            int(t["pass_majority_a"].sum()),
            o.get("lam", 2.0) if lam is None else lam,
            o.get("alpha", 0.05) if alpha is None else alpha,
            o.get("tau", 0.10) if tau is None else tau,
            n_tasks=t.height,
        )

    @cached_property
    def plan(self) -> Plan | None:
        """After a Hold, what to run next (:func:`evalkit.stats.plan` with its defaults);
        None when the gate already decides."""
        return plan_after_hold(self) if self.gate().exit_code == 1 else None

    def gate_on(self, wins: int, losses: int) -> GateResult:
        """The ship gate on other win / loss counts over the same comparable tasks and the
        same baseline (what :func:`evalkit.stats.plan` asks after hypothetical attempts)."""
        g = self.gate()
        return ship_gate(wins, losses, g.a_solved, g.lam, g.alpha, g.tau, n_tasks=g.n_tasks)

    def guard_metrics(self) -> tuple[GuardMetrics, GuardMetrics]:
        """RegressionGuard inputs over comparable tasks, task-weighted: pass_rate, mean cost
        per attempt (None when unknown) and mean steps (turns; None when unknown)."""
        s = self.side_summary(paired=True)
        return tuple(  # type: ignore[return-value]
            GuardMetrics(
                s[k]["pass_rate"] or 0.0,
                s[k]["cost_per_attempt"],
                s[k]["turns"],
                s[k]["n_tasks"],
                f"compare side {k.upper()}",
            )
            for k in ("a", "b")
        )

    def regression_guard(self, **thresholds: float) -> GuardResult:
        """The regression guard with A as the baseline and B as the candidate."""
        base, cand = self.guard_metrics()
        return regression_guard(base, cand, **thresholds)

    # -- outputs ---------------------------------------------------------------------------
    def to_json(self, **kwargs: Any) -> dict[str, Any]:
        """compare.json (fields, gates and decision): see evalkit/compare/json_output.py."""
        return compare_json(self, **kwargs)

    def config_diff(self) -> Any:
        """The two sides' Harbor configs, flattened and diffed (needs a Runs input)."""
        if self.runs is None:
            raise ValueError("config_diff needs the Runs (compare was given a bare trials frame)")
        return config_diff(self._keys[0], self._keys[1], runs=self.runs)

    @property
    def _keys(self) -> tuple[Side, Side]:
        return self.options.get("_a_key", self.a), self.options.get("_b_key", self.b)

    def __repr__(self) -> str:
        s = self.tasks["side"].value_counts()
        n = dict(zip(s["side"].to_list(), s["count"].to_list(), strict=True))
        return (
            f"Comparison(A={self.a!r}, B={self.b!r}: {n.get('both', 0)} shared tasks "
            f"({len(self.paired_tasks)} comparable), {n.get('a_only', 0)} only in A, "
            f"{n.get('b_only', 0)} only in B)"
        )


def compare(
    runs_or_trials: Any,
    a: Side,
    b: Side,
    *,
    task: str = "task_name",
    checksums: str = "exclude",
    lam: float = 2.0,
    alpha: float = 0.05,
    tau: float = 0.10,
    confidence: float = 0.95,
    seed: int = 0,
    exclude_tasks: Sequence[str] = (),
) -> Comparison:
    """Compare run A (baseline) with run B (candidate).

    Args:
        runs_or_trials: a :class:`evalkit.Runs`, a scanned dataset (``evalkit.scan``), or
            any trials DataFrame or LazyFrame with task_name and reward (or outcome)
            columns (plus run / job_name to pick the sides). Only the two sides' rows and
            the columns compare reads are collected.
        a, b: run label, job name, job id, job folder, unique job-name prefix, or a list.
        task: the task column (default task_name).
        checksums: "exclude" (default): a task whose checksum differs between the runs is
            not comparable; "ignore": compare it anyway (it is still flagged).
        lam, alpha, tau: ship-gate defaults for ``cmp.gate()`` and compare.json.
        confidence, seed: passed to evalkit.stats.paired.
        exclude_tasks: tasks left out of both sides before anything is computed (e.g. the
            flaky tasks of :func:`evalkit.stats.flaky_tasks`); the ones found are listed in
            ``options["exclude_tasks"]`` and compare.json.
    """
    if checksums not in CHECKSUMS:
        raise ValueError(f"checksums must be one of {', '.join(CHECKSUMS)}, got {checksums!r}")
    df = complete_columns(trials_of(runs_or_trials), task)
    columns = list(dict.fromkeys(["task_name", task, *OPTIONAL_COLUMNS]))
    ta, la, ka = select_side(df, a, columns)
    tb, lb, kb = select_side(df, b, columns)
    if ta["trial_id"].null_count() == 0 and tb["trial_id"].null_count() == 0:
        shared = set(ta["trial_id"].to_list()) & set(tb["trial_id"].to_list())
        if shared:
            raise ValueError(
                f"A ({la}) and B ({lb}) share {len(shared)} trial(s): pick disjoint sides"
            )
    ta, tb, excluded = _drop_tasks(ta, tb, task, exclude_tasks)
    ta, tb = per_trial(ta), per_trial(tb)
    tasks = task_table(ta, tb, checksums)
    trials = pl.concat(
        [ta.with_columns(pl.lit("A").alias("side")), tb.with_columns(pl.lit("B").alias("side"))],
        how="diagonal_relaxed",
    )
    opts = {
        "lam": lam,
        "alpha": alpha,
        "tau": tau,
        "checksums": checksums,
        "confidence": confidence,
        "seed": seed,
        "exclude_tasks": excluded,
        "_a_key": a,
        "_b_key": b,
    }
    return Comparison(
        la,
        lb,
        trials,
        tasks,
        transitions(tasks),
        opts,
        ka,
        kb,
        _runs_for_config(runs_or_trials),
    )


def _drop_tasks(
    ta: pl.DataFrame, tb: pl.DataFrame, task: str, exclude: Sequence[str]
) -> tuple[pl.DataFrame, pl.DataFrame, list[str]]:
    """Both sides without the ``exclude`` tasks, and the excluded tasks either side had."""
    if isinstance(exclude, str):
        raise TypeError("exclude_tasks must be a list of task names, not one string")
    drop = {str(t) for t in exclude}
    if not drop:
        return ta, tb, []
    found = (set(ta[task].drop_nulls().to_list()) | set(tb[task].drop_nulls().to_list())) & drop
    keep = ~pl.col(task).is_in(sorted(drop)).fill_null(False)
    return ta.filter(keep), tb.filter(keep), sorted(found)


def _runs_for_config(runs_or_trials: Any) -> Any:
    """The Runs whose job configs ``config_diff`` reads; None for a bare frame or a
    scanned dataset (its jobs are lazy)."""
    if isinstance(runs_or_trials, pl.DataFrame | pl.LazyFrame):
        return None
    if isinstance(getattr(runs_or_trials, "trials", None), pl.LazyFrame):
        return None
    return runs_or_trials
