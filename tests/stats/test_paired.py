"""paired(), McNemar, sign-flip permutation test, per-task adjustments."""

from __future__ import annotations

import itertools
import json

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, stats
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
from statsmodels.stats.multitest import multipletests

from evalkit.stats import mcnemar, paired, proportion_ci, sign_flip_pvalue
from evalkit.stats.paired import few_differences_interval, paired_core, paired_interval
from evalkit.stats.significance import bootstrap_interval, fisher_min_p, prob_b_better


@pytest.mark.parametrize(
    ("b", "c", "exact", "midp"), [(6, 0, 0.031, 0.016), (8, 2, 0.109, 0.065), (5, 0, 0.0625, 0.031)]
)
def test_mcnemar_reference_values(b: int, c: int, exact: float, midp: float) -> None:
    e, m = mcnemar(b, c)
    assert round(e, 3 if exact != 0.0625 else 4) == exact
    assert round(m, 3) == midp
    assert mcnemar(c, b) == (e, m)


def test_mcnemar_matches_statsmodels_and_binomtest() -> None:
    for b in range(0, 25):
        for c in range(0, 25):
            e, m = mcnemar(b, c)
            ref = sm_mcnemar([[0, b], [c, 0]], exact=True).pvalue
            assert abs(e - ref) < 1e-9
            if b + c:
                assert abs(e - stats.binomtest(min(b, c), b + c, 0.5).pvalue) < 1e-9
                if b != c:
                    mid = 2 * stats.binom.cdf(min(b, c), b + c, 0.5) - stats.binom.pmf(
                        min(b, c), b + c, 0.5
                    )
                    assert abs(m - mid) < 1e-12
            else:
                assert (e, m) == (1.0, 1.0)


def _brute_force_sign_flip(d: np.ndarray) -> float:
    obs = abs(d.sum())
    hits = sum(abs(np.dot(s, d)) >= obs - 1e-9 for s in itertools.product([-1, 1], repeat=d.size))
    return hits / 2**d.size


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from([-1.0, -0.6, -0.2, 0.0, 0.2, 0.4, 1.0]), min_size=1, max_size=11))
def test_sign_flip_exact_equals_brute_force(values: list[float]) -> None:
    d = np.array(values)
    p, exact = sign_flip_pvalue(d)
    assert exact
    nz = d[d != 0]
    ref = 1.0 if nz.size == 0 or abs(nz.sum()) < 1e-12 else _brute_force_sign_flip(nz)
    assert abs(p - ref) < 1e-12


def test_sign_flip_equals_mcnemar_exact_for_binary_pairs() -> None:
    for b, c in [(6, 0), (8, 2), (3, 3), (10, 4), (0, 1)]:
        d = np.array([-1.0] * b + [1.0] * c + [0.0] * 7)
        assert abs(sign_flip_pvalue(d)[0] - mcnemar(b, c)[0]) < 1e-12


def test_sign_flip_monte_carlo_close_to_exact_and_seeded() -> None:
    rng = np.random.default_rng(9)
    d = rng.normal(0.25, 1, 26)
    exact, was_exact = sign_flip_pvalue(d)
    mc, was_mc = sign_flip_pvalue(d, exact_max=10, n_resamples=40_000, seed=1)
    assert was_exact and not was_mc
    assert abs(exact - mc) < 0.01
    assert sign_flip_pvalue(d, exact_max=10, seed=1) == sign_flip_pvalue(d, exact_max=10, seed=1)
    assert mc >= 1 / 40_001


def _binary_frame(a: list[int], b: list[int]) -> pl.DataFrame:
    tasks = [f"t{i:02d}" for i in range(len(a))]
    return pl.DataFrame(
        {
            "run": ["A"] * len(a) + ["B"] * len(b),
            "task_name": tasks + tasks,
            "reward": [float(x) for x in a + b],
        }
    )


def test_paired_one_binary_attempt_reports_mcnemar() -> None:
    # 6 tasks fixed (A fail -> B pass), 0 broken, 14 unchanged
    a = [0] * 6 + [1] * 7 + [0] * 7
    b = [1] * 6 + [1] * 7 + [0] * 7
    r = paired(_binary_frame(a, b), "A", "B")
    assert r.n_tasks == 20 and r.diff == pytest.approx(0.3)
    assert r.mean_a == pytest.approx(0.35) and r.mean_b == pytest.approx(0.65)
    assert round(r.mcnemar_exact_p, 3) == 0.031 and round(r.mcnemar_midp, 3) == 0.016
    assert abs(r.p_value - r.mcnemar_exact_p) < 1e-12 and r.p_value_exact
    assert (r.n_b_better, r.n_a_better, r.n_tied) == (6, 0, 14)
    assert r.ci_low <= r.diff <= r.ci_high and r.ci_low > 0
    assert r.method.startswith("paired task-cluster bootstrap (expanded, 10000 resamples, seed 0)")


