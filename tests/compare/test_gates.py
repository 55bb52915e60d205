"""ship_gate: hand-computed cases (rollouts-gates-qc.md §3.2), the contract's exact rule,
the lam = 1 McNemar identity, the tau boundary, and monotonicity properties."""

from __future__ import annotations

from fractions import Fraction
from math import comb

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binomtest

from evalkit.compare import DONT_SHIP, HOLD, SHIP, min_wins_to_ship, ship_gate
from evalkit.compare.gates import EXIT_CODES


def exact_p(w: int, l_: int, lam: int) -> Fraction:
    """P[Bin(w + l, lam/(1+lam)) >= w] as an exact fraction."""
    m = w + l_
    if m == 0:
        return Fraction(1)
    q = Fraction(lam, 1 + lam)
    return sum((comb(m, k) * q**k * (1 - q) ** (m - k) for k in range(w, m + 1)), Fraction(0))


# --- hand-computed cases ------------------------------------------------------------------


def test_zero_breaks_needs_eight_wins_at_lam2():
    # (2/3)^8 = 256/6561 = 0.0390 < 0.05; (2/3)^7 = 128/2187 = 0.0585 >= 0.05
    g8 = ship_gate(8, 0, 40)
    assert g8.verdict == SHIP
    assert g8.p_value == pytest.approx(256 / 6561, rel=1e-12)
    g7 = ship_gate(7, 0, 40)
    assert g7.verdict == HOLD
    assert g7.p_value == pytest.approx(128 / 2187, rel=1e-12)
    assert g7.min_wins_to_ship == 8 and g8.min_wins_to_ship == 8
    assert min_wins_to_ship(0, 40) == 8


def test_twelve_wins_one_loss_ships():
    # p = C(13,12)(2/3)^12(1/3) + (2/3)^13 = 5 * (2/3)^12 = 20480/531441 = 0.03854
    g = ship_gate(12, 1, 20)
    assert g.verdict == SHIP
    assert g.p_value == pytest.approx(20480 / 531441, rel=1e-12)
    assert g.net == 10 and g.rho == pytest.approx(0.05)


def test_ten_wins_two_losses_holds():
    # p = (2/3)^10 * (66/9 + 24/9 + 4/9) = 96256/531441 = 0.1811
    g = ship_gate(10, 2, 30)
    assert g.verdict == HOLD
    assert g.p_value == pytest.approx(96256 / 531441, rel=1e-12)
    assert g.net == 6


def test_breaks_over_tau_dont_ship():
    g = ship_gate(12, 5, 20)  # rho = 0.25 > 0.10
    assert g.verdict == DONT_SHIP
    assert g.min_wins_to_ship is None
    assert any("tau" in r for r in g.reasons)


def test_negative_net_dont_ship_even_within_tau():
    g = ship_gate(1, 1, 20)  # net = 1 - 2 = -1; rho = 0.05 <= tau
    assert g.verdict == DONT_SHIP
    assert any("net" in r for r in g.reasons)


def test_zero_net_holds():
    g = ship_gate(2, 1, 20)  # net = 0: not < 0, not > 0
    assert g.verdict == HOLD
    assert g.net == 0


def test_no_discordant_tasks_holds_with_p_one():
    g = ship_gate(0, 0, 0)
    assert (g.verdict, g.p_value, g.rho) == (HOLD, 1.0, 0.0)


def test_lam1_matches_paper_and_one_sided_exact_mcnemar():
    assert ship_gate(8, 0, 20, lam=1).p_value == pytest.approx(1 / 256)
    assert ship_gate(8, 0, 20, lam=1, tau=1).verdict == SHIP
    g = ship_gate(5, 3, 20, lam=1, tau=1)
    assert g.p_value == pytest.approx(93 / 256)  # (56 + 28 + 8 + 1) / 256 = 0.363
    assert g.verdict == HOLD
    for w in range(0, 13):
        for l_ in range(0, 13):
            if w + l_ == 0:
                continue
            ref = binomtest(w, w + l_, 0.5, alternative="greater").pvalue
            assert ship_gate(w, l_, 40, lam=1, tau=1).p_value == pytest.approx(ref, rel=1e-9)


