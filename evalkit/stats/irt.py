"""Item-response model over runs x tasks: run ability, task difficulty and discrimination.

P(attempt of run r passes task t) = expit(a_t * (theta_r - b_t)); ``"1pl"`` fixes a_t = 1
(Rasch), ``"2pl"`` fits it. Fitted by penalised maximum likelihood (scipy L-BFGS with the
analytic gradient) on the binomial counts per (run, task): weak normal priors theta ~ N(0, 1),
b ~ N(0, 3^2), log a ~ N(0, 0.5^2) fix the scale and keep tasks every run passes (or fails)
finite. A trial passes when ``reward >= 1``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from evalkit._lazy import scipy_special, scipy_stats
from evalkit.stats._frames import as_lazy, check_columns, task_table
from evalkit.stats.intervals import check_confidence

__all__ = ["IrtFit", "ability_se", "fit_irt", "fit_irt_counts"]

PRIOR_SD = {"theta": 1.0, "b": 3.0, "log_a": 0.5}


@dataclass(frozen=True)
class IrtFit:
    """``runs``: run, ability, se, ability_low, ability_high (a ``confidence`` Wald interval
    from the Fisher information with the task parameters held at their estimates), n_trials.
    ``tasks``: task_name, difficulty, discrimination, information (Fisher information summed
    over the runs' abilities: how much the task separates these runs), n_runs, n_trials;
    most informative first. ``model``: "1pl" / "2pl"; ``converged``; ``log_lik``."""

    runs: pl.DataFrame
    tasks: pl.DataFrame
    model: str
    converged: bool
    log_lik: float


@dataclass(frozen=True)
class _Counts:
    passes: np.ndarray
    attempts: np.ndarray


def _unpack(x: np.ndarray, n_runs: int, n_tasks: int, two_pl: bool):
    theta, b = x[:n_runs], x[n_runs : n_runs + n_tasks]
    log_a = x[n_runs + n_tasks :] if two_pl else np.zeros(n_tasks)
    return theta, b, log_a


def _objective(x: np.ndarray, c: _Counts, two_pl: bool) -> tuple[float, np.ndarray]:
    n_runs, n_tasks = c.passes.shape
    theta, b, log_a = _unpack(x, n_runs, n_tasks, two_pl)
    a = np.exp(log_a)
    diff = theta[:, None] - b[None, :]
    eta = a[None, :] * diff
    # binomial log-likelihood: s * eta - k * log(1 + e^eta)
    ll = float((c.passes * eta - c.attempts * np.logaddexp(0.0, eta)).sum())
    resid = c.passes - c.attempts * scipy_special.expit(eta)  # dL/deta
    sd = PRIOR_SD
    pen = (theta**2).sum() / sd["theta"] ** 2 + (b**2).sum() / sd["b"] ** 2
    g_theta = (resid * a[None, :]).sum(axis=1) - theta / sd["theta"] ** 2
    g_b = -(resid * a[None, :]).sum(axis=0) - b / sd["b"] ** 2
    grads = [g_theta, g_b]
    if two_pl:
        pen += (log_a**2).sum() / sd["log_a"] ** 2
        grads.append((resid * eta).sum(axis=0) - log_a / sd["log_a"] ** 2)
    return -(ll - 0.5 * pen), -np.concatenate(grads)


def fit_irt_counts(
    passes: np.ndarray, attempts: np.ndarray, model: str = "2pl"
) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool, float]:
    """Fit on (R, T) pass and attempt counts (0 attempts = not tried). Returns theta (R,),
    difficulty b (T,), discrimination a (T,), converged, log-likelihood."""
    from scipy.optimize import minimize

    if model not in ("1pl", "2pl"):
        raise ValueError(f"model must be '1pl' or '2pl', got {model!r}")
    two_pl = model == "2pl"
    c = _Counts(np.asarray(passes, dtype=float), np.asarray(attempts, dtype=float))
    n_runs, n_tasks = c.passes.shape
    with np.errstate(divide="ignore", invalid="ignore"):
        rate_t = (c.passes.sum(0) + 0.5) / (c.attempts.sum(0) + 1.0)
        rate_r = (c.passes.sum(1) + 0.5) / (c.attempts.sum(1) + 1.0)
    x0 = np.concatenate(
        [
            scipy_special.logit(rate_r) - scipy_special.logit(rate_r).mean(),
            -scipy_special.logit(rate_t),
            np.zeros(n_tasks if two_pl else 0),
        ]
    )
    res = minimize(
        _objective, x0, args=(c, two_pl), jac=True, method="L-BFGS-B",
        options={"maxiter": 5000, "gtol": 1e-6},
    )  # fmt: skip
    theta, b, log_a = _unpack(res.x, n_runs, n_tasks, two_pl)
    eta = np.exp(log_a)[None, :] * (theta[:, None] - b[None, :])
    ll = float((c.passes * eta - c.attempts * np.logaddexp(0.0, eta)).sum())
    return theta, b, np.exp(log_a), bool(res.success), ll


def ability_se(
    theta: np.ndarray, b: np.ndarray, a: np.ndarray, s: np.ndarray, k: np.ndarray, model: str
) -> np.ndarray:
    """Standard errors of the abilities from the inverse Hessian of the penalised objective
    over every parameter (so task-parameter uncertainty widens them; a Laplace
    approximation). The Hessian is analytic; the task parameters are eliminated by their
    Schur complement (they couple only within a task), so the cost is one runs x runs
    inverse, not one over runs + tasks parameters."""
    c = _Counts(np.asarray(s, dtype=float), np.asarray(k, dtype=float))
    theta_theta, cross, task_block = _hessian_blocks(theta, b, np.log(a), c, model == "2pl")
    # (H^-1)_theta = (A - B D^-1 B^T)^-1 with D block diagonal, one block per task
    d_inv = np.linalg.pinv(task_block)  # (T, m, m)
    schur = np.diag(theta_theta) - np.einsum("rti,tij,stj->rs", cross, d_inv, cross)
    cov = np.linalg.pinv(0.5 * (schur + schur.T))
    return np.sqrt(np.clip(np.diag(cov), 0.0, None))


def _hessian_blocks(
    theta: np.ndarray, b: np.ndarray, log_a: np.ndarray, c: _Counts, two_pl: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Second derivatives of ``_objective``: the (R,) diagonal of the ability block (abilities
    do not couple with each other), the (R, T, m) ability x task-parameter block and the
    (T, m, m) task blocks, m = 2 (difficulty, log discrimination) for 2PL, else 1."""
    a = np.exp(log_a)
    eta = a[None, :] * (theta[:, None] - b[None, :])
    p = scipy_special.expit(eta)
    w = c.attempts * p * (1.0 - p)  # -d2L/deta2
    resid = c.passes - c.attempts * p  # dL/deta
    sd = PRIOR_SD
    a2 = a[None, :] ** 2
    theta_theta = (w * a2).sum(axis=1) + 1.0 / sd["theta"] ** 2
    theta_b = -w * a2
    b_b = (w * a2).sum(axis=0) + 1.0 / sd["b"] ** 2
    if not two_pl:
        return theta_theta, theta_b[:, :, None], b_b[:, None, None]
    theta_la = a[None, :] * (w * eta - resid)
    b_la = (a[None, :] * (resid - w * eta)).sum(axis=0)
    la_la = (w * eta**2 - resid * eta).sum(axis=0) + 1.0 / sd["log_a"] ** 2
    cross = np.stack([theta_b, theta_la], axis=-1)
    task_block = np.stack([np.stack([b_b, b_la], -1), np.stack([b_la, la_la], -1)], axis=-2)
    return theta_theta, cross, task_block


def fit_irt(
    trials: pl.DataFrame | pl.LazyFrame,
    by: str = "run",
    model: str = "2pl",
    confidence: float = 0.95,
    *,
    task: str = "task_name",
    reward: str = "reward",
) -> IrtFit:
    """Fit the item-response model to every run and task in ``trials`` (tasks a run did not
    try simply carry no information about it). See the module docstring."""
    check_confidence(confidence)
    frame = as_lazy(trials).filter(pl.col(by).is_not_null() & pl.col(task).is_not_null())
    check_columns(frame, [by, task, reward])
    tt = task_table(frame, [by], task, reward).with_columns(
        pl.col(by).cast(pl.String), pl.col(task).cast(pl.String)
    )
    if tt.height == 0:
        raise ValueError("no trials with a run and a task")
    runs = sorted(tt[by].unique().to_list())
    tasks = sorted(tt[task].unique().to_list())
    r_idx = {r: i for i, r in enumerate(runs)}
    t_idx = {t: i for i, t in enumerate(tasks)}
    s = np.zeros((len(runs), len(tasks)))
    k = np.zeros_like(s)
    ri = np.array([r_idx[r] for r in tt[by].to_list()], dtype=np.int64)
    ti = np.array([t_idx[t] for t in tt[task].to_list()], dtype=np.int64)
    s[ri, ti] = tt["n_pass"].to_numpy()
    k[ri, ti] = tt["n_trials"].to_numpy()
    theta, b, a, ok, ll = fit_irt_counts(s, k, model)
    p = scipy_special.expit(a[None, :] * (theta[:, None] - b[None, :]))
    se = ability_se(theta, b, a, s, k, model)
    z = float(scipy_stats.norm.ppf(0.5 + confidence / 2))
    run_frame = pl.DataFrame(
        {
            by: runs,
            "ability": theta,
            "se": se,
            "ability_low": theta - z * se,
            "ability_high": theta + z * se,
            "n_trials": k.sum(axis=1).astype(np.int64),
        }
    ).sort("ability", descending=True)
    task_frame = pl.DataFrame(
        {
            task: tasks,
            "difficulty": b,
            "discrimination": a,
            "information": (a[None, :] ** 2 * p * (1 - p)).sum(axis=0),
            "n_runs": (k > 0).sum(axis=0).astype(np.int64),
            "n_trials": k.sum(axis=0).astype(np.int64),
        }
    ).sort("information", descending=True)
    return IrtFit(run_frame, task_frame, model, ok, ll)
