"""Is the agreement test calibrated at the thresholds it uses? (issue 60)

The verdict compares ``max |z|`` with a Bonferroni threshold: 4.26 for a
one-parameter posterior at the default alpha 1e-4 (m = 4), about 4.9 at the
plugin's per-check alpha. So what must be right is the tail of each
quantity's z at 4-5 sds, a probability of 1e-5 to 1e-6, at the ESS the gate
admits (400 and up) -- not its sd. Two measurements:

* :func:`tail_ratio` -- the two-sided tail probability of one quantity's z
  at a threshold, divided by the normal's, on chains whose ESS is known
  exactly, by importance sampling (exponential tilting, so that a 1e-6 tail
  costs a few thousand chains, not billions):

  - ``"sticky"``: the lazy independence chain -- each draw is a fresh exact
    draw with probability ``1 - rho``, else the previous draw again --
    whose every function has autocorrelation ``rho^k``, so ESS =
    ``N (1 - rho) / (1 + rho)`` for any quantity. A quantity of a PIT
    (``loc``/``scale``/``skew``/``kurt``) has the same null whatever the
    posterior, so this one chain answers for every posterior with a
    marginal. Its averages come in clumps (a compound sum), the skewed
    case the rule has to survive.
  - ``"ar1"``: a Gaussian AR(1) chain, for the ``mean:`` quantity of a
    Gaussian posterior; ESS = ``N (1 - phi) / (1 + phi)``.

  ``gate=True`` keeps only the chains whose estimated bulk and tail ESS pass
  the gate's 400 (the verdict exists only then): the ratio is then
  ``P(|z| > t, pass) / P(pass)`` over the normal tail.

* :func:`realised_rates` -- the family-wise false-alarm rate of the whole
  test at alpha 0.05 and 0.01 on exact iid draws of a posterior
  (:func:`iid_cases`: Neal's funnel given without marginals, a lognormal,
  Student t with 3, 5 and 9 df, a Pareto, a 100-dimensional correlated
  Gaussian).

``benchmarks/tail_study.py`` prints the tables quoted in docs/verdict.md;
``tests/compare/studies/test_tails.py`` runs a small version.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from compare.core import agreement
from compare.core.agreement import (
    _Battery,
    _judge,
    agreement_test,
    bonferroni_threshold,
    legendre,
)
from compare.core.ess import ess_bulk, ess_mean_lags, ess_tail

#: The gate's ESS bound (compare/core/defaults.py's ``ess_min``).
GATE_ESS = 400.0


@dataclass(frozen=True)
class TailEstimate:
    """A two-sided tail probability of z at ``threshold`` over the normal's.

    Attributes
    ----------
    ratio, se : float
        The ratio and its Monte Carlo standard error.
    passed_gate : float
        The share of null chains that passed the gate (1 when not gated).
    """

    ratio: float
    se: float
    passed_gate: float


class _TiltTable:
    """Draws of w on (0, 1) with density proportional to ``exp(theta g(w))`` for
    ``theta`` on a grid, and each theta's ``log E[exp(theta g(U))]``, U uniform."""

    def __init__(self, g: Callable[[np.ndarray], np.ndarray], theta_max: float, size: int = 801):
        self.theta = np.linspace(-theta_max, theta_max, size)
        grid = 4001
        self.edges = np.arange(grid + 1) / grid
        log_density = self.theta[:, None] * g((np.arange(grid) + 0.5) / grid)[None, :]
        shift = log_density.max(axis=1, keepdims=True)
        density = np.exp(log_density - shift)
        cdf = np.concatenate([np.zeros((size, 1)), np.cumsum(density, axis=1)], axis=1)
        self.log_normaliser = np.log(cdf[:, -1] / grid) + shift[:, 0]
        self.cdf = cdf / cdf[:, -1:]

    def nearest(self, theta: np.ndarray) -> np.ndarray:
        step = self.theta[1] - self.theta[0]  # > 0: the table reaches at least 0.5
        index = np.rint((theta - self.theta[0]) / step).astype(int)
        return np.clip(index, 0, self.theta.size - 1)

    def draw(self, index: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One draw for each entry of ``index`` (a grid position)."""
        u = rng.random(index.shape)
        rows = self.cdf.shape[1]
        # Each row's CDF offset by its row number is one increasing sequence.
        flat = (self.cdf + np.arange(self.theta.size)[:, None]).ravel()
        target = u + index
        pos = np.clip(np.searchsorted(flat, target.ravel(), side="right") - 1, 0, flat.size - 2)
        pos = pos.reshape(index.shape)
        col = np.minimum(pos - index * rows, rows - 2)
        lo = flat[index * rows + col]
        hi = flat[index * rows + col + 1]
        frac = np.where(hi > lo, (target - lo) / np.where(hi > lo, hi - lo, 1.0), 0.0)
        return self.edges[col] + frac * (self.edges[col + 1] - self.edges[col])


def _z_scores(series: np.ndarray) -> np.ndarray:
    """The agreement test's z of each replication's one quantity (mean 0, sd 1
    under the null): ``series`` of shape (replication, chain, draw)."""
    battery = _Battery([], [], [], [], [])
    for one in series:
        battery.add("q", one)
    agreement = _judge(battery, 0.05, n_draws=series.shape[1] * series.shape[2])
    return np.array([q.z for q in agreement.quantities])


def _passes_gate(w: np.ndarray) -> np.ndarray:
    """Whether each replication's draws (replication, chain, draw) pass the gate's
    ESS part (bulk and tail ESS above 400)."""
    return (ess_bulk(w) > GATE_ESS) & (ess_tail(w) > GATE_ESS)


def tail_ratio(
    *,
    chain: str,
    ess: float,
    quantity: str,
    threshold: float,
    replications: int,
    rng: np.random.Generator,
    gate: bool = False,
    chains: int = 4,
    draws: int = 2000,
    batch: int = 250,
) -> TailEstimate:
    """The two-sided tail of z at ``threshold`` over the normal's, by importance
    sampling.

    Parameters
    ----------
    chain : {"sticky", "ar1"}
    ess : float
        The chains' exact ESS (of ``chains * draws`` draws).
    quantity : str
        ``"mean"`` (``"ar1"`` only) or ``"loc"``, ``"scale"``, ``"skew"``,
        ``"kurt"`` (``"sticky"``: the Legendre polynomial of the PIT).
    threshold : float
    replications : int
        Chains per tail side.
    gate : bool
        Condition on the gate's ESS bound.
    """
    from scipy import stats  # heavy: SciPy only when the study runs

    n = chains * draws
    rho = (n - ess) / (n + ess)
    nominal = float(stats.norm.sf(threshold))
    sides = []
    for sign in (1.0, -1.0):
        terms: list[np.ndarray] = []
        left = replications
        while left > 0:
            size = min(batch, left)
            left -= size
            if chain == "ar1":
                z, log_lr, w = _ar1_batch(rho, sign * threshold, size, chains, draws, ess, rng)
            elif chain == "sticky":
                z, log_lr, w = _sticky_batch(
                    quantity, rho, sign * threshold, size, chains, draws, ess, rng
                )
            else:
                raise ValueError(f"chain must be 'sticky' or 'ar1', got {chain!r}")
            hit = (sign * z > threshold) & (_passes_gate(w) if gate else True)
            terms.append(np.where(hit, np.exp(log_lr), 0.0))
        sides.append(np.concatenate(terms))
    pass_rate = 1.0
    if gate:
        pass_rate = _gate_pass_rate(chain, rho, chains, draws, max(replications, 400), rng)
    probability = (sides[0].mean() + sides[1].mean()) / pass_rate
    se = np.sqrt(sides[0].var() / sides[0].size + sides[1].var() / sides[1].size) / pass_rate
    return TailEstimate(
        ratio=float(probability / (2 * nominal)),
        se=float(se / (2 * nominal)),
        passed_gate=pass_rate,
    )


def _sticky_batch(
    quantity: str,
    rho: float,
    target_z: float,
    size: int,
    chains: int,
    draws: int,
    ess: float,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sticky chains of a PIT whose fresh draws are tilted towards ``target_z``:
    (z, log likelihood ratio, PIT draws).

    The hold pattern is drawn first (it does not depend on the values); a block
    held for ``l`` draws weighs ``l`` in the mean, so its value is tilted by
    ``theta l / sqrt(sum l^2)`` -- the tilt that puts the mean at ``target_z``
    standard errors to first order (a tilt equal for every block makes the
    likelihood ratio's variance explode)."""
    degree = {"loc": 1, "scale": 2, "skew": 3, "kurt": 4}[quantity]

    def g(w: np.ndarray) -> np.ndarray:
        return legendre(w, degree)

    fresh = rng.random((size, chains, draws)) >= rho
    fresh[:, :, 0] = True
    start = np.where(fresh, np.arange(draws), 0)
    block = np.maximum.accumulate(start, axis=2)
    # Each block's length, stored at its first draw.
    next_start = np.where(fresh, np.arange(draws), draws)
    following = np.minimum.accumulate(next_start[:, :, ::-1], axis=2)[:, :, ::-1]
    after = np.concatenate([following[:, :, 1:], np.full((size, chains, 1), draws)], axis=2)
    length = np.where(fresh, after - np.arange(draws), 0)
    root = np.sqrt(np.sum(length.astype(float) ** 2, axis=(1, 2), keepdims=True))
    theta = target_z * length / root
    table = _table(degree, float(np.max(np.abs(theta))))
    index = table.nearest(theta)
    values = table.draw(index, rng)
    w = np.take_along_axis(values, block, axis=2)
    log_lr = np.sum(
        np.where(fresh, -table.theta[index] * g(values) + table.log_normaliser[index], 0.0),
        axis=(1, 2),
    )
    return _z_scores(g(w)), log_lr, w


_TABLES: dict[tuple[int, float], _TiltTable] = {}


def _table(degree: int, theta_max: float) -> _TiltTable:
    """A tilt table for Legendre ``degree`` reaching ``theta_max`` (rounded up)."""
    reach = max(float(np.ceil(theta_max * 2.0) / 2.0), 0.5)
    key = (degree, reach)
    if key not in _TABLES:
        _TABLES[key] = _TiltTable(lambda w: legendre(w, degree), reach)
    return _TABLES[key]


def _ar1_batch(
    phi: float,
    target_z: float,
    size: int,
    chains: int,
    draws: int,
    ess: float,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Stationary AR(1) chains with unit variance shifted by ``mu`` towards
    ``target_z``: (z of their mean, log likelihood ratio, draws). The ratio of
    N(0, S) to N(mu 1, S) at x is ``exp(-mu 1'S^-1 x + mu^2 1'S^-1 1 / 2)``,
    with ``S^-1 1`` = (1, 1 - phi, ..., 1 - phi, 1) / (1 + phi)."""
    mu = target_z / np.sqrt(ess)
    noise = rng.standard_normal((size, chains, draws))
    x = np.empty_like(noise)
    x[:, :, 0] = noise[:, :, 0]
    scale = np.sqrt(1.0 - phi * phi)
    for t in range(1, draws):
        x[:, :, t] = phi * x[:, :, t - 1] + scale * noise[:, :, t]
    x += mu
    weights = np.full(draws, (1.0 - phi) / (1.0 + phi))
    weights[[0, -1]] = 1.0 / (1.0 + phi)
    log_lr = -mu * np.sum(x @ weights, axis=1) + 0.5 * mu * mu * chains * weights.sum()
    return _z_scores(x), log_lr, x


def _gate_pass_rate(
    chain: str, rho: float, chains: int, draws: int, replications: int, rng: np.random.Generator
) -> float:
    """The share of null chains that pass the gate's ESS bound."""
    if chain == "ar1":
        _, _, w = _ar1_batch(rho, 0.0, replications, chains, draws, 1.0, rng)
    else:
        fresh = rng.random((replications, chains, draws)) >= rho
        fresh[:, :, 0] = True
        block = np.maximum.accumulate(np.where(fresh, np.arange(draws), 0), axis=2)
        w = np.take_along_axis(rng.random((replications, chains, draws)), block, axis=2)
    return float(np.mean(_passes_gate(w)))


# --- the spread test's tail ------------------------------------------------------------
@dataclass(frozen=True)
class SpreadTail:
    """The spread test's tail at a threshold over the normal's two-sided tail (its
    p-value is read as a two-sided normal deviate), with its Monte Carlo error,
    and the share of null runs in which the test was made (enough batches)."""

    ratio: float
    se: float
    made: float


def spread_tail_ratio(
    *,
    ess: float,
    f: int,
    threshold: float,
    replications: int,
    rng: np.random.Generator,
    correlation: float = 0.0,
    chains: int = 4,
    draws: int = 2000,
    batch: int = 50,
) -> SpreadTail:
    """The tail of the spread test (``compare.core.agreement.spread_test``) at
    ``threshold``, on ``f`` Gaussian AR(1) coordinates with exact ESS ``ess``
    whose innovations have equicorrelation ``correlation`` (the averages' Monte
    Carlo errors are then correlated as much), by conditional Monte Carlo.

    The test's ``T² = xbar' A xbar`` is a quadratic form of the chains' mean
    ``xbar`` with ``A`` made of the estimates (per-coordinate ESS, batch-means
    correlation) and a threshold that depends on them too (Hotelling's ``nu``).
    Those estimates are functions of the centred draws, independent of the mean
    for Gaussian draws (exactly for independent ones, nearly for AR(1)); and
    ``xbar`` is exactly ``N(0, V)`` with ``V`` known. So each null run
    contributes ``P(T² > c | A, c)``, the tail of ``sum_k mu_k chi²_1`` with
    ``mu`` the eigenvalues of ``V^(1/2) A V^(1/2)`` (:func:`weighted_chi2_sf`):
    a 1e-6 tail from a few hundred runs, with no importance weights (a shift
    proposal's weights were heavy-tailed: estimation noise, not the mean,
    makes the rare large ``T²``).
    """
    from scipy import signal, stats  # heavy: SciPy only when the study runs

    n = chains * draws
    phi = (n - ess) / (n + ess)
    psi = (1.0 - correlation) * np.eye(f) + correlation * np.ones((f, f))
    values, vectors = np.linalg.eigh(psi)
    half = vectors @ np.diag(np.sqrt(values)) @ vectors.T
    nominal = 2.0 * float(stats.norm.sf(threshold))
    # Var of one chain's mean of `draws` unit-variance AR(1) draws, then of 4 chains'.
    lag = np.arange(1, draws)
    one_chain = (1.0 + 2.0 * np.sum((1.0 - lag / draws) * phi**lag)) / draws
    v_half = half * np.sqrt(one_chain / chains)
    probabilities, made = [], []
    left = replications
    while left > 0:
        size = min(batch, left)
        left -= size
        noise = rng.standard_normal((size, chains, draws, f)) @ half.T
        start = noise[:, :, :1, :]
        rest = signal.lfilter(
            [np.sqrt(1.0 - phi * phi)], [1.0, -phi], noise[:, :, 1:, :], axis=2, zi=phi * start
        )[0]
        x = np.concatenate([start, rest], axis=2)
        for one in x:
            series = np.moveaxis(one, -1, 0)  # (f, chain, draw)
            ess_hat, lags = ess_mean_lags(series)
            ess_hat = np.where(np.isfinite(ess_hat) & (ess_hat > 0), ess_hat, n)
            df = np.where(np.isfinite(lags), n / (2.0 * np.nan_to_num(lags) + 1.0), np.inf)
            found = agreement.spread_matrix(series, lags, df)
            made.append(found is not None)
            if found is None:
                probabilities.append(0.0)
                continue
            inverse, rank, nu, _ = found
            root = np.sqrt(ess_hat)
            a = root[:, None] * inverse * root[None, :]
            mu = np.linalg.eigvalsh(v_half.T @ a @ v_half)
            # Read from the module at call time: a test plants a wrong threshold there.
            c = agreement.spread_threshold(rank, nu, nominal)
            probabilities.append(weighted_chi2_sf(c, mu[mu > 1e-12 * mu.max()]))
    p = np.asarray(probabilities)
    return SpreadTail(
        ratio=float(p.mean() / nominal),
        se=float(p.std() / np.sqrt(p.size) / nominal),
        made=float(np.mean(made)),
    )


def weighted_chi2_sf(c: float, mu: np.ndarray) -> float:
    """``P(sum_k mu_k Z_k^2 > c)``, ``mu > 0``, by Lugannani and Rice's saddlepoint
    approximation (relative error about 1% in the far tail; exact for equal
    weights up to that error: ``tests/compare/studies/test_tails.py``)."""
    from scipy import optimize, special  # heavy: SciPy only when the study runs

    mu = np.asarray(mu, dtype=float)
    if c <= 1.2 * float(mu.sum()):  # the bulk, where the saddlepoint nears 0: by simulation
        draws = np.random.default_rng(0).chisquare(1.0, (20_000, mu.size))
        return float(np.mean(draws @ mu > c))
    top = 1.0 / (2.0 * mu.max())

    def slope(s: float) -> float:
        return float(np.sum(mu / (1.0 - 2.0 * s * mu))) - c

    s = optimize.brentq(slope, 0.0, top * (1.0 - 1e-15), xtol=1e-300, rtol=1e-14)
    k = -0.5 * float(np.sum(np.log1p(-2.0 * s * mu)))
    k2 = float(np.sum(2.0 * mu**2 / (1.0 - 2.0 * s * mu) ** 2))
    w = np.sqrt(2.0 * (s * c - k))
    u = s * np.sqrt(k2)
    return float(special.ndtr(-w) + np.exp(-0.5 * w * w) / np.sqrt(2 * np.pi) * (1 / u - 1 / w))


# --- realised rates on exact iid draws -------------------------------------------------
@dataclass(frozen=True)
class RateEstimate:
    """Family-wise false-alarm rates of the whole test at alpha 0.05 and 0.01."""

    case: str
    quantities: int
    rate_05: float
    rate_01: float
    replications: int

    def se(self, alpha: float) -> float:
        return float(np.sqrt(alpha * (1 - alpha) / self.replications))


@dataclass(frozen=True, eq=False)
class StudyPosterior:
    """An exact posterior for the study, as a user's ``compare.Exact`` gives it: mean
    and covariance, and a scipy marginal per coordinate, or an iid sampler alone, or
    Gaussianity (the ``ExactPosterior`` protocol of ``analytic``)."""

    parameters: tuple[str, ...]
    mean: np.ndarray
    cov: np.ndarray
    marginals: tuple[Any, ...] | None = None
    sampler: Callable[[np.random.Generator, int], np.ndarray] | None = None
    is_gaussian: bool = False
    mode: np.ndarray | None = None
    mode_interior: bool = True
    moments_below: float = float("inf")

    @property
    def free(self) -> tuple[int, ...]:
        return tuple(range(len(self.parameters)))

    def marginal(self, index: int) -> Any:
        return None if self.marginals is None else self.marginals[index]

    def logpdf(self, x: np.ndarray) -> np.ndarray:
        raise NotImplementedError("the study needs no density")

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        if self.sampler is not None:
            return self.sampler(rng, size)
        if self.marginals is not None:
            return np.column_stack([m.rvs(size=size, random_state=rng) for m in self.marginals])
        chol = np.linalg.cholesky(self.cov)
        return self.mean + rng.standard_normal((size, self.mean.size)) @ chol.T


def _scipy_posterior(dist: Any) -> StudyPosterior:
    mean, var = (float(v) for v in dist.stats(moments="mv"))
    return StudyPosterior(("theta",), np.array([mean]), np.array([[var]]), marginals=(dist,))


def iid_cases() -> dict[str, StudyPosterior]:
    """The posteriors of issue 60's study, as a user would give them."""
    from scipy import stats  # heavy: SciPy only when the study runs

    def funnel_sample(rng: np.random.Generator, size: int) -> np.ndarray:
        v = 3.0 * rng.standard_normal(size)
        x = rng.standard_normal((size, 9)) * np.exp(v / 2.0)[:, None]
        return np.column_stack([v, x])

    # Neal's funnel: v ~ N(0, 3^2), x_i | v ~ N(0, sd exp(v / 2)), i = 1..9 (10
    # dimensions); var(x_i) = E[exp(v)] = exp(4.5), kurtosis 3 exp(9) ~ 24,000.
    funnel = StudyPosterior(
        ("v",) + tuple(f"x{i}" for i in range(1, 10)),
        np.zeros(10),
        np.diag([9.0] + [float(np.exp(4.5))] * 9),
        sampler=funnel_sample,
    )
    rng = np.random.default_rng(20261207)
    a = rng.standard_normal((100, 100))
    cov = a @ a.T / 100 + 0.1 * np.eye(100)
    gaussian = StudyPosterior(
        tuple(f"b{i}" for i in range(100)), np.zeros(100), cov, is_gaussian=True
    )
    return {
        "funnel (10-d, no marginals)": funnel,
        "lognormal sigma 1": _scipy_posterior(stats.lognorm(1.0)),
        "student t 3 df": _scipy_posterior(stats.t(3)),
        "student t 5 df": _scipy_posterior(stats.t(5)),
        "student t 9 df": _scipy_posterior(stats.t(9)),
        "pareto shape 2.5": _scipy_posterior(stats.pareto(2.5)),
        "gaussian 100-d correlated": gaussian,
    }


def realised_rates(
    case: str, *, replications: int, rng: np.random.Generator, chains: int = 4, draws: int = 2000
) -> RateEstimate:
    """The whole test's family-wise false-alarm rate on exact iid draws of one of
    :func:`iid_cases`."""
    posterior = iid_cases()[case]
    rejected = {0.05: 0, 0.01: 0}
    m = 0
    for _ in range(replications):
        x = posterior.sample(rng, chains * draws).reshape(chains, draws, -1)
        result = agreement_test(x, posterior, alpha=0.05)  # one reference set, as a user has
        tested = [q.z for q in result.quantities if q.null_sd > 0]
        m = len(tested)
        worst = float(np.max(np.abs(tested)))
        for alpha in rejected:
            rejected[alpha] += worst > bonferroni_threshold(alpha, m)
    return RateEstimate(
        case=case,
        quantities=m,
        rate_05=rejected[0.05] / replications,
        rate_01=rejected[0.01] / replications,
        replications=replications,
    )


# --- real PyMC runs that the extension loop lengthened -----------------------------------
@dataclass(frozen=True)
class ExtendedRates:
    """Family-wise false-alarm rates of real runs started too short to pass the gate."""

    topic: str
    draws: int
    replications: int
    rate_05: float
    rate_01: float
    verdicts: dict[str, int]

    def se(self, alpha: float) -> float:
        return float(np.sqrt(alpha * (1 - alpha) / self.replications))


def extended_rates(topic_name: str, *, draws: int, replications: int, seed: int) -> ExtendedRates:
    """Real PyMC runs of a topic's null fixture started at ``draws`` per chain (too
    few for ESS 400, so the runner extends them: the case where the gate and the
    z-scores share ESS estimates closest to the bound)."""
    import dataclasses  # light: stdlib

    from compare.studies.calibration import (  # heavy: PyMC when the study runs
        STUDY_SETTINGS,
        mcmc_null,
        null_fixtures,
    )
    from compare.topics import get_topic  # heavy: the registry imports the topics

    hyper, n_obs = null_fixtures()[topic_name]
    study = mcmc_null(
        get_topic(topic_name),
        replications=replications,
        n_obs=n_obs,
        hyper=hyper,
        seed=seed,
        settings=dataclasses.replace(STUDY_SETTINGS, draws=draws),
    )
    verdicts: dict[str, int] = {}
    for v in study.verdicts:
        verdicts[v] = verdicts.get(v, 0) + 1
    return ExtendedRates(
        topic=topic_name,
        draws=draws,
        replications=replications,
        rate_05=study.false_alarm_rate(0.05),
        rate_01=study.false_alarm_rate(0.01),
        verdicts=verdicts,
    )
