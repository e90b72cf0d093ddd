"""The agreement test: do MCMC draws come from the exact posterior?

The rule (docs/verdict.md; its calibration at the thresholds it uses is
measured by ``compare/studies/tails.py``):

1. Each free coordinate ``i`` is mapped to its probability integral transform
   (PIT) ``w_i``, uniform on (0, 1) under the null whatever the posterior:
   ``Phi(u_i)`` of the whitened draws ``u = L^-1 (x - m)`` for a Gaussian
   posterior (exact mean ``m``, Cholesky factor ``L`` of the exact covariance;
   under the null the ``u_i`` are independent N(0, 1)); ``F_i(x_i)`` of the
   exact marginal CDF otherwise; for a discrete marginal the randomised PIT
   ``F_i(x_i-) + V P(x_i)``; for a marginal known through its quantile
   function only, the randomised cell ``(k + V) / K`` of ``K`` equal-probability
   cells; for a coordinate with no marginal, its randomised rank among
   ``n_reference`` exact iid draws (``V`` uniform, seeded).
2. Test quantities, each bounded with known null moments: the orthonormal
   shifted Legendre polynomials ``L_1 .. L_4`` of ``w_i`` (Neyman's smooth
   test: location, scale, skewness, tail weight; names ``loc:``, ``scale:``,
   ``skew:``, ``kurt:``; null mean 0, sd 1 exactly) -- for a Gaussian
   posterior the location test is ``u_i`` itself (``mean:``, exactly normal and
   the most efficient); and for each pair ``L_1(w_i) L_1(w_j)`` (``dep:``, a
   rank correlation): null 0 and 1 for a Gaussian, else its null mean and sd
   from the exact iid draws, whose own error enters the standard error. A
   coordinate with neither a marginal nor exact draws keeps the whitened
   mean ``u_i`` (``mean:``) alone. A discrete coordinate's draws must lie in
   its support (``support:``, checked exactly).
3. ``z = (mean of g over draws - E g) / (sd_null(g) sqrt(1 / ESS(g) + r))``
   with ``r = 1 / n_reference`` where the null comes from exact draws, else 0,
   and ``ESS(g)`` ArviZ's ESS of the mean (Vehtari et al. 2021). That ESS is
   itself an estimate, from ``L`` autocorrelation lags of ``N`` draws, with a
   relative variance of about ``2 (2 L + 1) / N``: z is referred to a Student
   t with ``N / (2 L + 1)`` degrees of freedom and reported as the normal
   deviate of the same tail probability.
4. With three or more location quantities (``mean:``/``loc:``), one more
   member: the spread test (``spread:location``, :func:`spread_test`), a
   chi-square on the location quantities jointly -- Hotelling's T² of their
   t-statistics with the Monte Carlo errors' correlation from batch means --
   for an error spread thinly over many coordinates (every mean shifted by a
   little), which no single ``|z|`` reaches. Its p-value is read as a
   two-sided normal deviate, so it shares alpha with the rest as one more |z|.
5. With m quantities, fail when ``max |z| > Phi^-1(1 - alpha / (2 m))``
   (Bonferroni, family-wise false-alarm rate <= alpha); Holm-adjusted
   p-values show which quantities are flagged.

Why these quantities (issue 60): means of bounded functions of a uniform
variable reach their normal limit fast, so the two-sided tail at 4-5 sds is
nominal at the ESS the gate admits; squares of whitened draws and their
products (the rule before) have null variances that need 8th moments and
skewed averages (a chi-square's), which made heavy tails and low ESS raise the
false-alarm rate 2-20 fold at those thresholds. No moment of the posterior is
needed, so heavy-tailed posteriors get the whole battery.

A quantity whose null sd is zero (the support check) is constant under the
null: it is checked exactly (``CONSTANT_TOL``), reported with z = 0 when it
holds and z = +-inf when it does not, and does not count in the Bonferroni m.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from analytic import ExactPosterior
from compare.core.ess import ess_mean_lags


def posterior_array(posterior: Any, variables: Sequence[str]) -> np.ndarray:
    """Draws of ``variables`` as one array of shape (chain, draw, d)."""
    parts = []
    for v in variables:
        arr = np.asarray(posterior[v].transpose("chain", "draw", ...).values, dtype=float)
        parts.append(arr.reshape(arr.shape[0], arr.shape[1], -1))
    return np.concatenate(parts, axis=-1)


def posterior_scale(posterior: ExactPosterior) -> np.ndarray:
    """Per-parameter exact sd, or IQR / 1.349 where the sd is infinite.

    IQR / 1.349 equals the sd for a normal and exists for every posterior,
    so distances stay meaningful when heavy tails leave no finite variance.
    """
    sd = np.sqrt(np.diag(np.asarray(posterior.cov, dtype=float)))
    for i in np.flatnonzero(~np.isfinite(sd)):
        marginal = posterior.marginal(int(i))
        if marginal is not None:
            sd[i] = (marginal.ppf(0.75) - marginal.ppf(0.25)) / 1.349
    return sd


#: Equal-probability cells of a marginal known through its quantile function only.
QUANTILE_CELLS = 20

#: A quantity whose null sd (of one draw, in whitened units where the sd of
#: u_i is 1) is at most this is constant under the null up to round-off.
CONSTANT_SD = 1e-8
#: ... and then its average must equal the null value to this.
CONSTANT_TOL = 1e-8

#: The degrees of freedom of a standard error whose ESS summed ``L`` lags of ``N``
#: draws: ``DF_FACTOR N / (2 L + 1)``, Bartlett's flat-window variance (factor 1).
#: Measured on chains of known ESS (compare/studies/tails.py, docs/verdict.md) the
#: ESS estimate varies a little less than that (a factor 1.5 puts the unconditional
#: tails nearest nominal), but a verdict exists only when the gate passed, and
#: among those runs the ESS is overestimated: factor 1.5 gave 1.3-1.6x nominal at
#: true ESS 400, factor 1 keeps every case at or below 1.2x.
DF_FACTOR = 1.0

#: Seed stream of the uniform ``V`` that randomises the PIT of discrete
#: marginals, cells and ranks ("PIT" in ASCII), and of the reference draws' own.
PIT_STREAM = 0x504954


@dataclass(frozen=True)
class Quantity:
    """One test quantity's result.

    Attributes
    ----------
    name : str
        ``<kind>:<parameter>`` (``mean``, ``loc``, ``scale``, ``skew``,
        ``kurt``, ``support``), ``dep:<p>,<q>`` for a pair, or
        ``spread:location`` (the spread test: ``estimate`` is T²/f, expected 1;
        ``ess`` the number of batch means; NaN and z = 0 when not made).
    estimate, expected : float
        MCMC average of the quantity and its exact null expectation.
    null_sd : float
        Exact sd of the quantity under the null, for a single draw.
    ess : float
        ESS of the quantity's mean over the MCMC draws.
    z, p_value, p_holm : float
        z-score (the normal deviate of the quantity's Student-t tail
        probability), two-sided p-value and Holm-adjusted p-value. For a
        quantity constant under the null (``null_sd`` 0): z = 0 and p = 1 when
        the estimate equals ``expected`` up to round-off, else z = +-inf, p = 0.
    df : float
        Degrees of freedom of the standard error (inf: known exactly).
    """

    name: str
    estimate: float
    expected: float
    null_sd: float
    ess: float
    z: float
    p_value: float
    p_holm: float
    df: float = float("inf")


@dataclass(frozen=True)
class Agreement:
    """Result of the agreement test over all quantities."""

    quantities: tuple[Quantity, ...]
    alpha: float
    threshold: float
    max_abs_z: float

    @property
    def passed(self) -> bool:
        return self.max_abs_z <= self.threshold

    @property
    def constant(self) -> tuple[Quantity, ...]:
        """Quantities constant under the null: checked exactly, not by a z-score."""
        return tuple(q for q in self.quantities if q.null_sd <= CONSTANT_SD)

    @property
    def flagged(self) -> tuple[Quantity, ...]:
        """Quantities whose Holm-adjusted p-value is below alpha."""
        return tuple(q for q in self.quantities if q.p_holm < self.alpha)


def holm(p_values: np.ndarray) -> np.ndarray:
    """Holm (1979) step-down adjusted p-values, same order as the input."""
    p = np.asarray(p_values, dtype=float)
    m = p.size
    order = np.argsort(p)
    adjusted = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    out = np.empty(m)
    out[order] = adjusted
    return out


def bonferroni_threshold(alpha: float, n_tests: int) -> float:
    """|z| above which a two-sided test at level alpha / n_tests rejects."""
    from scipy import stats  # heavy: SciPy only when the maths runs

    return float(stats.norm.isf(alpha / (2.0 * n_tests)))


def legendre(w: np.ndarray, degree: int) -> np.ndarray:
    """The orthonormal shifted Legendre polynomial of ``degree`` (1-4) at ``w`` in
    [0, 1]: mean 0 and variance 1 for w uniform, |value| <= sqrt(2 degree + 1)."""
    y = 2.0 * np.asarray(w, dtype=float) - 1.0
    if degree == 1:
        return np.sqrt(3.0) * y
    if degree == 2:
        return np.sqrt(5.0) * (1.5 * y * y - 0.5)
    if degree == 3:
        return np.sqrt(7.0) * (2.5 * y**3 - 1.5 * y)
    if degree == 4:
        y2 = y * y
        return 3.0 * (4.375 * y2 * y2 - 3.75 * y2 + 0.375)
    raise ValueError(f"degree must be 1, 2, 3 or 4, got {degree!r}")


#: The per-coordinate quantities: (kind, Legendre degree).
SHAPE_KINDS = (("loc", 1), ("scale", 2), ("skew", 3), ("kurt", 4))


def t_as_normal(z: np.ndarray, df: np.ndarray) -> np.ndarray:
    """The normal deviate with the same two-sided tail as ``z`` under a Student t
    with ``df`` degrees of freedom (``z`` itself where ``df`` is infinite)."""
    from scipy import special  # heavy: SciPy only when the maths runs

    z = np.asarray(z, dtype=float)
    df = np.broadcast_to(np.asarray(df, dtype=float), z.shape)
    out = z.copy()
    finite = np.isfinite(z) & np.isfinite(df) & (z != 0.0)
    if finite.any():
        # scipy.special's t CDF, not scipy.stats.t: the latter's array-API dispatch
        # touches the lazy ``jax`` entry ArviZ leaves in sys.modules and so imports
        # JAX into the user's process (tests/compare/test_guest.py).
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            log_tail = np.log(special.stdtr(df[finite], -np.abs(z[finite])))
            deviate = -special.ndtri_exp(log_tail)
        # Far out (|z| in the hundreds) the log tail underflows: the raw z then
        # stands, a failure either way.
        ok = np.isfinite(deviate)
        out[finite] = np.where(ok, np.copysign(deviate, z[finite]), z[finite])
    return out


def _whitener(posterior: ExactPosterior) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return (free index array, mean, lower Cholesky factor) over the free coordinates."""
    from scipy import linalg  # heavy: SciPy only when the maths runs

    free = np.asarray(posterior.free, dtype=int)
    mean = np.asarray(posterior.mean, dtype=float)[free]
    cov = np.asarray(posterior.cov, dtype=float)[np.ix_(free, free)]
    if not (np.all(np.isfinite(mean)) and np.all(np.isfinite(cov))):
        raise ValueError("the exact posterior has no finite covariance; cannot whiten")
    try:
        chol = linalg.cholesky(cov, lower=True)
    except linalg.LinAlgError as err:
        raise ValueError(
            "the exact covariance over the free coordinates is not positive definite; "
            "check the topic's `free` coordinates"
        ) from err
    return free, mean, chol


