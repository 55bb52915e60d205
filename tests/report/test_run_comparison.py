"""evalkit.report.run_comparison builds the report sections comparing the baseline (A)
with the candidate (B): the comparison itself (``evalkit.compare.compare``, once per
context, with the report's gate parameters), the verdict badges (green only for a
meaningful comparison and a guard that compared everything), the gate section with the
plan after a Hold, transitions, tasks broken / fixed with their evidence bundles (Markdown
rendered without raw HTML or images) and the config diff.

Checked here: the cache and parameters of ``comparison``, ``badges`` and ``evidence_of`` on
stand-in results, ``plan_block``'s text, ``_markdown``'s escaping and fallback, every
section without a pair, and the sections on the bundled runs (runs/README.md: 12 tasks,
2 fixed, 0 broken, one variable changed: model) and on an A/B whose task checksums all
differ (tests/factories.py ``skills_ab``).
"""

from __future__ import annotations

import sys
from dataclasses import replace
from types import SimpleNamespace
from typing import Any

import polars as pl
import pytest

from evalkit import report
from evalkit.report import run_comparison as rc
from evalkit.report.context import Context
from tests.factories import ROOT, skills_ab

RUNS = ROOT / "runs"
BASE = "evalkit-scripted__baseline__smoke-tasks"
CAND = "evalkit-scripted__candidate__smoke-tasks"


@pytest.fixture(scope="module")
def bundled() -> Context:
    return report.load_context(RUNS)


@pytest.fixture(scope="module")
def changed_tasks(tmp_path_factory: pytest.TempPathFactory) -> Context:
    """The scripted baseline against a copy whose every task checksum differs."""
    no, yes = skills_ab(tmp_path_factory.mktemp("ab"))
    return report.load_context(None, runs={"noskills": str(no), "skills": str(yes)})


def _context(runs: Any = None, **kw: Any) -> Context:
    kw = {"order": [], "candidate": None, "baseline": None, **kw}
    return Context(runs=runs, source="s", run_by="label", choice="", **kw)


def _alone() -> Context:
    runs = SimpleNamespace(trials=pl.DataFrame({"run": ["a"]}))
    return _context(runs, order=["a"], candidate="a")


# --- comparison -------------------------------------------------------------------------


def test_comparison_is_computed_once_per_context(bundled: Context) -> None:
    first = rc.comparison(bundled)
    assert rc.comparison(bundled) is first
    assert (first.a, first.b) == (BASE, CAND)  # A = baseline, B = candidate


def test_comparison_takes_the_gate_parameters_of_the_report() -> None:
    ctx = report.load_context(RUNS, gate_lambda=3.0, gate_alpha=0.2, gate_tau=0.5)
    g = rc.comparison(ctx).gate()
    assert (g.lam, g.alpha, g.tau) == (3.0, 0.2, 0.5)
    note = rc.gate(ctx).html()
    # runs/README.md: 2 tasks fixed, 0 broken: net = 2 - 3 * 0 = 2
    assert "net = wins − λ·losses = 2 (λ = 3)" in note
    assert "(needs &lt; α = 0.2)" in note and "(cap τ = 50%)" in note


def test_without_a_pair_there_is_no_comparison_and_every_section_says_so() -> None:
    ctx = _alone()
    assert rc.comparison(ctx) is None
    want = (
        '<div class="ek"><div class="ek-warn">There is no second run over the same tasks '
        "to compare with.</div></div>"
    )
    for section in (rc.gate, rc.transitions, rc.tasks_changed, rc.config_diff):
        assert section(ctx).html() == want, section.__name__


# --- badges -----------------------------------------------------------------------------


def _cmp(verdict: str, decision: str, not_compared: tuple[str, ...] = (), meaningful=True):
    seen: list[int] = []

    def evidence(n: int) -> SimpleNamespace:
        seen.append(n)
        return SimpleNamespace(meaningful=meaningful)

    return SimpleNamespace(
        gate=lambda: SimpleNamespace(verdict=verdict),
        regression_guard=lambda: SimpleNamespace(
            decision=decision, not_compared=list(not_compared)
        ),
        evidence=evidence,
        seen=seen,
    )


def _ctx_params(**params: Any) -> Context:
    return _context(params=params)


def test_evidence_check_uses_the_reports_min_shared_tasks() -> None:
    cmp = _cmp("Ship it", "merge")
    rc.evidence_of(_ctx_params(), cmp)
    rc.evidence_of(_ctx_params(min_shared_tasks="7"), cmp)  # a -p value arrives as text
    assert cmp.seen == [5, 7]  # docs/report.md: min_shared_tasks default 5


