"""evalkit's Holm / BH adjustments equal statsmodels' multipletests."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.multitest import multipletests

from evalkit.stats.pertask import adjust_bh, adjust_holm


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=1, max_size=40))
def test_adjustments_match_statsmodels(ps: list[float]) -> None:
    p = np.array(ps)
    np.testing.assert_allclose(
        adjust_holm(p), multipletests(p, method="holm")[1], rtol=0, atol=1e-12
    )
    np.testing.assert_allclose(
        adjust_bh(p), multipletests(p, method="fdr_bh")[1], rtol=0, atol=1e-12
    )


def test_ties_and_empty() -> None:
    p = np.array([0.01, 0.01, 0.04, 0.5])
    np.testing.assert_allclose(adjust_holm(p), multipletests(p, method="holm")[1], atol=1e-12)
    assert adjust_bh(np.array([])).size == 0
