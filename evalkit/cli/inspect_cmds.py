"""``evalkit list``, ``show`` and ``task``: look at job folders."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import typer
from rich.console import Console

import evalkit
from evalkit.cli.app import app
from evalkit.cli.output import (
    FORMATS,
    RunsOpt,
    check_choice,
    clean,
    console,
    emit,
    err_console,
    fmt_num,
    load_runs,
    safe,
)
from evalkit.compare.select import closest
from evalkit.load.outcomes import OUTCOMES
from evalkit.load.shared.redact import env_secret_values, redact_frame
from evalkit.tables import jobs_table, task_detail, trials_table
from evalkit.tables.trials import TaskDetail, exact_job, find_job

FormatOpt = typer.Option(
    "table",
    "--format",
    "-f",
    help="table | json | csv | csv-raw (csv neutralises cells a spreadsheet would run as formulas)",
)

OUTCOME_STYLE = {
    "pass": "green",
    "partial": "yellow",
    "fail": "red",
    "timeout": "magenta",
    "error": "bold red",
    "incomplete": "dim",
}


def _check_format(fmt: str) -> None:
    if fmt not in FORMATS:
        raise typer.BadParameter(f"--format must be one of {', '.join(FORMATS)}")


def _report_errors(runs: evalkit.Runs) -> None:
    n = runs.load_errors.height
    if n:
        console().print(
            f"[yellow]{n} load error(s); see runs.load_errors (e.g. {safe(runs.load_errors['path'][0])}: {safe(runs.load_errors['message'][0])})[/yellow]"
        )


@app.command("list")
def list_cmd(
    path: Path | None = typer.Argument(None, help="Runs folder (or a job folder); as --runs."),
    runs_dir: Path | None = RunsOpt,
    fmt: str = FormatOpt,
) -> None:
    """One row per job: state, model, outcome counts, pass rate, compute, tokens, cost."""
    _check_format(fmt)
    runs = load_runs(path if path is not None else runs_dir)
    tab = jobs_table(runs.jobs, runs.trials)
    if fmt != "table":
        emit(tab, fmt)
        return
    show = tab.select(
        "job_name",
        "state",
        pl.col("model_name").str.split("/").list.last().alias("model"),
        pl.col("n_trials").alias("trials"),
        pl.col("tasks"),
        pl.col("attempts_max").alias("k"),
        pl.col("pass"),
        pl.col("partial").alias("part"),
        pl.col("fail"),
        pl.col("timeout").alias("tout"),
        pl.col("error").alias("err"),
        pl.col("incomplete").alias("inc"),
        pl.col("pass_rate").alias("pass%"),
        pl.col("mean_reward").alias("reward"),
        pl.col("compute_s").alias("compute"),
        pl.col("n_input_tokens").alias("tok_in"),
        pl.col("n_output_tokens").alias("tok_out"),
        pl.col("cost_usd").alias("cost"),
    )
    emit(
        show,
        fmt,
        title=f"{runs.jobs.height} jobs, {runs.trials.height} trials in {runs.options['paths']}",
        kinds={"pass%": "pct", "compute": "dur", "tok_in": "tok", "tok_out": "tok", "cost": "cost"},
        fold=("job_name", "model"),
    )
    _report_errors(runs)


def _resolve_job(runs: evalkit.Runs, job: str) -> pl.DataFrame:
    """The job named (or id, folder, unique prefix: said on stderr); else exit 2 with the
    candidates or the closest names."""
    hit = find_job(runs.jobs, job)
    names = runs.jobs["job_name"].drop_nulls().to_list()
    if hit.height == 0:
        near = closest(job, names)
        hint = "closest" if near else "jobs"
        err_console().print(
            f"[red]No job matching {safe(repr(job))}.[/red] {hint}: "
            f"{safe(', '.join(near or names[:10]))}"
        )
        raise typer.Exit(2)
    if hit.height > 1:
        err_console().print(
            f"[red]{safe(repr(job))} matches {hit.height} jobs:[/red] {safe(', '.join(hit['job_name'].to_list()))}"
        )
        raise typer.Exit(2)
    if exact_job(runs.jobs, job).height == 0:  # found by a name prefix: say which job
        name = hit["job_name"][0]
        err_console().print(f"job: {safe(repr(job))} -> {safe(name)} (the only job it starts)")
    return hit


@app.command("show")
def show_cmd(
    job: str = typer.Argument(..., help="Job name (or unique prefix, id, or folder)."),
    runs_dir: Path | None = RunsOpt,
    status: str | None = typer.Option(
        None, "--status", "-s", help=f"Only trials with this outcome: {', '.join(OUTCOMES)}."
    ),
    fmt: str = FormatOpt,
) -> None:
    """A job's header (counts, pass rate, tokens, cost) and one row per trial."""
    _check_format(fmt)
    check_choice("--status", status, OUTCOMES)
    runs = load_runs(runs_dir)
    hit = _resolve_job(runs, job)
    ids = hit["job_id"].to_list()
    tab = trials_table(runs.trials, ids, status)
    if fmt != "table":
        emit(tab, fmt)
        return
    summ = jobs_table(hit, runs.trials.filter(pl.col("job_id").is_in(ids))).row(0, named=True)
    c = console()
    c.print(f"[bold]{safe(summ['job_name'])}[/bold]  ({summ['state']})")
    c.print(
        f"  run: {safe(summ['run'])}   agent: {safe(summ['agent_name'])}   model: {safe(summ['model_name'])}"
    )
    c.print(
        f"  started: {fmt_num(summ['started_at'])}   compute: {fmt_num(summ['compute_s'], 'dur')}   trials: {summ['n_trials']} (declared {fmt_num(summ['n_declared'])}), tasks: {summ['tasks']}, attempts/task up to {fmt_num(summ['attempts_max'])}"
    )
    counts = ", ".join(
        f"{o} {summ[o]}"
        for o in ("pass", "partial", "fail", "timeout", "error", "no-reward", "incomplete")
        if summ[o]
    )
    c.print(
        f"  outcomes: {counts or '-'}   pass rate: {fmt_num(summ['pass_rate'], 'pct')}   mean reward: {fmt_num(summ['mean_reward'])}"
    )
    c.print(
        f"  tokens in/cache/out: {fmt_num(summ['n_input_tokens'], 'tok')} / {fmt_num(summ['n_cache_tokens'], 'tok')} / {fmt_num(summ['n_output_tokens'], 'tok')}   cost: {fmt_num(summ['cost_usd'], 'cost')} ({summ['cost_known']}/{summ['n_trials']} trials priced)"
    )
    if summ["error_kinds"]:
        c.print(f"  error kinds: {safe(summ['error_kinds'])}")
    emit(
        tab.drop("trial_name"),
        fmt,
        kinds={
            "duration_s": "dur",
            "n_input_tokens": "tok",
            "n_cache_tokens": "tok",
            "n_output_tokens": "tok",
            "cost_usd": "cost",
        },
        style=lambda r: OUTCOME_STYLE.get(r["outcome"]),
        fold=("task_name", "error"),
    )


