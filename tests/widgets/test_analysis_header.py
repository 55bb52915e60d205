"""The trial browser's header shows `harbor analyze` verdicts."""

from __future__ import annotations

import evalkit as ek
from evalkit.widgets.render import trial_header
from tests.conftest import FIXTURES


def test_header_shows_checks_and_not_analysed() -> None:
    t = ek.load(FIXTURES / "harbor-edges" / "analyzed", cache=False).trials.sort("trial_name")
    hacked = trial_header(t.row(0, named=True))
    assert "reward_hacking: fail (Modified tests/test_parser.py" in hacked
    assert "task_specification: pass" in hacked
    assert "not analysed" in trial_header(t.row(2, named=True))