def _whiten(x: np.ndarray, free: np.ndarray, mean: np.ndarray, chol: np.ndarray) -> np.ndarray:
    """Whitened draws: ``L^-1 (x - m)`` for x of shape (..., d); returns (..., f)."""
    from scipy import linalg  # heavy: SciPy only when the maths runs

    centred = x[..., free] - mean
    flat = centred.reshape(-1, free.size).T
    return linalg.solve_triangular(chol, flat, lower=True).T.reshape(centred.shape)


def _pairs(f: int) -> list[tuple[int, int]]:
    return [(i, j) for i in range(f) for j in range(i + 1, f)]


def _is_discrete(marginal: Any) -> bool:
    """True for a frozen scipy distribution over a discrete set (it has a pmf)."""
    from scipy import stats  # heavy: SciPy only when the maths runs

    return isinstance(getattr(marginal, "dist", None), stats.rv_discrete)


@dataclass(frozen=True, eq=False)
class _Pit:
    """How one coordinate's draws become uniform under the null.

    ``kind``: ``"cdf"`` (a continuous marginal's CDF), ``"discrete"`` (the
    randomised CDF of a discrete marginal), ``"cells"`` (randomised cells between
    the quantiles ``cuts``), ``"rank"`` (randomised rank among the sorted exact
    draws ``reference``)."""

    kind: str
    marginal: Any = None
    cuts: np.ndarray | None = None
    reference: np.ndarray | None = None

    def __call__(self, x: np.ndarray, v: np.ndarray) -> np.ndarray:
        """The PIT of draws ``x`` (any shape) with uniforms ``v`` of the same shape."""
        if self.kind == "cdf":
            return np.clip(np.asarray(self.marginal.cdf(x), dtype=float), 0.0, 1.0)
        if self.kind == "discrete":
            below = np.asarray(self.marginal.cdf(x), dtype=float)
            mass = np.asarray(self.marginal.pmf(x), dtype=float)
            return np.clip(below - v * mass, 0.0, 1.0)
        if self.kind == "cells":
            assert self.cuts is not None
            cell = np.searchsorted(self.cuts, x, side="right")
            return (cell + v) / (self.cuts.size + 1)
        assert self.reference is not None
        lo = np.searchsorted(self.reference, x, side="left")
        hi = np.searchsorted(self.reference, x, side="right")
        return (lo + v * (hi - lo + 1)) / (self.reference.size + 1)

    def own(self, v: np.ndarray) -> np.ndarray:
        """The PIT of each reference draw among the others (kind ``"rank"``)."""
        assert self.reference is not None
        n = self.reference.size
        lo = np.searchsorted(self.reference, self.reference, side="left")
        hi = np.searchsorted(self.reference, self.reference, side="right")
        return (lo + v * (hi - lo)) / n


