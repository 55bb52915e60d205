"""Report sections: per-task heatmap, failure taxonomy (error kinds, timeouts, anti-patterns),
cost and efficiency."""

from __future__ import annotations

from typing import Any

import polars as pl

from evalkit import charts, patterns
from evalkit.charts._style import passed
from evalkit.charts.tasks import UNKNOWN_TASK
from evalkit.load.trials.derive import failed_checks, known_sum, measured_tokens
from evalkit.report import html as H
from evalkit.report.context import Context
from evalkit.report.section_output import SectionOutput

#: Most task rows the per-task heatmap draws; beyond it, the tasks whose pass rate
#: differs most between runs (the rest are named in a note, every cell is in the explorer).
HEATMAP_TASKS = 40


def informative_tasks(t: pl.DataFrame, n: int, pair: tuple[str, str] | None) -> list[str]:
    """The ``n`` tasks whose pass rate varies most across runs (then: changed most between
    the compared pair; then by name): a task every run passes or fails says nothing."""
    cells = charts.task_cells(t)
    if pair is None:
        change = pl.lit(0.0)
    else:
        rate = pl.col("pass_rate")
        change = (
            (
                rate.filter(pl.col("run") == pair[1]).first()
                - rate.filter(pl.col("run") == pair[0]).first()
            )
            .abs()
            .fill_null(0.0)
        )
    spread = cells.group_by("task_name").agg(
        # rounded: equal spreads must tie whatever the summation order's last bit
        pl.col("pass_rate").std(ddof=0).fill_null(0.0).round(9).alias("_spread"),
        change.alias("_change"),
    )
    top = spread.sort(["_spread", "_change", "task_name"], descending=[True, True, False])
    return top["task_name"].head(n).to_list()


def heatmap(ctx: Context) -> SectionOutput:
    """Tasks x runs, share of attempts passed; hardest tasks first. With more than
    :data:`HEATMAP_TASKS` tasks, only the tasks whose pass rate differs most between runs."""
    t = ctx.trials
    if t.height == 0:
        return SectionOutput([H.box("No trials.", "warn")])
    n_tasks = t["task_name"].fill_null(UNKNOWN_TASK).n_unique()
    if n_tasks <= HEATMAP_TASKS:
        return SectionOutput([charts.task_heatmap(t, order=ctx.order)])
    keep = informative_tasks(t, HEATMAP_TASKS, ctx.pair)
    named = pl.col("task_name").fill_null(UNKNOWN_TASK)  # as task_cells names them
    chart = charts.task_heatmap(t.filter(named.is_in(keep)), order=ctx.order)
    note = H.note(
        f"{HEATMAP_TASKS} of {n_tasks} tasks: those whose pass rate differs most between "
        f"the {len(ctx.order)} runs. The other {n_tasks - HEATMAP_TASKS} are left out of "
        "the chart. Every task: `evalkit task JOB TASK`, the trial browser of "
        "notebooks/explore.ipynb, or evalkit.charts.task_cells(runs.trials)."
    )
    return SectionOutput([chart, note])


def exceptions_table(t: pl.DataFrame, pair: tuple[str, str] | None) -> pl.DataFrame:
    """One row per (error kind, exception type): trials in A and B (when a pair is compared)
    and in all runs, tasks hit, an example message (first line)."""
    e = t.filter(pl.col("exception_type").is_not_null())
    if e.height == 0:
        return pl.DataFrame()
    first = pl.col("exception_message").drop_nulls().first()
    side = []
    if pair:
        side = [
            (pl.col("run") == pair[0]).sum().alias("A"),
            (pl.col("run") == pair[1]).sum().alias("B"),
        ]
    out = e.group_by("error_kind", "exception_type").agg(
        *side,
        pl.len().alias("all runs"),
        pl.col("task_name").n_unique().alias("tasks"),
        first.str.split("\n").list.first().str.slice(0, 120).alias("example message"),
    )
    return out.sort("all runs", "exception_type", descending=[True, False]).rename(
        {"error_kind": "kind", "exception_type": "exception"}
    )