def test_paired_several_attempts_no_mcnemar_and_common_tasks_only(trials_k5: pl.DataFrame) -> None:
    extra = pl.DataFrame(
        {
            "run": ["A", "B", "B"],
            "task_name": ["only-a", "only-b", "only-b"],
            "attempt": [1, 1, 2],
            "reward": [1.0, 0.0, 1.0],
        }
    )
    df = pl.concat([trials_k5, extra])
    r = paired(df, "A", "B")
    assert r.n_tasks == 30 and r.n_a_only == 1 and r.n_b_only == 1
    assert r.mcnemar_exact_p is None and r.mcnemar_midp is None
    common = trials_k5.group_by("run", "task_name").agg(pl.col("reward").mean())
    ma = common.filter(pl.col("run") == "A")["reward"].mean()
    mb = common.filter(pl.col("run") == "B")["reward"].mean()
    assert r.mean_a == pytest.approx(ma) and r.mean_b == pytest.approx(mb)
    assert r.diff == pytest.approx(mb - ma)
    sides = r.tasks.group_by("side").len().sort("side")
    assert dict(sides.iter_rows()) == {"a_only": 1, "b_only": 1, "both": 30}
    assert r.correlation > 0.3  # shared task difficulty
    assert r.mde > 0
    assert r.attempts_a == (5, 5)


def test_unequal_attempts_and_metric_pass() -> None:
    df = pl.DataFrame(
        {
            "run": ["A", "A", "A", "B", "A", "B", "B", "B"],
            "task_name": ["x", "x", "x", "x", "y", "y", "y", "y"],
            "reward": [1.0, 0.0, 0.5, 1.0, None, 1.0, 0.2, 0.0],
        }
    )
    r = paired(df, "A", "B")
    assert r.mean_a == pytest.approx(((1 + 0 + 0.5) / 3 + 0) / 2)
    assert r.mean_b == pytest.approx((1 + 0.4) / 2)
    rp = paired(df, "A", "B", metric="pass")
    assert rp.mean_a == pytest.approx((1 / 3 + 0) / 2) and rp.mean_b == pytest.approx(
        (1 + 1 / 3) / 2
    )
    assert r.tasks.filter(pl.col("side") == "both")["test"].to_list() == ["welch-t", "welch-t"]
    assert rp.tasks.filter(pl.col("side") == "both")["test"].to_list() == ["fisher", "fisher"]


def test_per_task_tests_and_adjustments(trials_k5: pl.DataFrame) -> None:
    r = paired(trials_k5, "A", "B")
    t = r.tasks.filter(pl.col("side") == "both")
    for row in t.iter_rows(named=True):
        ref = stats.fisher_exact(
            [
                [row["pass_a"], row["n_a"] - row["pass_a"]],
                [row["pass_b"], row["n_b"] - row["pass_b"]],
            ]
        )
        assert abs(row["p_value"] - ref.pvalue) < 1e-12
        assert row["min_p"] == pytest.approx(fisher_min_p(5, 5))
    p = t["p_value"].to_numpy()
    np.testing.assert_allclose(
        t["p_bh"].to_numpy(), multipletests(p, method="fdr_bh")[1], atol=1e-9
    )
    np.testing.assert_allclose(
        t["p_holm"].to_numpy(), multipletests(p, method="holm")[1], atol=1e-9
    )


def test_fisher_min_p_reference_values() -> None:
    assert fisher_min_p(3, 3) == pytest.approx(0.10)
    assert round(fisher_min_p(4, 4), 3) == 0.029
    assert round(fisher_min_p(5, 5), 4) == 0.0079


def test_prob_b_better_matches_integration() -> None:
    for xa, na, xb, nb in [(0, 3, 3, 3), (2, 5, 2, 5), (1, 4, 3, 6), (5, 5, 0, 5)]:
        fa = stats.beta(1 + xa, 1 + na - xa)
        fb = stats.beta(1 + xb, 1 + nb - xb)
        ref = integrate.quad(lambda x, fa=fa, fb=fb: fa.pdf(x) * fb.sf(x), 0, 1)[0]
        assert abs(prob_b_better(xa, na, xb, nb) - ref) < 1e-8
    assert prob_b_better(2, 5, 2, 5) == pytest.approx(0.5)


def test_to_dict_is_json_and_seed_controls_ci(trials_k5: pl.DataFrame) -> None:
    r1 = paired(trials_k5, "A", "B", seed=1)
    r2 = paired(trials_k5, "A", "B", seed=1)
    r3 = paired(trials_k5, "A", "B", seed=2)
    assert (r1.ci_low, r1.ci_high) == (r2.ci_low, r2.ci_high)
    assert abs(r1.ci_low - r3.ci_low) < 0.02  # discrete data: often the very same atoms
    d = np.random.default_rng(0).normal(size=40)
    assert paired_core(d, seed=1)[:2] != paired_core(d, seed=2)[:2]
    assert paired_core(d, seed=1) == paired_core(d, seed=1)
    d = json.loads(json.dumps(r1.to_dict()))
    for key in (
        "n_tasks",
        "mean_a",
        "mean_b",
        "diff",
        "ci_low",
        "ci_high",
        "p_value",
        "method",
        "mcnemar_exact_p",
        "mcnemar_midp",
    ):
        assert key in d
    assert len(d["tasks"]) == 30
    assert "tasks" not in r1.to_dict(include_tasks=False)
    assert "B - A" in str(r1)