def test_thin_evidence_shows_one_neutral_badge() -> None:
    html = rc.badges(_ctx_params(), _cmp("Ship it", "merge", meaningful=False))
    assert html == (
        '<p class="ek-badges"><span id="evalkit-ship-gate"><span class="ek-verdict none">'
        "No meaningful comparison</span></span></p>"
    )


@pytest.mark.parametrize(
    ("verdict", "decision", "not_compared", "ship_tone", "guard"),
    [
        ("Ship it", "merge", (), "good", ("good", "Regression guard: merge")),
        ("Hold: not enough evidence", "flag", (), "hold", ("hold", "Regression guard: flag")),
        ("Don't ship", "revert", ("cost",), "bad", ("bad", "Regression guard: revert")),
        ("Ship it", "merge", ("cost", "steps"),
         "good", ("hold", "Regression guard: merge (cost and steps not compared)")),
        ("Something new", "unheard-of", (), "hold", ("hold", "Regression guard: unheard-of")),
    ],
)  # fmt: skip
def test_badges_colour_each_verdict_and_never_green_a_partial_guard(
    verdict: str, decision: str, not_compared: tuple, ship_tone: str, guard: tuple
) -> None:
    html = rc.badges(_ctx_params(), _cmp(verdict, decision, not_compared))
    ship = f'<span class="ek-verdict {ship_tone}">Ship gate: {verdict}</span>'.replace(
        "'", "&#x27;"
    )
    assert f'<span id="evalkit-ship-gate">{ship}</span>' in html
    assert f'<span id="evalkit-guard"><span class="ek-verdict {guard[0]}">{guard[1]}</span>' in html


# --- plan -------------------------------------------------------------------------------


def test_plan_block_lists_tasks_odds_and_assumptions() -> None:
    tasks = [f"t{i:02d}" for i in range(22)] + ["<b>x</b>"]
    plan = SimpleNamespace(
        tasks=tasks,
        attempts_per_task={t: 2 for t in tasks},
        line=lambda: "Plan: 46 more attempts on 23 tasks",
        reasons=["the gate holds", "Ship it is out of reach", "falls short of 80%"],
        e_value=1.583333,
        alpha=0.05,
        p_ship_sequential=0.1234,
        assumptions=["only B runs", "independent attempts"],
    )
    html = rc.plan_block(plan)
    items = html.split("<ul>")[1].split("</ul>")[0].removeprefix("<li>").removesuffix("</li>")
    shown = ", ".join(f"t{i:02d} (+2)" for i in range(20))
    assert items.split("</li><li>") == [
        "46 more attempts on 23 tasks",  # the line without its "Plan: "
        f"Tasks: {shown} and 3 more. Run them with: evalkit run --plan summary.json",
        "Ship it is out of reach",  # reasons after the first (the gate's own)
        "falls short of 80%",
        # e-value to 3 significant digits; ships at 1 / alpha = 20; 12.34% -> 12%
        "Looking again after every batch: the anytime-valid e-value is 1.58 (ships at >= 20);"
        " chance it ships after the plan 12%.".replace(">", "&gt;"),
        "Assumes: only B runs; independent attempts.",
    ]
    assert html.startswith('<div id="evalkit-plan"><p><b>Next step (Hold)</b></p>')
    one = rc.plan_block(plan, shown=30)
    assert "&lt;b&gt;x&lt;/b&gt; (+2). Run them" in one and "<b>x</b>" not in one


def test_plan_block_without_tasks_has_no_task_line() -> None:
    plan = SimpleNamespace(tasks=[], attempts_per_task={}, line=lambda: "Plan: nothing to run",
                           reasons=["r0"], e_value=1.0, alpha=0.1, p_ship_sequential=0.0,
                           assumptions=["a"])  # fmt: skip
    html = rc.plan_block(plan)
    assert "Tasks:" not in html and "(ships at &gt;= 10)" in html and "plan 0%." in html


# --- Markdown ---------------------------------------------------------------------------


def test_markdown_escapes_html_neutralises_links_and_never_loads_images() -> None:
    md = (
        "# Title\n\n<script>alert(1)</script>\n\n![pixel](http://evil.example/p.png)\n\n"
        "[click](javascript:alert(1))\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"
    )
    html = rc._markdown(md)
    assert html.startswith('<div class="ek-md"><h1>Title</h1>')
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<img" not in html
    assert '<span class="ek-note">[image not loaded: http://evil.example/p.png]</span>' in html
    assert "javascript:" not in html
    assert "<table>" in html and "<th>a</th>" in html


