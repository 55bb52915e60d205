"""``evalkit run``: the command-line shell over :mod:`evalkit.launch` (typer parameters).

``evalkit/cli/run_cmd.py`` mounts :func:`run_command` as ``evalkit run``. Exit codes:
0 the job ran (whatever its trials' outcomes: read them with ``evalkit show``), 1 Harbor
failed to produce any result, 2 preflight problems (all listed), 130 interrupted.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from evalkit.launch.execute import HarborRunError
from evalkit.launch.followup import FollowUpError, followup_specs, read_plan
from evalkit.launch.plan import prepare
from evalkit.launch.preflight import PreflightError
from evalkit.launch.spec import RunSpec


def parse_kwargs(items: list[str] | None) -> dict[str, Any]:
    """``KEY=VALUE`` pairs; values parsed as JSON when they are JSON (``3``, ``true``)."""
    out: dict[str, Any] = {}
    for item in items or []:
        if "=" not in item:
            raise typer.BadParameter(f"expected KEY=VALUE, got {item!r}")
        key, raw = item.split("=", 1)
        try:
            out[key.strip()] = json.loads(raw)
        except ValueError:
            out[key.strip()] = raw
    return out


def run_command(
    agent: Annotated[
        str | None,
        typer.Option("--agent", "-a", help="Harbor agent name (oracle, nop, claude-code, ...)."),
    ] = None,
    agent_import_path: Annotated[
        str | None,
        typer.Option("--agent-import-path", help="Custom agent as module.path:ClassName."),
    ] = None,
    model: Annotated[
        str | None,
        typer.Option("--model", "-m", help="provider/model (not needed by oracle / nop)."),
    ] = None,
    dataset: Annotated[
        str | None, typer.Option("--dataset", "-d", help="Registry dataset name@version.")
    ] = None,
    path: Annotated[
        list[Path] | None,
        typer.Option("--path", "-p", help="Local task or dataset folder (repeatable)."),
    ] = None,
    task: Annotated[
        list[str] | None,
        typer.Option("--task", "-t", help="Task name or glob to include (repeatable)."),
    ] = None,
    exclude_task: Annotated[
        list[str] | None, typer.Option("--exclude-task", "-x", help="Task name or glob to exclude.")
    ] = None,
    attempts: Annotated[int, typer.Option("--attempts", "-k", help="Attempts per task.")] = 1,
    concurrent: Annotated[int, typer.Option("--concurrent", "-n", help="Concurrent trials.")] = 4,
    env: Annotated[
        str,
        typer.Option(
            "--env", "-e", help="Environment type (docker, daytona, modal, ...) or module:Class."
        ),
    ] = "docker",
    job_name: Annotated[
        str | None,
        typer.Option(
            "--job-name",
            help="Job folder name (default: derived from the settings, so a repeat resumes).",
        ),
    ] = None,
    runs: Annotated[
        Path, typer.Option("--runs", help="Runs root; the job folder goes inside it.")
    ] = Path("runs"),
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run",
            help="Print the problems, Harbor config, manifest and command; run nothing "
            "(exit 2 when the launch would be refused).",
        ),
    ] = False,
    timeout_multiplier: Annotated[float, typer.Option("--timeout-multiplier")] = 1.0,
    agent_timeout_multiplier: Annotated[
        float | None, typer.Option("--agent-timeout-multiplier")
    ] = None,
    verifier_timeout_multiplier: Annotated[
        float | None, typer.Option("--verifier-timeout-multiplier")
    ] = None,
    agent_setup_timeout_multiplier: Annotated[
        float | None, typer.Option("--agent-setup-timeout-multiplier")
    ] = None,
    environment_build_timeout_multiplier: Annotated[
        float | None, typer.Option("--environment-build-timeout-multiplier")
    ] = None,
    max_retries: Annotated[int, typer.Option("--max-retries", "-r")] = 0,
    retry_include: Annotated[
        list[str] | None,
        typer.Option("--retry-include", help="Exception type to retry (repeatable)."),
    ] = None,
    retry_exclude: Annotated[
        list[str] | None,
        typer.Option("--retry-exclude", help="Exception type never retried (repeatable)."),
    ] = None,
    agent_kwarg: Annotated[
        list[str] | None,
        typer.Option("--ak", "--agent-kwarg", help="Agent setting KEY=VALUE (repeatable)."),
    ] = None,
    pass_env: Annotated[
        list[str] | None,
        typer.Option(
            "--pass-env",
            help="NAME of an environment variable to pass to the agent (never a value).",
        ),
    ] = None,
    agent_pythonpath: Annotated[
        list[Path] | None,
        typer.Option("--agent-pythonpath", help="Folder added to PYTHONPATH of Harbor's process."),
    ] = None,
    harbor: Annotated[
        str | None,
        typer.Option("--harbor", help="Harbor executable (default: $EVALKIT_HARBOR, then PATH)."),
    ] = None,
    progress: Annotated[bool, typer.Option("--progress/--no-progress")] = True,
    plan_file: Annotated[
        Path | None,
        typer.Option(
            "--plan",
            help="summary.json / compare.json of a Hold: run exactly its plan's extra "
            "candidate attempts (the candidate's settings; --runs, --dry-run and --harbor apply).",
        ),
    ] = None,
) -> None:
    """Run a Harbor job (or resume it) with a frozen manifest, then load its results."""
    if plan_file is not None:
        try:
            specs = followup_specs(read_plan(plan_file), runs)
        except FollowUpError as exc:
            typer.echo(str(exc), err=True)
            raise typer.Exit(2) from None
        for one in specs:
            _launch(one, harbor, dry_run, progress)
        return
    spec = RunSpec(
        agent=agent,
        agent_import_path=agent_import_path,
        model=model,
        dataset=dataset,
        paths=path or (),
        tasks=task or (),
        exclude_tasks=exclude_task or (),
        attempts=attempts,
        concurrency=concurrent,
        env=env,
        timeout_multiplier=timeout_multiplier,
        agent_timeout_multiplier=agent_timeout_multiplier,
        verifier_timeout_multiplier=verifier_timeout_multiplier,
        agent_setup_timeout_multiplier=agent_setup_timeout_multiplier,
        environment_build_timeout_multiplier=environment_build_timeout_multiplier,
        max_retries=max_retries,
        retry_include=retry_include,
        retry_exclude=retry_exclude,
        agent_kwargs=parse_kwargs(agent_kwarg),
        pass_env=pass_env or (),
        job_name=job_name,
        runs_root=runs,
        agent_pythonpath=agent_pythonpath or (),
    )
    _launch(spec, harbor, dry_run, progress)


def _launch(spec: RunSpec, harbor: str | None, dry_run: bool, progress: bool) -> None:
    """Dry-run (print the plan) or run one spec, with the command's exit codes."""
    if dry_run:  # the same checks and scrubbing as a launch; exit 2 where it would refuse
        plan = prepare(spec, harbor=harbor)
        typer.echo(plan.render())
        if plan.problems:
            raise typer.Exit(2)
        return
    from evalkit.launch.runner import run

    try:
        result = run(spec, harbor=harbor, progress=progress)
    except PreflightError as exc:
        typer.echo(str(exc), err=True)
        raise typer.Exit(2) from None
    except HarborRunError as exc:
        typer.echo(str(exc), err=True)
        raise typer.Exit(1) from None
    except KeyboardInterrupt:
        raise typer.Exit(130) from None
    info = result.options.get("launch", {})
    total = info.get("finished", 0)
    rate = f"{info.get('passed', 0) / total:.0%}" if total else "-"
    typer.echo(
        f"{info.get('job_dir')}: {info.get('action')} -> {total} trials with a result "
        f"({info.get('passed', 0)} passed, {info.get('failed', 0)} failed, {info.get('timeouts', 0)} timeouts, "
        f"{info.get('errored', 0)} errors; "
        f"pass rate {rate}). Harbor exit code {info.get('harbor_returncode')} (outcomes come from result.json)."
    )
    sys.stdout.flush()
