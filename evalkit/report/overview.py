"""Report sections about what was loaded: header, runs table, data quality."""

from __future__ import annotations

from datetime import datetime

import polars as pl

from evalkit import charts
from evalkit.charts._style import passed
from evalkit.load.trials.derive import known_sum, measured_tokens
from evalkit.report import html as H
from evalkit.report.context import Context
from evalkit.report.section_output import SectionOutput
from evalkit.stats import pass_k_curve, regrade_pairs, summarize, verifier_instability

FRESH_H = 36.0


def _age(now: datetime, then: datetime | None) -> str:
    if then is None:
        return "unknown"
    h = (now - then).total_seconds() / 3600
    return f"{h:.1f} hours" if h < 48 else f"{h / 24:.1f} days"


def stale_warning(ctx: Context) -> str | None:
    """A sentence when the newest trial is older than :data:`FRESH_H` hours."""
    t = ctx.trials
    last = t["finished_at"].max() if t.height else None
    if last is None or (ctx.generated_at - last).total_seconds() <= FRESH_H * 3600:
        return None
    return (
        f"The newest trial finished {_age(ctx.generated_at, last)} before this report: if "
        "this is a nightly report, check that the runs are still being produced."
    )


def left_out_note(ctx: Context) -> str | None:
    """What the report did not detail, and how to see it; None when it details every run."""
    left = ctx.left_out
    if not left:
        return None
    names = ", ".join(left[:3]) + (f" and {len(left) - 3} more" if len(left) > 3 else "")
    return (
        f"{len(ctx.detail)} of {len(ctx.order)} runs are shown in detail (trajectories, "
        f"anti-patterns, turns, evidence): the compared pair and the newest others. The "
        f"other {len(left)} ({names}) appear in the runs table and the per-task summary "
        "only. To detail them: `evalkit report nightly -p detail_runs 0` (every run), "
        "`-p candidate RUN -p baseline RUN`, or evalkit.load(...) in the explorer notebook."
    )


def header(ctx: Context) -> SectionOutput:
    """What was loaded, from where, how fresh it is, load errors, and the runs compared."""
    out = SectionOutput([_loaded_facts(ctx)])
    stale = stale_warning(ctx)
    if stale:
        out.append(H.box(stale, "warn"))
    note = left_out_note(ctx)
    if note:
        out.append(H.note(note))
    out.append(_jobs_details(ctx.jobs))
    out.extend(_load_error_notes(ctx.load_errors))
    out.extend(_compared_runs_note(ctx))
    return out


def _loaded_facts(ctx: Context) -> str:
    """Where the runs came from, how many jobs / trials / runs, their time span and age."""
    jobs, t = ctx.jobs, ctx.trials
    states = ", ".join(
        f"{n} {s}" for s, n in jobs.group_by("state").len().sort("state").iter_rows()
    )
    last = t["finished_at"].max() if t.height else None
    first = t["started_at"].min() if t.height else None
    return H.kv(
        [
            ("runs folder", ctx.source),
            ("jobs", f"{jobs.height} ({states or 'none'})"),
            (
                "trials",
                f"{t.height} in {len(ctx.order)} run(s), {t['task_name'].n_unique() if t.height else 0} tasks",
            ),
            (
                "runs are",
                "one per job folder"
                if ctx.run_by == "job"
                else "evalkit run labels (agent, model, dataset)",
            ),
            ("trials span", f"{H.fmt(first)} → {H.fmt(last)}" if first else "–"),
            (
                "newest trial finished",
                f"{H.fmt(last)} ({_age(ctx.generated_at, last)} before this report)"
                if last
                else "–",
            ),
            ("report generated", H.fmt(ctx.generated_at)),
            ("load time", f"{ctx.load_s:.1f} s (including trajectories)"),
        ]
    )


def _jobs_details(jobs: pl.DataFrame) -> str:
    """The jobs table (open when there are few jobs)."""
    jt = jobs.select(
        "job_name",
        "run",
        "state",
        pl.col("n_trials_found").alias("trials found"),
        pl.col("n_trials_declared").alias("declared"),
        "started_at",
        "finished_at",
    ).sort("started_at", nulls_last=True)
    return H.details(
        f"Jobs ({jobs.height})",
        H.table(
            jt, headers={"job_name": "job", "started_at": "started", "finished_at": "finished"}
        ),
        open_=jobs.height <= 8,
    )