@app.command("task")
def task_cmd(
    job: str = typer.Argument(..., help="Job name (or unique prefix, id, or folder)."),
    task: str = typer.Argument(..., help="Task name (as in result.json; 'org/name' or 'name')."),
    runs_dir: Path | None = RunsOpt,
    tail: int = typer.Option(
        15, "--tail", "-n", help="Lines of verifier output / agent logs to show."
    ),
    fmt: str = FormatOpt,
) -> None:
    """Everything about one task's trials: rewards, tokens, errors, verifier and agent log tails."""
    _check_format(fmt)
    runs = load_runs(runs_dir)
    hit = _resolve_job(runs, job)
    det = task_detail(runs.trials, hit["job_id"].to_list(), hit["job_name"][0], task, tail)
    if det.trials.height == 0:
        _no_such_task(runs, hit, task)
    if fmt != "table":  # every text field redacted (exception messages, ...); paths kept
        rows = det.trials.drop("trial_dir", "config_json", strict=False)
        text = [c for c in rows.columns if not c.endswith(("_id", "_dir", "_path", "_uri"))]
        emit(redact_frame(rows, text, env_secret_values()), fmt)
        return
    c = console()
    c.print(
        f"[bold]{safe(det.task_name)}[/bold] in {safe(det.job_name)}: {det.trials.height} attempt(s)"
    )
    for r in det.trials.iter_rows(named=True):
        _print_attempt(c, r, det, tail)


def _no_such_task(runs: evalkit.Runs, hit: pl.DataFrame, task: str) -> None:
    """Exit 2 saying the job has no trials of ``task``, with the closest task names."""
    ids = hit["job_id"].to_list()
    names = sorted(
        runs.trials.filter(pl.col("job_id").is_in(ids))["task_name"].drop_nulls().unique()
    )
    near = closest(task, names) or closest(task.rsplit("/", 1)[-1], names)
    hint = f"closest: {', '.join(near)}" if near else f"tasks: {', '.join(names[:10])}"
    err_console().print(
        f"[red]No trials of task {safe(repr(task))} in {safe(hit['job_name'][0])}.[/red] "
        f"{safe(hint)}"
    )
    raise typer.Exit(2)


def _print_attempt(c: Console, r: dict[str, Any], det: TaskDetail, tail: int) -> None:
    """One attempt of a task: outcome, reward, times, tokens, evidence, then its error,
    verifier output and agent log tails."""
    name = r["trial_name"]
    rewards = ", ".join(f"{x['name']}={x['value']:g}" for x in (r["rewards"] or [])) or "-"
    rewards = safe(rewards)
    c.rule(f"attempt {r['attempt']}: {safe(name)}", style=OUTCOME_STYLE.get(r["outcome"], ""))
    c.print(
        f"  outcome: [{OUTCOME_STYLE.get(r['outcome'], '')}]{r['outcome']}[/]  error kind: {r['error_kind']}  reward: {fmt_num(r['reward'])}  rewards: {rewards}"
    )
    c.print(
        f"  duration: {fmt_num(r['duration_s'], 'dur')} (agent {fmt_num(r['agent_s'], 'dur')}, verifier {fmt_num(r['verifier_s'], 'dur')})  tokens in/cache/out: {fmt_num(r['n_input_tokens'])} / {fmt_num(r['n_cache_tokens'])} / {fmt_num(r['n_output_tokens'])}  cost: {fmt_num(r['cost_usd'], 'cost')}"
    )
    c.print(
        f"  evidence: trajectory={r['has_trajectory']} reward={r['has_reward_file']} verifier={r['has_verifier_output']} artifacts={r['has_artifacts_manifest']}"
    )
    if name in det.errors:
        c.print("  [red]error:[/red]")
        c.print(
            "    " + clean(det.errors[name]).replace("\n", "\n    "),
            markup=False,
            highlight=False,
        )
    if name in det.verifier_tail:
        c.print(f"  verifier/test-stdout.txt (last {tail} lines):")
        c.print(
            "    " + clean(det.verifier_tail[name]).replace("\n", "\n    "),
            markup=False,
            highlight=False,
        )
    for fn, size, text in det.agent_logs.get(name, []):
        c.print(f"  agent/{safe(fn)} ({size:,} bytes), last {tail} lines:")
        c.print("    " + clean(text).replace("\n", "\n    "), markup=False, highlight=False)
