"""Derived trial columns, computed over the whole frame with Polars expressions.

Input: raw records (``trials/extract.py`` RAW_SCHEMA) + job_id, job_name and ``__zone``
(the zone naive timestamps of that job are read in, see ``load/shared/timeparse.py``).
Output: the trials frame of ``trials/columns.py``.
"""

from __future__ import annotations

import polars as pl

from evalkit.load._columns import conform
from evalkit.load.outcomes import error_kind_expr, outcome_expr, reward_valid_expr
from evalkit.load.shared.timeparse import is_aware, parsed, utc_from_parsed
from evalkit.load.trials.columns import COLUMNS

TS_MAP = {
    "started_at": "ts_started",
    "finished_at": "ts_finished",
    "exception_at": "ts_exception",
    "_env_s": "ts_env_start",
    "_env_e": "ts_env_end",
    "_as_s": "ts_asetup_start",
    "_as_e": "ts_asetup_end",
    "_ag_s": "ts_agent_start",
    "_ag_e": "ts_agent_end",
    "_v_s": "ts_verifier_start",
    "_v_e": "ts_verifier_end",
}


#: The columns with_parsed() adds (dropped again by derive()).
PARSED = [f"__{k}_{src}" for src in TS_MAP.values() for k in ("a", "n")]


#: The raw timestamp columns the zone inference reads (``jobs/zones.py``).
ZONE_SOURCES = ("ts_started", "ts_finished", "ts_exception")


def with_parsed(raw: pl.DataFrame, sources: tuple[str, ...] | None = None) -> pl.DataFrame:
    """Raw records with timestamp columns (default: all) parsed as aware and as naive, once:
    the zone inference and derive() both use them; columns parsed already are kept."""
    todo = [s for s in (sources or TS_MAP.values()) if f"__a_{s}" not in raw.columns]
    return raw.with_columns([e for src in todo for e in parsed(src)]) if todo else raw


#: How far a phase or exception time may lie outside its trial before it is flagged.
WINDOW_TOLERANCE_S = 60


def out_of_window() -> pl.Expr:
    """``timestamp_out_of_window``: a phase or exception time (UTC) outside the trial's
    [started_at, finished_at] by more than the tolerance; null when either end is unknown."""
    tol = pl.duration(seconds=WINDOW_TOLERANCE_S)
    lo, hi = pl.col("started_at") - tol, pl.col("finished_at") + tol
    inner = [c for c in TS_MAP if c not in ("started_at", "finished_at")]
    outside = pl.any_horizontal([((pl.col(c) < lo) | (pl.col(c) > hi)).fill_null(False) for c in inner])  # fmt: skip
    known = pl.col("started_at").is_not_null() & pl.col("finished_at").is_not_null()
    return pl.when(known).then(outside).otherwise(None)


def tokens_not_recorded(
    ran: pl.Expr | None = None, trajectory_totals: tuple[pl.Expr, ...] = ()
) -> pl.Expr:
    """``tokens_not_recorded``: input and output counters both 0 on a trial whose agent
    ran (at load: it left a trajectory; once trajectories are read, ``ran`` is "it has
    steps") while no token total is recorded anywhere: a non-zero prompt or completion
    total in the trajectory's final_metrics (``trajectory_totals``) means the tokens ARE
    recorded (result.json just lacks them). An agent without a trajectory (oracle, nop)
    can truly use no tokens."""
    zero = (pl.col("n_input_tokens") == 0) & (pl.col("n_output_tokens") == 0)
    ran = pl.col("has_trajectory") if ran is None else ran
    elsewhere = pl.any_horizontal([(t.fill_null(0) > 0) for t in trajectory_totals] or [pl.lit(False)])  # fmt: skip
    return (zero & ran.fill_null(False) & ~elsewhere).fill_null(False)


def measured_tokens(col: str) -> pl.Expr:
    """A token column as a measurement: null where ``tokens_not_recorded`` (the recorded 0
    stays in the trials frame; sums and means must not count it)."""
    flag = pl.col("tokens_not_recorded").fill_null(False)
    return pl.when(flag).then(None).otherwise(pl.col(col)).alias(col)


def known_sum(col: str | pl.Expr) -> pl.Expr:
    """Sum of the known values; null (not 0) when no value is known (unknown is not 0)."""
    e = pl.col(col) if isinstance(col, str) else col
    return pl.when(e.is_not_null().any()).then(e.sum()).otherwise(None)


def failed_checks() -> pl.Expr:
    """``analysis_failed``: names of the analysis checks judged 'fail' (null: not analysed)."""
    checks = pl.col("analysis_checks")
    return checks.list.eval(
        pl.element().filter(pl.element().struct.field("verdict") == "fail").struct.field("name")
    ).list.join(", ")


def _secs(end: str, start: str) -> pl.Expr:
    # round(6): Polars divides a column of 2+ rows by a scalar as a multiplication by its
    # reciprocal (1 ulp off) but a 1-row column exactly, so rows derived one job at a time
    # (incremental cache loads) differed from a cold load; rounded, both are exact
    return ((pl.col(end) - pl.col(start)).dt.total_microseconds() / 1e6).round(6)


