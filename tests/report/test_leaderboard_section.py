"""The nightly report's leaderboard section: shown for more than two runs, a note otherwise."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit import report
from tests.factories import nightly


@pytest.fixture(scope="module")
def three_nights(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return nightly(
        tmp_path_factory.mktemp("lb") / "runs", jobs=3, tasks=12, attempts=3, seed=3,
        traj_share=0.5,
    )  # fmt: skip


def test_section_with_three_runs(three_nights: Path) -> None:
    ctx = report.load_context(str(three_nights), None, None, "auto")
    parts = report.leaderboard(ctx, draws=300)
    html = parts.html()
    for text in ("P(rank 1)", "tampered passes", "Noise floor", "Flaky tasks", "2PL"):
        assert text in html, text
    assert len(parts.charts()) >= 2


def test_note_with_two_runs(three_nights: Path) -> None:
    ctx = report.load_context(str(three_nights), None, None, "auto")
    two = ctx.narrow(True)
    assert two.pair is not None
    html = report.leaderboard(two, draws=300).html()
    assert "more than two runs" in html and "P(rank 1)" not in html
