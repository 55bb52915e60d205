"""stats/passk.py: pass@k / pass^k against exact binomial coefficients, properties, and the
per-run curve."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from evalkit.stats import pass_at_k, pass_hat_k, pass_k_curve


def exact_pass_at_k(n: int, c: int, k: int) -> float:
    if k > n:
        return math.nan
    return float(1 - Fraction(math.comb(n - c, k), math.comb(n, k)))


def exact_pass_hat_k(n: int, c: int, k: int) -> float:
    if k > n:
        return math.nan
    return float(Fraction(math.comb(c, k), math.comb(n, k)))


def test_pass_at_k_equals_exact_binomials_on_a_grid() -> None:
    for n in range(1, 21):
        for c in range(n + 1):
            for k in range(1, n + 1):
                assert abs(pass_at_k(n, c, k) - exact_pass_at_k(n, c, k)) < 1e-12
                assert abs(pass_hat_k(n, c, k) - exact_pass_hat_k(n, c, k)) < 1e-12


@pytest.mark.parametrize(
    ("n", "c", "k"), [(2000, 1, 1), (2000, 3, 1000), (5000, 2500, 100), (200, 200, 200)]
)
def test_large_n_is_stable(n: int, c: int, k: int) -> None:
    assert abs(pass_at_k(n, c, k) - exact_pass_at_k(n, c, k)) < 1e-12
    assert abs(pass_hat_k(n, c, k) - exact_pass_hat_k(n, c, k)) < 1e-12


def test_reference_values_and_edges() -> None:
    assert pass_at_k(10, 0, 5) == 0.0
    # no passes is +0.0, never -0.0 (which a table prints as "-0.0%")
    assert math.copysign(1.0, pass_at_k(10, 0, 5)) == 1.0
    assert all(math.copysign(1.0, v) == 1.0 for v in pass_at_k([3, 5], [0, 0], [2, 3]))
    assert pass_at_k(10, 6, 5) == 1.0  # n - c < k
    assert abs(pass_at_k(5, 1, 1) - 0.2) < 1e-15
    assert abs(pass_at_k(5, 2, 2) - 0.7) < 1e-15  # 1 - C(3,2)/C(5,2) = 1 - 3/10
    assert abs(pass_hat_k(5, 2, 2) - 0.1) < 1e-15  # C(2,2)/C(5,2)
    assert pass_hat_k(5, 1, 2) == 0.0
    assert math.isnan(pass_at_k(3, 1, 4))  # k > n: NaN, never an inflated 1.0
    assert math.isnan(pass_hat_k(3, 3, 4))
    with pytest.raises(ValueError):
        pass_at_k(3, 4, 1)
    with pytest.raises(ValueError):
        pass_at_k(3, 1, 0)
    with pytest.raises(ValueError):
        pass_at_k(3.5, 1, 1)


def test_vectorised_matches_scalar() -> None:
    rng = np.random.default_rng(0)
    n = rng.integers(1, 30, 300)
    c = rng.integers(0, 31, 300) % (n + 1)
    k = rng.integers(1, 31, 300)
    va, vh = pass_at_k(n, c, k), pass_hat_k(n, c, k)
    assert isinstance(va, np.ndarray) and va.shape == (300,)
    for i in range(300):
        sa, sh = (
            pass_at_k(int(n[i]), int(c[i]), int(k[i])),
            pass_hat_k(int(n[i]), int(c[i]), int(k[i])),
        )
        assert (math.isnan(sa) and math.isnan(va[i])) or abs(sa - va[i]) < 1e-15
        assert (math.isnan(sh) and math.isnan(vh[i])) or abs(sh - vh[i]) < 1e-15
    # broadcasting: one task, every k
    curve = pass_at_k(10, 3, np.arange(1, 11))
    assert np.all(np.diff(curve) >= 0)


@settings(max_examples=300, deadline=None)
@given(n=st.integers(1, 60), data=st.data())
def test_monotone_and_bounded(n: int, data: st.DataObject) -> None:
    c = data.draw(st.integers(0, n))
    k = data.draw(st.integers(1, n))
    a, h = pass_at_k(n, c, k), pass_hat_k(n, c, k)
    assert 0.0 <= h <= a + 1e-12 and a <= 1.0
    if k == 1:
        assert abs(a - c / n) < 1e-12 and abs(h - c / n) < 1e-12
    if k < n:  # more draws: pass@k up, pass^k down
        assert pass_at_k(n, c, k + 1) >= a - 1e-12
        assert pass_hat_k(n, c, k + 1) <= h + 1e-12
    if c < n:  # more passes: both up
        assert pass_at_k(n, c + 1, k) >= a - 1e-12
        assert pass_hat_k(n, c + 1, k) >= h - 1e-12


def test_unbiased_for_iid_attempts() -> None:
    # E[pass@k estimate from n draws] = 1 - (1-p)^k exactly (sum over the binomial)
    p, n, k = 0.3, 10, 4
    c = np.arange(n + 1)
    expect = float((stats.binom.pmf(c, n, p) * pass_at_k(np.full(n + 1, n), c, k)).sum())
    assert abs(expect - (1 - (1 - p) ** k)) < 1e-12
    expect_hat = float((stats.binom.pmf(c, n, p) * pass_hat_k(np.full(n + 1, n), c, k)).sum())
    assert abs(expect_hat - p**k) < 1e-12


def test_pass_k_curve_per_group_with_unequal_attempts() -> None:
    df = pl.DataFrame(
        {
            "run": ["A"] * 5 + ["B"] * 2,
            "task_name": ["t1", "t1", "t1", "t2", "t2", "t1", "t2"],
            "reward": [1.0, 0.0, None, 0.0, 1.0, 1.0, 0.0],
        }
    )
    cur = pass_k_curve(df)
    a = cur.filter(pl.col("run") == "A")
    assert a["k"].to_list() == [1, 2, 3]
    assert a["n_tasks"].to_list() == [2, 2, 1]  # t2 has 2 attempts: out at k = 3
    # k=1: mean of (1/3, 1/2); k=2: t1 1 - C(2,2)/C(3,2) = 2/3, t2 1 -> 5/6; k=3: t1 -> 1
    np.testing.assert_allclose(a["pass_at_k"].to_list(), [5 / 12, 5 / 6, 1.0])
    np.testing.assert_allclose(a["pass_hat_k"].to_list(), [5 / 12, 0.0, 0.0])
    b = cur.filter(pl.col("run") == "B")
    assert b["k"].to_list() == [1] and b["pass_at_k"].to_list() == [0.5]
    whole = pass_k_curve(df, by=None, max_k=2)
    assert whole.columns == ["k", "n_tasks", "pass_at_k", "pass_hat_k"] and whole.height == 2


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from("ab"), st.integers(0, 9), st.integers(1, 6), st.integers(0, 6)),
        min_size=1,
        max_size=25,
        unique_by=lambda r: (r[0], r[1]),
    ),
    st.one_of(st.none(), st.integers(1, 6)),
)
def test_pass_k_curve_equals_the_per_task_estimator_mean(rows, max_k) -> None:
    """The vectorised curve equals the scalar estimators averaged task by task."""
    trials = [
        (run, f"t{task}", 1.0 if i < min(c, n) else 0.0)
        for run, task, n, c in rows
        for i in range(n)
    ]
    df = pl.DataFrame(trials, schema=["run", "task_name", "reward"], orient="row")
    cur = pass_k_curve(df, max_k=max_k)
    for run, k, n_tasks, pa, ph in cur.iter_rows():
        tasks = [(n, min(c, n)) for r, _, n, c in rows if r == run and n >= k]
        assert n_tasks == len(tasks) and (max_k is None or k <= max_k)
        assert pa == pytest.approx(np.mean([exact_pass_at_k(n, c, k) for n, c in tasks]))
        assert ph == pytest.approx(np.mean([exact_pass_hat_k(n, c, k) for n, c in tasks]))
    for run in {r for r, *_ in rows}:
        top = max(n for r, _, n, _ in rows if r == run)
        want = top if max_k is None else min(top, max_k)
        assert cur.filter(pl.col("run") == run)["k"].to_list() == list(range(1, want + 1))
