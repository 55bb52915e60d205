"""Significance tests and bootstrap helpers used by :func:`evalkit.stats.paired`.

All vectorised numpy, all seeded. Kept separate from the frame code so the simulation and the
benchmark call exactly what :func:`~evalkit.stats.paired` calls.
"""

from __future__ import annotations

import math

import numpy as np

from evalkit._lazy import scipy_special as special
from evalkit._lazy import scipy_stats as stats

__all__ = [
    "bootstrap_interval",
    "bootstrap_task_means",
    "cluster_bootstrap_ratio_ci",
    "fisher_min_p",
    "mcnemar",
    "prob_b_better",
    "sign_flip_pvalue",
    "task_indices",
]


def mcnemar(b: int, c: int) -> tuple[float, float]:
    """McNemar's test on the discordant counts of a paired 2x2 table.

    ``b`` = tasks A passed and B failed, ``c`` = A failed and B passed. Returns ``(exact,
    mid_p)``: exact two-sided p = min(1, 2 * BinomCDF(min(b, c); b + c, 1/2)) (computed by
    statsmodels' ``mcnemar(exact=True)``), and mid-p = exact - P(X = min(b, c)) (Fagerland et al. 2013;
    less conservative, near-nominal size). Both are 1 when b + c = 0. Reference values:
    (6, 0) -> 0.031 / 0.016; (8, 2) -> 0.109 / 0.065.
    """
    from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar  # heavy: lazy

    b, c = int(b), int(c)
    if b < 0 or c < 0:
        raise ValueError("counts must be >= 0")
    n, k = b + c, min(b, c)
    if n == 0:
        return 1.0, 1.0
    exact = min(1.0, float(sm_mcnemar([[0, b], [c, 0]], exact=True).pvalue))
    if b == c:
        return 1.0, 1.0
    midp = min(1.0, exact - float(stats.binom.pmf(k, n, 0.5)))
    return exact, midp


def _signed_sums(values: np.ndarray) -> np.ndarray:
    s = np.zeros(1)
    for v in values:
        s = np.concatenate([s + v, s - v])
    return s