def test_bootstrap_matches_scipy_percentile_within_monte_carlo_error() -> None:
    rng = np.random.default_rng(11)
    d = rng.binomial(5, rng.beta(0.5, 0.5, 89)) / 5 - rng.binomial(5, rng.beta(0.5, 0.5, 89)) / 5
    lo, hi, *_ = paired_core(d, ci_method="percentile", n_resamples=10_000, seed=0)
    ref = stats.bootstrap(
        (d,), np.mean, method="percentile", n_resamples=10_000, rng=np.random.default_rng(1)
    )
    se = float(ref.standard_error)
    assert abs(lo - ref.confidence_interval.low) < 0.1 * se * 4
    assert abs(hi - ref.confidence_interval.high) < 0.1 * se * 4


def test_bootstrap_interval_methods() -> None:
    rng = np.random.default_rng(0)
    boot = rng.normal(0, 1, 20_000)
    plo, phi = bootstrap_interval(boot, 0.0, method="percentile")
    elo, ehi = bootstrap_interval(boot, 0.0, method="expanded", n_units=10)
    assert elo < plo and ehi > phi  # expanded is wider at n = 10
    blo, bhi = bootstrap_interval(boot, 0.0, method="bca", jackknife=rng.normal(0, 1, 30))
    assert blo < 0 < bhi
    with pytest.raises(ValueError):
        bootstrap_interval(boot, 0.0, method="bca")


def test_errors() -> None:
    df = _binary_frame([1, 0], [1, 1])
    with pytest.raises(ValueError, match="no trials"):
        paired(df, "A", "C")
    with pytest.raises(ValueError):
        paired(df, "A", "B", by=None)
    with pytest.raises(ValueError):
        paired(df, "A", "B", ci_method="studentized")
    disjoint = pl.DataFrame({"run": ["A", "B"], "task_name": ["x", "y"], "reward": [1.0, 0.0]})
    r = paired(disjoint, "A", "B")
    assert r.n_tasks == 0 and np.isnan(r.diff) and r.n_a_only == 1 and r.n_b_only == 1


def test_by_list_labels_are_tuples(trials_k5: pl.DataFrame) -> None:
    df = trials_k5.with_columns(pl.lit("m1").alias("model"))
    r = paired(df, ("A", "m1"), ("B", "m1"), by=["run", "model"])
    assert r.n_tasks == 30
    with pytest.raises(ValueError):
        paired(df, "A", "B", by=["run", "model"])


def test_few_differences_fall_back_to_a_bound_not_a_zero_width_interval() -> None:
    ties = _binary_frame([1] * 7 + [0] * 3, [1] * 7 + [0] * 3)
    r = paired(ties, "A", "B")
    assert r.diff == 0.0 and r.ci_method == "few-differences-mid-p"
    up = proportion_ci(0, 10, method="mid-p")[1]
    assert r.ci_low == pytest.approx(-up) and r.ci_high == pytest.approx(up)
    assert 0.2 < r.ci_high < 0.3
    assert r.method.startswith("few-differences bound")
    three = paired(_binary_frame([0] * 3 + [1] * 7, [1] * 10), "A", "B")
    assert three.ci_low <= three.diff <= three.ci_high
    assert three.ci_high == pytest.approx(proportion_ci(3, 10, method="mid-p")[1])
    four = paired(_binary_frame([0] * 4 + [1] * 6, [1] * 10), "A", "B")
    assert four.ci_method == "paired-task-bootstrap-expanded"


def test_few_differences_bound_covers_by_construction() -> None:
    # diff <= E[d+]: the upper limit is a valid bound for the positive part alone
    d = np.array([0.4, 0.0, 0.0, -0.2, 0.0, 0.0])
    lo, hi = few_differences_interval(d)
    assert lo == pytest.approx(-proportion_ci(0.2, 6, method="mid-p")[1])
    assert hi == pytest.approx(proportion_ci(0.4, 6, method="mid-p")[1])
    assert paired_interval(np.array([2.0, 0.0, 0.0]), None)[2] is False  # rewards beyond [0, 1]


def test_pass_metric_keeps_mcnemar_with_fractional_rewards() -> None:
    """Pass (reward >= 1) is 0/1 per attempt even when rewards are partial credit."""
    import evalkit as ek
    from tests.conftest import FIXTURES

    runs = ek.load(FIXTURES / "harbor-edges" / "partial-credit", run="job", cache=False)
    r = paired(runs.trials, by="run", a="run-a", b="run-b", metric="pass")
    # run-a passes alpha, delta; run-b passes alpha, bravo, echo: 1 broken, 2 fixed
    ref = sm_mcnemar([[1, 1], [2, 1]], exact=True).pvalue
    assert r.mcnemar_exact_p == pytest.approx(ref)
    assert r.mcnemar_midp is not None
    assert paired(runs.trials, by="run", a="run-a", b="run-b").mcnemar_exact_p is None
