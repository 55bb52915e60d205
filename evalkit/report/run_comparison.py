"""Report sections comparing the baseline (A) with the candidate (B): gate verdicts, paired
statistics, transitions, tasks broken and fixed with their evidence, config diff."""

from __future__ import annotations

from typing import Any

import polars as pl

from evalkit import charts
from evalkit.compare import compare, evidence_bundle
from evalkit.compare.headline import MIN_SHARED_TASKS, disagreement, figure_rows
from evalkit.report import html as H
from evalkit.report.context import Context
from evalkit.report.section_output import SectionOutput

TONE = {
    "Ship it": "good",
    "Hold: not enough evidence": "hold",
    "Don't ship": "bad",
    "merge": "good",
    "flag": "hold",
    "revert": "bad",
}
#: Evidence bundles inlined per list (broken / fixed); the rest are only named.
MAX_BUNDLES = 12


def comparison(ctx: Context) -> Any | None:
    """``evalkit.compare.compare`` of baseline vs candidate (cached on the context), or None
    when there is no pair."""
    if ctx.pair is None:
        return None
    if "comparison" not in ctx.cache:
        a, b = ctx.pair
        p = ctx.params
        ctx.cache["comparison"] = compare(
            ctx.runs,
            a,
            b,
            lam=p.get("gate_lambda", 2.0),
            alpha=p.get("gate_alpha", 0.05),
            tau=p.get("gate_tau", 0.10),
            confidence=p.get("confidence", 0.95),
            checksums=p.get("checksums", "exclude"),
        )
    return ctx.cache["comparison"]


def _no_pair(ctx: Context) -> SectionOutput | None:
    if ctx.pair is None:
        return SectionOutput(
            [H.box("There is no second run over the same tasks to compare with.", "warn")]
        )
    return None


def evidence_of(ctx: Context, cmp: Any) -> Any:
    """The comparison's evidence check with the report's ``min_shared_tasks``."""
    return cmp.evidence(int(ctx.params.get("min_shared_tasks", MIN_SHARED_TASKS)))


def badges(ctx: Context, cmp: Any) -> str:
    """The verdict badges. Green only for a meaningful comparison, and the guard's only when
    it compared every dimension; otherwise neutral."""
    g, guard = cmp.gate(), cmp.regression_guard()
    if not evidence_of(ctx, cmp).meaningful:
        return (
            '<p class="ek-badges"><span id="evalkit-ship-gate">'
            f"{H.verdict('No meaningful comparison', 'none')}</span></p>"
        )
    guard_tone = TONE.get(guard.decision, "hold")
    guard_text = "Regression guard: " + guard.decision
    if guard.not_compared and guard_tone == "good":
        guard_tone = "hold"
        guard_text += f" ({' and '.join(guard.not_compared)} not compared)"
    ship = H.verdict("Ship gate: " + g.verdict, TONE.get(g.verdict, "hold"))
    return (
        f'<p class="ek-badges"><span id="evalkit-ship-gate">{ship}</span>'
        f'<span id="evalkit-guard">{H.verdict(guard_text, guard_tone)}</span></p>'
    )


def figures_table(cmp: Any, keys: tuple[str, ...] | None = None) -> str:
    """The compared figures (evalkit.compare.headline): A, B, B − A and its interval."""
    headers = ("", "A (baseline)", "B (candidate)", "B − A", "interval")
    right = dict.fromkeys(headers[1:4], "right")
    return H.table(figure_rows(cmp.figures, keys, headers), right)


