"""``evalkit compare A B`` and ``evalkit bundle A B TASK``: run-vs-run comparison."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import orjson
import polars as pl
import typer

import evalkit
from evalkit.cli.app import app
from evalkit.cli.output import (
    RunsOpt,
    check_choice,
    console,
    emit,
    err_console,
    fmt_num,
    load_runs,
    progress_wanted,
    safe,
)
from evalkit.compare import compare
from evalkit.compare.bundle import evidence_bundle
from evalkit.compare.core import CHECKSUMS, Comparison
from evalkit.compare.headline import MIN_SHARED_TASKS, disagreement, figure_rows
from evalkit.compare.select import resolve_name
from evalkit.stats.taskquality import flaky_task_names

ChecksumsOpt = typer.Option(
    "exclude",
    "--checksums",
    help="Tasks whose checksum differs: exclude them from the paired figures, or ignore "
    "the change and compare them.",
)

VERDICT_STYLE = {
    "Ship it": "bold green",
    "Hold: not enough evidence": "bold yellow",
    "Don't ship": "bold red",
}
DECISION_STYLE = {
    "promote": "bold green",
    "promote-with-monitoring": "green",
    "hold": "yellow",
    "needs-review": "yellow",
    "revert": "bold red",
    "blocked": "red",
}


def _load(runs_dir: Path | None, a: str, b: str) -> tuple[evalkit.Runs, str, str]:
    """Load the runs folder; when A and B are both folders, load them as two runs."""
    if os.path.isdir(a) and os.path.isdir(b) and os.path.realpath(a) != os.path.realpath(b):
        la = os.path.basename(os.path.normpath(a)) or "A"
        lb = os.path.basename(os.path.normpath(b)) or "B"
        if la == lb:
            la, lb = f"{la} (A)", f"{lb} (B)"
        return evalkit.load({la: a, lb: b}, progress=progress_wanted()), la, lb
    runs = load_runs(runs_dir)
    return runs, resolve_side(runs, a, "A"), resolve_side(runs, b, "B")


def resolve_side(runs: evalkit.Runs, key: str, side: str) -> str:
    """A run label or job name as given, a folder, or the one name ``key`` starts (said on
    stderr); otherwise exit 2 with the candidates or the closest names."""
    if os.path.exists(key):
        return key
    t = runs.trials
    if t.height and key in set(t["job_id"].drop_nulls().to_list()):
        return key
    try:
        name, how = resolve_name(t, key)
    except KeyError as e:
        err_console().print(f"[red]{side}: {safe(e.args[0])}[/red]")
        raise typer.Exit(2) from None
    if how == "prefix":
        err_console().print(f"{side}: {safe(repr(key))} -> {safe(name)} (the only name it starts)")
    return name


def _num(v: float | None, kind: str = "") -> str:
    if v is None:
        return "unknown" if kind == "cost" else "-"
    if kind == "r":
        return f"{v:.3f}"
    if kind == "pct":
        return f"{100 * v:.1f}%"
    if kind == "cost":
        return f"${v:.4f}"
    return fmt_num(v, kind)


def _stat(cmp: Comparison, attr: str) -> Any:
    try:
        return getattr(cmp, attr)
    except RuntimeError:
        return None


def _g(obj: Any, name: str) -> Any:
    return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)


def print_figures(cmp: Comparison) -> None:
    """The shared headline figures (evalkit.compare.headline): sides, B - A and its CI, each
    in its own unit."""
    emit(figure_rows(cmp.figures), "table")


def print_verdicts(cmp: Comparison, min_shared_tasks: int) -> None:
    """Evidence check, ship gate, regression guard and the promotion decision, with reasons."""
    c = console()
    ev = cmp.evidence(min_shared_tasks)
    if not ev.meaningful:
        c.print("\n[bold yellow]No meaningful comparison[/bold yellow]:")
        for r in ev.reasons:
            c.print("  - " + safe(r))
    gate = cmp.gate()
    guard = cmp.regression_guard()
    j = cmp.to_json(include_config_diff=False, min_shared_tasks=min_shared_tasks)
    o = cmp.options
    c.print(
        f"\n[bold]ship gate[/bold] (lam={o['lam']:g}, alpha={o['alpha']:g}, tau={o['tau']:g}): "
        f"[{VERDICT_STYLE[gate.verdict] if ev.meaningful else 'bold'}]{safe(gate.verdict)}[/]"
    )
    c.print("  " + safe(gate.numbers()))
    for r in gate.reasons:
        c.print("  - " + safe(r))
    c.print(f"[bold]regression guard[/bold]: {guard.decision}  ({safe(guard.numbers())})")
    for r in guard.reasons:
        c.print("  - " + safe(r))
    why = disagreement(cmp, gate.verdict, o.get("confidence", 0.95))
    if why:
        c.print(safe(why))
    c.print(f"[bold]decision[/bold]: [{DECISION_STYLE.get(j['decision'], '')}]{j['decision']}[/]")
    for r in j["decisionReasons"]:
        c.print("  - " + safe(r))


def print_comparison(
    cmp: Comparison, verbose: bool = False, min_shared_tasks: int = MIN_SHARED_TASKS
) -> None:
    """goose's compare output plus attempts, paired deltas with CIs, gates with reasons."""
    c = console()
    own = cmp.side_summary(paired=False)
    _print_sides(cmp, own)
    if cmp.runs is not None:
        _print_config_diff(cmp)
    c.print()
    oc = cmp.outcome_counts().filter((pl.col("a") > 0) | (pl.col("b") > 0))
    emit(oc.rename({"a": "A", "b": "B", "diff": "B-A"}), "table", title="Outcomes (all trials)")
    sa, sb = own["a"], own["b"]
    c.print(
        f"pass rate (own tasks): A {_num(sa['pass_rate'], 'pct')}  B {_num(sb['pass_rate'], 'pct')}   "
        f"mean reward: A {_num(sa['mean_reward'], 'r')}  B {_num(sb['mean_reward'], 'r')}"
    )
    _print_task_sets(cmp, verbose)
    _print_buckets(cmp, verbose)
    _print_paired(cmp)
    print_verdicts(cmp, min_shared_tasks)
    if verbose:
        _print_per_task(cmp)


