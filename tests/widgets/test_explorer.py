"""evalkit.widgets.explorer: the compare explorer (A / B pickers, Compare button, outcome
transitions, per-task list, both trajectories of a task side by side from their first
divergence).

Headless: widget values are set, observers fire, buttons are clicked. Checked: the default
runs, the same-run guard, comparing only on Compare, the status line and the transitions
table (counts derived by hand), the task list per filter and its row labels, which attempts
open for a broken / fixed / unchanged task, a task one side lacks, one redraw per task, a
failing divergence, select_task outside the list and the static fallback. The basic
side-by-side flow is in test_widgets.py, the mime bundle in test_static.py.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import polars as pl
import pytest

import evalkit
from evalkit.load._columns import conform, empty
from evalkit.load.findings.columns import COLUMNS as FINDING_COLUMNS
from evalkit.load.steps.columns import STEP_COLUMNS, TOOL_CALL_COLUMNS
from evalkit.widgets import explorer as explorer_mod
from evalkit.widgets.explorer import CompareExplorer, _pick, _transitions_html
from evalkit.widgets.index import TrialIndex
from tests.conftest import OPENCLAW

T0 = datetime(2026, 1, 1, tzinfo=UTC)
#: task -> (A's outcomes, B's outcomes), one trial per attempt. Per-task pass is the strict
#: majority of attempts: t-broken 2/3 -> 1/3 (broken), t-fixed 0/2 -> 2/3 (fixed), t-fail and
#: t-same unchanged, t-only-a has no B attempt.
TASKS = {
    "t-broken": (["fail", "pass", "pass"], ["pass", "fail", "fail"]),
    "t-fixed": (["fail", "fail"], ["fail", "pass", "pass"]),
    "t-fail": (["fail"], ["timeout"]),
    "t-same": (["pass"], ["pass"]),
    "t-only-a": (["pass"], []),
}


def _index(runs: tuple[str, str] = ("A", "B")) -> TrialIndex:
    trials, steps, calls = [], [], []
    for task, per_run in TASKS.items():
        for run, outs in zip(runs, per_run, strict=True):
            for i, o in enumerate(outs):
                tid = f"{run}-{task}-{i + 1}"
                trials.append({
                    "trial_id": tid, "run": run, "job_name": f"job-{run}", "task_name": task,
                    "trial_name": tid, "trial_dir": None, "attempt": i + 1, "outcome": o,
                    "error_kind": "none", "reward": 1.0 if o == "pass" else 0.0, "started_at": T0,
                })  # fmt: skip
                steps += [
                    {"trial_id": tid, "step_index": 0, "source": "user", "message": "go"},
                    {"trial_id": tid, "step_index": 1, "source": "agent", "message": f"msg {tid}"},
                ]
                calls.append({
                    "trial_id": tid, "step_index": 1, "call_index": 0, "function_name": "bash",
                    "arguments": f'{{"command": "{o}"}}', "command": o, "observation": "",
                    "is_error": False,
                })  # fmt: skip
    return TrialIndex(
        trials=pl.DataFrame(trials),
        steps=conform(pl.DataFrame(steps), STEP_COLUMNS),
        tool_calls=conform(pl.DataFrame(calls), TOOL_CALL_COLUMNS),
        findings=empty(FINDING_COLUMNS),
    )


@pytest.fixture
def ex() -> CompareExplorer:
    return CompareExplorer(index=_index(), a="A", b="B")


def _values(ex: CompareExplorer) -> list[str]:
    return [v for _, v in ex.tasks.options]


# -- helpers ----------------------------------------------------------------------------------


def test_pick_takes_the_first_attempt_that_passed_or_did_not() -> None:
    opts = [("#1 fail (reward 0.0)", "t1"), ("#2 pass (reward 1.0)", "t2")]
    assert _pick(opts, want_pass=True) == "t2"
    assert _pick(opts, want_pass=False) == "t1"
    only_pass = [("#1 pass (reward 1.0)", "p1"), ("#2 pass (reward 1.0)", "p2")]
    assert _pick(only_pass, want_pass=False) == "p1"  # none failed: the first attempt
    assert _pick([], want_pass=True) is None


def test_transitions_table_counts_and_bolds_the_unchanged() -> None:
    trans = pl.DataFrame({
        "outcome_a": ["fail", "pass", "pass"], "outcome_b": ["pass", "pass", "fail"], "n": [3, 5, 2],
    })  # fmt: skip
    html = _transitions_html(trans)
    # outcomes in the fixed order (pass before fail), not in the data's order
    assert "<tr><th></th><th>B: pass</th><th>B: fail</th></tr>" in html
    bold, plain = "<td style='text-align:right;font-weight:700'>", "<td style='text-align:right;'>"
    assert f"<tr><th>A: pass</th>{bold}5</td>{plain}2</td></tr>" in html
    assert f"<tr><th>A: fail</th>{plain}3</td>{bold}</td></tr>" in html  # no fail -> fail


def test_transitions_table_of_nothing_says_so() -> None:
    empty_t = pl.DataFrame(schema={"outcome_a": pl.String, "outcome_b": pl.String, "n": pl.Int64})
    assert _transitions_html(empty_t) == "<p class='muted'>No comparable task.</p>"


# -- comparing --------------------------------------------------------------------------------


def test_the_status_line_counts_the_comparison(ex: CompareExplorer) -> None:
    # comparable: t-broken, t-fixed, t-fail, t-same; t-only-a is only in A
    assert ex.status.value == (
        "<div class='ekw'><b>4</b> comparable tasks: 1 fixed, 1 broken; "
        "1 only in A, 0 only in B.</div>"
    )


def test_the_transitions_show_modal_outcomes(ex: CompareExplorer) -> None:
    html = ex.transitions.value
    assert "Outcome transitions" in html
    bold, plain = "<td style='text-align:right;font-weight:700'>", "<td style='text-align:right;'>"
    # modal outcomes: t-broken pass -> fail, t-fixed fail -> pass, t-fail fail -> timeout,
    # t-same pass -> pass
    assert f"<tr><th>A: pass</th>{bold}1</td>{plain}1</td>{plain}</td></tr>" in html
    assert f"<tr><th>A: fail</th>{plain}1</td>{bold}</td>{plain}1</td></tr>" in html


def test_default_runs_are_the_two_newest_of_a_runs_object() -> None:
    runs = evalkit.load(OPENCLAW, progress=False)
    ex = CompareExplorer(runs)
    # the two runs of the fixture with the latest first start (May 26, 2026)
    assert ex.a.value == "openclaw-gateway__claude-opus-4-6__persistence"
    assert ex.b.value == "openclaw-gateway__claude-sonnet-4-6__persistence"
    assert ex.cmp is not None  # compared straight away


def test_one_run_is_not_compared_with_itself() -> None:
    ix = _index()
    ix.trials = ix.trials.filter(pl.col("run") == "A")
    ex = CompareExplorer(index=ix)
    assert ex.a.value == ex.b.value == "A"
    assert ex.cmp is None and ex.status.value == ""
    ex.go.click()
    assert ex.status.value == "<div class='ekw'>Pick two different runs.</div>" and ex.cmp is None


def test_picking_runs_does_not_compare_until_the_button(
    ex: CompareExplorer, monkeypatch: pytest.MonkeyPatch
) -> None:
    n = {"calls": 0}
    real = explorer_mod.compare

    def counting(*args, **kwargs):
        n["calls"] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(explorer_mod, "compare", counting)
    ex.a.value, ex.b.value = "B", "A"
    assert n["calls"] == 0 and "1 only in A" in ex.status.value  # still the old comparison
    ex.go.click()
    assert n["calls"] == 1
    assert "0 only in A, 1 only in B" in ex.status.value  # swapped: t-only-a is only in B
    assert "1 fixed, 1 broken" in ex.status.value


# -- the task list ----------------------------------------------------------------------------


def test_changed_tasks_list_broken_then_fixed_then_other_changes(ex: CompareExplorer) -> None:
    # t-fail changed outcome (fail -> timeout) without changing pass; t-same and the
    # one-sided t-only-a did not change
    assert _values(ex) == ["t-broken", "t-fixed", "t-fail"]


@pytest.mark.parametrize(
    ("kind", "tasks"),
    [
        ("broken", ["t-broken"]),
        ("fixed", ["t-fixed"]),
        ("all", ["t-broken", "t-fixed", "t-fail", "t-only-a", "t-same"]),
        ("changed", ["t-broken", "t-fixed", "t-fail"]),
    ],
)
def test_the_filter_buttons_pick_the_tasks(
    ex: CompareExplorer, kind: str, tasks: list[str]
) -> None:
    ex.show_kind.value = "all" if kind != "all" else "broken"  # make the next set fire
    ex.show_kind.value = kind
    assert _values(ex) == tasks


def test_task_rows_are_labelled_with_bucket_and_attempt_outcomes(ex: CompareExplorer) -> None:
    ex.show_kind.value = "all"
    labels = dict((v, lab) for lab, v in ex.tasks.options)
    assert labels["t-broken"] == (
        "BROKEN  "
        + "t-broken".ljust(40)
        + " A: "
        + "pass 2, fail 1".ljust(24)
        + " B: fail 2, pass 1"
    )
    assert labels["t-fixed"].startswith("FIXED   t-fixed ")
    assert labels["t-only-a"].startswith(" " * 8 + "t-only-a")
    assert labels["t-only-a"].endswith(" B: -")  # no B attempt


# -- one task ---------------------------------------------------------------------------------


def test_a_broken_task_opens_on_a_passing_and_b_failing_attempt(ex: CompareExplorer) -> None:
    ex.tasks.value = "t-broken"
    assert [v for _, v in ex.attempt_a.options] == ["A-t-broken-1", "A-t-broken-2", "A-t-broken-3"]
    assert ex.attempt_a.options[0][0] == "#1 fail (reward 0.0)"
    assert (ex.attempt_a.value, ex.attempt_b.value) == ("A-t-broken-2", "B-t-broken-2")
    assert "msg A-t-broken-2" in ex.pane_a.value and "msg B-t-broken-2" in ex.pane_b.value
    assert "<h4>A</h4>" in ex.pane_a.value and "<h4>B</h4>" in ex.pane_b.value


def test_a_fixed_task_opens_on_a_failing_and_b_passing_attempt(ex: CompareExplorer) -> None:
    ex.tasks.value = "t-fixed"
    assert (ex.attempt_a.value, ex.attempt_b.value) == ("A-t-fixed-1", "B-t-fixed-2")


def test_an_unchanged_task_without_a_failing_b_attempt_opens_b_first(ex: CompareExplorer) -> None:
    ex.select_task("t-same")  # not in the "changed" list
    assert ex.tasks.value is None
    assert (ex.attempt_a.value, ex.attempt_b.value) == ("A-t-same-1", "B-t-same-1")


def test_a_task_without_b_attempts_says_so(ex: CompareExplorer) -> None:
    ex.select_task("t-only-a")
    assert ex.attempt_b.options == () and ex.attempt_b.value is None
    assert ex.pane_b.value == "<div class='ekw muted'>B: no attempt of this task.</div>"
    assert "msg A-t-only-a-1" in ex.pane_a.value


def test_picking_another_attempt_redraws_its_pane(ex: CompareExplorer) -> None:
    ex.tasks.value = "t-broken"
    ex.attempt_a.value = "A-t-broken-3"
    assert "msg A-t-broken-3" in ex.pane_a.value and "msg A-t-broken-2" not in ex.pane_a.value


def test_opening_a_task_draws_the_pair_once(
    ex: CompareExplorer, monkeypatch: pytest.MonkeyPatch
) -> None:
    n = {"calls": 0}
    real = explorer_mod.first_divergence

    def counting(*args, **kwargs):
        n["calls"] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(explorer_mod, "first_divergence", counting)
    ex.tasks.value = "t-fixed"  # two attempt pickers change: still one redraw
    assert n["calls"] == 1


def test_the_divergence_marks_the_differing_steps(ex: CompareExplorer) -> None:
    ex.tasks.value = "t-broken"  # A's "pass" call against B's "fail" call, both at step 1
    assert ex.divergence.value.startswith("<div class='ekw'><b>First divergence:</b> ")
    for pane in (ex.pane_a.value, ex.pane_b.value):
        assert '<div class="step agent diverge"><span class="src">#1 agent' in pane


def test_a_failing_divergence_is_reported_escaped(
    ex: CompareExplorer, monkeypatch: pytest.MonkeyPatch
) -> None:
    def boom(*args, **kwargs):
        raise ValueError("<b>bad</b>")

    monkeypatch.setattr(explorer_mod, "first_divergence", boom)
    ex.tasks.value = "t-fixed"
    assert ex.divergence.value == (
        "<div class='ekw'>First divergence failed: &lt;b&gt;bad&lt;/b&gt;</div>"
    )
    assert "msg A-t-fixed-1" in ex.pane_a.value  # the panes are still drawn, unmarked
    assert " diverge" not in ex.pane_a.value


def test_opening_an_empty_task_does_nothing(ex: CompareExplorer) -> None:
    ex.tasks.value = "t-broken"
    before = ex.pane_a.value
    ex._on_task(None)
    ex._on_task("")
    assert ex.pane_a.value == before


# -- static fallback --------------------------------------------------------------------------


def test_static_html_has_the_runs_and_the_task_table(ex: CompareExplorer) -> None:
    html = ex.static_html()
    assert "<p>A: A, B: B</p>" in html
    assert "Tasks (changed first)" in html and "1 fixed, 1 broken" in html
    for t in TASKS:
        assert t in html
    assert html.index("t-broken") < html.index("t-fixed") < html.index("t-same")


def test_static_html_escapes_run_labels() -> None:
    ex = CompareExplorer(index=_index(runs=("<i>A", "B&B")), a="<i>A", b="B&B")
    assert "<p>A: &lt;i&gt;A, B: B&amp;B</p>" in ex.static_html()
    assert "<i>A" not in ex.static_html()


def test_default_runs_from_an_index_alone_are_the_two_newest() -> None:
    # names sort zeta > mid > alpha; starts make alpha (Jan 2) and mid (Jan 3) the newest
    t = pl.DataFrame(
        {
            "trial_id": ["z1", "a1", "m1"],
            "run": ["zeta", "alpha", "mid"],
            "task_name": ["t", "t", "t"],
            "attempt": [1, 1, 1],
            "outcome": ["pass", "fail", "pass"],
            "reward": [1.0, 0.0, 1.0],
            "started_at": [T0, T0 + timedelta(days=1), T0 + timedelta(days=2)],
        }
    )
    ex = CompareExplorer(index=TrialIndex(trials=t))
    assert (ex.a.value, ex.b.value) == ("alpha", "mid")
    assert list(ex.a.options) == ["zeta", "alpha", "mid"]


def test_a_task_without_a_pair_clears_the_previous_divergence(ex: CompareExplorer) -> None:
    ex.show_kind.value = "all"
    ex.tasks.value = "t-broken"
    assert "First divergence" in ex.divergence.value
    ex.tasks.value = "t-only-a"  # no B attempt: nothing to compare
    assert ex.divergence.value == ""
