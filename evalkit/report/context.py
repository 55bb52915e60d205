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

RUN_BY = ("auto", "label", "job")


def known_sum(col: str | pl.Expr) -> pl.Expr:
    """Sum of the known values; null (not 0) when no value is known."""
    e = pl.col(col) if isinstance(col, str) else col
    return pl.when(e.is_not_null().any()).then(e.sum()).otherwise(None)


@dataclass
class Context:
    """The data of one report. ``trials`` carries the ``run`` label the report uses."""

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

    @property
    def trials(self) -> pl.DataFrame:
        t = self.runs.trials
        return t.filter(pl.col("run").is_in(self.only)) if self.only is not None else t

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


def run_order(trials: pl.DataFrame) -> list[str]:
    """Run labels, oldest first, by each run's latest trial start (then by name)."""
    if trials.height == 0:
        return []
    o = (
        trials.group_by("run")
        .agg(pl.col("started_at").max().alias("_s"))
        .sort("_s", "run", nulls_last=False)
    )
    return [r for r in o["run"].to_list() if r is not None]


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
    named = named_runs(runs)
    src = json.dumps(named) if named else str(find_runs(runs_dir))
    mode = "label" if named or run_by != "job" else "job"
    loaded = _load(named or src, mode)
    notes = []
    if named:
        notes.append("run labels as given (runs parameter)")
        labels = list(named)
        if len(labels) >= 2:
            baseline = baseline or (labels[0] if candidate is None else None)
            candidate = candidate or labels[-1]
    elif run_by == "auto":
        t = loaded.trials
        named_jobs = [
            k
            for k in (candidate, baseline)
            if k and _resolve(t, k) is None and t.filter(pl.col("job_name") == k).height
        ]
        if named_jobs or (t["run"].n_unique() < 2 <= loaded.jobs.height):
            loaded, mode = _load(src, "job"), "job"
            notes.append(
                "one run per job folder (the run labels did not separate the jobs)"
                if not named_jobs
                else "one run per job folder (a job was named)"
            )
    runs_ = loaded
    _ = runs_.steps  # parse trajectories once, for the runs finally used (fills n_turns, ...)
    if redact:
        from evalkit.load.redact import env_secret_values

        runs_ = runs_.redacted(env_secret_values())
    trials = runs_.trials
    order = run_order(trials)

    def resolve(key: str | None, what: str) -> str | None:
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

    cand = resolve(candidate, "candidate")
    base = resolve(baseline, "baseline")
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
    return Context(
        runs=runs_,
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
