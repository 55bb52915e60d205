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
from evalkit.cli.output import console, emit, fmt_num, safe
from evalkit.compare import compare
from evalkit.compare.bundle import evidence_bundle
from evalkit.compare.core import Comparison

RunsOpt = typer.Option(Path("runs"), "--runs", help="Runs folder (or a job folder).")

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


def _load(runs_dir: Path, a: str, b: str) -> tuple[evalkit.Runs, str, str]:
    """Load the runs folder; when A and B are both folders, load them as two runs."""
    if os.path.isdir(a) and os.path.isdir(b) and os.path.realpath(a) != os.path.realpath(b):
        la = os.path.basename(os.path.normpath(a)) or "A"
        lb = os.path.basename(os.path.normpath(b)) or "B"
        if la == lb:
            la, lb = f"{la} (A)", f"{lb} (B)"
        return evalkit.load({la: a, lb: b}, progress=True), la, lb
    if not runs_dir.exists():
        console().print(f"[red]No such folder: {safe(str(runs_dir))}[/red]")
        raise typer.Exit(2)
    return evalkit.load(runs_dir, progress=True), a, b


def _pts(v: float | None) -> str:
    return "-" if v is None else f"{100 * v:+.1f} pts"


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


def _signed(a: float | None, b: float | None, kind: str = "") -> str:
    if a is None or b is None:
        return "-"
    d = b - a
    if kind == "pct":
        return _pts(d)
    if kind == "cost":
        return f"{'+' if d >= 0 else '-'}${abs(d):.4f}"
    if kind == "r":
        return f"{d:+.3f}"
    if kind == "dur":
        return ("+" if d >= 0 else "-") + fmt_num(abs(d), "dur")
    return f"{d:+.3g}"


def _stat(cmp: Comparison, attr: str) -> Any:
    try:
        return getattr(cmp, attr)
    except RuntimeError:
        return None


def _g(obj: Any, name: str) -> Any:
    return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)


def _finite(v: Any) -> bool:
    return isinstance(v, int | float) and v == v


def _ci(s: Any) -> str:
    """CI, p-value and McNemar p of a paired result (the method is printed once, below)."""
    if s is None:
        return "CI: n/a (evalkit.stats.paired not available)"
    lo, hi, p = _g(s, "ci_low"), _g(s, "ci_high"), _g(s, "p_value")
    conf = _g(s, "confidence") or 0.95
    parts = []
    if _finite(lo) and _finite(hi):
        parts.append(f"{100 * conf:.0f}% CI [{lo:+.3f}, {hi:+.3f}]")
    else:
        parts.append(f"CI n/a (n={_g(s, 'n_tasks')})")
    if _finite(p):
        parts.append(f"p={p:.3g}")
    if _finite(_g(s, "mcnemar_exact_p")):
        parts.append(f"McNemar exact p={_g(s, 'mcnemar_exact_p'):.3g}")
    return "  ".join(parts)