def gate(ctx: Context) -> SectionOutput:
    """Gate verdicts with their reasons, the evidence check, and every compared figure."""
    miss = _no_pair(ctx)
    if miss:
        return miss
    cmp = comparison(ctx)
    g, guard = cmp.gate(), cmp.regression_guard()
    ev = evidence_of(ctx, cmp)
    out = SectionOutput()
    out.append(f'<div id="evalkit-gate" class="ek-gate">{badges(ctx, cmp)}</div>')
    if not ev.meaningful:
        out.append(H.box("No meaningful comparison: " + "; ".join(ev.reasons) + ".", "warn"))
    reasons = [f"Ship gate — {r}" for r in g.reasons] + [
        f"Regression guard — {r}" for r in guard.reasons
    ]
    why = disagreement(cmp, g.verdict, ctx.params.get("confidence", 0.95))
    out.append(
        "<ul>" + "".join(f"<li>{H.esc(r)}</li>" for r in reasons + ([why] if why else [])) + "</ul>"
    )
    out.append(
        H.note(
            f"Ship gate: wins = tasks fixed ({g.wins}), losses = tasks broken ({g.losses}), "
            f"A solved {g.a_solved} of {g.n_tasks} comparable tasks; net = wins − λ·losses = {g.net:g} (λ = {g.lam:g}); "
            f"one-sided binomial p = {g.p_value:.3g} (needs < α = {g.alpha:g}); breaks / A-solved = {g.rho:.1%} (cap τ = {g.tau:.0%}). "
            + (
                f"Shipping would need at least {g.min_wins_to_ship} wins with these losses."
                if g.min_wins_to_ship is not None
                else ""
            )
        )
    )
    out.append(H.note(f"Regression guard: {guard.line()}."))
    if cmp.plan is not None:
        out.append(plan_block(cmp.plan))
    if not cmp.paired_tasks:
        reasons = sorted(set(cmp.not_comparable.values()))
        out.append(
            H.box(
                f"A and B have no comparable task, so there are no paired figures. "
                f"Reasons: {'; '.join(reasons) or 'no shared task'}.",
                "warn",
            )
        )
        return out
    out.append(figures_table(cmp))
    st = cmp.stats
    method = f" Intervals: {st.method}." if st is not None and getattr(st, "method", None) else ""
    out.append(
        H.note(
            f"B − A over the {len(cmp.paired_tasks)} comparable tasks (both runs, finished "
            "attempts, unchanged task); rates per task, then averaged over tasks; intervals "
            "clustered by task (attempts of one task are not independent). Unknown stays "
            f"unknown: a figure unknown on a side is not compared.{method}"
        )
    )
    return out


def plan_block(p: Any, shown: int = 20) -> str:
    """After a Hold: what to run next (evalkit.stats.plan), its chance, cost and assumptions."""
    tasks = ", ".join(f"{t} (+{p.attempts_per_task[t]})" for t in p.tasks[:shown])
    more = f" and {len(p.tasks) - shown} more" if len(p.tasks) > shown else ""
    items = [p.line().removeprefix("Plan: ")]
    if p.tasks:
        items.append(f"Tasks: {tasks}{more}. Run them with: evalkit run --plan summary.json")
    items += p.reasons[1:]
    items.append(
        f"Looking again after every batch: the anytime-valid e-value is {p.e_value:.3g} "
        f"(ships at >= {1 / p.alpha:g}); chance it ships after the plan "
        f"{100 * p.p_ship_sequential:.0f}%."
    )
    items.append("Assumes: " + "; ".join(p.assumptions) + ".")
    body = "".join(f"<li>{H.esc(i)}</li>" for i in items)
    return f'<div id="evalkit-plan"><p><b>Next step (Hold)</b></p><ul>{body}</ul></div>'


def transitions(ctx: Context) -> SectionOutput:
    """Outcome transitions (modal outcome per task) and the per-task A-vs-B scatter."""
    miss = _no_pair(ctx)
    if miss:
        return miss
    cmp = comparison(ctx)
    a, b = ctx.pair
    out = SectionOutput(
        [
            charts.transitions_chart(
                cmp.transitions, "outcome_a", "outcome_b", "n", a_label=a, b_label=b
            ),
            charts.ab_scatter(ctx.trials, a, b, tasks=cmp.tasks),
        ]
    )
    counts = {k: len(v) for k, v in cmp.buckets.items()}
    out.append(
        H.note(
            f"Per task (strict majority of attempts when there are several): both pass {counts['both_pass']}, "
            f"both fail {counts['both_not_pass']}, fixed (A fails, B passes) {counts['only_b']}, "
            f"broken (A passes, B fails) {counts['only_a']}. Only in A: {len(cmp.only_in_a)}; only in B: {len(cmp.only_in_b)}."
        )
    )
    nc = cmp.not_comparable
    if nc:
        out.append(
            H.details(
                f"Tasks left out of the paired figures ({len(nc)})",
                H.table(pl.DataFrame({"task": list(nc), "reason": list(nc.values())})),
            )
        )
    return out


