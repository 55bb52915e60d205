"""CI-sized coverage simulation: the thresholds of issue 9, asserted (about 30 s on 2 cores).

Full table: ``python -m evalkit.stats.simulate --out docs/coverage.md``.
"""

from __future__ import annotations

import math

import polars as pl
import pytest

from evalkit.stats.simulate import coverage_grid, main, paired_grid


@pytest.mark.slow
def test_pass_rate_interval_coverage_holds_in_every_cell() -> None:
    reps = 10_000
    cov = coverage_grid(reps=reps, methods=("auto", "iid-wilson"), seed=2024)
    auto = cov.filter(pl.col("method") == "auto")
    assert auto.height == 36  # n = 10, 20, 50, 100 x K = 1, 3, 5 x rate .05, .5, .95
    worst = auto.sort("coverage").row(0, named=True)
    assert worst["coverage"] >= 0.93, worst
    avg = float(auto["coverage"].mean())
    # Monte-Carlo standard error of the 36-cell average
    se = math.sqrt(float((auto["coverage"] * (1 - auto["coverage"])).mean()) / reps / auto.height)
    assert 0.94 <= avg <= 0.96 + 3 * se, (avg, se)
    # the simulation does detect a broken method: attempts treated as independent
    iid = cov.filter((pl.col("method") == "iid-wilson") & (pl.col("attempts") > 1))
    assert float(iid["coverage"].min()) < 0.85


@pytest.mark.slow
def test_paired_sign_flip_type_one_error_at_most_six_percent() -> None:
    null = paired_grid(reps=2_000, n_resamples=1_000, with_ci=False, seed=2025)
    assert null.height == 36
    assert float(null["reject_signflip"].max()) <= 0.06, null.sort("reject_signflip").tail(3)


def test_cli_writes_markdown(tmp_path) -> None:
    out = tmp_path / "coverage.md"
    assert (
        main(["--out", str(out), "--reps", "200", "--paired-reps", "5", "--resamples", "100"]) == 0
    )
    text = out.read_text()
    assert text.startswith("# Coverage of evalkit's intervals (generated)")
    assert "python -m evalkit.stats.simulate --out docs/coverage.md" in text
    assert "## Paired comparison" in text