def _has_sampler(posterior: ExactPosterior) -> bool:
    return bool(getattr(posterior, "has_sampler", True))


@dataclass(frozen=True, eq=False)
class _Null:
    """The PIT of each free coordinate of a non-Gaussian posterior that has one
    (``plan``), and the null mean and sd of ``L1(w_i) L1(w_j)`` for the pairs of
    its coordinates (``_pairs`` order; empty without exact draws)."""

    plan: dict[int, _Pit]
    dep_mean: np.ndarray
    dep_sd: np.ndarray


def _null(posterior: ExactPosterior, n_reference: int, seed: int) -> _Null:
    """:class:`_Null` of a posterior, memoised per posterior (a calibration study
    checks one posterior a thousand times; a quantile function or a sampler may be
    slow). A posterior that cannot be hashed is asked every time."""
    try:
        return _memoised_null(posterior, n_reference, seed)  # type: ignore[arg-type]
    except TypeError:  # unhashable: a posterior that compares by value
        return _make_null(posterior, n_reference, seed)


def _make_null(posterior: ExactPosterior, n_reference: int, seed: int) -> _Null:
    """One set of ``n_reference`` exact draws serves both the ranks of coordinates
    without a marginal and the dependence nulls (their error is shared by every
    check of this posterior and seed; it enters each z's standard error as
    ``1 / n_reference``, so z is standard normal over reference sets)."""
    kinds: dict[int, _Pit] = {}
    ranked: list[int] = []
    for i in (int(k) for k in posterior.free):
        marginal = posterior.marginal(i)
        if marginal is None:
            if _has_sampler(posterior):
                ranked.append(i)
        elif _is_discrete(marginal):
            kinds[i] = _Pit("discrete", marginal)
        elif hasattr(marginal, "cdf"):
            kinds[i] = _Pit("cdf", marginal)
        else:
            levels = np.arange(1, QUANTILE_CELLS) / QUANTILE_CELLS
            cuts = np.array([float(marginal.ppf(level)) for level in levels])
            kinds[i] = _Pit("cells", marginal, cuts=np.sort(cuts))
    with_pairs = len(kinds) + len(ranked) >= 2 and _has_sampler(posterior)
    draws = _reference_draws(posterior, n_reference, seed) if ranked or with_pairs else None
    for i in ranked:
        assert draws is not None
        kinds[i] = _Pit("rank", reference=np.sort(draws[:, i]))
    plan = dict(sorted(kinds.items()))
    if not with_pairs or draws is None:
        return _Null(plan, np.empty(0), np.empty(0))
    rng = np.random.default_rng([seed, PIT_STREAM])
    columns = []
    for i, pit in plan.items():
        v = rng.random(len(draws))
        if pit.kind == "rank":  # each reference draw's rank among the others
            order = np.argsort(draws[:, i], kind="stable")
            own = np.empty(len(draws))
            own[order] = pit.own(v[order])
            columns.append(legendre(own, 1))
        else:
            columns.append(legendre(pit(draws[:, i], v), 1))
    scores = np.column_stack(columns)
    upper = np.triu_indices(len(plan), 1)
    mean = (scores.T @ scores / len(scores))[upper]
    squares = scores * scores
    second = (squares.T @ squares / len(scores))[upper]
    return _Null(plan, mean, np.sqrt(np.maximum(second - mean * mean, 0.0)))