def taxonomy(ctx: Context, only_pair: bool = False) -> SectionOutput:
    """Outcomes and error kinds per run, the most frequent exceptions, anti-pattern rates."""
    ctx = ctx.narrow(only_pair)
    t = ctx.trials
    out = SectionOutput(
        [charts.outcome_bars(t, order=ctx.order), charts.error_kind_bars(t, order=ctx.order)]
    )
    ex = exceptions_table(t, ctx.pair)
    if ex.height:
        out.append(H.h(4, "Most frequent exceptions"))
        heads = {"A": "A (baseline)", "B": "B (candidate)"}
        out.append(
            H.table(ex, {"A": "int", "B": "int", "all runs": "int"}, headers=heads, max_rows=25)
        )
        out.append(
            H.note(
                "Trials with each exception type (kind: Harbor's error-policy class); "
                "'tasks': tasks where it happened, in any run."
            )
        )
    to = (
        t.group_by("run")
        .agg(
            pl.len().alias("trials"),
            (pl.col("outcome") == "timeout").sum().alias("timeouts"),
            pl.col("exception_type")
            .is_in(["AgentTimeoutError", "VerifierTimeoutError"])
            .sum()
            .alias("timeout exceptions"),
            (pl.col("exception_type").str.contains("Timeout") & (passed() > 0))
            .sum()
            .alias("passed despite a timeout"),
        )
        .with_columns((pl.col("timeouts") / pl.col("trials")).alias("timeout rate"))
    )
    order = {r: i for i, r in enumerate(ctx.order)}
    out.append(H.h(4, "Timeouts"))
    out.append(
        H.table(
            to.sort(pl.col("run").replace_strict(order, default=len(order))),
            {"timeout rate": "pct1"},
        )
    )
    out.append(
        H.note(
            "'timeouts' counts trials whose outcome is timeout (no passing reward); "
            "'passed despite a timeout' are trials whose verifier still gave a full reward."
        )
    )
    out.extend(analysis_checks(t))
    out.extend(
        job_analyses(ctx.jobs.filter(pl.col("job_id").is_in(t["job_id"].unique().implode())))
    )
    out.extend(antipatterns(ctx))
    return out


def analysis_checks(t: pl.DataFrame) -> SectionOutput:
    """`harbor analyze` verdicts: per run and check, trials judged pass / fail / not
    applicable, and the failed checks with the judge's explanation (empty when no trial
    was analysed)."""
    checks = (
        t.select("run", "task_name", "trial_name", "analysis_checks")
        .explode("analysis_checks")
        .drop_nulls("analysis_checks")
        .unnest("analysis_checks")
    )
    if checks.height == 0:
        return SectionOutput()
    counts = (
        checks.group_by("run", "name")
        .agg(
            (pl.col("verdict") == "fail").sum().alias("fail"),
            (pl.col("verdict") == "pass").sum().alias("pass"),
            (pl.col("verdict") == "not_applicable").sum().alias("not applicable"),
        )
        .sort("run", "name")
        .rename({"name": "check"})
    )
    failed = checks.filter(pl.col("verdict") == "fail").select(
        "run", "task_name", "trial_name", pl.col("name").alias("check"), "explanation"
    )
    out = SectionOutput([H.h(4, "harbor analyze checks"), H.table(counts)])
    out.append(
        H.note(
            "LLM-judge rubric checks from the trials' analysis.json; trials without one "
            f"were not analysed ({t.height - t['analysis_checks'].drop_nulls().len()} here)."
        )
    )
    if failed.height:
        out.append(H.details(f"Failed checks ({failed.height})", H.table(failed, max_rows=50)))
    return out


def job_analyses(jobs: pl.DataFrame) -> SectionOutput:
    """The judge's job-level summaries and checks (``harbor analyze <job>``), one row per
    analysed job (empty when none was)."""
    if "analysis_summary" not in jobs.columns:
        return SectionOutput()
    done = jobs.filter(
        pl.col("analysis_summary").is_not_null() | pl.col("analysis_checks").is_not_null()
    )
    if done.height == 0:
        return SectionOutput()
    rows = done.select(
        "job_name",
        pl.col("analysis_summary").alias("summary"),
        failed_checks().alias("failed checks"),
    )
    return SectionOutput(
        [H.h(4, f"harbor analyze: job summaries ({done.height})"), H.table(rows, max_rows=50)]
    )


def antipatterns(ctx: Context) -> SectionOutput:
    """Anti-pattern rates with CIs per run, and their change from baseline to candidate."""
    out = SectionOutput([H.h(4, "Anti-patterns")])
    conf = ctx.params.get("confidence", 0.95)
    t = ctx.detail_trials
    try:
        findings = ctx.runs.findings
    except Exception as e:  # a broken detector is reported, not fatal
        out.append(H.box(f"Anti-pattern detection failed: {type(e).__name__}: {e}", "warn"))
        return out
    if ctx.left_out:
        out.append(
            H.note(f"The {len(ctx.detail)} runs shown in detail only (see What was loaded).")
        )
    if not t["has_trajectory"].fill_null(False).any():
        out.append(
            H.box("No trial has a trajectory: anti-patterns cannot be looked for.", "missing")
        )
        return out
    r = patterns.detector_rates(findings, t, confidence=conf)
    if r.height == 0 or findings.height == 0:
        out.append(H.box("No detector fired on any trial with a trajectory.", "ok"))
        return out
    out.append(charts.antipattern_rates(r, order=ctx.detail))
    out.append(
        H.note(
            f"Share of trials with a trajectory where the detector fired at least once; "
            f"interval ({conf:.0%}): {', '.join(sorted(set(r['ci_method'].to_list())))} "
            "(task-clustered when a task has several attempts; exact mid-p when few tasks are "
            "flagged). Detector rules: docs/patterns.md."
        )
    )
    if ctx.pair:
        out.extend(_antipattern_change(findings, t, ctx.pair, conf))
    return out