def _load_error_notes(errs: pl.DataFrame) -> SectionOutput:
    """The load errors counted by level and type, and listed; or that there were none."""
    if errs.height == 0:
        return SectionOutput([H.box("No load errors: every file found was read.", "ok")])
    et = errs.group_by("level", "error_type").agg(
        pl.len().alias("count"), pl.col("message").first().alias("example")
    )
    return SectionOutput(
        [
            H.box(
                f"{errs.height} load error(s): files that are missing or could not be read "
                "fully. Their trials still count (as 'incomplete' when no result was usable).",
                "warn",
            ),
            H.table(et.sort("count", descending=True), {"count": "int"}),
            H.details(
                "Every load error",
                H.table(errs.select("path", "level", "error_type", "message"), max_rows=100),
            ),
        ]
    )


def _compared_runs_note(ctx: Context) -> SectionOutput:
    """Which runs the comparison sections compare and why; or that there is only one."""
    if ctx.pair:
        pair = f"A (baseline) = {ctx.baseline}; B (candidate) = {ctx.candidate}."
        return SectionOutput(
            [H.box(f"Compared below: {pair}", "ok"), H.note(f"Why these two: {ctx.choice}.")]
        )
    if ctx.candidate:
        return SectionOutput(
            [
                H.box(
                    f"Only one run to look at ({ctx.candidate}): the comparison sections are empty. ({ctx.choice}.)",
                    "warn",
                )
            ]
        )
    return SectionOutput()


def _error_kinds(t: pl.DataFrame) -> pl.DataFrame:
    return (
        t.filter(pl.col("error_kind") != "none")
        .group_by("run", "error_kind")
        .len()
        .sort("len", "error_kind", descending=[True, False])
        .group_by("run", maintain_order=True)
        .agg(pl.format("{} {}", "error_kind", "len").str.join(", ").alias("errors"))
    )


def runs_frame(ctx: Context) -> pl.DataFrame:
    """One row per run with the headline numbers (the runs table of the nightly report)."""
    t = ctx.trials
    per_task = t.group_by("run", "task_name").agg(pl.len().alias("k"))
    att = per_task.group_by("run").agg(
        pl.col("k").min().alias("k_min"), pl.col("k").max().alias("k_max")
    )
    base = (
        t.group_by("run")
        .agg(
            pl.col("job_name").n_unique().alias("jobs"),
            pl.col("task_name").n_unique().alias("tasks"),
            pl.len().alias("trials"),
            passed().mean().alias("pass_rate"),
            pl.col("reward").fill_null(0.0).mean().alias("mean_reward"),
            known_sum("cost_usd").alias("cost"),
            pl.col("cost_usd").is_not_null().sum().alias("priced"),
            known_sum(measured_tokens("n_input_tokens")).alias("tokens_in"),
            known_sum(measured_tokens("n_output_tokens")).alias("tokens_out"),
            pl.col("duration_s").median().alias("median_duration"),
            (pl.col("outcome") == "timeout").sum().alias("timeouts"),
        )
        .join(att, on="run", how="left")
        .join(_error_kinds(t), on="run", how="left")
    )
    s = summarize(t, by="run", confidence=ctx.params.get("confidence", 0.95))
    base = base.drop("pass_rate").join(
        s.select("run", "pass_rate", "ci_low", "ci_high", "ci_method"), on="run", how="left"
    )
    base = base.join(_pass_at_k(t), on="run", how="left")
    order = {r: i for i, r in enumerate(ctx.order)}
    return (
        base.with_columns(pl.col("run").replace_strict(order, default=len(order)).alias("_o"))
        .sort("_o")
        .drop("_o")
    )


def _pass_at_k(t: pl.DataFrame) -> pl.DataFrame:
    """Per run, with k = the run's most attempts on a task: mean pass@k and pass^k over the
    tasks that have at least k attempts (``k_tasks`` of them)."""
    curve = pass_k_curve(t, by="run")
    return curve.filter(pl.col("k") == pl.col("k").max().over("run")).select(
        "run", "k", pl.col("n_tasks").alias("k_tasks"), "pass_at_k", "pass_hat_k"
    )


