"""Indexes built once per widget so callbacks only touch small frames.

Steps, tool calls and findings are partitioned by trial on first use (one pass over each
frame); afterwards showing a trial is a dict lookup, and filtering the trial list is a Polars
filter over the (small) trials table.
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

import polars as pl

from evalkit.load._columns import empty
from evalkit.load.findings.columns import COLUMNS as FINDING_COLUMNS
from evalkit.load.steps.columns import STEP_COLUMNS, TOOL_CALL_COLUMNS

TRIAL_COLUMNS = (
    "trial_id", "run", "job_name", "task_name", "trial_name", "trial_dir", "attempt", "outcome",
    "error_kind", "reward", "rewards", "exception_type", "exception_message", "cost_usd",
    "n_input_tokens", "n_output_tokens", "duration_s", "started_at", "n_steps",
)  # fmt: skip


class TrialIndex:
    """Per-trial access to the frames of a :class:`evalkit.Runs` (or of explicit frames)."""

    def __init__(
        self,
        runs: Any = None,
        *,
        trials: pl.DataFrame | None = None,
        steps: pl.DataFrame | None = None,
        tool_calls: pl.DataFrame | None = None,
        findings: pl.DataFrame | None = None,
    ) -> None:
        self.runs = runs
        t = trials if trials is not None else runs.trials
        cols = [c for c in TRIAL_COLUMNS if c in t.columns]
        self.trials = t.select(cols).sort("run", "task_name", "attempt", nulls_last=True)
        self._frames = {"steps": steps, "tool_calls": tool_calls, "findings": findings}
        self.findings_error: str | None = None
        self._rows = {r["trial_id"]: r for r in self.trials.iter_rows(named=True)}

    def _frame(self, name: str) -> pl.DataFrame:
        f = self._frames.get(name)
        if f is not None:
            return f
        if self.runs is None:
            return empty(
                {
                    "steps": STEP_COLUMNS,
                    "tool_calls": TOOL_CALL_COLUMNS,
                    "findings": FINDING_COLUMNS,
                }[name]
            )
        try:
            return getattr(self.runs, name)
        except Exception as e:
            if name != "findings":
                raise
            self.findings_error = f"{type(e).__name__}: {e}"
            return empty(FINDING_COLUMNS)

    @cached_property
    def _steps(self) -> dict[str, pl.DataFrame]:
        return _partition(self._frame("steps"))

    @cached_property
    def _calls(self) -> dict[str, pl.DataFrame]:
        return _partition(self._frame("tool_calls"))

    @cached_property
    def _findings(self) -> dict[str, pl.DataFrame]:
        return _partition(self._frame("findings"))

    @cached_property
    def flagged(self) -> dict[str, list[str]]:
        """Detector -> trial ids it flagged."""
        f = self._frame("findings")
        if f.height == 0:
            return {}
        g = f.group_by("detector").agg(pl.col("trial_id").unique())
        return {d: ids for d, ids in g.iter_rows()}

    def row(self, trial_id: str) -> dict[str, Any]:
        return self._rows[trial_id]

    def steps(self, trial_id: str) -> pl.DataFrame:
        return self._steps.get(trial_id, _EMPTY_STEPS)

    def calls(self, trial_id: str) -> pl.DataFrame:
        return self._calls.get(trial_id, _EMPTY_CALLS)

    def findings(self, trial_id: str) -> pl.DataFrame:
        return self._findings.get(trial_id, _EMPTY_FINDINGS)

    def values(self, column: str) -> list[str]:
        """Distinct non-null values of a trials column, sorted (for filter menus)."""
        if column not in self.trials.columns:
            return []
        return sorted(v for v in self.trials[column].unique().to_list() if v is not None)


def _partition(df: pl.DataFrame) -> dict[str, pl.DataFrame]:
    if df.height == 0 or "trial_id" not in df.columns:
        return {}
    return {
        k[0] if isinstance(k, tuple) else k: v
        for k, v in df.partition_by("trial_id", as_dict=True).items()
    }


_EMPTY_STEPS = empty(STEP_COLUMNS)
_EMPTY_CALLS = empty(TOOL_CALL_COLUMNS)
_EMPTY_FINDINGS = empty(FINDING_COLUMNS)
