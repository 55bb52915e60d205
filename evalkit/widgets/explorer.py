"""The compare explorer: pick runs A and B, see transitions and the per-task table, open a
task to read both trajectories side by side from their first divergence."""

from __future__ import annotations

from html import escape
from typing import Any

import ipywidgets as W
import polars as pl

from evalkit.compare import compare, first_divergence
from evalkit.load.runs import run_order
from evalkit.widgets.index import TrialIndex
from evalkit.widgets.render import CSS, trajectory_html, trial_header
from evalkit.widgets.static import frame_html, static_page, with_static

SHOW = ("changed", "broken", "fixed", "all")


def _transitions_html(trans: pl.DataFrame) -> str:
    if trans.height == 0:
        return "<p class='muted'>No comparable task.</p>"
    outs = [
        o
        for o in ("pass", "partial", "fail", "timeout", "error", "no-reward", "incomplete")
        if o in set(trans["outcome_a"].to_list()) | set(trans["outcome_b"].to_list())
    ]
    n = {(a, b): c for a, b, c in trans.select("outcome_a", "outcome_b", "n").iter_rows()}
    head = "".join(f"<th>B: {escape(o)}</th>" for o in outs)
    rows = "".join(
        f"<tr><th>A: {escape(a)}</th>"
        + "".join(
            f"<td style='text-align:right;{'font-weight:700' if a == b else ''}'>{n.get((a, b), '') or ''}</td>"
            for b in outs
        )
        + "</tr>"
        for a in outs
    )
    return f"<table><tr><th></th>{head}</tr>{rows}</table>"


def _pick(options: list[tuple[str, str]], want_pass: bool) -> str | None:
    """The first attempt that passed (or did not), else the first attempt."""
    hit = next((v for lab, v in options if (" pass " in lab) == want_pass), None)
    return hit or (options[0][1] if options else None)


