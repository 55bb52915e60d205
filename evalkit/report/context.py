"""What a report is about: the loaded runs, their order, and which two runs are compared.

Defaults (nightly): the candidate is the newest run (latest trial start); the baseline is the
most recent earlier run over the same tasks (same task set, else the most shared tasks).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import polars as pl

import evalkit
from evalkit.compare.select import closest, resolve_name
from evalkit.load import Runs
from evalkit.load.locate import find_runs
from evalkit.load.runs import TRAJECTORY_TRIAL_COLUMNS, run_order

RUN_BY = ("auto", "label", "job")
#: Runs a report details (trajectories parsed, anti-patterns detected, turns, evidence):
#: the compared pair and the newest other runs up to this many, as many as the charts
#: colour. Older runs are summarised from their trials (``detail_runs`` parameter; 0: all).
DETAIL_RUNS = 8


@dataclass
class Context:
    """The data of one report. ``trials`` carries the ``run`` label the report uses.

    ``runs`` holds the runs shown in detail (``detail``: trajectories, findings, evidence);
    ``history``, when set, every run loaded (trials, jobs and load errors only)."""

    runs: Runs
    source: str
    run_by: str
    order: list[str]
    candidate: str | None
    baseline: str | None
    choice: str
    params: dict[str, Any] = field(default_factory=dict)
    load_s: float = 0.0
    generated_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    #: results computed once per report (the comparison, ...)
    cache: dict[str, Any] = field(default_factory=dict)
    #: when set, sections only show these runs (see :meth:`narrow`)
    only: list[str] | None = None
    #: API-key-like values and secret env values replaced with [REDACTED] (the default)
    redact: bool = True
    #: every run loaded, when ``runs`` holds only the runs shown in detail
    history: Runs | None = None

    @property
    def detail(self) -> list[str]:
        """The runs shown in detail (all runs when nothing was left out)."""
        if self.history is None:
            return list(self.order)
        shown = set(self.runs.trials["run"].unique().to_list())
        return [r for r in self.order if r in shown]

    @property
    def left_out(self) -> list[str]:
        """Runs summarised from their trials only (no trajectories, findings, turns)."""
        shown = set(self.detail)
        return [r for r in self.order if r not in shown]

    @property
    def jobs(self) -> pl.DataFrame:
        return (self.history or self.runs).jobs

    @property
    def load_errors(self) -> pl.DataFrame:
        """Every load error: files of all runs, trajectories of the runs shown in detail."""
        if self.history is None:
            return self.runs.load_errors
        traj = self.runs.load_errors.filter(pl.col("level") == "trajectory")
        return pl.concat([self.history.load_errors, traj], how="vertical_relaxed")

    @property
    def all_trials(self) -> pl.DataFrame:
        """Every run's trials; the trajectory columns filled for the runs shown in detail."""
        if self.history is None:
            return self.runs.trials
        if "all_trials" not in self.cache:
            h = self.history.trials
            cols = [c for c in TRAJECTORY_TRIAL_COLUMNS if c in h.columns]
            filled = self.runs.trials.select("trial_id", *[pl.col(c).alias(f"__{c}") for c in cols])
            # joined on the key alone, so the history's other columns are shared, not copied
            got = h.select("trial_id").join(
                filled, on="trial_id", how="left", maintain_order="left"
            )
            self.cache["all_trials"] = h.with_columns(
                [pl.coalesce(got[f"__{c}"], pl.col(c)).alias(c) for c in cols]
            )
        return self.cache["all_trials"]

    @property
    def trials(self) -> pl.DataFrame:
        t = self.all_trials
        return t.filter(pl.col("run").is_in(self.only)) if self.only is not None else t

    @property
    def detail_trials(self) -> pl.DataFrame:
        """The trials of the runs shown in detail (within ``only``)."""
        t = self.trials
        return t if self.history is None else t.filter(pl.col("run").is_in(self.detail))

    def narrow(self, only_pair: bool) -> Context:
        """This context restricted to the compared pair (A, B) when ``only_pair``."""
        if not only_pair or self.pair is None:
            return self
        return replace(self, only=list(self.pair), order=list(self.pair))

    @property
    def pair(self) -> tuple[str, str] | None:
        if self.candidate and self.baseline and self.candidate != self.baseline:
            return self.baseline, self.candidate
        return None


def _load(path: str | dict[str, Any], run_by: str) -> Runs:
    if isinstance(path, dict):
        return evalkit.load(path, progress=False)
    run = "job" if run_by == "job" else None
    return evalkit.load(path, run=run, progress=False)