def _print_sides(cmp: Comparison, own: dict[str, Any]) -> None:
    """One line per side: its label, jobs, trials, tasks and attempts per task."""
    for k, label in (("a", cmp.a), ("b", cmp.b)):
        t = cmp.trials.filter(pl.col("side") == k.upper())
        jobs = t["job_name"].n_unique()
        s = own[k]
        console().print(
            f"[bold]{k.upper()}[/bold]: {safe(label)}  ({jobs} job(s), {t.height} trials, "
            f"{s['n_tasks']} tasks, attempts/task {s['attempts_min'] or 0}-{s['attempts_max'] or 0})"
        )


def _print_config_diff(cmp: Comparison) -> None:
    c = console()
    try:
        cd = cmp.config_diff()
        c.print(f"config: {safe(cd.verdict)}")
        for r in cd.rows.filter(pl.col("counts")).iter_rows(named=True):
            c.print(f"  {safe(r['key'])}: {safe(r['a'][:70])} -> {safe(r['b'][:70])}")
    except (KeyError, ValueError) as e:
        c.print(f"config: not compared ({safe(str(e))})")


def _print_task_sets(cmp: Comparison, verbose: bool) -> None:
    """Shared, comparable and one-sided tasks, and why tasks are not comparable."""
    c = console()
    shared = cmp.tasks.filter(pl.col("side") == "both").height
    c.print(
        f"\nTasks: {shared} shared ({len(cmp.paired_tasks)} comparable), "
        f"{len(cmp.only_in_a)} only in A, {len(cmp.only_in_b)} only in B"
    )
    for name, lst in (("only in A", cmp.only_in_a), ("only in B", cmp.only_in_b)):
        if lst and (verbose or len(lst) <= 10):
            c.print(f"  {name}: {safe(', '.join(lst))}")
    for task, why in cmp.not_comparable.items():
        c.print(f"  [yellow]not comparable[/yellow]: {safe(task)} ({safe(why)})")


def _print_buckets(cmp: Comparison, verbose: bool) -> None:
    c = console()
    bk = cmp.buckets
    c.print("\nShared tasks (per-task pass; strict majority when K > 1):")
    for key, label in (
        ("both_pass", "both pass"),
        ("both_not_pass", "both not pass"),
        ("only_a", "only A passes (broken)"),
        ("only_b", "only B passes (fixed)"),
    ):
        line = f"  {label:<24} {len(bk[key]):>4}"
        if verbose and key in ("only_a", "only_b") and bk[key]:
            line += "   " + ", ".join(bk[key])
        c.print(safe(line))


def _print_paired(cmp: Comparison) -> None:
    """The paired figures over the comparable tasks, their method and the transitions."""
    c = console()
    pa = cmp.side_summary(paired=True)["a"]
    if not pa["n_tasks"]:
        return
    c.print(f"\nPaired figures, B - A over {pa['n_tasks']} comparable task(s):")
    print_figures(cmp)
    st = _stat(cmp, "stats")
    if st is not None and _g(st, "method"):
        c.print(safe(f"  ({_g(st, 'method')})"))
    if cmp.transitions.height:
        c.print("\nTransitions (modal outcome per task; rows A, columns B):")
        emit(cmp.transition_matrix(), "table")


def _print_per_task(cmp: Comparison) -> None:
    show = cmp.tasks.select(
        "task_name",
        "side",
        pl.col("attempts_a").alias("k_a"),
        pl.col("n_pass_a").alias("pass_a"),
        pl.col("mean_reward_a").alias("reward_a"),
        pl.col("attempts_b").alias("k_b"),
        pl.col("n_pass_b").alias("pass_b"),
        pl.col("mean_reward_b").alias("reward_b"),
        pl.col("d_reward").alias("d_reward"),
        pl.concat_str(
            [pl.col("outcome_a").fill_null("-"), pl.col("outcome_b").fill_null("-")],
            separator=" -> ",
        ).alias("outcome"),
        pl.col("reason").fill_null(""),
    )
    emit(show, "table", title="Per task", fold=("task_name",))