_memoised_null = lru_cache(maxsize=32)(_make_null)


def _reference_draws(posterior: ExactPosterior, n_reference: int, seed: int) -> np.ndarray:
    return np.asarray(posterior.sample(np.random.default_rng(seed), n_reference), dtype=float)


@dataclass
class _Battery:
    """The test quantities being assembled: each name, null mean and sd, the share
    of the standard error's variance that comes from exact reference draws
    (``1 / n_reference`` or 0), and the per-draw series (chain, draw)."""

    names: list[str]
    expected: list[float]
    null_sd: list[float]
    reference_share: list[float]
    series: list[np.ndarray]

    def add(
        self,
        name: str,
        series: np.ndarray,
        expected: float = 0.0,
        null_sd: float = 1.0,
        reference_share: float = 0.0,
    ) -> None:
        self.names.append(name)
        self.series.append(series)
        self.expected.append(expected)
        self.null_sd.append(null_sd)
        self.reference_share.append(reference_share)


def agreement_test(
    draws: np.ndarray,
    posterior: ExactPosterior,
    *,
    alpha: float,
    seed: int = 0,
    n_reference: int = 200_000,
) -> Agreement:
    """Test whether ``draws`` come from ``posterior``.

    Parameters
    ----------
    draws : array of shape (chain, draw, d)
        MCMC draws in the order of ``posterior.parameters``.
    posterior : ExactPosterior
    alpha : float
        Family-wise false-alarm rate.
    seed : int
        Seeds the exact reference draws (where a null comes from them) and the
        uniforms that randomise discrete, cell and rank PITs.
    n_reference : int
        Number of such reference draws.
    """
    draws = np.asarray(draws, dtype=float)
    d = len(posterior.parameters)
    if draws.ndim != 3 or draws.shape[-1] != d:
        raise ValueError(f"draws must have shape (chain, draw, {d}), got {draws.shape}")
    battery = _Battery([], [], [], [], [])
    if posterior.is_gaussian:
        _gaussian_battery(battery, draws, posterior)
    else:
        _general_battery(battery, draws, posterior, n_reference, seed)
    return _judge(battery, alpha, n_draws=draws.shape[0] * draws.shape[1])


