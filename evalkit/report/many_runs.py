"""Report section for many runs (more than two loaded): the leaderboard with its uncertainty,
the noise floor, and which tasks carry the signal."""

from __future__ import annotations

import polars as pl

from evalkit import charts
from evalkit.report import html as H
from evalkit.report.context import Context
from evalkit.report.section_output import SectionOutput
from evalkit.stats.irt import fit_irt
from evalkit.stats.taskquality import flaky_tasks, informative_tasks, noise_floor_detail
from evalkit.tables.leaderboard import leaderboard_table

#: the section appears when more runs than this are loaded
MIN_RUNS = 3


def leaderboard(ctx: Context, draws: int = 2000) -> SectionOutput:
    """Leaderboard (score, interval, rank interval, tier, P(rank 1), P(on the cost frontier),
    integrity counts), its chart set, the noise floor per run, flaky and dead tasks, and the
    tasks that separate the runs most (2PL item-response fit)."""
    runs = [r for r in ctx.order if r is not None]
    if len(runs) < MIN_RUNS:
        return SectionOutput(
            [H.note(f"Shown when more than two runs are loaded ({len(runs)} here).")]
        )
    every = ctx.history is None  # else the runs not shown in detail have no trajectories
    try:
        result = leaderboard_table(
            ctx.history or ctx.runs, by="label", draws=draws, integrity=every
        )
    except ValueError as e:
        return SectionOutput([H.box(f"No leaderboard: {e}", "warn")])
    lb = result.table
    kept = lb["run"].to_list()
    out = SectionOutput([_table(lb)])
    if not every:
        out.append(
            H.note(
                f"Integrity counts need every run's trajectories; "
                f"{H.counted(len(ctx.left_out), 'run')} "
                f"{'is' if len(ctx.left_out) == 1 else 'are'} not shown in detail "
                "(see What was loaded): `-p detail_runs 0` adds them."
            )
        )
    if result.left_out:
        out.append(
            H.note(f"Left out (no task shared with the others): {', '.join(result.left_out)}.")
        )
    out.extend(charts.leaderboard_charts(lb))
    trials = ctx.trials.filter(pl.col("run").is_in(kept))
    out.extend(_task_signal(trials, kept))
    return out


def _table(lb: pl.DataFrame) -> str:
    cols = [
        c
        for c in (
            "run", "score", "ci_low", "ci_high", "rank", "rank_low", "rank_high", "tier",
            "p_rank_1", "cost_per_attempt", "p_frontier", "tampered_passes", "green_fails",
            "passes_unverified", "n_tasks", "n_trials",
        )
        if c in lb.columns
    ]  # fmt: skip
    kinds = {c: "pct" for c in ("score", "ci_low", "ci_high", "p_rank_1", "p_frontier")}
    kinds["cost_per_attempt"] = "usd"
    headers = {
        "ci_low": "CI low", "ci_high": "CI high", "rank_low": "rank ≥", "rank_high": "rank ≤",
        "p_rank_1": "P(rank 1)", "cost_per_attempt": "cost / attempt",
        "p_frontier": "P(frontier)", "tampered_passes": "tampered passes",
        "green_fails": "green fails", "passes_unverified": "passes unverified",
    }  # fmt: skip
    return H.table(lb.select(cols), kinds, headers=headers)


def _task_signal(trials: pl.DataFrame, runs: list[str]) -> list[str]:
    info = informative_tasks(trials)
    parts = [
        H.h(3, "Which tasks carry the signal"),
        H.kv(
            [
                ("tasks", info["n_tasks"]),
                ("every run passes every attempt", info["n_always_pass"]),
                ("every run fails every attempt", info["n_always_fail"]),
                ("informative", info["n_informative"]),
                ("effective number of informative tasks", f"{info['n_effective']:.1f}"),
            ]
        ),
    ]
    nf = [noise_floor_detail(trials, r) for r in runs]
    parts.append(H.h(3, "Noise floor: how often each run flips against itself"))
    parts.append(
        H.table(
            pl.DataFrame(
                {
                    "run": [n.run for n in nf],
                    "A → A flip rate": [n.flip_rate for n in nf],
                    "how": [n.note for n in nf],
                    "tasks": [n.n_tasks for n in nf],
                }
            ),
            {"A → A flip rate": "pct"},
        )
    )
    ft = flaky_tasks(trials).filter(pl.col("flaky"))
    parts.append(H.h(3, f"Flaky tasks ({ft.height})"))
    if ft.height:
        parts.append(H.table(ft.select("task_name", "pass_rate", "disagreement", "evidence"),
                             {"pass_rate": "pct", "disagreement": "pct"}, max_rows=20))  # fmt: skip
        parts.append(H.note("Flaky: attempts of one run disagree at least a quarter of the time and the "
                            "runs do not differ on the task (chi-square p >= 0.05): its outcome is not a "
                            "property of the agent. `evalkit compare --exclude-flaky` leaves them out."))  # fmt: skip
    irt = fit_irt(trials, model="2pl")
    parts.append(H.h(3, "Tasks that separate the runs most (2PL item-response fit)"))
    parts.append(
        H.table(
            irt.tasks.head(10).select("task_name", "difficulty", "discrimination", "information"),
            {"difficulty": "float", "discrimination": "float", "information": "float"},
            max_rows=10,
        )
    )
    return parts
