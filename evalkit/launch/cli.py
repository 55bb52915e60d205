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


# -- the options of ``evalkit run`` ------------------------------------------------------
AgentOpt = Annotated[
    str | None,
    typer.Option("--agent", "-a", help="Harbor agent name (oracle, nop, claude-code, ...)."),
]
AgentImportPathOpt = Annotated[
    str | None,
    typer.Option("--agent-import-path", help="Custom agent as module.path:ClassName."),
]
ModelOpt = Annotated[
    str | None,
    typer.Option("--model", "-m", help="provider/model (not needed by oracle / nop)."),
]
DatasetOpt = Annotated[
    str | None, typer.Option("--dataset", "-d", help="Registry dataset name@version.")
]
TaskPathsOpt = Annotated[
    list[Path] | None,
    typer.Option("--path", "-p", help="Local task or dataset folder (repeatable)."),
]
TasksOpt = Annotated[
    list[str] | None,
    typer.Option("--task", "-t", help="Task name or glob to include (repeatable)."),
]
ExcludeTasksOpt = Annotated[
    list[str] | None, typer.Option("--exclude-task", "-x", help="Task name or glob to exclude.")
]
AttemptsOpt = Annotated[int, typer.Option("--attempts", "-k", help="Attempts per task.")]
ConcurrentOpt = Annotated[int, typer.Option("--concurrent", "-n", help="Concurrent trials.")]
EnvOpt = Annotated[
    str,
    typer.Option(
        "--env", "-e", help="Environment type (docker, daytona, modal, ...) or module:Class."
    ),
]
JobNameOpt = Annotated[
    str | None,
    typer.Option(
        "--job-name",
        help="Job folder name (default: derived from the settings, so a repeat resumes).",
    ),
]
RunsRootOpt = Annotated[
    Path, typer.Option("--runs", help="Runs root; the job folder goes inside it.")
]
DryRunOpt = Annotated[
    bool,
    typer.Option(
        "--dry-run",
        help="Print the problems, Harbor config, manifest and command; run nothing "
        "(exit 2 when the launch would be refused).",
    ),
]
TimeoutMultiplierOpt = Annotated[float, typer.Option("--timeout-multiplier")]
AgentTimeoutMultiplierOpt = Annotated[float | None, typer.Option("--agent-timeout-multiplier")]
VerifierTimeoutMultiplierOpt = Annotated[
    float | None, typer.Option("--verifier-timeout-multiplier")
]
AgentSetupTimeoutMultiplierOpt = Annotated[
    float | None, typer.Option("--agent-setup-timeout-multiplier")
]
EnvironmentBuildTimeoutMultiplierOpt = Annotated[
    float | None, typer.Option("--environment-build-timeout-multiplier")
]
MaxRetriesOpt = Annotated[int, typer.Option("--max-retries", "-r")]
RetryIncludeOpt = Annotated[
    list[str] | None,
    typer.Option("--retry-include", help="Exception type to retry (repeatable)."),
]
RetryExcludeOpt = Annotated[
    list[str] | None,
    typer.Option("--retry-exclude", help="Exception type never retried (repeatable)."),
]
AgentKwargsOpt = Annotated[
    list[str] | None,
    typer.Option("--ak", "--agent-kwarg", help="Agent setting KEY=VALUE (repeatable)."),
]
PassEnvOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--pass-env",
        help="NAME of an environment variable to pass to the agent (never a value).",
    ),
]
AgentPythonpathOpt = Annotated[
    list[Path] | None,
    typer.Option("--agent-pythonpath", help="Folder added to PYTHONPATH of Harbor's process."),
]
HarborOpt = Annotated[
    str | None,
    typer.Option("--harbor", help="Harbor executable (default: $EVALKIT_HARBOR, then PATH)."),
]
ProgressOpt = Annotated[bool, typer.Option("--progress/--no-progress")]
PlanFileOpt = Annotated[
    Path | None,
    typer.Option(
        "--plan",
        help="summary.json / compare.json of a Hold: run exactly its plan's extra "
        "candidate attempts (the candidate's settings; --runs, --dry-run and --harbor apply).",
    ),
]


def run_command(
    agent: AgentOpt = None,
    agent_import_path: AgentImportPathOpt = None,
    model: ModelOpt = None,
    dataset: DatasetOpt = None,
    path: TaskPathsOpt = None,
    task: TasksOpt = None,
    exclude_task: ExcludeTasksOpt = None,
    attempts: AttemptsOpt = 1,
    concurrent: ConcurrentOpt = 4,
    env: EnvOpt = "docker",
    job_name: JobNameOpt = None,
    runs: RunsRootOpt = Path("runs"),
    dry_run: DryRunOpt = False,
    timeout_multiplier: TimeoutMultiplierOpt = 1.0,
    agent_timeout_multiplier: AgentTimeoutMultiplierOpt = None,
    verifier_timeout_multiplier: VerifierTimeoutMultiplierOpt = None,
    agent_setup_timeout_multiplier: AgentSetupTimeoutMultiplierOpt = None,
    environment_build_timeout_multiplier: EnvironmentBuildTimeoutMultiplierOpt = None,
    max_retries: MaxRetriesOpt = 0,
    retry_include: RetryIncludeOpt = None,
    retry_exclude: RetryExcludeOpt = None,
    agent_kwarg: AgentKwargsOpt = None,
    pass_env: PassEnvOpt = None,
    agent_pythonpath: AgentPythonpathOpt = None,
    harbor: HarborOpt = None,
    progress: ProgressOpt = True,
    plan_file: PlanFileOpt = None,
) -> None:
    """Run a Harbor job (or resume it) with a frozen manifest, then load its results."""
    if plan_file is not None:
        _launch_plan(plan_file, runs, harbor, dry_run, progress)
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


def _launch_plan(
    plan_file: Path, runs: Path, harbor: str | None, dry_run: bool, progress: bool
) -> None:
    """``--plan``: launch each follow-up spec of a Hold's plan (exit 2 when it is unusable)."""
    try:
        specs = followup_specs(read_plan(plan_file), runs)
    except FollowUpError as exc:
        typer.echo(str(exc), err=True)
        raise typer.Exit(2) from None
    for one in specs:
        _launch(one, harbor, dry_run, progress)


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