def _gaussian_battery(battery: _Battery, draws: np.ndarray, posterior: ExactPosterior) -> None:
    """Whitened coordinates: independent N(0, 1) under the null, so every null is exact."""
    from scipy import special  # heavy: SciPy only when the maths runs

    free, mean, chol = _whitener(posterior)
    names = [posterior.parameters[i] for i in free]
    u = _whiten(draws, free, mean, chol)
    w = special.ndtr(u)
    for k, name in enumerate(names):
        battery.add(f"mean:{name}", u[..., k])
    for kind, degree in SHAPE_KINDS[1:]:
        for k, name in enumerate(names):
            battery.add(f"{kind}:{name}", legendre(w[..., k], degree))
    scores = legendre(w, 1)
    for i, j in _pairs(free.size):
        battery.add(f"dep:{names[i]},{names[j]}", scores[..., i] * scores[..., j])


def _general_battery(
    battery: _Battery,
    draws: np.ndarray,
    posterior: ExactPosterior,
    n_reference: int,
    seed: int,
) -> None:
    """PITs of the marginals (or ranks among exact draws); whitened means where
    a coordinate has neither."""
    null = _null(posterior, n_reference, seed)
    plan = null.plan
    names = posterior.parameters
    rng = np.random.default_rng([seed, PIT_STREAM, 1])
    w = {i: pit(draws[..., i], rng.random(draws.shape[:2])) for i, pit in plan.items()}
    share = {i: (1.0 / n_reference if pit.kind == "rank" else 0.0) for i, pit in plan.items()}
    for kind, degree in SHAPE_KINDS:
        for i in plan:
            battery.add(f"{kind}:{names[i]}", legendre(w[i], degree), reference_share=share[i])
    if null.dep_mean.size:
        dep_mean, dep_sd = null.dep_mean, null.dep_sd
        scores = {i: legendre(w[i], 1) for i in plan}
        index = list(plan)
        for (a, b), mu, sd in zip(_pairs(len(index)), dep_mean, dep_sd):
            i, j = index[a], index[b]
            battery.add(
                f"dep:{names[i]},{names[j]}",
                scores[i] * scores[j],
                expected=float(mu),
                null_sd=float(sd),
                reference_share=1.0 / n_reference + share[i] + share[j],
            )
    bare = [i for i in posterior.free if int(i) not in plan]
    if bare and posterior.moments_below > 4:
        free, mean, chol = _whitener(posterior)
        u = _whiten(draws, free, mean, chol)
        for k, i in enumerate(free):
            if int(i) in bare:
                battery.add(f"mean:{names[i]}", u[..., k])
    for i, pit in plan.items():
        if pit.kind == "discrete":
            inside = np.asarray(pit.marginal.pmf(draws[..., i]), dtype=float) > 0
            battery.add(f"support:{names[i]}", inside.astype(float), expected=1.0, null_sd=0.0)