def _methods(f: pl.DataFrame) -> str:
    """The interval method, or each run's when they differ (evalkit.stats picks per run)."""
    m = f.select("run", "ci_method").drop_nulls()
    if m["ci_method"].n_unique() <= 1:
        return m["ci_method"][0] if m.height else "–"
    return "; ".join(f"{r}: {x}" for r, x in m.iter_rows())


_RUNS_TABLE_KINDS = {"pass_rate": "pct1", "mean_reward": "float", "median_duration": "dur",
                     "pass_at_k": "pct1", "pass_hat_k": "pct1", "attempts per task": "right",
                     "ci": "right", "cost": "right", "tokens in / out": "right"}  # fmt: skip


def runs_table(ctx: Context, only_pair: bool = False) -> SectionOutput:
    """The runs table: pass rate with CI, reward, attempts, pass@k, cost, tokens, time, errors;
    then the pass-rate and pass@k charts."""
    ctx = ctx.narrow(only_pair)
    f = runs_frame(ctx)
    out = SectionOutput()
    if f.height == 0:
        out.append(H.box("No trials were found.", "warn"))
        return out
    conf = ctx.params.get("confidence", 0.95)
    f = _runs_display_columns(f)
    ks = set(f["k"].drop_nulls().to_list()) if "pass_at_k" in f.columns else set()
    k = next(iter(ks)) if len(ks) == 1 else "k"
    cols = ["run", "tasks", "trials", "attempts per task", "pass_rate", "ci", "mean_reward"]
    if "pass_at_k" in f.columns:
        cols += ["pass_at_k", "pass_hat_k"]
    if len(ks) > 1:
        cols.insert(cols.index("pass_at_k"), "k")
    cols += ["cost", "tokens in / out", "median_duration", "timeouts", "errors"]
    heads = {
        "pass_rate": "pass rate",
        "mean_reward": "mean reward",
        "ci": f"{conf:.0%} CI (%)",
        "pass_at_k": f"pass@{k}",
        "pass_hat_k": f"pass^{k}",
        "median_duration": "median time / trial",
        "errors": "error kinds",
    }
    out.append(H.table(f.select(cols), _RUNS_TABLE_KINDS, headers=heads))
    kk = "each run's most attempts on a task (column k)" if len(ks) > 1 else str(k)
    out.append(
        H.note(
            f"CI method: {_methods(f)}. pass@{k} / pass^{k}: unbiased estimates with "
            f"k = {kk}, over the tasks with at least k attempts."
        )
    )
    out.append(charts.pass_rate_ci(ctx.trials, order=ctx.order, confidence=conf))
    out.append(charts.pass_at_k_curves(ctx.trials, order=ctx.order))
    return out


def _token_text(col: str) -> pl.Expr:
    """A token count as the report writes it, "–" when unknown."""
    return (
        pl.col(col).map_elements(lambda v: H.fmt(v, "tok"), return_dtype=pl.String).fill_null("–")
    )


def _runs_display_columns(f: pl.DataFrame) -> pl.DataFrame:
    """:func:`runs_frame` with the text columns the runs table shows: attempts per task,
    cost (and how many trials are priced), tokens in / out, and the CI in percent."""
    cost_txt = [
        "–" if c is None else (H.fmt(c, "usd") + ("" if p == n else f" ({p} of {n} priced)"))
        for c, p, n in f.select("cost", "priced", "trials").iter_rows()
    ]
    f = f.with_columns(
        pl.when(pl.col("k_min") == pl.col("k_max"))
        .then(pl.col("k_min").cast(pl.String))
        .otherwise(pl.format("{}–{}", "k_min", "k_max"))
        .alias("attempts per task"),
        pl.Series("cost", cost_txt, dtype=pl.String),
        pl.when(pl.col("tokens_in").is_not_null() | pl.col("tokens_out").is_not_null())
        .then(pl.format("{} / {}", _token_text("tokens_in"), _token_text("tokens_out")))
        .alias("tokens in / out"),
    )
    lo, hi = (pl.col("ci_low") * 100).round(1), (pl.col("ci_high") * 100).round(1)
    return f.with_columns(pl.format("{}–{}", lo, hi).alias("ci"))