def sign_flip_pvalue(
    d: np.ndarray,
    *,
    n_resamples: int = 10_000,
    seed: int | None = 0,
    exact_max: int = 30,
) -> tuple[float, bool]:
    """Two-sided paired sign-flip permutation p-value for H0: each d_i is symmetric about 0.

    Statistic |sum_i d_i|. Zero differences cannot change sign and are dropped. With at most
    ``exact_max`` non-zero differences every one of the 2**m sign vectors is enumerated
    (meet-in-the-middle: two halves of 2**(m/2) sums each, so m = 30 costs milliseconds) and the
    p-value is exact; otherwise ``n_resamples`` random sign vectors give (1 + hits) / (1 + B),
    which is a valid p-value for any B. Returns ``(p, exact)``. For one binary attempt per task
    it equals McNemar's exact test.
    """
    arr = np.asarray(d, dtype=float)
    arr = arr[np.isfinite(arr)]
    scale = float(np.abs(arr).sum()) if arr.size else 0.0
    tol = 1e-9 * max(1.0, scale)
    nz = arr[np.abs(arr) > 1e-12 * max(1.0, scale)]
    m = int(nz.size)
    obs = abs(float(nz.sum()))
    if m == 0 or obs <= tol:
        return 1.0, True
    thr = obs - tol
    if m <= exact_max:
        h = m // 2
        sa = np.sort(_signed_sums(nz[:h]))
        sb = _signed_sums(nz[h:])
        hits = (sa.size - np.searchsorted(sa, thr - sb, side="left")).sum()
        hits += np.searchsorted(sa, -thr - sb, side="right").sum()
        return min(1.0, float(hits) / float(2**m)), True
    rng = np.random.default_rng(seed)
    hits = 0
    chunk = max(1, 2_000_000 // m)
    done = 0
    total = float(nz.sum())
    nbytes = (m + 7) // 8
    while done < n_resamples:
        b = min(chunk, n_resamples - done)
        # random bits -> signs s = 2*bit - 1, so sum(s*d) = 2*(bits @ d) - sum(d); float64 BLAS
        bits = np.unpackbits(
            rng.integers(0, 256, size=(b, nbytes), dtype=np.uint8), axis=1, count=m
        )
        hits += int((np.abs(2.0 * (bits.astype(np.float64) @ nz) - total) >= thr).sum())
        done += b
    return (1.0 + hits) / (1.0 + n_resamples), False


#: Values gathered at once by the bootstrap (8 MB of float64); the result does not depend on it.
GATHER_CELLS = 1 << 20


def bootstrap_task_means(
    values: np.ndarray, *, n_resamples: int = 10_000, seed: int | None = 0
) -> np.ndarray:
    """Means of ``values`` (one per task) over ``n_resamples`` task resamples with replacement.

    A resampled task brings its whole per-task value, i.e. all of its attempts (for a statistic
    that averages task means, resampling tasks-with-attempts and resampling the per-task means
    are the same thing). Vectorised: one (B, T) index draw (:func:`task_indices`) and a gather.
    """
    v = np.asarray(values, dtype=float)
    idx = task_indices(np.random.default_rng(seed), v.size, n_resamples)
    out = np.empty(n_resamples)
    rows = max(1, GATHER_CELLS // max(v.size, 1))  # the gathered values, a block at a time
    for start in range(0, n_resamples, rows):
        out[start : start + rows] = v[idx[start : start + rows]].mean(axis=1)
    return out


def task_indices(rng: np.random.Generator, n_tasks: int, n_resamples: int) -> np.ndarray:
    """A (n_resamples, n_tasks) matrix of task indices drawn with replacement.

    uint16 when it fits: the draw is cheaper and numpy's gather converts it faster than int32
    (measured in benchmarks/bench_bootstrap.py).
    """
    dtype = np.uint16 if n_tasks <= np.iinfo(np.uint16).max else np.int64
    return rng.integers(0, n_tasks, size=(n_resamples, n_tasks), dtype=dtype)


def bootstrap_interval(
    boot: np.ndarray,
    estimate: float,
    *,
    confidence: float = 0.95,
    method: str = "percentile",
    n_units: int | None = None,
    jackknife: np.ndarray | None = None,
) -> tuple[float, float]:
    """Interval from bootstrap replicates ``boot`` of a statistic whose value is ``estimate``.

    * ``"percentile"``: the (1-c)/2 and (1+c)/2 quantiles.
    * ``"expanded"``: Hesterberg's (2015) expanded percentile for small samples: quantiles at
      alpha'/2 with z_{alpha'/2} = sqrt(n/(n-1)) * t_{alpha/2, n-1} (``n_units`` = tasks);
      widens the percentile interval by the t and n/(n-1) factors a bootstrap of a mean lacks.
    * ``"bca"``: bias-corrected and accelerated (Efron 1987); needs ``jackknife`` (the
      leave-one-task-out statistics). The bias correction counts ties as half (discrete data).
    """
    b = np.asarray(boot, dtype=float)
    alpha = 1.0 - confidence
    if method == "percentile":
        q = [alpha / 2, 1 - alpha / 2]
    elif method == "expanded":
        n = int(n_units or 0)
        if n < 2:
            q = [alpha / 2, 1 - alpha / 2]
        else:
            z = math.sqrt(n / (n - 1.0)) * float(stats.t.ppf(1 - alpha / 2, n - 1))
            a2 = float(stats.norm.sf(z))
            q = [a2, 1 - a2]
    elif method == "bca":
        if jackknife is None:
            raise ValueError("bca needs the jackknife statistics")
        prop = (np.sum(b < estimate) + 0.5 * np.sum(b == estimate)) / b.size
        z0 = float(special.ndtri(np.clip(prop, 1.0 / (b.size + 1), 1 - 1.0 / (b.size + 1))))
        jk = np.asarray(jackknife, dtype=float)
        dev = jk.mean() - jk
        den = 6.0 * float((dev**2).sum()) ** 1.5
        acc = float((dev**3).sum()) / den if den > 0 else 0.0
        zq = special.ndtri(np.array([alpha / 2, 1 - alpha / 2]))
        adj = special.ndtr(z0 + (z0 + zq) / (1 - acc * (z0 + zq)))
        q = [float(adj[0]), float(adj[1])]
    else:
        raise ValueError("method must be 'percentile', 'expanded' or 'bca'")
    lo, hi = np.quantile(b, q)
    return float(lo), float(hi)


def fisher_min_p(n_a: int, n_b: int) -> float:
    """Smallest two-sided Fisher exact p-value attainable with n_a vs n_b attempts.

    3 vs 3 attempts cannot go below 0.10, so no single task can be "significant" at K = 3.
    """
    if n_a == 0 or n_b == 0:
        return 1.0
    p1 = stats.fisher_exact([[n_a, 0], [0, n_b]]).pvalue
    return float(p1)


def prob_b_better(pass_a: int, n_a: int, pass_b: int, n_b: int) -> float:
    """P(p_B > p_A) under independent Beta(1 + passes, 1 + fails) posteriors (uniform priors).

    Exact finite sum (integer parameters). Descriptive: what the data alone say about one task.
    """
    aa, ba = 1 + int(pass_a), 1 + int(n_a - pass_a)
    ab, bb = 1 + int(pass_b), 1 + int(n_b - pass_b)
    i = np.arange(ab)
    logs = (
        special.betaln(aa + i, ba + bb)
        - np.log(bb + i)
        - special.betaln(1 + i, bb)
        - special.betaln(aa, ba)
    )
    return float(np.clip(np.exp(logs).sum(), 0.0, 1.0))


def cluster_bootstrap_ratio_ci(
    s: np.ndarray, k: np.ndarray, confidence: float, n_resamples: int, seed: int | None
) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval of sum(s)/sum(k) over task resamples (each task with all its
    attempts), per leading index of the ``(..., n_tasks)`` arrays; seeded. Contains the estimate."""
    rng = np.random.default_rng(seed)
    lead = s.shape[:-1]
    s2 = s.reshape(-1, s.shape[-1])
    k2 = k.reshape(-1, k.shape[-1])
    q = [(1 - confidence) / 2, (1 + confidence) / 2]
    lo = np.full(s2.shape[0], np.nan)
    hi = np.full(s2.shape[0], np.nan)
    for r in range(s2.shape[0]):
        keep = k2[r] > 0
        sr, kr = s2[r][keep], k2[r][keep]
        t = sr.size
        if t == 0:
            continue
        idx = task_indices(rng, t, n_resamples)
        ratio = sr[idx].sum(axis=1) / kr[idx].sum(axis=1)
        lo[r], hi[r] = np.quantile(ratio, q)
        p = sr.sum() / kr.sum()
        lo[r], hi[r] = min(lo[r], p), max(hi[r], p)
    return lo.reshape(lead), hi.reshape(lead)