def test_markdown_without_mistune_is_preformatted_text(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "mistune", None)  # import fails
    assert rc._markdown("<b>x</b>\n# y") == '<pre class="ek-pre">&lt;b&gt;x&lt;/b&gt;\n# y</pre>'


# --- sections on the bundled runs -------------------------------------------------------


def test_gate_section_on_the_bundled_runs(bundled: Context) -> None:
    html = rc.gate(bundled).html()
    assert html.startswith('<div class="ek"><div id="evalkit-gate" class="ek-gate">')
    # runs/README.md: 2 fixed, 0 broken over 12 tasks: net 2 - 2 * 0 = 2, nothing broken
    assert "wins = tasks fixed (2), losses = tasks broken (0)" in html
    assert "net = wins − λ·losses = 2 (λ = 2)" in html
    assert "breaks / A-solved = 0.0% (cap τ = 10%)" in html
    assert "Ship gate: Hold: not enough evidence" in html
    assert 'id="evalkit-plan"' in html  # a Hold carries the plan
    assert "B − A over the 12 comparable tasks" in html


def test_transitions_note_counts_every_paired_task_once(bundled: Context) -> None:
    html = rc.transitions(bundled).html()
    note = html.split('<p class="ek-note">')[1].split("</p>")[0]
    counts = [int(note.split(k)[1].split(",")[0].split(".")[0]) for k in
              ("both pass ", "both fail ", "fixed (A fails, B passes) ",
               "broken (A passes, B fails) ")]  # fmt: skip
    assert sum(counts) == 12 and counts[2:] == [2, 0]  # runs/README.md
    assert "Only in A: 0; only in B: 0." in note
    assert "Tasks left out of the paired figures" not in html


def test_tasks_changed_inlines_evidence_and_caps_it(
    bundled: Context, monkeypatch: pytest.MonkeyPatch
) -> None:
    html = rc.tasks_changed(bundled).html()
    assert "<h4>Broken: A passed, B does not (0)</h4>" in html
    assert html.split("(0)</h4>")[1].startswith('\n<p class="ek-note">None.</p>')
    assert "<h4>Fixed: A did not pass, B does (2)</h4>" in html
    assert html.count("<summary>Evidence: ") == 2
    monkeypatch.setattr(rc, "MAX_BUNDLES", 1)
    capped = rc.tasks_changed(bundled).html()
    assert capped.count("<summary>Evidence: ") == 1
    assert "1 more: `evalkit compare A B -v`" in capped


def test_a_failing_evidence_bundle_is_shown_in_its_place(
    bundled: Context, monkeypatch: pytest.MonkeyPatch
) -> None:
    def boom(*_: Any) -> str:
        raise RuntimeError("no trajectory")

    monkeypatch.setattr(rc, "evidence_bundle", boom)
    html = rc.tasks_changed(bundled).html()
    assert html.count("Evidence bundle failed: RuntimeError: no trajectory") == 2


def test_config_diff_names_the_one_changed_variable(bundled: Context) -> None:
    html = rc.config_diff(bundled).html()
    assert html.startswith('<div class="ek"><p>one variable changed: model</p>')  # README
    assert ">scripted/baseline<" in html and ">scripted/candidate<" in html


@pytest.mark.parametrize("error", [ValueError("no config.json"), AttributeError("no jobs")])
def test_a_config_diff_that_cannot_be_made_is_a_warning(bundled: Context, error: Exception) -> None:
    def fail() -> None:
        raise error

    ctx = replace(bundled, cache={"comparison": SimpleNamespace(config_diff=fail)})
    assert rc.config_diff(ctx).html() == (
        f'<div class="ek"><div class="ek-warn">Config diff not available: {error}</div></div>'
    )


# --- sections when no task is comparable ------------------------------------------------


def test_gate_without_comparable_tasks_gives_the_reasons(changed_tasks: Context) -> None:
    html = rc.gate(changed_tasks).html()
    assert '<span class="ek-verdict none">No meaningful comparison</span>' in html
    assert "ek-verdict good" not in html
    assert (
        "A and B have no comparable task, so there are no paired figures. "
        "Reasons: task changed (checksum differs)." in html
    )
    assert "B − A over the" not in html  # no figures table


def test_transitions_list_the_tasks_left_out(changed_tasks: Context) -> None:
    html = rc.transitions(changed_tasks).html()
    assert "<summary>Tasks left out of the paired figures (12)</summary>" in html
    assert html.count("task changed (checksum differs)") == 12


def test_a_context_narrowed_to_the_pair_reuses_the_comparison(bundled: Context) -> None:
    assert rc.comparison(bundled.narrow(True)) is rc.comparison(bundled)