def regrade_notes(t: pl.DataFrame) -> SectionOutput:
    """When regrade trials are loaded: how often the verifier alone changed a reward (the
    agent's work is the same by construction), per run and for the tasks where it did."""
    out = SectionOutput()
    if "regrade_of" not in t.columns or t["regrade_of"].is_null().all():
        return out
    runs = verifier_instability(t, by="run")
    n, cmp_, bad = (int(runs[c].sum()) for c in ("n_regrades", "n_compared", "n_unstable"))
    out.append(
        H.box(
            f"{n} regrade trial(s): the verifier changed {bad} of {cmp_} rewards while the "
            "agent's work and the task stayed the same (verifier instability).",
            "warn" if bad else "ok",
        )
    )
    out.extend(unpaired_regrades(t))
    cols = {"unstable_rate": "pct", "ci_low": "pct", "ci_high": "pct"}
    out.append(H.table(runs, cols))
    tasks = verifier_instability(t, by=["run", "task_name"]).filter(pl.col("n_unstable") > 0)
    if tasks.height:
        out.append(
            H.details(
                f"Tasks whose reward changed on regrade ({tasks.height})",
                H.table(tasks, cols, max_rows=50),
            )
        )
    return out


def unpaired_regrades(t: pl.DataFrame) -> SectionOutput:
    """The regrades whose source trial is not in the load (``stats.regrade_pairs`` found no
    source): named, never silently dropped from the instability counts."""
    pairs = regrade_pairs(t).filter(pl.col("source_trial_id").is_null())
    if pairs.height == 0:
        return SectionOutput()
    lost = t.filter(pl.col("trial_id").is_in(pairs["trial_id"].implode()))
    return SectionOutput(
        [
            H.box(
                f"{pairs.height} regrade trial(s) name a source trial that is not in this load "
                "(its job was not loaded, or was moved and lost its result id): their reward "
                "change is unknown and they are left out of the instability counts.",
                "warn",
            ),
            H.details(
                f"Regrades without their source ({pairs.height})",
                H.table(lost.select("run", "task_name", "trial_name", "regrade_of"), max_rows=50),
            ),
        ]
    )


def unpinned_zones(jobs: pl.DataFrame, t: pl.DataFrame) -> SectionOutput:
    """Jobs with naive times whose writer's zone nothing could pin (``jobs.naive_tz`` says
    'could not infer'): what their trials could not pin themselves is read in this
    machine's zone, which may be wrong by hours."""
    naive = t.filter(pl.col("naive_timestamps").fill_null(False))["job_id"].unique()
    lost = jobs.filter(
        pl.col("naive_tz").str.contains("could not infer", literal=True).fill_null(False)
        & pl.col("job_id").is_in(naive.implode())
    )
    if lost.height == 0:
        return SectionOutput()
    return SectionOutput(
        [
            H.details(
                f"Jobs whose naive times were read in this machine's zone ({lost.height}): "
                "neither the job, its trials nor its sibling jobs pin the writer's offset",
                H.table(lost.select("job_name", "naive_tz"), max_rows=50),
            )
        ]
    )


_EVIDENCE_SHARES = (
    "evidence complete",
    "trajectory",
    "reward file",
    "verifier output",
    "artifacts manifest",
)


def _quality_tables(q: pl.DataFrame) -> list[str]:
    """The per-run quality table as two narrow ones: evidence shares, then problem counts
    without the checks that found nothing anywhere (named in a note instead)."""
    shares = q.select("run", "trials", *_EVIDENCE_SHARES)
    counts = [c for c in q.columns if c not in shares.columns]
    clean = [c for c in counts if not (q[c].fill_null(0) != 0).any()]
    found = [c for c in counts if c not in clean]
    parts = [
        H.p("Share of trials with each kind of evidence:"),
        H.table(shares, dict.fromkeys(_EVIDENCE_SHARES, "pct")),
    ]
    if found:
        parts += [H.p("Trials with a problem:"), H.table(q.select("run", *found))]
    if clean:
        parts.append(H.note(f"No trial in any run has: {', '.join(clean)}."))
    return parts


def data_quality(ctx: Context, only_pair: bool = False) -> SectionOutput:
    """Evidence completeness, token / cost mismatches, unknown cost, times outside their
    trial, regrades' verifier instability, incomplete trials."""
    ctx = ctx.narrow(only_pair)
    t = ctx.trials
    jobs = ctx.jobs.filter(
        pl.col("job_id").is_in(t["job_id"].unique().to_list()) | pl.lit(ctx.only is None)
    )
    out = SectionOutput(_quality_tables(_quality_frame(t, ctx.order)))
    out.extend(_recording_problems(t))
    out.extend(unpinned_zones(jobs, t))
    out.extend(regrade_notes(t))
    out.extend(
        _listed(
            t.filter(pl.col("outcome").is_in(["incomplete", "no-reward"])),
            "Incomplete or unrewarded trials ({n})",
            ("run", "task_name", "trial_name", "outcome", "exception_type"),
        )
    )
    out.extend(_job_problems(jobs))
    return out