def test_tau_boundary_is_not_over_the_cap():
    # 2 of 20 = exactly 10 %: allowed (rho <= tau); 3 of 30 too; 3 of 20 is not.
    assert ship_gate(20, 2, 20).verdict == SHIP
    assert ship_gate(20, 3, 30).verdict == SHIP
    assert ship_gate(20, 3, 20).verdict == DONT_SHIP
    assert ship_gate(20, 1, 10, tau=0.1).verdict == SHIP
    assert ship_gate(20, 1, 7, tau=1 / 7).verdict == SHIP  # exact ratio, float tau
    assert ship_gate(20, 2, 13, tau=1 / 7).verdict == DONT_SHIP


def test_small_suite_cannot_ship_and_says_so():
    # go-code's 7-task baseline: even 7 wins out of 7 unsolved tasks cannot reach 8
    g = ship_gate(7, 0, 0, n_tasks=7)
    assert g.verdict == HOLD
    assert g.max_possible_wins == 7 and g.ship_reachable is False
    assert any("impossible at this size" in r for r in g.reasons)
    assert ship_gate(3, 0, 10, n_tasks=20).ship_reachable is True


def test_exit_codes_and_str():
    assert EXIT_CODES == {SHIP: 0, HOLD: 1, DONT_SHIP: 2}
    assert ship_gate(8, 0, 10).exit_code == 0
    assert ship_gate(1, 0, 10).exit_code == 1
    assert ship_gate(0, 5, 10).exit_code == 2
    assert str(ship_gate(8, 0, 10)) == SHIP
    assert ship_gate(8, 0, 10).to_dict()["verdict"] == SHIP


@pytest.mark.parametrize(
    "args,kw",
    [
        ((-1, 0, 0), {}),
        ((1.5, 0, 3), {}),
        ((0, 4, 3), {}),  # losses > a_solved
        ((1, 0, 3), {"lam": 0}),
        ((1, 0, 3), {"alpha": 1.0}),
        ((1, 0, 3), {"tau": -0.1}),
        ((5, 0, 3), {"n_tasks": 6}),  # wins + a_solved > n_tasks
    ],
)
def test_bad_inputs_raise(args, kw):
    with pytest.raises(ValueError):
        ship_gate(*args, **kw)


# --- the contract's rule, re-derived exactly ------------------------------------------------


def contract_verdict(w: int, l_: int, n: int, lam: int, alpha: Fraction, tau: Fraction) -> str:
    net = w - lam * l_
    over = n > 0 and Fraction(l_, n) > tau
    if over or net < 0:
        return DONT_SHIP
    if net > 0 and exact_p(w, l_, lam) < alpha:
        return SHIP
    return HOLD


counts = st.integers(min_value=0, max_value=40)


@settings(max_examples=300, deadline=None)
@given(w=counts, l_=counts, extra=counts, lam=st.sampled_from([1, 2, 3]))
def test_matches_exact_rational_rule(w, l_, extra, lam):
    n = l_ + extra
    got = ship_gate(w, l_, n, lam=lam).verdict
    assert got == contract_verdict(w, l_, n, lam, Fraction(5, 100), Fraction(10, 100))


RANK = {DONT_SHIP: 0, HOLD: 1, SHIP: 2}


@settings(max_examples=200, deadline=None)
@given(w=counts, l_=counts, extra=counts)
def test_monotone_in_wins_and_losses(w, l_, extra):
    n = l_ + 1 + extra
    base = RANK[ship_gate(w, l_, n).verdict]
    assert RANK[ship_gate(w + 1, l_, n).verdict] >= base  # one more fix never hurts
    assert RANK[ship_gate(w, l_ + 1, n).verdict] <= base  # one more break never helps


@settings(max_examples=200, deadline=None)
@given(l_=st.integers(0, 10), extra=st.integers(0, 60), lam=st.sampled_from([1.0, 2.0, 3.0]))
def test_min_wins_is_the_threshold(l_, extra, lam):
    n = l_ + extra
    need = min_wins_to_ship(l_, n, lam=lam)
    if need is None:
        assert ship_gate(200, l_, n, lam=lam).verdict == DONT_SHIP
        return
    assert ship_gate(need, l_, n, lam=lam).verdict == SHIP
    assert ship_gate(need - 1, l_, n, lam=lam).verdict != SHIP