@app.command("compare")
def compare_cmd(
    a: str = typer.Argument(
        ..., help="Run A (baseline): run label, job name, job folder or prefix."
    ),
    b: str = typer.Argument(..., help="Run B (candidate)."),
    runs_dir: Path | None = RunsOpt,
    verbose: bool = typer.Option(
        False, "--verbose", "-v", help="List tasks per bucket and a per-task table."
    ),
    gate: bool = typer.Option(
        False, "--gate", help="Exit code = ship gate: 0 Ship it, 1 Hold, 2 Don't ship."
    ),
    json_out: Path | None = typer.Option(
        None, "--json", help="Write compare.json here ('-' for stdout)."
    ),
    lam: float = typer.Option(2.0, "--lambda", help="Ship gate: fixes one break costs."),
    alpha: float = typer.Option(0.05, "--gate-alpha", help="Ship gate: significance level."),
    tau: float = typer.Option(
        0.10, "--tau", help="Ship gate: largest share of A's solved tasks B may break."
    ),
    checksums: str = ChecksumsOpt,
    min_shared_tasks: int = typer.Option(
        MIN_SHARED_TASKS,
        "--min-shared-tasks",
        help="Fewest comparable tasks for a meaningful comparison.",
    ),
    steps: bool = typer.Option(
        True, "--steps/--no-steps", help="Parse trajectories (turn / step figures)."
    ),
    exclude_flaky: bool = typer.Option(
        False,
        "--exclude-flaky",
        help="Leave out the tasks evalkit.stats.flaky_tasks flags over every loaded run "
        "(listed in compare.json's excludedTasks).",
    ),
) -> None:
    """Compare run B against run A: outcomes, buckets, paired deltas with CIs, gates."""
    check_choice("--checksums", checksums, CHECKSUMS)
    runs, ka, kb = _load(runs_dir, a, b)
    if steps:
        _ = runs.steps
    cmp = _compare_or_exit(runs, ka, kb, exclude_flaky, lam=lam, alpha=alpha, tau=tau,
                           checksums=checksums)  # fmt: skip
    if json_out is not None:
        data = _compare_json(cmp, min_shared_tasks, steps)
        if str(json_out) == "-":
            sys.stdout.write(data.decode() + "\n")
            if gate:
                raise typer.Exit(cmp.gate().exit_code)
            return
        json_out.write_bytes(data + b"\n")
    print_comparison(cmp, verbose, min_shared_tasks)
    if json_out is not None:
        console().print(f"compare.json written to {safe(str(json_out))}")
    if gate:
        raise typer.Exit(cmp.gate().exit_code)


def _compare_or_exit(
    runs: evalkit.Runs, ka: str, kb: str, exclude_flaky: bool, **options: Any
) -> Comparison:
    """The comparison of runs ``ka`` and ``kb`` (flaky tasks left out when asked, and
    counted); a problem with the runs or options is printed and exits with 2."""
    try:
        skip = flaky_task_names(runs.trials) if exclude_flaky else []
        cmp = compare(runs, ka, kb, exclude_tasks=skip, **options)
        if exclude_flaky:
            err_console().print(f"Left out {len(cmp.options['exclude_tasks'])} flaky task(s).")
    except (KeyError, ValueError) as e:
        console().print(f"[red]{safe(str(e.args[0] if e.args else e))}[/red]")
        raise typer.Exit(2) from None
    return cmp


def _compare_json(cmp: Comparison, min_shared_tasks: int, steps: bool) -> bytes:
    """compare.json's bytes (indented, keys sorted; integrity figures only with ``steps``)."""
    return orjson.dumps(
        cmp.to_json(min_shared_tasks=min_shared_tasks, include_integrity=steps),
        option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS,
        default=str,
    )


@app.command("bundle")
def bundle_cmd(
    a: str = typer.Argument(..., help="Run A (baseline)."),
    b: str = typer.Argument(..., help="Run B (candidate)."),
    task: str = typer.Argument(..., help="Task name ('org/name' or 'name')."),
    runs_dir: Path | None = RunsOpt,
    out: Path | None = typer.Option(
        None, "--out", "-o", help="Write the Markdown here (default: stdout)."
    ),
    tail: int = typer.Option(
        80, "--tail", "-n", help="Verifier output lines per representative attempt."
    ),
) -> None:
    """Evidence bundle (Markdown) of one task in runs A and B, for failure analysis."""
    runs, ka, kb = _load(runs_dir, a, b)
    try:
        md = evidence_bundle(runs, ka, kb, task, tail=tail)
    except KeyError as e:
        console().print(f"[red]{safe(str(e.args[0] if e.args else e))}[/red]")
        raise typer.Exit(2) from None
    if out is None:
        sys.stdout.write(md)
    else:
        out.write_text(md, encoding="utf-8")
        console().print(f"evidence bundle written to {safe(str(out))}")
