"""Per-trial listing of one job (goose's ``show``) and everything about one task (``task``)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import polars as pl

from evalkit.load.shared.io import read_tail
from evalkit.load.shared.redact import env_secret_values, redact_frame, redact_text


def exact_job(jobs: pl.DataFrame, key: str) -> pl.DataFrame:
    """Rows of ``jobs`` whose name, evalkit job id, Harbor job id or folder is ``key``."""
    real = os.path.realpath(key) if os.path.exists(key) else None
    return jobs.filter(
        (pl.col("job_name") == key)
        | (pl.col("job_id") == key)
        | (pl.col("harbor_job_id") == key)
        | (pl.col("job_dir") == (real or ""))
    )


def find_job(jobs: pl.DataFrame, key: str) -> pl.DataFrame:
    """:func:`exact_job`, else the jobs whose name starts with ``key``."""
    exact = exact_job(jobs, key)
    if exact.height:
        return exact
    return jobs.filter(pl.col("job_name").str.starts_with(key))


def trials_table(
    trials: pl.DataFrame, job_ids: list[str], status: str | None = None
) -> pl.DataFrame:
    """One row per trial of the given jobs: task, attempt, outcome, reward, duration, tokens,
    turns, cost, error kind and the error text (first line, redacted, 50 characters)."""
    t = trials.filter(pl.col("job_id").is_in(job_ids))
    if status:
        t = t.filter(pl.col("outcome") == status)
    t = t.with_columns(_error_line().alias("_error"))
    t = redact_frame(t, ["_error"], env_secret_values())  # before the cut: no half keys
    return t.sort("task_name", "attempt").select(
        "trial_name",
        "task_name",
        "attempt",
        "outcome",
        "reward",
        "duration_s",
        "n_input_tokens",
        "n_cache_tokens",
        "n_output_tokens",
        pl.coalesce("n_turns", "n_steps").alias("turns"),
        "cost_usd",
        "error_kind",
        pl.col("_error").str.slice(0, 50).alias("error"),
    )


def _error_line() -> pl.Expr:
    """``<type>: <first line of the message>``, either part alone, null when neither."""
    text = pl.concat_str(
        [pl.col("exception_type"), pl.col("exception_message").str.split("\n").list.first()],
        separator=": ",
        ignore_nulls=True,
    )
    return pl.when(text != "").then(text)


@dataclass
class TaskDetail:
    """Everything about one task's trials in a job (text fields already redacted)."""

    job_name: str
    task_name: str
    trials: pl.DataFrame
    errors: dict[str, str] = field(default_factory=dict)  # trial_name -> first lines of the error
    verifier_tail: dict[str, str] = field(default_factory=dict)  # trial_name -> tail of test-stdout
    agent_logs: dict[str, list[tuple[str, int, str]]] = field(
        default_factory=dict
    )  # (file, bytes, tail)


def _tail(path: str, n: int, max_bytes: int = 256 * 1024) -> str | None:
    """The last ``n`` lines of a text file (None when it cannot be read)."""
    text, _ = read_tail(path, max_bytes)
    return None if text is None else "\n".join(text.splitlines()[-n:])


def task_detail(
    trials: pl.DataFrame, job_ids: list[str], job_name: str, task: str, tail: int = 15
) -> TaskDetail:
    """Tokens, rewards, errors (first 10 lines), verifier tail and agent log tails of a task."""
    t = trials.filter(
        pl.col("job_id").is_in(job_ids)
        & ((pl.col("task_name") == task) | (pl.col("task_name").str.ends_with("/" + task)))
    )
    t = t.sort("attempt")
    det = TaskDetail(job_name, task, t)
    secret = env_secret_values()
    for r in t.iter_rows(named=True):
        name = r["trial_name"]
        if r["exception_type"]:
            msg = "\n".join((r["exception_message"] or "").splitlines()[:10])
            det.errors[name] = redact_text(f"{r['exception_type']}: {msg}", secret)
        d = r["trial_dir"]
        if not d:
            continue
        vt = _tail(os.path.join(d, "verifier", "test-stdout.txt"), tail)
        if vt is not None:
            det.verifier_tail[name] = redact_text(vt, secret)
        logs = []
        adir = os.path.join(d, "agent")
        try:
            names = sorted(os.listdir(adir))
        except OSError:
            names = []
        for fn in names:
            p = os.path.join(adir, fn)
            if os.path.isfile(p) and fn.endswith((".txt", ".log", ".jsonl")):
                logs.append((fn, os.path.getsize(p), redact_text(_tail(p, tail) or "", secret)))
        det.agent_logs[name] = logs
    return det
