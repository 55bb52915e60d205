"""The :class:`Runs` container returned by :func:`evalkit.load`.

It holds the frames of one load. ``jobs``, ``trials`` and ``load_errors`` are built by the
load itself; ``steps`` and ``tool_calls`` are parsed from trajectories on first access (all
trials at once, in parallel, cached on disk per job); ``findings`` are computed on first
access by the findings provider that :mod:`evalkit.patterns` registers (the load layer never
imports the analysis layers), plus the findings recorded in go-code rollouts.

Once trajectories have been parsed, ``trials`` carries n_steps / n_tool_calls / n_turns /
metrics_mismatch (null before; pass ``trajectories=True`` to :func:`evalkit.load` to parse
them eagerly), and tokens_not_recorded made exact with the trajectory's steps and
final_metrics totals (``trials/derive.tokens_not_recorded``).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from evalkit.load import errors as _errors
from evalkit.load._columns import conform, empty
from evalkit.load.findings.table import findings_frame
from evalkit.load.jobs.columns import COLUMNS as JOB_COLUMNS
from evalkit.load.jobs.table import run_names
from evalkit.load.steps.columns import STEP_COLUMNS, TOOL_CALL_COLUMNS
from evalkit.load.trials.columns import COLUMNS as TRIAL_COLUMNS
from evalkit.load.trials.derive import attempt_number

#: Computes detected findings for a Runs object (registered by evalkit.patterns).
FindingsProvider = Callable[["Runs"], pl.DataFrame]
_findings_provider: FindingsProvider | None = None

#: Columns :meth:`Runs.redacted` never changes (ids, paths, keys).
_KEEP = ("run", "job_name", "trial_name", "outcome", "error_kind", "path", "level")
_KEEP_SUFFIXES = ("_id", "_dir", "_path", "_uri")

#: Trial columns that come from trajectories (filled when steps are built).
TRAJECTORY_TRIAL_COLUMNS = (
    "n_steps",
    "n_tool_calls",
    "n_turns",
    "metrics_mismatch",
    "tokens_not_recorded",
)


def register_findings_provider(fn: FindingsProvider | None) -> None:
    """Set the function that computes ``runs.findings`` (evalkit.patterns does this)."""
    global _findings_provider
    _findings_provider = fn


def run_order(trials: pl.DataFrame, by: str = "run") -> list[str]:
    """Run labels, oldest first, by each run's latest trial start, then by name; a run with
    no start time comes first (unknown is never the newest). The one order of runs."""
    if trials.height == 0 or by not in trials.columns:
        return []
    if "started_at" not in trials.columns:
        return sorted(r for r in trials[by].unique().to_list() if r is not None)
    o = (
        trials.group_by(by)
        .agg(pl.col("started_at").max().alias("_s"))
        .sort("_s", by, nulls_last=False)
    )
    return [r for r in o[by].to_list() if r is not None]


@dataclass
class TrajectoryFrames:
    """What the trajectory layer returns for a set of trials."""

    steps: pl.DataFrame
    tool_calls: pl.DataFrame
    #: trial_id + the TRAJECTORY_TRIAL_COLUMNS, one row per trial that had a trajectory/log
    trial_summary: pl.DataFrame
    errors: list[_errors.LoadError] = field(default_factory=list)


@dataclass
class Runs:
    """Frames of one load. See ``evalkit/load/*/columns.py`` for every column."""

    jobs: pl.DataFrame
    _trials: pl.DataFrame
    _load_errors: list[_errors.LoadError]
    options: dict[str, Any] = field(default_factory=dict)
    #: frames delivered directly by readers that parse everything at once (rollouts)
    _pre_steps: pl.DataFrame | None = None
    _pre_tool_calls: pl.DataFrame | None = None
    _recorded_findings: pl.DataFrame | None = None
    _traj: TrajectoryFrames | None = None
    _findings: pl.DataFrame | None = None
    _trajectory_builder: Callable[[pl.DataFrame], TrajectoryFrames] | None = None

    # -- frames -------------------------------------------------------------------------
    @property
    def trials(self) -> pl.DataFrame:
        """One row per trial folder / rollout run (trajectory columns filled once parsed)."""
        if self._traj is None or self._traj.trial_summary.height == 0:
            return self._trials
        summ = self._traj.trial_summary
        cols = [c for c in TRAJECTORY_TRIAL_COLUMNS if c in summ.columns]
        base = self._trials
        upd = summ.select("trial_id", *[pl.col(c).alias(f"__{c}") for c in cols])
        out = base.join(upd, on="trial_id", how="left")
        return out.with_columns(
            [pl.coalesce(pl.col(f"__{c}"), pl.col(c)).alias(c) for c in cols]
        ).drop([f"__{c}" for c in cols])

    def _ensure_trajectories(self) -> TrajectoryFrames:
        if self._traj is None:
            if self._trajectory_builder is None:
                tf = TrajectoryFrames(
                    empty(STEP_COLUMNS),
                    empty(TOOL_CALL_COLUMNS),
                    pl.DataFrame({"trial_id": []}, schema={"trial_id": pl.String}),
                )
            else:
                tf = self._trajectory_builder(self._trials)
            if self._pre_steps is not None:
                tf.steps = pl.concat(
                    [tf.steps, conform(self._pre_steps, STEP_COLUMNS)], how="diagonal_relaxed"
                )
            if self._pre_tool_calls is not None:
                tf.tool_calls = pl.concat(
                    [tf.tool_calls, conform(self._pre_tool_calls, TOOL_CALL_COLUMNS)],
                    how="diagonal_relaxed",
                )
            self._traj = tf
        return self._traj

    @property
    def steps(self) -> pl.DataFrame:
        """One row per trajectory step (parsed on first access)."""
        return self._ensure_trajectories().steps

    @property
    def tool_calls(self) -> pl.DataFrame:
        """One row per tool call, observation joined (parsed on first access)."""
        return self._ensure_trajectories().tool_calls

    @property
    def findings(self) -> pl.DataFrame:
        """One row per anti-pattern finding: detected (evalkit.patterns) + recorded (rollouts)."""
        if self._findings is None:
            detected = _findings_provider(self) if _findings_provider is not None else None
            self._findings = findings_frame(detected, self._recorded_findings)
        return self._findings

    @property
    def load_errors(self) -> pl.DataFrame:
        """path, level, error_type, message (+ job_id, trial_id) for every problem met."""
        errs = list(self._load_errors)
        if self._traj is not None:
            errs.extend(self._traj.errors)
        return _errors.errors_frame(errs)

    # -- a part of the load ---------------------------------------------------------------
    def subset(self, runs: Collection[str]) -> Runs:
        """The same load restricted to the run labels ``runs``: their trials, the jobs that
        hold them, their load errors (and those about no job or trial in particular).
        Trajectories are parsed on first access for these trials only; frames already
        parsed or computed are filtered, not parsed again."""
        trials = self._trials.filter(pl.col("run").is_in(list(runs)))
        ids, job_ids = set(trials["trial_id"].to_list()), set(trials["job_id"].to_list())

        def keep_error(e: _errors.LoadError) -> bool:
            if e.trial_id is not None:
                return e.trial_id in ids
            return e.job_id is None or e.job_id in job_ids

        def mine(df: pl.DataFrame | None) -> pl.DataFrame | None:
            return None if df is None else df.filter(pl.col("trial_id").is_in(list(ids)))

        traj = self._traj
        if traj is not None:
            traj = TrajectoryFrames(
                mine(traj.steps), mine(traj.tool_calls), mine(traj.trial_summary),
                [e for e in traj.errors if keep_error(e)],
            )  # fmt: skip
        return Runs(
            jobs=self.jobs.filter(pl.col("job_id").is_in(list(job_ids))),
            _trials=trials,
            _load_errors=[e for e in self._load_errors if keep_error(e)],
            options={**self.options, "runs": sorted(runs)},
            _pre_steps=mine(self._pre_steps),
            _pre_tool_calls=mine(self._pre_tool_calls),
            _recorded_findings=mine(self._recorded_findings),
            _traj=traj,
            _findings=mine(self._findings),
            _trajectory_builder=self._trajectory_builder,
        )

    def one_run_per_job(self) -> Runs:
        """This load with one run per Harbor job folder, as ``load(paths, run="job")`` gives
        it, without reading the folders again (rollouts keep their runs). A load whose paths
        map run labels keeps them (they win over job folders there too): ValueError."""
        from dataclasses import replace

        if isinstance(self.options.get("paths"), Mapping):
            raise ValueError("a load with run labels given as a mapping keeps those labels")
        harbor = pl.col("source_format") == "harbor"
        trials = self._trials.with_columns(
            pl.when(harbor).then(pl.col("job_name")).otherwise(pl.col("run")).alias("run")
        ).with_columns(pl.when(harbor).then(attempt_number()).otherwise("attempt").alias("attempt"))
        runs = trials.select("job_id", "run").group_by("job_id").agg(run_names().alias("__run"))
        jobs = (
            self.jobs.join(runs, on="job_id", how="left", maintain_order="left")
            .with_columns(
                pl.when(pl.col("source_format") == "harbor")
                .then(pl.col("__run"))
                .otherwise(pl.col("run"))
                .alias("run")
            )
            .drop("__run")
        )
        return replace(self, jobs=jobs, _trials=trials)

    # -- redaction ----------------------------------------------------------------------
    def redacted(self, extra_values: tuple[str, ...] = (), trajectories: bool = True) -> Runs:
        """A copy whose text (messages, reasoning, commands, arguments, observations,
        exception messages, load error messages, finding evidence, ...) has API-key-like
        values (``evalkit.load.shared.redact``) and ``extra_values`` replaced with [REDACTED].

        Ids, paths and names of files are kept. Trajectories are parsed and findings
        computed first, from the original text (reports call this; see docs/report.md).
        ``trajectories=False``: jobs, trials and load errors only, nothing parsed; the copy
        has no steps, tool calls or findings (a report's history of runs it does not detail)."""
        from dataclasses import replace

        from evalkit.load.shared.redact import redact_frame, redact_text

        def red(df: pl.DataFrame) -> pl.DataFrame:
            cols = [c for c in df.columns if not c.endswith(_KEEP_SUFFIXES) and c not in _KEEP]
            return redact_frame(df, cols, extra_values)

        def red_errors(errs: list[_errors.LoadError]) -> list[_errors.LoadError]:
            return [replace(e, message=redact_text(e.message, extra_values)) for e in errs]

        if not trajectories:
            return Runs(
                jobs=red(self.jobs),
                _trials=red(self._trials),
                _load_errors=red_errors(self._load_errors),
                options={**self.options, "redacted": True, "trajectories": False},
                _traj=TrajectoryFrames(
                    empty(STEP_COLUMNS),
                    empty(TOOL_CALL_COLUMNS),
                    self._trials.select("trial_id").clear(),
                ),
                _findings=findings_frame(),
            )
        tf = self._ensure_trajectories()
        findings = self.findings
        return Runs(
            jobs=red(self.jobs),
            _trials=red(self._trials),
            _load_errors=red_errors(self._load_errors),
            options={**self.options, "redacted": True},
            _traj=TrajectoryFrames(
                red(tf.steps), red(tf.tool_calls), tf.trial_summary, red_errors(tf.errors)
            ),
            _findings=red(findings),
        )

    # -- conveniences -------------------------------------------------------------------
    @property
    def run_labels(self) -> list[str]:
        """Run labels, oldest first (:func:`run_order`)."""
        return run_order(self._trials)

    def __repr__(self) -> str:
        return (
            f"Runs({self.jobs.height} jobs, {self._trials.height} trials, "
            f"{len(self.run_labels)} runs, {len(self._load_errors)} load errors)"
        )

    @staticmethod
    def empty_jobs() -> pl.DataFrame:
        return empty(JOB_COLUMNS)

    @staticmethod
    def empty_trials() -> pl.DataFrame:
        return empty(TRIAL_COLUMNS)