def _antipattern_change(
    findings: pl.DataFrame, t: pl.DataFrame, pair: tuple[str, str], conf: float
) -> list[str]:
    """Each detector's rate in A and B over the tasks both ran, with the paired difference's
    interval and p-value; nothing when no task pairs up."""
    a, b = pair
    d = patterns.paired_rate_diff(findings, t, a, b, confidence=conf)
    if not d.height:
        return []
    lo, hi = pl.col("ci_low").fill_nan(None), pl.col("ci_high").fill_nan(None)
    d = d.with_columns(
        pl.when(lo.is_null() | hi.is_null())
        .then(pl.lit("–"))
        .otherwise(pl.format("{} … {}", (lo * 100).round(1), (hi * 100).round(1)))
        .alias("ci")
    )
    return [
        H.h(4, "Change from A (baseline) to B (candidate)"),
        H.table(
            d.select("detector", "n_tasks", "rate_a", "rate_b", "diff", "ci", "p_value"),
            {
                "rate_a": "pct1",
                "rate_b": "pct1",
                "diff": "pts",
                "p_value": "p",
                "n_tasks": "int",
            },
            headers={
                "n_tasks": "tasks in both",
                "rate_a": "A",
                "rate_b": "B",
                "diff": "B − A",
                "ci": f"{conf:.0%} CI of B − A (pts)",
                "p_value": "p-value",
            },
        ),
        H.note(f"Paired over the tasks both runs ran ({d['method'][0]})."),
    ]


def cost_efficiency(ctx: Context, only_pair: bool = False) -> SectionOutput:
    """Cost (or tokens, when no cost is recorded) against pass rate, time and turns."""
    ctx = ctx.narrow(only_pair)
    t = ctx.trials
    out = SectionOutput(_cost_vs_pass(t, ctx.order))
    e = _per_pass(t, ctx.order)
    out.append(
        H.table(
            e.rename({"tokens_in": "input tokens", "tokens_out": "output tokens"}),
            {
                "cost": "usd",
                "cost per pass": "usd",
                "input tokens": "tok",
                "output tokens": "tok",
                "input tokens per pass": "tok",
                "compute": "dur",
                "compute per pass": "dur",
                "passes": "int",
            },
        )
    )
    out.append(
        H.note(
            "Cost per pass is shown only when every trial of the run has a recorded cost. "
            "Compute is the sum of trial wall times (parallel trials unrolled)."
        )
    )
    out.append(charts.duration_dist(t, order=ctx.order))
    d = ctx.detail_trials
    if d["n_turns"].is_not_null().any() or d["n_steps"].is_not_null().any():
        out.append(charts.turns_dist(d, order=ctx.detail))
    else:
        out.append(H.box("No trajectories: turns per trial are unknown.", "missing"))
    return out


def _cost_vs_pass(t: pl.DataFrame, order: list[str]) -> list[Any]:
    """The cost vs pass-rate chart (and the runs it leaves out for lack of a cost); the
    input-tokens chart instead when no trial has a cost."""
    if t["cost_usd"].is_not_null().any():
        out: list[Any] = [charts.cost_vs_pass(t, order=order)]
        priced = t.group_by("run").agg(pl.col("cost_usd").is_not_null().any().alias("p"))
        unpriced = [r for r in order if r in set(priced.filter(~pl.col("p"))["run"].to_list())]
        if unpriced:
            out.append(H.note(f"Not in the chart (no trial has a cost): {', '.join(unpriced)}."))
        return out
    return [
        H.box(
            "No trial recorded a cost (Harbor writes cost_usd only when the agent "
            "reports it): tokens are used instead. Unknown cost is never counted as $0.",
            "missing",
        ),
        charts.cost_vs_pass(
            t,
            cost="n_input_tokens",
            cost_title="mean input tokens per trial",
            cost_format=",.0f",
            order=order,
            title="Input tokens vs pass rate",
        ),
    ]


def _per_pass(t: pl.DataFrame, order: list[str]) -> pl.DataFrame:
    """Per run, in run order: passes, cost, tokens and compute, in total and per pass (cost
    per pass only when every trial has a cost)."""
    e = (
        t.group_by("run")
        .agg(
            passed().sum().alias("passes"),
            known_sum("cost_usd").alias("cost"),
            pl.col("cost_usd").is_not_null().all().alias("_all_priced"),
            known_sum(measured_tokens("n_input_tokens")).alias("tokens_in"),
            known_sum(measured_tokens("n_output_tokens")).alias("tokens_out"),
            pl.col("duration_s").sum().alias("compute"),
        )
        .with_columns(
            pl.when(pl.col("_all_priced") & (pl.col("passes") > 0))
            .then(pl.col("cost") / pl.col("passes"))
            .alias("cost per pass"),
            pl.when(pl.col("passes") > 0)
            .then(pl.col("tokens_in") / pl.col("passes"))
            .alias("input tokens per pass"),
            pl.when(pl.col("passes") > 0)
            .then(pl.col("compute") / pl.col("passes"))
            .alias("compute per pass"),
        )
        .drop("_all_priced")
    )
    rank = {r: i for i, r in enumerate(order)}
    return e.sort(pl.col("run").replace_strict(rank, default=len(rank)))
