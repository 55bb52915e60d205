"""fit_irt: recovery of planted abilities, difficulties and discriminations by simulation."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from scipy.special import expit

import evalkit
from evalkit.stats.irt import fit_irt_counts


def simulate(seed: int, n_runs: int = 16, n_tasks: int = 74):
    rng = np.random.default_rng(seed)
    theta = rng.normal(0, 1, n_runs)
    b = rng.normal(0, 1.5, n_tasks)
    a = np.exp(rng.normal(0, 0.3, n_tasks))
    k = rng.integers(1, 10, (n_runs, n_tasks))
    s = rng.binomial(k, expit(a * (theta[:, None] - b)))
    return theta, b, a, s, k


@pytest.mark.parametrize("model", ["1pl", "2pl"])
def test_recovers_planted_parameters(model: str) -> None:
    hits = n = 0
    for seed in range(3):
        theta, b, a, s, k = simulate(seed)
        t_hat, b_hat, a_hat, ok, _ = fit_irt_counts(s, k, model)
        assert ok
        assert np.corrcoef(t_hat, theta)[0, 1] > 0.95
        assert np.corrcoef(b_hat, b)[0, 1] > 0.9
        if model == "2pl":
            assert np.corrcoef(a_hat, a)[0, 1] > 0.4
        else:
            assert (a_hat == 1).all()
        df = pl.DataFrame(
            [
                {"run": f"r{r:02d}", "task_name": f"t{t:02d}", "reward": float(j < s[r, t])}
                for r in range(s.shape[0])
                for t in range(s.shape[1])
                for j in range(k[r, t])
            ]
        )
        fit = evalkit.stats.fit_irt(df, model=model)
        runs = fit.runs.sort("run")
        np.testing.assert_allclose(runs["ability"].to_numpy(), t_hat, atol=1e-6)
        inside = (runs["ability_low"].to_numpy() <= theta) & (
            theta <= runs["ability_high"].to_numpy()
        )
        hits += int(inside.sum())
        n += theta.size
    assert hits / n >= 0.85, hits / n


def test_most_informative_task_is_the_discriminating_one() -> None:
    # runs of ability -1, 0, 1; one task sits exactly between them with a steep curve, the
    # others are far too easy or too hard
    rows = []
    for r, ok_mid in (("weak", 0), ("mid", 5), ("strong", 10)):
        for j in range(10):
            rows.append({"run": r, "task_name": "split", "reward": float(j < ok_mid)})
            rows.append({"run": r, "task_name": "trivial", "reward": 1.0})
            rows.append({"run": r, "task_name": "impossible", "reward": 0.0})
    fit = evalkit.stats.fit_irt(pl.DataFrame(rows))
    assert fit.tasks["task_name"][0] == "split"
    assert fit.runs["run"].to_list() == ["strong", "mid", "weak"]
    assert np.isfinite(fit.tasks["difficulty"].to_numpy()).all()  # dead tasks stay finite
    with pytest.raises(ValueError, match="1pl"):
        evalkit.stats.fit_irt(pl.DataFrame(rows), model="3pl")


@pytest.mark.parametrize("model", ["1pl", "2pl"])
def test_ability_se_is_the_inverse_hessian_of_the_objective(model: str) -> None:
    """The analytic, Schur-reduced standard errors equal the full inverse of the objective's
    Hessian taken numerically (central differences of its gradient) over every parameter."""
    from evalkit.stats.irt import _Counts, _objective, ability_se

    _, _, _, s, k = simulate(7, n_runs=6, n_tasks=15)
    k[0, :3] = 0  # tasks a run did not try
    s[0, :3] = 0
    theta, b, a, _, _ = fit_irt_counts(s, k, model)
    two_pl = model == "2pl"
    x = np.concatenate([theta, b, np.log(a)] if two_pl else [theta, b])
    c, h = _Counts(s.astype(float), k.astype(float)), 1e-5
    grad = lambda v: _objective(v, c, two_pl)[1]
    hess = np.array([(grad(x + h * e) - grad(x - h * e)) / (2 * h) for e in np.eye(x.size)])
    expected = np.sqrt(np.diag(np.linalg.inv(0.5 * (hess + hess.T)))[: theta.size])
    np.testing.assert_allclose(ability_se(theta, b, a, s, k, model), expected, rtol=1e-6)