#: Location quantities: the whitened means and the PITs' first Legendre component.
LOCATION_KINDS = ("mean:", "loc:")

#: The spread test's quantity (:func:`spread_test`).
SPREAD_NAME = "spread:location"

#: The spread test is made from this many location quantities on (below, the
#: location quantities themselves test the same directions).
SPREAD_MIN = 3

#: Batch length of the spread test's error correlation, in ESS windows: the
#: longest ``2 L + 1`` over the location quantities (``L`` the lags their ESS summed).
SPREAD_BATCH_WINDOWS = 3

#: The spread test needs this many more batches (and degrees of freedom) than it
#: has location quantities; with fewer it is not made (z 0, estimate NaN).
SPREAD_SPARE = 10


@dataclass(frozen=True)
class Spread:
    """The spread test (:func:`spread_test`).

    ``statistic`` is Hotelling's T² over ``f`` (1 on average under the null; NaN
    when not made), ``z`` the normal deviate of its p-value ``p`` (two-sided
    convention, so it joins the Bonferroni family as one more ``|z|``),
    ``df`` the denominator's degrees of freedom, ``batches`` how many batch
    means estimated the errors' correlation.
    """

    statistic: float
    f: int
    z: float
    p: float
    df: float
    batches: int


def spread_matrix(
    series: np.ndarray, lags: np.ndarray, df: np.ndarray
) -> tuple[np.ndarray, int, float, int] | None:
    """The spread test's inverse error correlation (on its range), its rank ``f``,
    Hotelling's ``nu`` and the number of batches; None when the test is not made
    (:func:`spread_test` says how these are found)."""
    f_all, chains, draws = series.shape
    finite = np.isfinite(lags)
    window = int(2 * np.max(lags[finite]) + 1) if finite.any() else 1
    length = max(SPREAD_BATCH_WINDOWS * window, 1)
    per_chain = draws // length
    batches = chains * per_chain
    if batches < f_all + SPREAD_SPARE:
        return None
    means = series[:, :, : per_chain * length].reshape(f_all, batches, length).mean(axis=-1)
    values, vectors = np.linalg.eigh(np.corrcoef(means))
    keep = values > 1e-8 * values.max()
    f = int(keep.sum())
    nu = float(min(batches - 1, np.min(df)))
    if nu - f + 1 < SPREAD_SPARE:
        return None
    inverse = (vectors[:, keep] / values[keep]) @ vectors[:, keep].T
    return inverse, f, nu, batches


