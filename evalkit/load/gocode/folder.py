"""Recognise and read a go-code rollout folder (rollouts-gates-qc.md §1.1).

A rollout folder is ``<dir>/<YYYY-MM-DD>/<run_id>.jsonl`` (the recorder's layout) or a
folder that directly holds rollout ``.jsonl`` files; a single rollout file is accepted too.
A file counts as a rollout when its first non-blank line is an envelope with ``seq`` and a
string ``type``; ``audit.jsonl`` (the hash-chained audit trail) never counts. A folder with
a Harbor ``config.json`` / ``result.json`` is never a rollout folder.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import polars as pl

from evalkit.load._columns import conform, empty
from evalkit.load.errors import LoadError, path_text
from evalkit.load.findings.columns import COLUMNS as FINDING_COLUMNS
from evalkit.load.gocode.convert import Converted, convert
from evalkit.load.gocode.events import is_date_folder, looks_like_rollout_file, read_rollout_file
from evalkit.load.gocode.results import join_results, outcome_exprs, read_results_jsonl
from evalkit.load.jobs.columns import COLUMNS as JOB_COLUMNS
from evalkit.load.shared.cache import path_key
from evalkit.load.shared.io import read_head
from evalkit.load.steps.atif import as_columns
from evalkit.load.steps.columns import CALL_FIELDS, STEP_FIELDS
from evalkit.load.steps.derive import calls_frame, parse_timestamps, steps_frame
from evalkit.load.trials.columns import COLUMNS as TRIAL_COLUMNS

#: dtypes of the rollout-only trial columns (kept after the declared trial columns).
EXTRA_TRIAL_SCHEMA: dict[str, pl.DataType] = {
    "run_status": pl.String, "failure_reason": pl.String, "_started": pl.String, "_finished": pl.String,
    "n_retried_tool_calls": pl.Int64, "n_llm_retries": pl.Int64, "recorder_drops": pl.Int64,
    "previous_run_id": pl.String, "rollout_date": pl.String, "harness_steps": pl.Int64,
    "n_events": pl.Int64, "n_malformed_lines": pl.Int64,
}  # fmt: skip


@dataclass
class RolloutFrames:
    """Frames of one rollout folder (same columns as the Harbor frames)."""

    jobs: pl.DataFrame
    trials: pl.DataFrame
    steps: pl.DataFrame
    tool_calls: pl.DataFrame
    findings: pl.DataFrame
    errors: list[LoadError] = field(default_factory=list)
    #: trial_id + rollout-only columns (run_status, failure_reason, n_retried_tool_calls,
    #: n_llm_retries, recorder_drops, previous_run_id, rollout_date, harness_steps, n_events,
    #: n_malformed_lines, is_resolved); ``trials`` itself has exactly the declared columns
    run_details: pl.DataFrame | None = None


def _jsonl(d: str, errors: list[LoadError] | None = None) -> list[str]:
    try:
        names = sorted(os.listdir(d))
    except OSError as e:
        if errors is not None:
            errors.append(
                LoadError(
                    d, "rollout", "unreadable", f"cannot list folder: {type(e).__name__}: {e}"
                )
            )
        return []
    return [os.path.join(d, n) for n in names if n.endswith(".jsonl") and n != "audit.jsonl"]


def _date_dirs(d: str, errors: list[LoadError] | None = None) -> list[str]:
    """The ``YYYY-MM-DD`` folders of a rollout folder. With ``errors``: another folder
    holding rollout files (a misnamed date folder) is reported, not skipped silently."""
    try:
        subs = [(n, os.path.join(d, n)) for n in sorted(os.listdir(d))]
        subs = [(n, p) for n, p in subs if os.path.isdir(p)]
    except OSError as e:
        if errors is not None:
            errors.append(
                LoadError(
                    d, "rollout", "unreadable", f"cannot list folder: {type(e).__name__}: {e}"
                )
            )
        return []
    for n, p in subs:
        if errors is not None and not is_date_folder(n) and _holds_rollouts(p):
            errors.append(
                LoadError(
                    path_text(p),
                    "rollout",
                    "unrecognised_folder",
                    "a folder of rollout files whose name is not a date (YYYY-MM-DD); not loaded",
                )
            )
    return [p for n, p in subs if is_date_folder(n)]


def _holds_rollouts(d: str) -> bool:
    return any(looks_like_rollout_file(f) for f in _jsonl(d))


def is_rollout_folder(path: str | os.PathLike[str]) -> bool:
    """True for a go-code rollout folder (or a single rollout .jsonl file); see the module doc."""
    p = os.fspath(path)
    if os.path.isfile(p):
        return looks_like_rollout_file(p)
    if not os.path.isdir(p):
        return False
    if os.path.exists(os.path.join(p, "config.json")) or os.path.exists(
        os.path.join(p, "result.json")
    ):
        return False
    return any(_holds_rollouts(d) for d in [*_date_dirs(p), p])


def rollout_files(path: str, errors: list[LoadError] | None = None) -> list[str]:
    """Rollout files of a folder: direct ``*.jsonl`` and ``<YYYY-MM-DD>/*.jsonl`` that sniff
    as rollouts (results.jsonl and audit.jsonl are not). With ``errors``: folders that cannot
    be listed and ``.jsonl`` files that cannot be read (permission, not a regular file) are
    reported there instead of being skipped silently."""
    if os.path.isfile(path):
        return [path]
    files = []
    for d in [*_date_dirs(path, errors), path]:
        for f in _jsonl(d, errors):
            if looks_like_rollout_file(f):
                files.append(f)
            elif (
                errors is not None
                and os.path.basename(f) != "results.jsonl"
                and read_head(f, 1) is None
            ):
                errors.append(
                    LoadError(
                        f,
                        "rollout",
                        "unreadable",
                        "cannot read this .jsonl file (permission, or not a regular file)",
                    )
                )
    return files


def _empty_trials() -> pl.DataFrame:
    return empty(TRIAL_COLUMNS)


def read_rollouts(
    path: str | os.PathLike[str],
    *,
    progress: bool = True,
    results: str | pl.DataFrame | None = None,
) -> RolloutFrames:
    """Read every rollout of a folder (or one rollout file) into frames.

    trials: one row per run with exactly the declared trial columns (trial_id = run id,
    source_format 'go-code', run / attempt left null); ``run_details`` has the rollout-only
    columns (run_status completed/failed/cancelled/unknown, retries, drops, ...).
    ``results``: a results.jsonl path or frame joined by run_id; by default
    ``<folder>/results.jsonl`` is used when present. Never raises on file content.
    """
    p = os.path.realpath(os.fspath(path))
    job_dir = p if os.path.isdir(p) else os.path.dirname(p)
    job_id, job_name = path_key(job_dir), os.path.basename(job_dir)
    errors: list[LoadError] = []
    files = rollout_files(p, errors)
    if os.path.isdir(p) and not files:
        errors.append(
            LoadError(p, "rollout", "no_rollouts", "no rollout .jsonl files found", job_id)
        )
    convs = _convert_files(files, job_id, job_name, errors, progress)
    trials = _with_results(_trials(convs), results, job_dir, errors)
    details = _run_details(trials)
    trials = conform(trials, TRIAL_COLUMNS, extra=False)
    steps, calls = _steps(convs), _calls(convs)
    rows = [f for c in convs for f in c.findings]
    findings = conform(pl.DataFrame(rows), FINDING_COLUMNS) if rows else empty(FINDING_COLUMNS)
    jobs = _jobs(trials, job_id, job_name, job_dir, len(files))
    return RolloutFrames(jobs, trials, steps, calls, findings, errors, details)


def _convert_files(
    files: list[str], job_id: str, job_name: str, errors: list[LoadError], progress: bool
) -> list[Converted]:
    """Each rollout file read and converted, in file order; empty files and a second file
    of the same run id are load errors (and skipped)."""
    it = files
    if progress and len(files) > 1:
        from tqdm.auto import tqdm

        it = tqdm(files, desc="rollouts", unit="file", leave=False)
    convs: list[Converted] = []
    seen: dict[str, str] = {}
    for f in it:
        rf = read_rollout_file(f, job_id=job_id)
        errors.extend(rf.errors)
        if not rf.events:
            if not rf.errors:
                errors.append(LoadError(f, "rollout", "empty", "no events", job_id))
            continue
        c = convert(rf, job_id=job_id, job_name=job_name)
        errors.extend(c.errors)
        tid = c.trial["trial_id"]
        if tid in seen:
            errors.append(
                LoadError(
                    f,
                    "rollout",
                    "duplicate_run_id",
                    f"run id {tid} also in {seen[tid]}; skipped",
                    job_id,
                    tid,
                )
            )
            continue
        seen[tid] = f
        convs.append(c)
    return convs


def _with_results(
    trials: pl.DataFrame,
    results: str | pl.DataFrame | None,
    job_dir: str,
    errors: list[LoadError],
) -> pl.DataFrame:
    """Trials joined with the results (a given frame or path, else the folder's own
    results.jsonl when there is one)."""
    res_df = None
    if isinstance(results, pl.DataFrame):
        res_df = results
    elif results is not None or os.path.isfile(os.path.join(job_dir, "results.jsonl")):
        rpath = (
            os.fspath(results) if results is not None else os.path.join(job_dir, "results.jsonl")
        )
        res_df = read_results_jsonl(rpath, errors=errors)
    if res_df is not None and trials.height:
        trials = join_results(trials, res_df)
    return trials


def _run_details(trials: pl.DataFrame) -> pl.DataFrame:
    """trial_id and the rollout-only columns of the trials (hidden ``_`` columns left out)."""
    return trials.select(
        "trial_id",
        *[
            c
            for c in (*EXTRA_TRIAL_SCHEMA, "is_resolved")
            if c in trials.columns and not c.startswith("_")
        ],
    )


def _trials(convs: list[Converted]) -> pl.DataFrame:
    if not convs:
        return _empty_trials().with_columns(pl.lit(None, pl.String).alias("run_status"))
    decl = {c.name: c.dtype for c in TRIAL_COLUMNS}
    schema = {k: decl.get(k) or EXTRA_TRIAL_SCHEMA[k] for k in convs[0].trial}
    df = pl.DataFrame([c.trial for c in convs], schema=schema)
    df = df.with_columns(
        parse_timestamps("_started").alias("started_at"),
        parse_timestamps("_finished").alias("finished_at"),
        pl.lit(None, pl.Float64).alias("reward"),
        pl.lit(False).alias("naive_timestamps"),
    ).drop("_started", "_finished")
    return df.with_columns(
        ((pl.col("finished_at") - pl.col("started_at")).dt.total_microseconds() / 1e6).alias(
            "duration_s"
        ),
        *outcome_exprs(),
    )


def _steps(convs: list[Converted]) -> pl.DataFrame:
    rows = [r for c in convs for r in c.steps]
    return steps_frame(as_columns(rows, STEP_FIELDS))


def _calls(convs: list[Converted]) -> pl.DataFrame:
    rows = [r for c in convs for r in c.calls]
    return calls_frame(as_columns(rows, CALL_FIELDS))


def _jobs(
    trials: pl.DataFrame, job_id: str, job_name: str, job_dir: str, n_files: int
) -> pl.DataFrame:
    n = trials.height
    complete = n > 0 and bool(trials["result_present"].fill_null(False).all())
    models = sorted({m for m in trials["model_name"].to_list() if m}) if n else []
    row = {
        "job_id": job_id, "job_name": job_name, "job_dir": job_dir, "source_format": "go-code",
        "state": "complete" if complete else "unknown",
        "started_at": trials["started_at"].min() if n else None,
        "finished_at": trials["finished_at"].max() if complete else None,
        "n_trials_declared": None, "n_trials_found": n_files,
        "n_trials_with_result": int(trials["result_present"].fill_null(False).sum()) if n else 0,
        "agent_name": "go-code", "model_name": ", ".join(models) or None, "format": "go-code-rollout",
    }  # fmt: skip
    schema = {c.name: c.dtype for c in JOB_COLUMNS}
    df = pl.DataFrame({k: [v] for k, v in row.items()}, schema={k: schema[k] for k in row})
    return conform(df, JOB_COLUMNS)
