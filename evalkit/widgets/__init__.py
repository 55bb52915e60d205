"""Layer 4: ipywidgets 8 explorers over a :class:`evalkit.Runs`.

- :class:`TrialBrowser` — filter trials (run, job, task, outcome, error kind, detector),
  pick one, read its header, verifier output and trajectory in a stepper.
- :class:`CompareExplorer` — pick runs A and B, see transitions and the per-task table,
  open a task to read both trajectories side by side from their first divergence.

Both work headless (set ``.value``, ``Button.click()``), index steps / calls / findings
once (``index.py``) and escape every piece of trajectory or verifier text.
"""

from __future__ import annotations

from evalkit.widgets.browser import TrialBrowser
from evalkit.widgets.explorer import CompareExplorer
from evalkit.widgets.index import TrialIndex
from evalkit.widgets.render import step_html, trajectory_html, trial_header
from evalkit.widgets.stepper import Stepper

__all__ = [
    "CompareExplorer",
    "Stepper",
    "TrialBrowser",
    "TrialIndex",
    "step_html",
    "trajectory_html",
    "trial_header",
]
