"""Anti-pattern detectors over agent trajectories, trainerd's scores, detector rates.

::

    import evalkit.patterns as ep
    findings = ep.detect(runs)                       # structural mode, every detector
    findings = ep.detect(runs, mode="trainerd")      # go-code's six types, ported verbatim
    findings = ep.detect(tool_calls=tc, steps=st, trials=tr, detectors=["retry_loop"],
                         config={"retry_loop": {"min_failing_repeats": 4}})
    scores = ep.trial_scores(runs)                   # FirstTryRate, tool_quality, efficiency
    rates = ep.detector_rates(findings, runs.trials) # share of trials flagged, Wilson CI
    diff = ep.paired_rate_diff(findings, runs.trials, "baseline", "candidate")

    @ep.detector("my_rule", params={"k": 3})
    def my_rule(ctx): ...                             # see evalkit/patterns/registry.py

:func:`findings_provider` is what ``runs.findings`` computes (``evalkit/__init__.py`` hands it
to :func:`evalkit.load.runs.register_findings_provider`). The rules, thresholds and the
labelled precision / recall are in docs/patterns.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

from evalkit.patterns import budget, claims, files, ledger_rules, sequence, stuck  # noqa: F401  (register)
from evalkit.patterns.config import DEFAULTS, TRAINERD
from evalkit.patterns.context import Context
from evalkit.patterns.detect import detect
from evalkit.patterns.rates import detector_rates, paired_rate_diff
from evalkit.patterns.registry import Detector, detector, list_detectors, unregister
from evalkit.patterns.scores import first_try_rate, trial_scores

if TYPE_CHECKING:
    from evalkit.load.runs import Runs

__all__ = [
    "DEFAULTS",
    "TRAINERD",
    "Context",
    "Detector",
    "detect",
    "detector",
    "detector_rates",
    "findings_provider",
    "first_try_rate",
    "list_detectors",
    "paired_rate_diff",
    "trial_scores",
    "unregister",
]


def findings_provider(runs: Runs) -> pl.DataFrame:
    """What ``runs.findings`` shows besides recorded findings: structural-mode detections.

    Trials read from go-code rollouts carry their own recorded findings; they are analysed
    too (structural findings are a different, labelled ``mode``).
    """
    return detect(runs, mode="structural")
