"""The trial browser: filter trials, pick one, read its trajectory step by step."""

from __future__ import annotations

from html import escape
from typing import Any

import ipywidgets as W
import polars as pl

from evalkit.widgets.index import TrialIndex
from evalkit.widgets.render import CSS, block, trial_header, verifier_text
from evalkit.widgets.static import frame_html, static_page, with_static
from evalkit.widgets.stepper import Stepper

ALL = "(all)"
#: Rows listed at most (the count says how many matched).
MAX_ROWS = 500
MONO = "<style>.ekw-mono select { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 12px; }</style>"


def _label(r: dict[str, Any]) -> str:
    rew = "-" if r.get("reward") is None else f"{r['reward']:.2f}"
    return (
        f"{str(r.get('run'))[:30]:<30} {str(r.get('task_name'))[:38]:<38} #{r.get('attempt') or '-':<3}"
        f" {r.get('outcome')!s:<10} {rew:>5}  {r.get('error_kind')!s}"
    )


def _table_head() -> W.HTML:
    """The column names above the trial list (aligned with :func:`_label`)."""
    return W.HTML(
        MONO
        + "<pre style='margin:0;font-size:12px'>"
        + escape(f"{'run':<30} {'task':<38} {'att':<4}{'outcome':<10} {'reward':>5}  error kind")
        + "</pre>"
    )


def _findings_error_note(ix: TrialIndex) -> W.HTML:
    """Why the detector filter is empty when anti-pattern detection failed (else empty)."""
    return (
        W.HTML(
            f"<div class='ekw muted'>Anti-pattern detection failed: {escape(ix.findings_error)}</div>"
        )
        if ix.findings_error
        else W.HTML()
    )


class TrialBrowser(W.VBox):
    """Filter by run, job, task (substring), outcome, error kind and detector; a table of the
    matching trials; selecting one shows its header, verifier output and trajectory stepper.

    ``TrialBrowser(runs)`` with an :class:`evalkit.Runs`. Filtering runs a Polars filter over
    the trials table only; steps, calls and findings are indexed once (``index.py``). The task
    box filters when you press Enter or leave it (no work per keystroke).
    """

    def __init__(self, runs: Any = None, *, index: TrialIndex | None = None) -> None:
        self.index = index or TrialIndex(runs)
        ix = self.index
        self._make_filters(ix)
        self.count = W.HTML()
        self.table = W.Select(options=[], rows=14, layout=W.Layout(width="100%"))
        self.table.add_class("ekw-mono")
        self.detail = W.HTML()
        self.verifier = W.HTML()
        self.stepper = Stepper()
        for w in (self.run, self.job, self.outcome, self.error_kind, self.detector, self.task):
            w.observe(self._on_filter, names="value")
        self.table.observe(self._on_select, names="value")
        head = _table_head()
        filters = W.VBox(
            [
                W.HBox([self.run, self.job, self.task]),
                W.HBox([self.outcome, self.error_kind, self.detector]),
            ]
        )
        note = _findings_error_note(ix)
        super().__init__(
            [
                W.HTML(CSS),
                filters,
                note,
                self.count,
                head,
                self.table,
                self.detail,
                self.verifier,
                self.stepper,
            ]
        )
        self.matches = ix.trials
        self._on_filter(None)

    def _make_filters(self, ix: TrialIndex) -> None:
        """The filter widgets: run, job, outcome, error kind, detector and task."""

        def dd(desc: str, col: str) -> W.Dropdown:
            return W.Dropdown(options=[ALL, *ix.values(col)], value=ALL, description=desc)

        self.run = dd("run", "run")
        self.job = dd("job", "job_name")
        self.outcome = dd("outcome", "outcome")
        self.error_kind = dd("error kind", "error_kind")
        self.detector = W.Dropdown(
            options=[ALL, *sorted(ix.flagged)], value=ALL, description="detector"
        )
        self.task = W.Text(
            value="",
            description="task",
            placeholder="part of a task name, Enter",
            continuous_update=False,
        )

    # -- filtering ---------------------------------------------------------------------
    def filter_expr(self) -> pl.Expr:
        e = pl.lit(True)
        for w, col in (
            (self.run, "run"),
            (self.job, "job_name"),
            (self.outcome, "outcome"),
            (self.error_kind, "error_kind"),
        ):
            if w.value != ALL:
                e = e & (pl.col(col) == w.value)
        if self.task.value.strip():
            e = e & pl.col("task_name").str.to_lowercase().str.contains(
                self.task.value.strip().lower(), literal=True
            )
        if self.detector.value != ALL:
            e = e & pl.col("trial_id").is_in(self.index.flagged.get(self.detector.value, []))
        return e

    def _on_filter(self, _change: Any) -> None:
        self.matches = self.index.trials.filter(self.filter_expr())
        shown = self.matches.head(MAX_ROWS)
        self.table.options = [(_label(r), r["trial_id"]) for r in shown.iter_rows(named=True)]
        n = self.matches.height
        more = f" (showing the first {MAX_ROWS})" if n > MAX_ROWS else ""
        self.count.value = (
            f"<div class='ekw'><b>{n}</b> of {self.index.trials.height} trials match{more}.</div>"
        )

    # -- without a kernel -------------------------------------------------------------------
    def static_html(self) -> str:
        """Outcomes per run and the matching trials, as tables (the widget's fallback)."""
        t = self.index.trials
        per_run = (
            t.group_by("run", "outcome")
            .len()
            .pivot("outcome", index="run", values="len")
            .sort("run")
            if t.height
            else t.select("run")
        )
        cols = [
            c
            for c in ("run", "task_name", "attempt", "outcome", "reward", "error_kind")
            if c in t.columns
        ]
        return static_page(
            f"<p>{self.matches.height} of {t.height} trials match.</p>",
            frame_html(per_run.fill_null(0), "Trials per run and outcome"),
            frame_html(self.matches.select(cols), "Trials"),
        )

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return with_static(super()._repr_mimebundle_(**kwargs), self.static_html())

    # -- one trial -------------------------------------------------------------------------
    def select(self, trial_id: str) -> None:
        """Show a trial (as if picked in the table)."""
        if trial_id not in [v for _, v in self.table.options]:
            self.table.options = [*self.table.options, (_label(self.index.row(trial_id)), trial_id)]
        self.table.value = trial_id

    def _on_select(self, change: Any) -> None:
        tid = change["new"] if isinstance(change, dict) else change
        if tid is None:
            return
        row = self.index.row(tid)
        self.detail.value = CSS + "<div class='ekw'>" + trial_header(row) + "</div>"
        vt = verifier_text(row.get("trial_dir"))
        self.verifier.value = (
            CSS
            + "<div class='ekw'>"
            + (
                block(vt, "verifier output (verifier/test-stdout.txt)")
                if vt
                else "<p class='muted'>No verifier output on disk.</p>"
            )
            + "</div>"
        )
        self.stepper.show(self.index.steps(tid), self.index.calls(tid), self.index.findings(tid))