def spread_threshold(f: int, nu: float, p: float) -> float:
    """The ``T²`` whose p-value under Hotelling's reference is ``p``."""
    from scipy import special  # heavy: SciPy only when the maths runs

    return float(f * nu / (nu - f + 1) * special.fdtri(f, nu - f + 1, 1.0 - p))


def spread_test(series: np.ndarray, t: np.ndarray, lags: np.ndarray, df: np.ndarray) -> Spread:
    """A chi-square on the location quantities jointly: errors spread over many
    coordinates, each too small for max |z| (a shift of every mean by a little).

    ``series`` (quantity, chain, draw) are the location quantities in null-sd
    units about their null means; ``t`` their t-statistics (deviation over its
    ESS-based standard error, before the t-to-normal map), ``lags`` and ``df``
    their ESS lags and degrees of freedom. ``T² = t' R^-1 t`` with ``R`` the
    correlation of the averages' Monte Carlo errors, estimated from batch means
    (batches of ``SPREAD_BATCH_WINDOWS`` of the longest ESS window, so batch
    means are nearly independent; a correlation needs no variance, so the
    per-quantity standard errors stay those the tail study calibrated). Under
    the null ``T²`` is referred to Hotelling's with ``nu = min(batches - 1,
    min df)``: ``T² (nu - f + 1) / (nu f) ~ F(f, nu - f + 1)`` (conservative
    for a correlation; measured by ``compare.studies.tails.spread_tail_ratio``).
    A rank-deficient ``R`` (probabilities that sum to one) is used on its
    range, ``f`` its rank. With fewer than ``f + SPREAD_SPARE`` batches or
    degrees of freedom the test is not made: ``z = 0``, ``p = 1``, statistic NaN.
    """
    from scipy import special  # heavy: SciPy only when the maths runs

    made = spread_matrix(series, lags, df) if np.all(np.isfinite(t)) else None
    if made is None:
        return Spread(float("nan"), series.shape[0], 0.0, 1.0, float("nan"), 0)
    inverse, f, nu, batches = made
    t2 = float(t @ inverse @ t)
    p = float(special.fdtrc(f, nu - f + 1, t2 * (nu - f + 1) / (nu * f)))
    z = float(-special.ndtri(max(p, 1e-300) / 2.0))
    return Spread(t2 / f, f, z, p, nu, batches)


#: Quantities whose series are stacked at once when the test is judged (memory).
JUDGE_BLOCK = 256