def default_run_label() -> pl.Expr:
    """agent__model__dataset, like Harbor's own evals key (model without its provider).

    A regrade trial carries its source's agent and model but is not another attempt: its
    label ends in ``__regrade`` so its reward is never counted with the source run's."""
    model = pl.col("model_name").str.split("/").list.slice(1).list.join("/")
    model = (
        pl.when(pl.col("model_name").str.contains("/")).then(model).otherwise(pl.col("model_name"))
    )
    label = pl.concat_str(
        [
            pl.col("agent_name").fill_null("unknown-agent"),
            model.fill_null("no-model"),
            pl.col("task_source").fill_null(pl.col("__dataset")).fill_null("adhoc"),
        ],
        separator="__",
    )
    return pl.when(pl.col("regrade_of").is_not_null()).then(label + "__regrade").otherwise(label)


def derive(raw: pl.DataFrame, zones: list[str], outcome_rule: str = "goose") -> pl.DataFrame:
    """Turn raw records into the trials frame (run and attempt are added by the caller)."""
    if "__dataset" not in raw.columns:
        raw = raw.with_columns(pl.lit(None, pl.String).alias("__dataset"))
    zone = pl.col("__zone")
    raw = with_parsed(raw)  # the columns not parsed yet
    ts = {
        out: utc_from_parsed(pl.col(f"__a_{src}"), pl.col(f"__n_{src}"), zone, zones).alias(out)
        for out, src in TS_MAP.items()
    }
    naive_any = pl.any_horizontal(
        [(pl.col(src).is_not_null() & ~is_aware(pl.col(src))) for src in TS_MAP.values()]
    )
    df = raw.with_columns(*ts.values(), naive_any.alias("naive_timestamps")).drop(PARSED)
    df = df.with_columns(
        _secs("finished_at", "started_at").alias("duration_s"),
        _secs("_env_e", "_env_s").alias("env_setup_s"),
        _secs("_as_e", "_as_s").alias("agent_setup_s"),
        _secs("_ag_e", "_ag_s").alias("agent_s"),
        _secs("_v_e", "_v_s").alias("verifier_s"),
        out_of_window().alias("timestamp_out_of_window"),
        tokens_not_recorded().alias("tokens_not_recorded"),
        failed_checks().alias("analysis_failed"),
        error_kind_expr(pl.col("exception_type")).alias("error_kind"),
        pl.lit("harbor").alias("source_format"),
        pl.when(pl.col("cost_usd").is_not_null())
        .then(pl.lit("recorded"))
        .otherwise(pl.lit("unknown"))
        .alias("cost_status"),
    )
    has_rewards = pl.col("rewards").list.len().fill_null(0) > 0
    df = df.with_columns(
        outcome_expr(
            pl.col("reward"),
            pl.col("exception_type"),
            pl.col("result_present"),
            pl.col("error_kind"),
            outcome_rule,
        ).alias("outcome"),
        reward_valid_expr(
            pl.col("reward_valid_recorded"),
            has_rewards & pl.col("result_present"),
            pl.col("error_kind"),
        ).alias("reward_valid"),
        pl.all_horizontal(
            pl.col("has_trajectory").fill_null(False),
            pl.col("has_reward_file").fill_null(False),
            pl.col("has_verifier_output").fill_null(False),
            pl.col("has_artifacts_manifest").fill_null(False),
        ).alias("evidence_complete"),
    )
    return df


def recorded_task_names(df: pl.DataFrame) -> pl.DataFrame:
    """Name every trial's task as Harbor recorded it for a finished trial of the same task.

    A trial without result.json only has its config.json, whose task is a path, a git url
    or a package name: its name from there can differ from the ``task_name`` Harbor writes
    into result.json (a registry task ``harbor/x`` lives in a folder named ``x``). The
    task id (``task_ref``) is the same in both files, so a task_ref that has a finished
    trial anywhere in the load gives its recorded name to the unfinished ones.
    """
    if "result_present" not in df.columns or df.height == 0:
        return df
    done = pl.col("result_present").fill_null(False)
    recorded = (pl.col("task_name").filter(done & pl.col("task_name").is_not_null()).first()).over(
        "task_ref"
    )
    return df.with_columns(
        pl.when(~done & pl.col("task_ref").is_not_null())
        .then(pl.coalesce(recorded, pl.col("task_name")))
        .otherwise(pl.col("task_name"))
        .alias("task_name")
    )


def attempt_number() -> pl.Expr:
    """A trial's attempt: its place within its run and task by start time, then trial name
    (nulls last), from 1."""
    return pl.int_range(1, pl.len() + 1, dtype=pl.Int32).over(
        ["run", "task_name"], order_by=["started_at", "trial_name"], nulls_last=True
    )


def add_run_and_attempt(df: pl.DataFrame, label: pl.Expr) -> pl.DataFrame:
    """Set ``run`` (user label per job, else ``label``), name unfinished trials' tasks as
    recorded (:func:`recorded_task_names`) and number attempts within run+task (by start
    time, then trial name; nulls last), then keep only the declared columns."""
    df = recorded_task_names(df)
    df = df.with_columns(pl.coalesce(pl.col("__label"), label).alias("run"))
    df = df.with_columns(attempt_number().alias("attempt"))
    return conform(df.drop([c for c in df.columns if c.startswith("_")]), COLUMNS, extra=False)