class CompareExplorer(W.VBox):
    """``CompareExplorer(runs)``: A / B pickers (default: the two newest runs), a Compare
    button, the outcome transitions, the per-task table (changed tasks first) and, for the
    selected task, A's and B's trajectories side by side with the first divergence marked.
    The comparison is computed on Compare, not on every pick.
    """

    def __init__(
        self,
        runs: Any = None,
        a: str | None = None,
        b: str | None = None,
        *,
        index: TrialIndex | None = None,
    ) -> None:
        self.runs = runs
        self.index = index or TrialIndex(runs)
        labels = run_order(self.index.trials)
        b = b or (labels[-1] if labels else None)
        a = a or (labels[-2] if len(labels) > 1 else b)
        self.a = W.Dropdown(options=labels, value=a, description="A (baseline)")
        self.b = W.Dropdown(options=labels, value=b, description="B (candidate)")
        self.go = W.Button(description="Compare", button_style="primary")
        self.show_kind = W.ToggleButtons(options=SHOW, value="changed", description="tasks")
        self.status = W.HTML()
        self.transitions = W.HTML()
        self.tasks = W.Select(options=[], rows=10, layout=W.Layout(width="100%"))
        self.attempt_a = W.Dropdown(options=[], description="A attempt")
        self.attempt_b = W.Dropdown(options=[], description="B attempt")
        self.divergence = W.HTML()
        self.pane_a, self.pane_b = W.HTML(), W.HTML()
        self.cmp: Any = None
        self._busy = False
        self.task_rows = pl.DataFrame()
        self.go.on_click(lambda _: self.compare())
        self.show_kind.observe(lambda _: self._list_tasks(), names="value")
        self.tasks.observe(lambda ch: self._on_task(ch["new"]), names="value")
        self.attempt_a.observe(lambda _: self._draw_pair(), names="value")
        self.attempt_b.observe(lambda _: self._draw_pair(), names="value")
        half = W.Layout(width="50%", overflow="auto")
        self.pane_a.layout, self.pane_b.layout = half, W.Layout(width="50%", overflow="auto")
        super().__init__([
            W.HTML(CSS), W.HBox([self.a, self.b, self.go]), self.status, self.transitions, self.show_kind,
            self.tasks, W.HBox([self.attempt_a, self.attempt_b]), self.divergence, W.HBox([self.pane_a, self.pane_b]),
        ])  # fmt: skip
        if a and b and a != b:
            self.compare()

    # -- comparison ----------------------------------------------------------------------
    def compare(self) -> None:
        if self.a.value == self.b.value:
            self.status.value = "<div class='ekw'>Pick two different runs.</div>"
            return
        self.cmp = compare(
            self.runs if self.runs is not None else self.index.trials, self.a.value, self.b.value
        )
        c = self.cmp
        self.status.value = (
            f"<div class='ekw'><b>{len(c.paired_tasks)}</b> comparable tasks: {len(c.fixed)} fixed, "
            f"{len(c.broken)} broken; {len(c.only_in_a)} only in A, {len(c.only_in_b)} only in B.</div>"
        )
        self.transitions.value = (
            CSS
            + "<div class='ekw'><b>Outcome transitions</b> (tasks, modal outcome)"
            + _transitions_html(c.transitions)
            + "</div>"
        )
        rank = {"only_a": 0, "only_b": 1}
        self.task_rows = c.tasks.with_columns(
            pl.col("bucket").replace_strict(rank, default=2, return_dtype=pl.Int64).alias("_r")
        ).sort("_r", "task_name")
        self._list_tasks()

    def _list_tasks(self) -> None:
        t = self.task_rows
        if t.height == 0:
            self.tasks.options = []
            return
        k = self.show_kind.value
        if k == "broken":
            t = t.filter(pl.col("bucket") == "only_a")
        elif k == "fixed":
            t = t.filter(pl.col("bucket") == "only_b")
        elif k == "changed":
            t = t.filter(
                pl.col("bucket").is_in(["only_a", "only_b"])
                | (pl.col("outcome_a") != pl.col("outcome_b"))
            )
        tag = {"only_a": "BROKEN", "only_b": "FIXED"}
        self.tasks.options = [
            (
                f"{tag.get(r['bucket'] or '', ''):<7} {str(r['task_name'])[:40]:<40} A: {r['outcomes_a'] or '-':<24} B: {r['outcomes_b'] or '-'}",
                r["task_name"],
            )
            for r in t.iter_rows(named=True)
        ]

    # -- without a kernel -------------------------------------------------------------------
    def static_html(self) -> str:
        """The comparison's summary, transitions and per-task table (the widget's fallback)."""
        cols = ["task_name", "bucket", "outcomes_a", "outcomes_b"]
        rows = self.task_rows
        table = rows.select([c for c in cols if c in rows.columns]) if rows.height else rows
        head = f"<p>A: {escape(str(self.a.value))}, B: {escape(str(self.b.value))}</p>"
        return static_page(
            head,
            self.status.value,
            self.transitions.value,
            frame_html(table, "Tasks (changed first)"),
        )

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return with_static(super()._repr_mimebundle_(**kwargs), self.static_html())

    # -- one task ----------------------------------------------------------------------------
    def select_task(self, task: str) -> None:
        self.tasks.value = task if task in [v for _, v in self.tasks.options] else None
        if self.tasks.value is None:
            self._on_task(task)

    def _bucket(self, task: str) -> str | None:
        if self.task_rows.height == 0:
            return None
        row = self.task_rows.filter(pl.col("task_name") == task)
        return row["bucket"][0] if row.height else None

    def _attempts(self, run: str, task: str) -> list[tuple[str, str]]:
        t = self.index.trials.filter((pl.col("run") == run) & (pl.col("task_name") == task)).sort(
            "attempt"
        )
        return [
            (f"#{r['attempt']} {r['outcome']} (reward {r['reward']})", r["trial_id"])
            for r in t.iter_rows(named=True)
        ]

    def _on_task(self, task: str | None) -> None:
        if not task:
            return
        oa, ob = self._attempts(self.a.value, task), self._attempts(self.b.value, task)
        self._busy = True  # one redraw below, not one per attempt widget change
        try:
            self.attempt_a.options, self.attempt_b.options = oa, ob
            # default: the attempts that show the change: for a fixed task A's failing one
            # against B's passing one, otherwise (broken or unchanged) A's pass against B's fail
            fixed = self._bucket(task) == "only_b"
            self.attempt_a.value = _pick(oa, want_pass=not fixed)
            self.attempt_b.value = _pick(ob, want_pass=fixed)
        finally:
            self._busy = False
        self._draw_pair()

    def _draw_pair(self) -> None:
        if self._busy:
            return
        ta, tb = self.attempt_a.value, self.attempt_b.value
        ix = self.index
        div = None
        self.divergence.value = ""  # nothing to compare unless both sides have an attempt
        if ta and tb:
            try:
                div = first_divergence(
                    ta,
                    tb,
                    tool_calls=pl.concat([ix.calls(ta), ix.calls(tb)], how="diagonal_relaxed"),
                    steps=pl.concat([ix.steps(ta), ix.steps(tb)], how="diagonal_relaxed"),
                )
            except Exception as e:
                self.divergence.value = (
                    f"<div class='ekw'>First divergence failed: {escape(str(e))}</div>"
                )
        if div is not None:
            self.divergence.value = (
                f"<div class='ekw'><b>First divergence:</b> {escape(div.summary())}</div>"
            )
        sa = (div.a or {}).get("step_index") if div is not None and div.a else None
        sb = (div.b or {}).get("step_index") if div is not None and div.b else None
        for pane, tid, mark, side in ((self.pane_a, ta, sa, "A"), (self.pane_b, tb, sb, "B")):
            if not tid:
                pane.value = f"<div class='ekw muted'>{side}: no attempt of this task.</div>"
                continue
            pane.value = (
                CSS
                + f"<div class='ekw'><h4>{side}</h4>"
                + trial_header(ix.row(tid))
                + trajectory_html(ix.steps(tid), ix.calls(tid), ix.findings(tid), diverge_step=mark)
                + "</div>"
            )