def _markdown(text: str) -> str:
    """Evidence Markdown as HTML: raw HTML escaped, unsafe link schemes neutralised
    (mistune), and images shown as text: an <img> would fetch its URL when the report
    opens (a tracking pixel in a trajectory, and the report would no longer be offline)."""
    try:
        import mistune

        class _NoImages(mistune.HTMLRenderer):
            def image(self, text: str, url: str, title: str | None = None) -> str:
                return f'<span class="ek-note">[image not loaded: {H.esc(url)}]</span>'

        md = mistune.create_markdown(
            escape=True, renderer=_NoImages(escape=True), plugins=["table"]
        )
        return f'<div class="ek-md">{md(text)}</div>'
    except Exception:
        return H.pre(text)


def tasks_changed(ctx: Context) -> SectionOutput:
    """Tasks broken and fixed, each with its evidence bundle (attempts, failing assertions,
    verifier output, condensed trajectories, first divergence, findings) inlined."""
    miss = _no_pair(ctx)
    if miss:
        return miss
    cmp = comparison(ctx)
    a, b = ctx.pair
    t = cmp.tasks
    out = SectionOutput()
    for name, tasks in (
        ("Broken: A passed, B does not", cmp.broken),
        ("Fixed: A did not pass, B does", cmp.fixed),
    ):
        out.append(H.h(4, f"{name} ({len(tasks)})"))
        if not tasks:
            out.append(H.note("None."))
            continue
        rows = t.filter(pl.col("task_name").is_in(tasks)).select(
            "task_name", "outcomes_a", "outcomes_b", "pass_rate_a", "pass_rate_b", "d_reward"
        )
        out.append(
            H.table(
                rows,
                {"pass_rate_a": "pct", "pass_rate_b": "pct", "d_reward": "float"},
                headers={
                    "task_name": "task",
                    "outcomes_a": "A attempts",
                    "outcomes_b": "B attempts",
                    "pass_rate_a": "A pass",
                    "pass_rate_b": "B pass",
                    "d_reward": "reward B − A",
                },
            )
        )
        for task in tasks[:MAX_BUNDLES]:
            try:
                body = _markdown(evidence_bundle(ctx.runs, a, b, task))
            except Exception as e:
                body = H.box(f"Evidence bundle failed: {type(e).__name__}: {e}", "warn")
            out.append(H.details(f"Evidence: {task}", body))
        if len(tasks) > MAX_BUNDLES:
            out.append(
                H.note(
                    f"{len(tasks) - MAX_BUNDLES} more: `evalkit compare A B -v` or "
                    "evalkit.compare.evidence_bundle(runs, A, B, task) shows them."
                )
            )
    return out


def config_diff(ctx: Context) -> SectionOutput:
    """What changed between the two runs' Harbor configs (the one-variable rule)."""
    miss = _no_pair(ctx)
    if miss:
        return miss
    try:
        d = comparison(ctx).config_diff()
    except (ValueError, AttributeError) as e:
        return SectionOutput([H.box(f"Config diff not available: {e}", "warn")])
    out = SectionOutput([H.p(str(d.verdict))])
    if d.rows.height:
        cols = [c for c in ("key", "variable", "a", "b") if c in d.rows.columns]
        out.append(
            H.table(
                d.rows.select(cols),
                headers={"a": "A (baseline)", "b": "B (candidate)"},
                max_rows=80,
            )
        )
    for n in d.notes:
        out.append(H.note(n))
    return out