def named_runs(runs: str | dict[str, Any] | None) -> dict[str, Any] | None:
    """The ``runs`` parameter: run label -> a job folder, a folder of jobs, or a list of
    them (``evalkit.load``'s dict form), given as a dict or as JSON text. Raises ValueError
    (not a mapping) or FileNotFoundError (a path that does not exist)."""
    if runs is None or runs == "":
        return None
    if isinstance(runs, str):
        try:
            runs = json.loads(runs)
        except json.JSONDecodeError as e:
            raise ValueError(
                f'runs must be JSON like {{"baseline": "path/a", "candidate": "path/b"}}: {e}'
            ) from None
    if not isinstance(runs, dict) or not runs:
        raise ValueError('runs must map run labels to paths: {"LABEL": "PATH", ...}')
    out: dict[str, Any] = {}
    for label, paths in runs.items():
        items = paths if isinstance(paths, list) else [paths]
        if not items or not all(isinstance(p, str) and p for p in items):
            raise ValueError(f"runs[{label!r}] must be a path or a list of paths")
        missing = [p for p in items if not Path(p).exists()]
        if missing:
            raise FileNotFoundError(f"runs[{label!r}]: no such path: {', '.join(missing)}")
        out[str(label)] = [str(Path(p).resolve()) for p in items]
    return out


def _tasks(trials: pl.DataFrame, run: str) -> set[str]:
    return set(trials.filter(pl.col("run") == run)["task_name"].drop_nulls().to_list())


def pick_baseline(trials: pl.DataFrame, order: list[str], candidate: str) -> tuple[str | None, str]:
    """The run a candidate is compared with, and a sentence saying why."""
    cand = _tasks(trials, candidate)
    earlier = order[: order.index(candidate)] if candidate in order else []
    later = [r for r in order if r != candidate and r not in earlier]
    for pool, when in ((earlier, "earlier"), (later, "other")):
        same = [r for r in pool if _tasks(trials, r) == cand and cand]
        if same:
            return same[-1], f"the most recent {when} run over the same {len(cand)} tasks"
        scored = [(len(_tasks(trials, r) & cand), i, r) for i, r in enumerate(pool)]
        scored = [s for s in scored if s[0] > 0]
        if scored:
            n, _, best = max(scored)
            return best, f"the {when} run sharing the most tasks with it ({n} of {len(cand)})"
    return None, "no other run shares a task with it"


def _resolve(trials: pl.DataFrame, key: str) -> str | None:
    runs = set(trials["run"].drop_nulls().to_list())
    if key in runs:
        return key
    jobs = trials.filter(pl.col("job_name") == key)
    if jobs.height:
        return None  # a job name: the caller switches to one run per job
    try:
        hit, _ = resolve_name(trials, key)
    except KeyError:
        return None
    return hit if hit in runs else None


def detail_runs(order: list[str], pair: tuple[str | None, str | None], n: int) -> list[str]:
    """The runs a report shows in detail, in run order: the compared pair, then the newest
    other runs, ``n`` in all (every run when ``n`` <= 0 or there are no more)."""
    if n <= 0 or len(order) <= n:
        return list(order)
    keep = list(dict.fromkeys(r for r in pair if r in order))  # a run compared with itself: once
    for r in reversed(order):
        if len(keep) >= n:
            break
        if r not in keep:
            keep.append(r)
    return [r for r in order if r in keep]


def load_context(
    runs_dir: str | Path | None,
    candidate: str | None = None,
    baseline: str | None = None,
    run_by: str = "auto",
    redact: bool = True,
    runs: str | dict[str, Any] | None = None,
    **params: Any,
) -> Context:
    """Load ``runs_dir`` and decide which runs are compared (see the module docstring).

    ``runs_dir`` is found by :func:`evalkit.load.locate.find_runs` (None: ``$EVALKIT_RUNS``,
    else ``runs`` in the working folder or a folder above it); missing or empty, it raises
    :class:`evalkit.load.locate.RunsFolderProblem`.

    ``runs``: run labels the user gives, label -> path(s) (:func:`named_runs`); then those
    paths are loaded instead of ``runs_dir``, every job under a path gets its label, and
    without ``candidate`` / ``baseline`` the first label is the baseline and the last the
    candidate.

    ``redact`` (default True): every text that came from the job folders (trajectories,
    exception and error messages, finding evidence, ...) has API-key-like values and the
    values of this machine's secret environment variables replaced with [REDACTED]
    (``Runs.redacted``); evidence bundles redact on their own in any case.

    ``run_by``: 'label' (evalkit's run labels: agent + model + dataset unless the data says
    otherwise), 'job' (one run per job folder) or 'auto' (labels, unless they give fewer than
    two runs while there are several jobs, or a candidate / baseline names a job).
    """
    if run_by not in RUN_BY:
        raise ValueError(f"run_by must be one of {RUN_BY}, got {run_by!r}")
    t0 = time.perf_counter()
    notes: list[str] = []
    named = named_runs(runs)
    src = json.dumps(named) if named else str(find_runs(runs_dir))
    if named:
        loaded, mode = _load(named, "label"), "label"
        notes.append("run labels as given (runs parameter)")
        candidate, baseline = _pair_from_labels(list(named), candidate, baseline)
    else:
        loaded, mode = _load_runs_dir(src, run_by, (candidate, baseline), notes)
    history = _redacted_history(loaded) if redact else loaded
    trials = history.trials
    order = run_order(trials)
    cand, base = _compared_pair(trials, order, candidate, baseline, notes)
    shown = detail_runs(order, (base, cand), int(params.get("detail_runs", DETAIL_RUNS)))
    if len(shown) < len(order):
        notes.append(_left_out_choice(len(shown), len(order)))
    return Context(
        history=None if len(shown) == len(order) else history,
        runs=_detail_runs_loaded(loaded, shown, order, redact),
        source=src,
        run_by=mode,
        order=order,
        candidate=cand,
        baseline=base,
        choice="; ".join(notes),
        params=dict(params),
        load_s=time.perf_counter() - t0,
        redact=redact,
    )