def _quality_frame(t: pl.DataFrame, order: list[str]) -> pl.DataFrame:
    """Per run, in run order: the share of trials with each kind of evidence and the number
    of trials with each problem."""
    q = t.group_by("run").agg(
        pl.len().alias("trials"),
        pl.col("evidence_complete").fill_null(False).mean().alias("evidence complete"),
        pl.col("has_trajectory").fill_null(False).mean().alias("trajectory"),
        pl.col("has_reward_file").fill_null(False).mean().alias("reward file"),
        pl.col("has_verifier_output").fill_null(False).mean().alias("verifier output"),
        pl.col("has_artifacts_manifest").fill_null(False).mean().alias("artifacts manifest"),
        pl.col("metrics_mismatch").is_not_null().sum().alias("token/cost mismatches"),
        pl.col("cost_usd").is_null().sum().alias("cost unknown"),
        measured_tokens("n_input_tokens").is_null().sum().alias("tokens unknown"),
        pl.col("tokens_not_recorded").fill_null(False).sum().alias("tokens not recorded"),
        (pl.col("outcome") == "incomplete").sum().alias("incomplete"),
        (pl.col("outcome") == "no-reward").sum().alias("no reward"),
        pl.col("timestamp_out_of_window").fill_null(False).sum().alias("times out of window"),
    )
    rank = {r: i for i, r in enumerate(order)}
    return q.sort(pl.col("run").replace_strict(rank, default=len(rank)))


def _listed(rows: pl.DataFrame, summary: str, cols: tuple[str, ...]) -> list[str]:
    """A closed details block with ``rows``' ``cols`` (50 at most) under ``summary``, whose
    ``{n}`` is the number of rows; nothing when there are no rows."""
    if rows.height == 0:
        return []
    return [H.details(summary.format(n=rows.height), H.table(rows.select(cols), max_rows=50))]


def _recording_problems(t: pl.DataFrame) -> list[str]:
    """The trials whose files disagree, whose tokens were not recorded, or whose times fall
    outside their own start..finish."""
    return [
        *_listed(
            t.filter(pl.col("metrics_mismatch").is_not_null()),
            "Trials whose trajectory totals disagree with result.json ({n})",
            ("run", "task_name", "trial_name", "metrics_mismatch"),
        ),
        *_listed(
            t.filter(pl.col("tokens_not_recorded").fill_null(False)),
            "Trials whose agent recorded 0 input and 0 output tokens although it ran "
            "({n}): counted as unknown tokens, not as 0",
            ("run", "task_name", "trial_name", "agent_name"),
        ),
        *_listed(
            t.filter(pl.col("timestamp_out_of_window").fill_null(False)),
            "Trials with a time outside their own start..finish ({n}): a naive "
            "time read in the wrong zone, or a bad clock",
            ("run", "task_name", "trial_name", "started_at", "finished_at", "exception_at"),
        ),
    ]


def _job_problems(jobs: pl.DataFrame) -> list[str]:
    """Jobs without a recorded end, and jobs whose declared trial count differs from the
    trials found on disk."""
    out = _listed(
        jobs.filter(pl.col("state") != "complete"),
        "Jobs without a recorded end ({n}): 'running' only when the "
        "times Harbor wrote inside the files are recent as well as the file writes",
        ("job_name", "state", "started_at", "updated_at"),
    )
    short = jobs.filter(
        pl.col("n_trials_declared").is_not_null()
        & (pl.col("n_trials_declared") != pl.col("n_trials_found"))
    )
    if short.height:
        out.append(
            H.box(
                f"{short.height} job(s) declare a different number of trials than found on disk "
                "(a partial copy, or a job still running):",
                "warn",
            )
        )
        out.append(
            H.table(
                short.select("job_name", "state", "n_trials_declared", "n_trials_found"),
                headers={"n_trials_declared": "declared", "n_trials_found": "found"},
            )
        )
    return out
