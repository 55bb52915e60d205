"""``evalkit loop``: launch the candidate, wait, report against the baseline, exit with the
gate's code (a thin shell over :func:`evalkit.launch.loop.nightly_loop`).

With ``--notebook notebooks/nightly_loop.ipynb`` the same settings run the loop notebook
with papermill instead (the executed copy lands in --out) and the command exits with the
gate's code read from the summary.json it wrote (a notebook itself cannot exit with it).

Exit codes: 0 Ship it, 1 Hold (also when nothing could be compared), 2 Don't ship,
3 the loop could not launch or report (problems listed), 130 interrupted (rerun resumes).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from evalkit.cli.app import app
from evalkit.cli.report_cmd import parse_params
from evalkit.launch.cli import parse_kwargs

if TYPE_CHECKING:
    from evalkit.launch import RunSpec

COULD_NOT_RUN = 3


@app.command("loop", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def loop_cmd(
    ctx: typer.Context,
    baseline: Annotated[
        list[str],
        typer.Option("--baseline", "-b", help="Baseline job folder or job name (repeatable)."),
    ],
    agent: Annotated[str | None, typer.Option("--agent", "-a")] = None,
    agent_import_path: Annotated[str | None, typer.Option("--agent-import-path")] = None,
    model: Annotated[str | None, typer.Option("--model", "-m")] = None,
    dataset: Annotated[str | None, typer.Option("--dataset", "-d")] = None,
    path: Annotated[list[Path] | None, typer.Option("--path")] = None,
    task: Annotated[list[str] | None, typer.Option("--task", "-t")] = None,
    attempts: Annotated[int, typer.Option("--attempts", "-k")] = 1,
    concurrent: Annotated[int, typer.Option("--concurrent", "-n")] = 4,
    env: Annotated[str, typer.Option("--env", "-e")] = "docker",
    job_name: Annotated[str | None, typer.Option("--job-name")] = None,
    runs: Annotated[Path, typer.Option("--runs")] = Path("runs"),
    out: Annotated[Path, typer.Option("--out", "-o")] = Path("reports"),
    agent_kwarg: Annotated[list[str] | None, typer.Option("--ak", "--agent-kwarg")] = None,
    pass_env: Annotated[list[str] | None, typer.Option("--pass-env")] = None,
    harbor: Annotated[str | None, typer.Option("--harbor")] = None,
    follow_plan: Annotated[
        bool, typer.Option("--follow-plan/--no-follow-plan", help="On a Hold, run the plan.")
    ] = False,
    progress: Annotated[bool | None, typer.Option("--progress/--no-progress")] = None,
    notebook: Annotated[
        Path | None,
        typer.Option("--notebook", help="Run this loop notebook (papermill) with the settings."),
    ] = None,
) -> None:
    """Launch (or resume) the candidate, report it against the baseline, exit with the gate.

    Nightly report parameters: -p NAME VALUE (repeatable), e.g. -p gate_alpha 0.1.
    """
    from evalkit.launch import RunSpec

    spec = RunSpec(
        agent=agent, agent_import_path=agent_import_path, model=model, dataset=dataset,
        paths=path or (), tasks=task or (), attempts=attempts, concurrency=concurrent,
        env=env, agent_kwargs=parse_kwargs(agent_kwarg), pass_env=pass_env or (),
        job_name=job_name, runs_root=runs,
    )  # fmt: skip
    report_params = dict(parse_params(list(ctx.args)))
    if notebook is not None:
        _run_notebook(notebook, spec, list(baseline), out, follow_plan, harbor, report_params)
    _run_loop(spec, list(baseline), out, follow_plan, harbor, progress, report_params)


def _run_loop(
    spec: RunSpec,
    baseline: list[str],
    out: Path,
    follow_plan: bool,
    harbor: str | None,
    progress: bool | None,
    report_params: dict[str, object],
) -> None:
    """The loop itself: prints the verdict, the report and a Hold's plan; exits with the
    gate's code."""
    from evalkit.launch import HarborRunError, PreflightError
    from evalkit.launch.followup import FollowUpError
    from evalkit.launch.loop import nightly_loop
    from evalkit.report import ReportError

    try:
        res = nightly_loop(
            spec, baseline, out=out, follow_plan=follow_plan, harbor=harbor,
            progress=progress, report_params=report_params,
        )  # fmt: skip
    except (PreflightError, HarborRunError, FollowUpError, ReportError, ValueError) as exc:
        typer.echo(str(exc), err=True)
        raise typer.Exit(COULD_NOT_RUN) from None
    except KeyboardInterrupt:
        raise typer.Exit(130) from None
    except Exception as exc:  # a crash must not exit 1, which reads as Hold
        from evalkit.load.shared.redact import env_secret_values, redact_text

        msg = redact_text(f"the loop failed: {type(exc).__name__}: {exc}", env_secret_values())
        typer.echo(msg, err=True)
        raise typer.Exit(COULD_NOT_RUN) from None
    typer.echo(
        f"{res.verdict} -> exit {res.exit_code}; report {res.html}; summary {res.summary_path}"
    )
    plan = res.plan
    if plan and plan.get("tasks"):
        typer.echo(
            f"plan: {plan['extra_attempts']} more attempt(s) on {len(plan['tasks'])} task(s); "
            f"evalkit run --plan {res.summary_path} --runs {spec.runs_root}"
        )
    raise typer.Exit(res.exit_code)


def _run_notebook(
    notebook: Path,
    spec: RunSpec,
    baseline: list[str],
    out: Path,
    follow_plan: bool,
    harbor: str | None,
    report_params: dict[str, object],
) -> None:
    """``--notebook``: the loop notebook with these settings; exits with the gate's code."""
    from evalkit.launch.loop import notebook_loop
    from evalkit.report import ReportError

    s = spec
    params = {
        "runs_dir": str(s.runs_root), "baseline": baseline, "agent": s.agent,
        "agent_import_path": s.agent_import_path, "model": s.model, "dataset": s.dataset,
        "task_paths": [str(p) for p in s.paths], "tasks": list(s.tasks),
        "attempts": s.attempts, "concurrency": s.concurrency, "env": s.env,
        "agent_kwargs": dict(s.agent_kwargs), "pass_env": list(s.pass_env),
        "job_name": s.job_name, "follow_plan": follow_plan, "harbor": harbor,
        "report_params": report_params,
    }  # fmt: skip
    try:
        code, summary = notebook_loop(notebook, params, out, cwd=Path.cwd())
    except (ReportError, OSError, ValueError) as exc:
        typer.echo(f"the loop notebook failed: {exc}", err=True)
        raise typer.Exit(COULD_NOT_RUN) from None
    typer.echo(f"exit {code}; summary {summary}; notebook {out / notebook.name}")
    raise typer.Exit(code)