def _pair_from_labels(
    labels: list[str], candidate: str | None, baseline: str | None
) -> tuple[str | None, str | None]:
    """Candidate and baseline with the user's run labels: unless asked, the last label is
    the candidate and the first the baseline (when there are two or more)."""
    if len(labels) >= 2:
        baseline = baseline or (labels[0] if candidate is None else None)
        candidate = candidate or labels[-1]
    return candidate, baseline


def _load_runs_dir(
    src: str, run_by: str, asked: tuple[str | None, str | None], notes: list[str]
) -> tuple[Runs, str]:
    """The runs folder loaded with one run per label or per job folder (``run_by``; 'auto'
    switches to jobs when a run asked for names a job, or the labels do not separate the
    jobs), and the mode used; the reason for a switch goes to ``notes``."""
    mode = "job" if run_by == "job" else "label"
    loaded = _load(src, mode)
    if run_by != "auto":
        return loaded, mode
    t = loaded.trials
    named_jobs = [
        k
        for k in asked
        if k and _resolve(t, k) is None and t.filter(pl.col("job_name") == k).height
    ]
    if named_jobs or (t["run"].n_unique() < 2 <= loaded.jobs.height):
        notes.append(
            "one run per job folder (the run labels did not separate the jobs)"
            if not named_jobs
            else "one run per job folder (a job was named)"
        )
        return loaded.one_run_per_job(), "job"  # regrouped, not read again
    return loaded, mode


def _asked_run(
    trials: pl.DataFrame, order: list[str], key: str | None, what: str, notes: list[str]
) -> str | None:
    """The run a candidate / baseline the user gave names (a label or its unique start);
    ValueError naming the closest runs when it names none."""
    if key is None:
        return None
    hit = _resolve(trials, key)
    if hit is None:
        near = closest(key, order)
        raise ValueError(
            f"{what} {key!r} is not a run here; "
            + (f"closest: {', '.join(near)}" if near else f"runs: {', '.join(order)}")
        )
    if hit != key:
        notes.append(f"{what} {key!r} is the start of one run only: {hit}")
    return hit


def _compared_pair(
    trials: pl.DataFrame,
    order: list[str],
    candidate: str | None,
    baseline: str | None,
    notes: list[str],
) -> tuple[str | None, str | None]:
    """The candidate (as asked, else the newest run) and baseline (as asked, else
    :func:`pick_baseline`), with why each was chosen in ``notes``."""
    cand = _asked_run(trials, order, candidate, "candidate", notes)
    base = _asked_run(trials, order, baseline, "baseline", notes)
    if cand is None and order:
        cand = order[-1]
        notes.append(f"candidate: the newest run ({cand})")
    elif cand:
        notes.append(f"candidate: {cand} (as asked)")
    if base is None and cand:
        base, why = pick_baseline(trials, order, cand)
        notes.append(f"baseline: {why}" + (f" ({base})" if base else ""))
    elif base:
        notes.append(f"baseline: {base} (as asked)")
    return cand, base


def _redacted_history(loaded: Runs) -> Runs:
    """Every run loaded, its texts redacted (trajectories are redacted where parsed, in the
    runs shown in detail)."""
    from evalkit.load.shared.redact import env_secret_values

    return loaded.redacted(env_secret_values(), trajectories=False)


def _left_out_choice(n_shown: int, n_runs: int) -> str:
    """The note saying that only some runs are shown in detail."""
    return (
        f"shown in detail: {n_shown} of {n_runs} runs (the compared pair and the "
        "newest others); older runs are summarised from their trials"
    )


def _detail_runs_loaded(loaded: Runs, shown: list[str], order: list[str], redact: bool) -> Runs:
    """The runs shown in detail, their trajectories parsed (fills n_turns, ...) and, with
    ``redact``, redacted."""
    runs = loaded if len(shown) == len(order) else loaded.subset(shown)
    _ = runs.steps  # parse trajectories once, for the runs shown in detail
    if redact:
        from evalkit.load.shared.redact import env_secret_values

        runs = runs.redacted(env_secret_values())
    return runs