def _judge(battery: _Battery, alpha: float, *, n_draws: int) -> Agreement:
    """z-scores, p-values and the Bonferroni decision over the battery."""
    from scipy import stats  # heavy: SciPy only when the maths runs

    if not battery.names:
        raise ValueError(
            "the exact posterior gives nothing to test: no marginal, no exact "
            "sampler and no finite fourth moments; give marginals= or sample="
        )
    # In blocks: a 100-d posterior has 5,350 quantities, whose stacked series and
    # the ESS's transforms of them peaked at 2 GB at 4 x 2000 draws.
    parts = [
        (*ess_mean_lags(block), block.mean(axis=(1, 2)))
        for block in (
            np.stack(battery.series[start : start + JUDGE_BLOCK])
            for start in range(0, len(battery.series), JUDGE_BLOCK)
        )
    ]
    ess = np.concatenate([p[0] for p in parts])
    lags = np.concatenate([p[1] for p in parts])
    # A quantity constant over all draws has no defined ESS; its deviation is
    # still real, so measure it against the nominal sample size.
    ess = np.where(np.isfinite(ess) & (ess > 0), ess, n_draws)
    estimate = np.concatenate([p[2] for p in parts])
    expected = np.array(battery.expected)
    null_sd = np.array(battery.null_sd)
    share = np.array(battery.reference_share)
    constant = null_sd <= CONSTANT_SD
    deviation = estimate - expected
    sampling = 1.0 / ess
    # The ESS from L lags of N draws: relative variance 2 (2 L + 1) / N, a t with
    # N / (2 L + 1) degrees of freedom; the reference's part is known exactly
    # (Satterthwaite's combination).
    df_ess = np.where(
        np.isfinite(lags), DF_FACTOR * n_draws / (2.0 * np.nan_to_num(lags) + 1.0), np.inf
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        df = np.where(share > 0, (sampling + share) ** 2 / (sampling**2 / df_ess), df_ess)
        z_raw = np.where(constant, 0.0, deviation / (null_sd * np.sqrt(sampling + share)))
    z = t_as_normal(z_raw, df)
    # Constant under the null: no z-score, an exact check up to round-off.
    off = constant & ~(np.abs(deviation) <= CONSTANT_TOL)
    z = np.where(off, np.copysign(np.inf, deviation), z)
    p = 2.0 * stats.norm.sf(np.abs(z))
    names = list(battery.names)
    location = np.array([n.startswith(LOCATION_KINDS) for n in names], dtype=bool) & ~constant
    if int(location.sum()) >= SPREAD_MIN:
        # One more member of the Bonferroni family: the location quantities jointly.
        spread = spread_test(
            (
                np.stack([battery.series[i] for i in np.flatnonzero(location)])
                - expected[location, None, None]
            )
            / null_sd[location, None, None],
            z_raw[location],
            lags[location],
            df[location],
        )
        names.append(SPREAD_NAME)
        estimate = np.append(estimate, spread.statistic)
        expected = np.append(expected, 1.0)
        null_sd = np.append(null_sd, np.sqrt(2.0 / max(spread.f, 1)))
        ess = np.append(ess, spread.batches)
        z = np.append(z, spread.z)
        p = np.append(p, spread.p)
        df = np.append(df, spread.df)
        constant = np.append(constant, False)
        off = np.append(off, False)
    p_holm = np.ones_like(p)
    tested = ~constant
    if tested.any():
        p_holm[tested] = holm(p[tested])
    p_holm[off] = 0.0
    quantities = tuple(
        Quantity(
            name,
            float(e),
            float(mu),
            float(sd),
            float(n),
            float(zz),
            float(pp),
            float(ph),
            float(nu),
        )
        for name, e, mu, sd, n, zz, pp, ph, nu in zip(
            names, estimate, expected, null_sd, ess, z, p, p_holm, df, strict=True
        )
    )
    return Agreement(
        quantities=quantities,
        alpha=alpha,
        threshold=bonferroni_threshold(alpha, max(int(tested.sum()), 1)),
        max_abs_z=float(np.max(np.abs(z))),
    )