def print_comparison(cmp: Comparison, verbose: bool = False) -> None:
    """goose's compare output plus attempts, paired deltas with CIs, gates with reasons."""
    c = console()
    own = cmp.side_summary(paired=False)
    for k, label in (("a", cmp.a), ("b", cmp.b)):
        t = cmp.trials.filter(pl.col("side") == k.upper())
        jobs = t["job_name"].n_unique()
        s = own[k]
        c.print(
            f"[bold]{k.upper()}[/bold]: {safe(label)}  ({jobs} job(s), {t.height} trials, "
            f"{s['n_tasks']} tasks, attempts/task {s['attempts_min'] or 0}-{s['attempts_max'] or 0})"
        )
    if cmp.runs is not None:
        try:
            cd = cmp.config_diff()
            c.print(f"config: {safe(cd.verdict)}")
            for r in cd.rows.filter(pl.col("counts")).iter_rows(named=True):
                c.print(f"  {safe(r['key'])}: {safe(r['a'][:70])} -> {safe(r['b'][:70])}")
        except (KeyError, ValueError) as e:
            c.print(f"config: not compared ({safe(str(e))})")
    c.print()
    oc = cmp.outcome_counts().filter((pl.col("a") > 0) | (pl.col("b") > 0))
    emit(oc.rename({"a": "A", "b": "B", "diff": "B-A"}), "table", title="Outcomes (all trials)")
    sa, sb = own["a"], own["b"]
    c.print(
        f"pass rate (own tasks): A {_num(sa['pass_rate'], 'pct')}  B {_num(sb['pass_rate'], 'pct')}   "
        f"mean reward: A {_num(sa['mean_reward'], 'r')}  B {_num(sb['mean_reward'], 'r')}"
    )
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
    pa, pb = cmp.side_summary(paired=True).values()
    if pa["n_tasks"]:
        c.print(f"\nPaired deltas, B - A over {pa['n_tasks']} comparable task(s):")
        rows = [
            ("mean reward", "mean_reward", "r", _ci(_stat(cmp, "stats"))),
            ("pass rate", "pass_rate", "pct", _ci(_stat(cmp, "pass_stats"))),
            ("timeout rate", "timeout_rate", "pct", ""),
            ("evidence complete", "evidence_rate", "pct", ""),
            ("cost / pass", "cost_per_pass", "cost", ""),
            ("cost / attempt", "cost_per_attempt", "cost", ""),
            ("tokens / attempt", "tokens", "tok", ""),
            ("duration / attempt", "duration_s", "dur", ""),
            ("turns / attempt", "turns", "", ""),
        ]
        for label, key, kind, extra in rows:
            c.print(
                safe(
                    f"  {label:<19} {_num(pa[key], kind):>10} -> {_num(pb[key], kind):<10} "
                    f"{_signed(pa[key], pb[key], kind):>10}  {extra}"
                ).rstrip()
            )
        st = _stat(cmp, "stats")
        if st is not None and _g(st, "method"):
            c.print(safe(f"  ({_g(st, 'method')})"))
        if cmp.transitions.height:
            c.print("\nTransitions (modal outcome per task; rows A, columns B):")
            emit(cmp.transition_matrix(), "table")
    gate = cmp.gate()
    guard = cmp.regression_guard()
    j = cmp.to_json(include_config_diff=False)
    o = cmp.options
    c.print(
        f"\n[bold]ship gate[/bold] (lam={o['lam']:g}, alpha={o['alpha']:g}, tau={o['tau']:g}): "
        f"[{VERDICT_STYLE[gate.verdict]}]{safe(gate.verdict)}[/]"
    )
    c.print("  " + safe(gate.numbers()))
    for r in gate.reasons:
        c.print("  - " + safe(r))
    c.print(
        f"[bold]regression guard[/bold] (trainerd): {guard.decision}  ({safe(guard.numbers())})"
    )
    for r in guard.reasons:
        c.print("  - " + safe(r))
    c.print(
        f"[bold]decision[/bold] (Lime): [{DECISION_STYLE.get(j['decision'], '')}]{j['decision']}[/]"
    )
    for r in j["decisionReasons"]:
        c.print("  - " + safe(r))
    if verbose:
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
    runs_dir: Path = RunsOpt,
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
    checksums: str = typer.Option(
        "exclude", "--checksums", help="exclude | ignore: tasks whose checksum changed."
    ),
    steps: bool = typer.Option(
        False, "--steps", help="Parse trajectories first (turn / step deltas)."
    ),
) -> None:
    """Compare run B against run A: outcomes, buckets, paired deltas with CIs, gates."""
    runs, ka, kb = _load(runs_dir, a, b)
    if steps:
        _ = runs.steps
    try:
        cmp = compare(runs, ka, kb, lam=lam, alpha=alpha, tau=tau, checksums=checksums)
    except (KeyError, ValueError) as e:
        console().print(f"[red]{safe(str(e.args[0] if e.args else e))}[/red]")
        raise typer.Exit(2) from None
    if json_out is not None:
        data = orjson.dumps(
            cmp.to_json(), option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS, default=str
        )
        if str(json_out) == "-":
            sys.stdout.write(data.decode() + "\n")
            if gate:
                raise typer.Exit(cmp.gate().exit_code)
            return
        json_out.write_bytes(data + b"\n")
    print_comparison(cmp, verbose)
    if json_out is not None:
        console().print(f"compare.json written to {safe(str(json_out))}")
    if gate:
        raise typer.Exit(cmp.gate().exit_code)


@app.command("bundle")
def bundle_cmd(
    a: str = typer.Argument(..., help="Run A (baseline)."),
    b: str = typer.Argument(..., help="Run B (candidate)."),
    task: str = typer.Argument(..., help="Task name ('org/name' or 'name')."),
    runs_dir: Path = RunsOpt,
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
