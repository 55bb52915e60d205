"""The report's first screen: the answer before the evidence.

Which run was compared with which, the ship gate and the regression guard with a one-line
reason each, the headline figures with their intervals (``evalkit.compare.headline``, the
same figures and text as ``evalkit compare`` and summary.json), the tasks broken and fixed,
and every warning that changes how to read them. A comparison without enough evidence
(``min_shared_tasks``, an interval too wide to mean anything) shows no verdict colours: it
says "No meaningful comparison" and why.
"""

from __future__ import annotations

from typing import Any

from evalkit.compare.headline import HEADLINE, disagreement
from evalkit.report import html as H
from evalkit.report.context import Context
from evalkit.report.overview import stale_warning
from evalkit.report.run_comparison import badges, comparison, evidence_of, figures_table
from evalkit.report.section_output import SectionOutput

#: Task names listed per line (broken, fixed) before "and N more".
MAX_NAMES = 8


def _pair_line(ctx: Context, cmp: Any) -> str:
    s = cmp.side_summary(paired=True)

    def att(k: str) -> str:
        lo, hi = s[k]["attempts_min"], s[k]["attempts_max"]
        return "–" if lo is None else (str(lo) if lo == hi else f"{lo}–{hi}")

    a, b = ctx.pair
    paired = len(cmp.paired_tasks)
    left_out = len(cmp.not_comparable)
    tasks = f"{paired} task(s) paired" + (
        f" ({left_out} shared task(s) not comparable)" if left_out else ""
    )
    return (
        f'<p class="ek-pair"><b>A</b> (baseline) <code>{H.esc(a)}</code> &nbsp;vs&nbsp; '
        f"<b>B</b> (candidate) <code>{H.esc(b)}</code> — {H.esc(tasks)}, "
        f"attempts per task A {att('a')}, B {att('b')}; "
        f"{len(cmp.only_in_a)} only in A, {len(cmp.only_in_b)} only in B</p>"
    )


def _reasons(ctx: Context, cmp: Any) -> list[str]:
    g, guard = cmp.gate(), cmp.regression_guard()
    ev = evidence_of(ctx, cmp)
    out = []
    if not ev.meaningful:
        out.append(f"Not decided: {'; '.join(ev.reasons)}.")
        out.append(
            f"For the record, the ship gate says {g.verdict} and the regression guard "
            f"{guard.decision}; neither means anything on this overlap."
        )
        return out
    out.append(f"Ship gate — {g.reasons[0]}." if g.reasons else f"Ship gate — {g.verdict}.")
    out.append(f"Regression guard — {guard.summary()}.")
    why = disagreement(cmp, g.verdict, ctx.params.get("confidence", 0.95))
    if why:
        out.append(why)
    return out


def _names(label: str, names: list[str]) -> str:
    if not names:
        return f"<li><b>{H.esc(label)} (0)</b></li>"
    shown = ", ".join(f"<code>{H.esc(n)}</code>" for n in names[:MAX_NAMES])
    more = f" and {len(names) - MAX_NAMES} more" if len(names) > MAX_NAMES else ""
    return f"<li><b>{H.esc(label)} ({len(names)})</b>: {shown}{more}</li>"


def warnings(ctx: Context, cmp: Any | None, evidence: bool = True) -> list[str]:
    """What changes how to read the answer: stale data, thin evidence (``evidence``), load
    errors."""
    out = []
    stale = stale_warning(ctx)
    if stale:
        out.append(stale)
    if cmp is not None and evidence:
        ev = evidence_of(ctx, cmp)
        out += [f"Thin evidence: {r}." for r in ev.reasons]
    n_err = ctx.load_errors.height
    if n_err:
        out.append(
            f"{n_err} load error(s): some files are missing or could not be read fully (see "
            "Data quality and What was loaded); their trials count as incomplete."
        )
    return out


def answer(ctx: Context) -> SectionOutput:
    """The first screen (module docstring)."""
    cmp = comparison(ctx)
    body = []
    if cmp is None:
        why = (
            f"Only one run to look at ({ctx.candidate}): nothing to compare."
            if ctx.candidate
            else "No trials were found."
        )
        body.append(H.box(why, "warn"))
    else:
        body.append(_pair_line(ctx, cmp))
        body.append(badges(ctx, cmp))
        body.append(
            "<ul class='ek-reasons'>"
            + "".join(f"<li>{H.esc(r)}</li>" for r in _reasons(ctx, cmp))
            + "</ul>"
        )
        body.append(figures_table(cmp, HEADLINE))
        body.append(
            "<ul class='ek-changed'>"
            + _names("Broken (A passed, B does not)", cmp.broken)
            + _names("Fixed (A did not pass, B does)", cmp.fixed)
            + "</ul>"
        )
    for w in warnings(ctx, cmp, evidence=False):  # the reasons above already say it
        body.append(H.box(w, "warn"))
    return SectionOutput([f'<div id="evalkit-answer" class="ek-answer">{"".join(body)}</div>'])
