"""Shared references for the analytic tests: quadrature settings, an integral
split at a point, and z-scores of exact iid draws.  Independent of analytic/."""

from __future__ import annotations

import math

import numpy as np
from scipy import integrate

RTOL = 1e-10
QUAD = dict(epsabs=0.0, epsrel=1e-13, limit=200)
N_DRAWS = 200_000
Z_MAX = 5.0  # two-sided P(|Z| > 5) = 5.7e-7 per check (normal approximation)


def integrate_split(log_f, lo: float, hi: float, split: float, weight=lambda t: 1.0) -> float:
    """Integral of weight(t) exp(log_f(t) - log_f(split)) over [lo, hi], split at ``split``."""
    c = log_f(split)

    def g(t):
        return weight(t) * math.exp(log_f(t) - c)

    return integrate.quad(g, lo, split, **QUAD)[0] + integrate.quad(g, split, hi, **QUAD)[0]


def sampler_z_scores(draws, *, mean, cov, marginals) -> dict[str, float]:
    """z-scores of iid draws against the exact mean, covariance and marginal quantiles.

    Mean: exact SE sqrt(cov_ii / N).  Covariance: E[(x_i - m_i)(x_j - m_j)] about
    the exact mean, SE from the sample sd of the products.  Empirical CDF at the
    exact 5/50/95% quantiles: binomial SE sqrt(q (1 - q) / N).
    """
    n, d = draws.shape
    c = draws - mean
    z = {}
    for i in range(d):
        z[f"mean[{i}]"] = c[:, i].mean() / math.sqrt(cov[i, i] / n)
        for j in range(i, d):
            prod = c[:, i] * c[:, j]
            z[f"cov[{i},{j}]"] = (prod.mean() - cov[i, j]) / (prod.std() / math.sqrt(n))
        for q in (0.05, 0.5, 0.95):
            ecdf = np.mean(draws[:, i] <= marginals[i].ppf(q))
            z[f"cdf[{i}]@{q}"] = (ecdf - q) / math.sqrt(q * (1 - q) / n)
    return z
