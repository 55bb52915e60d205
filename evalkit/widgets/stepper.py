"""A trajectory stepper: one trial's steps, a few at a time, with prev / next and jumps to
the next error or finding."""

from __future__ import annotations

import ipywidgets as W
import polars as pl

from evalkit.widgets.render import CSS, trajectory_html


class Stepper(W.VBox):
    """Shows step ``current`` of a trial with ``window`` steps either side (or every step).

    Call :meth:`show` with a trial's steps, tool calls and findings; work per click is
    proportional to the one trial's steps only.
    """

    def __init__(self, window: int = 1) -> None:
        self.window = window
        self._steps = pl.DataFrame()
        self._calls = pl.DataFrame()
        self._findings = pl.DataFrame()
        self._marks: dict[str, list[int]] = {"error": [], "finding": []}
        self.diverge_step: int | None = None
        self.slider = W.IntSlider(
            value=0,
            min=0,
            max=0,
            description="step",
            continuous_update=False,
            layout=W.Layout(width="420px"),
        )
        self.prev = W.Button(description="◀ prev", layout=W.Layout(width="80px"))
        self.next = W.Button(description="next ▶", layout=W.Layout(width="80px"))
        self.next_error = W.Button(description="next error", layout=W.Layout(width="100px"))
        self.next_finding = W.Button(description="next finding", layout=W.Layout(width="110px"))
        self.all_steps = W.Checkbox(value=False, description="all steps", indent=False)
        self.summary = W.HTML()
        self.body = W.HTML()
        self.prev.on_click(lambda _: self._move(-1))
        self.next.on_click(lambda _: self._move(+1))
        self.next_error.on_click(lambda _: self._jump("error"))
        self.next_finding.on_click(lambda _: self._jump("finding"))
        self.slider.observe(lambda _: self._draw(), names="value")
        self.all_steps.observe(lambda _: self._draw(), names="value")
        bar = W.HBox(
            [self.prev, self.slider, self.next, self.next_error, self.next_finding, self.all_steps]
        )
        super().__init__([bar, self.summary, self.body])

    def show(
        self,
        steps: pl.DataFrame,
        calls: pl.DataFrame,
        findings: pl.DataFrame,
        start: int | None = None,
        diverge_step: int | None = None,
    ) -> None:
        self._steps, self._calls, self._findings = steps, calls, findings
        self.diverge_step = diverge_step
        idx = steps["step_index"].to_list() if steps.height else [0]
        err = (
            sorted(set(calls.filter(pl.col("is_error").fill_null(False))["step_index"].to_list()))
            if calls.height
            else []
        )
        fnd = (
            sorted(
                {
                    i
                    for a, b in findings.select("step_start", "step_end").iter_rows()
                    for i in range(a or 0, (b if b is not None else a or 0) + 1)
                }
            )
            if findings.height
            else []
        )
        self._marks = {"error": err, "finding": fnd}
        self._set_range(min(idx), max(idx))
        target = (
            start if start is not None else (diverge_step if diverge_step is not None else min(idx))
        )
        if self.slider.value == target:
            self._draw()
        else:
            self.slider.value = max(self.slider.min, min(self.slider.max, target))

    def _set_range(self, lo: int, hi: int) -> None:
        """Move the slider's range in an order that never has max below min on the way."""
        if hi < self.slider.min:
            self.slider.min, self.slider.max = lo, hi
        else:
            self.slider.max, self.slider.min = hi, lo

    def _move(self, d: int) -> None:
        self.slider.value = max(self.slider.min, min(self.slider.max, self.slider.value + d))

    def _jump(self, kind: str) -> None:
        after = [i for i in self._marks[kind] if i > self.slider.value]
        if after:
            self.slider.value = after[0]
        elif self._marks[kind]:
            self.slider.value = self._marks[kind][0]  # wrap around

    def _draw(self) -> None:
        n = self._steps.height
        e, f = self._marks["error"], self._marks["finding"]
        self.summary.value = (
            f"<div class='ekw muted'>{n} steps; tool errors at steps {e or 'none'}; findings at steps {f or 'none'}"
            + (
                f"; first divergence at step {self.diverge_step}"
                if self.diverge_step is not None
                else ""
            )
            + "</div>"
        )
        window = None if self.all_steps.value else self.window
        self.body.value = (
            CSS
            + "<div class='ekw'>"
            + trajectory_html(
                self._steps,
                self._calls,
                self._findings,
                current=self.slider.value,
                window=window,
                diverge_step=self.diverge_step,
            )
            + "</div>"
        )
