"""The public Python API: check your own model or draws against your own closed form.

Three things users do, each returning a :class:`CheckResult` (the verdict,
the table, the diagnostics, ``to_json()`` with the CLI's document contract and
``to_html()`` with the report's run page):

* :func:`check`: sample a PyMC model (nutpie, through the project's compiled
  model cache) and test its draws against an :class:`Exact` posterior;
* :func:`check_draws`: test draws that came from anywhere (an ArviZ
  DataTree or an array of shape (chain, draw, d)) against an :class:`Exact`;
  no PyMC model is built or sampled;
* :func:`run`: run a registered topic programmatically, as ``bayes-compare
  run`` does.

The verdict is the built-in topics' verdict, reached by the same code
(:mod:`compare.core.runner` and :mod:`compare.core.agreement`): the convergence gate,
the whitened agreement test with Bonferroni over its quantities, the MAP
check where the exact mode is known.  Example::

    import compare
    exact = compare.Exact(mean=[1.9], cov=[[0.25]], gaussian=True)
    result = compare.check(model, exact, var_names=["mu"])
    result.verdict          # 'agree', 'disagree' or 'inconclusive'
    result.to_html("out")   # out/runs/user-model/index.html
"""

from __future__ import annotations

import dataclasses
import html
import math
import tempfile
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import xarray as xr
from scipy import linalg, stats

import compare.topics
from analytic import ExactAnswer
from compare import accel
from compare.core import defaults
from compare.core.agreement import posterior_array
from compare.core.checks import Check, CheckKind, Extra
from compare.core.data import topic_data
from compare.core.defaults import Settings
from compare.core.methods import APPROXIMATION, DEFAULT_METHOD, METHODS, SAMPLER, usable
from compare.core.registry import InputError
from compare.core.runner import (
    RunResult,
    cap_note,
    decide,
    extension_line,
    extension_section,
    judge,
    map_check,
    map_starts,
    sample_enough,
    summarise,
)
from compare.core.runner import run as run_topic
from compare.core.text import check_lines, fmt
from compare.core.variables import flat_names
from compare.outputs.document import dumps, save_run, to_document

if TYPE_CHECKING:
    from compare.core.sampling import ModelCache

#: Exact iid draws used for an empirical marginal quantile when a
#: one-parameter posterior comes with a sampler but no quantile function.
EMPIRICAL_QUANTILE_DRAWS = 1_000_000


# --- the exact posterior a user describes ------------------------------------------
def _vector(name: str, value: Any) -> np.ndarray:
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be numbers, got {value!r}") from None
    arr = np.atleast_1d(arr)
    if arr.ndim != 1:
        raise InputError(
            f"{name} must be a vector of shape (d,), got shape {arr.shape}; "
            "flatten it in the order of the parameters"
        )
    bad = np.flatnonzero(~np.isfinite(arr))
    if bad.size:
        raise InputError(f"{name}[{bad[0]}] is {arr[bad[0]]}; every entry must be finite")
    return arr


#: Exact draws an ``Exact``'s sampler and quantile function are checked against its
#: mean with, before anything samples (``ExactPosteriorAdapter.check_consistent``).
CONSISTENCY_DRAWS = 4000


@dataclass(frozen=True, kw_only=True, eq=False)
class Exact:
    """An exact posterior over d parameters, as a user knows it.

    Only ``mean`` and ``cov`` are required.  The rest, when given, widens
    what the agreement test can check: with ``gaussian=True`` or an iid
    ``sample``\\ r, the variances and covariances of the whitened draws are
    tested too (their null variance needs fourth moments, which a mean and
    covariance alone do not give); with marginal quantiles (``marginals`` or
    ``quantile``), the indicators ``1{x_i < q_i}`` at the 5%, 50% and 95%
    quantiles are tested for non-Gaussian posteriors.

    Attributes
    ----------
    mean : array of shape (d,)
        Exact posterior mean, in the order of the model's flattened variables.
    cov : array of shape (d, d)
        Exact posterior covariance: symmetric and positive definite (over
        ``free`` when given).
    parameters : sequence of str, optional
        Names, length d; default from the PyMC variables (``mu``, ``w[0]``, ...).
    gaussian : bool
        True when the posterior is exactly multivariate normal; the sampler,
        log density and marginals then follow from ``mean`` and ``cov``.
    marginals : sequence of frozen scipy distributions (or None), optional
        Each parameter's exact marginal, e.g. ``scipy.stats.beta(12, 8)``.
    quantile : callable, optional
        ``quantile(p) -> array of shape (d,)``: the exact marginal quantiles
        at level p, for when there is no scipy object.
    logpdf : callable, optional
        ``logpdf(x)`` for x of shape (..., d), returning shape (...).
    sample : callable, optional
        ``sample(rng, size) -> array of shape (size, d)``: exact iid draws
        (used for null moments without a closed form, and by ``export``).
    mode, mle : array of shape (d,), optional
        The exact MAP (then PyMC's MAP is checked against it, as for the
        built-in topics) and the maximum-likelihood estimate (reported).
    mode_interior : bool
        False when the mode lies on the boundary of the support (the MAP
        distance is then reported, not tested).
    log_evidence : float, optional
        log p(D), reported.
    free : sequence of int, optional
        Coordinates whose covariance is non-singular, when ``cov`` is
        singular (e.g. probabilities that sum to one: all but the last).
    moments_below : float
        Every marginal has finite moments of all orders below this (``inf``
        by default). Kept for callers of earlier versions: the agreement
        test needs no moment (docs/verdict.md), except the whitened means of
        an ``Exact`` with neither marginals, a sampler nor ``gaussian=True``,
        which are tested only above 4.
    """

    mean: Any
    cov: Any
    parameters: Sequence[str] | None = None
    gaussian: bool = False
    marginals: Sequence[Any] | None = None
    quantile: Callable[[float], Any] | None = None
    logpdf: Callable[[np.ndarray], Any] | None = None
    sample: Callable[[np.random.Generator, int], Any] | None = None
    mode: Any = None
    mle: Any = None
    mode_interior: bool = True
    log_evidence: float | None = None
    free: Sequence[int] | None = None
    moments_below: float = math.inf

    def __post_init__(self) -> None:
        mean = _vector("exact.mean", self.mean)
        d = mean.size
        try:
            cov = np.atleast_2d(np.asarray(self.cov, dtype=float))
        except (TypeError, ValueError):
            raise InputError(f"exact.cov must be a matrix of numbers, got {self.cov!r}") from None
        if cov.shape != (d, d):
            raise InputError(
                f"exact.cov has shape {cov.shape} but exact.mean has {d} entries; "
                f"give a ({d}, {d}) covariance matrix in the same parameter order"
            )
        if not np.all(np.isfinite(cov)):
            i, j = np.argwhere(~np.isfinite(cov))[0]
            raise InputError(f"exact.cov[{i}, {j}] is {cov[i, j]}; every entry must be finite")
        scale = max(float(np.max(np.abs(cov))), np.finfo(float).tiny)
        asym = np.abs(cov - cov.T)
        if np.max(asym) > 1e-9 * scale:
            i, j = np.unravel_index(int(np.argmax(asym)), asym.shape)
            raise InputError(
                f"exact.cov is not symmetric: cov[{i}, {j}] = {cov[i, j]:.6g} but cov[{j}, {i}] "
                f"= {cov[j, i]:.6g}; a covariance matrix is symmetric (if the difference is "
                "rounding, pass (cov + cov.T) / 2)"
            )
        cov = (cov + cov.T) / 2.0
        free = tuple(range(d)) if self.free is None else tuple(int(i) for i in self.free)
        if not free or len(set(free)) != len(free) or min(free) < 0 or max(free) >= d:
            raise InputError(
                f"exact.free must list distinct coordinates in 0..{d - 1}, got {list(free)}"
            )
        sub = cov[np.ix_(free, free)]
        try:
            linalg.cholesky(sub, lower=True)
        except linalg.LinAlgError:
            smallest = float(np.min(np.linalg.eigvalsh(sub)))
            hint = (
                "; if some parameters are tied (e.g. probabilities summing to one), "
                "name the others with free=[...]"
                if self.free is None
                else ""
            )
            raise InputError(
                f"exact.cov is not positive definite (smallest eigenvalue {smallest:.3g}); a "
                "covariance needs positive variances on the diagonal and correlations in "
                f"(-1, 1){hint}"
            ) from None
        object.__setattr__(self, "mean", mean)
        object.__setattr__(self, "cov", cov)
        object.__setattr__(self, "free", free)
        if self.parameters is not None:
            names = tuple(str(p) for p in self.parameters)
            if len(names) != d:
                raise InputError(
                    f"exact.parameters has {len(names)} names but exact.mean has "
                    f"{d} entries; give one name per entry"
                )
            if len(set(names)) != d:
                raise InputError(f"exact.parameters must be distinct, got {list(names)}")
            object.__setattr__(self, "parameters", names)
        for name in ("mode", "mle"):
            value = getattr(self, name)
            if value is not None:
                arr = _vector(f"exact.{name}", value)
                if arr.size != d:
                    raise InputError(
                        f"exact.{name} has {arr.size} entries, exact.mean has {d}; "
                        "give one entry per parameter"
                    )
                object.__setattr__(self, name, arr)
        if self.marginals is not None:
            marginals = tuple(self.marginals)
            if len(marginals) != d:
                raise InputError(
                    f"exact.marginals has {len(marginals)} entries but exact.mean "
                    f"has {d}; give one scipy distribution (or None) per parameter"
                )
            for i, m in enumerate(marginals):
                if m is not None and not hasattr(m, "ppf"):
                    raise InputError(
                        f"exact.marginals[{i}] is {m!r}; give a frozen scipy "
                        "distribution such as scipy.stats.beta(12, 8), or None"
                    )
            object.__setattr__(self, "marginals", marginals)
        for name in ("quantile", "logpdf", "sample"):
            value = getattr(self, name)
            if value is not None and not callable(value):
                raise InputError(f"exact.{name} must be a function, got {value!r}")
        if self.log_evidence is not None and not np.isfinite(float(self.log_evidence)):
            raise InputError(f"exact.log_evidence must be finite, got {self.log_evidence!r}")
        if not float(self.moments_below) > 0:
            raise InputError(f"exact.moments_below must be > 0, got {self.moments_below!r}")

    @property
    def d(self) -> int:
        """Number of parameters."""
        return int(np.asarray(self.mean).size)

    def as_posterior(
        self, parameters: Sequence[str] | None = None, *, seed: int = 0
    ) -> ExactPosteriorAdapter:
        """This description as an ``analytic.ExactPosterior``.

        For a topic file's ``solve``, which returns
        ``ExactAnswer(posterior=exact.as_posterior(), ...)``.  ``seed`` seeds
        the exact draws behind moments that have no closed form.
        """
        names = parameters or self.parameters or tuple(f"x[{i}]" for i in range(self.d))
        if len(names) != self.d:
            raise InputError(
                f"parameters has {len(names)} names but exact.mean has {self.d} entries"
            )
        return ExactPosteriorAdapter(self, tuple(str(n) for n in names), seed=seed)

    @classmethod
    def from_scipy(
        cls, dist: Any, *, parameters: Sequence[str] | None = None, **kwargs: Any
    ) -> Exact:
        """An exact posterior from frozen scipy distributions.

        ``dist`` is one univariate distribution (``scipy.stats.beta(12, 8)``),
        a list of independent univariate marginals (``[scipy.stats.norm(0, 1),
        scipy.stats.gamma(3, scale=0.5)]``, one per parameter) or a
        multivariate one: ``multivariate_normal``, ``multivariate_t``,
        ``dirichlet`` (the last coordinate is not free: the others fix it),
        ``wishart`` and ``invwishart`` (the matrix flattened row by row; its
        upper triangle repeats the lower and is not free); mean, covariance,
        marginals (where scipy has them), log density and sampler all come from it.

        ``moments_below`` is inferred from the distributions
        (:func:`scipy_moments_below`): a Student-t with 4 degrees of freedom has no
        finite 4th moment, so only its quantiles are tested (a variance test
        would have no power).  A ``moments_below`` in ``kwargs`` can only
        lower it.  Other ``kwargs`` go to :class:`Exact` (e.g. ``mode=...``,
        ``log_evidence=...``).
        """
        if isinstance(dist, stats._multivariate.multivariate_normal_frozen):
            return cls(mean=dist.mean, cov=dist.cov, parameters=parameters, gaussian=True, **kwargs)
        parts = _scipy_multivariate(dist)
        if parts is not None:
            return cls(parameters=parameters, **{**parts, **kwargs})
        several = isinstance(dist, (list, tuple))
        dists = tuple(dist) if several else (dist,)
        if not dists:
            raise InputError(
                "Exact.from_scipy got an empty list; give one frozen scipy "
                "distribution per parameter"
            )
        means, variances = [], []
        for i, one in enumerate(dists):
            where = f"Exact.from_scipy: entry {i}" if several else "Exact.from_scipy"
            if (
                not hasattr(one, "dist")
                or not hasattr(one, "ppf")
                or not isinstance(one.dist, (stats.rv_continuous, stats.rv_discrete))
            ):
                raise InputError(
                    f"{where} must be a frozen univariate scipy distribution "
                    f"(e.g. scipy.stats.gamma(3, scale=0.5)), got {one!r}"
                )
            mean, var = (float(v) for v in one.stats(moments="mv"))
            if not (np.isfinite(mean) and np.isfinite(var)):
                raise InputError(
                    f"{where}: {one.dist.name} with these arguments has mean "
                    f"{mean} and variance {var}; the agreement test needs both "
                    "finite"
                )
            means.append(mean)
            variances.append(var)

        def logpdf(x, dists=dists):
            x = np.asarray(x, dtype=float)
            return sum(
                np.asarray(
                    d.logpdf(x[..., i]) if hasattr(d, "logpdf") else d.logpmf(x[..., i]),
                    dtype=float,
                )
                for i, d in enumerate(dists)
            )

        def sample(rng, size, dists=dists):
            return np.column_stack(
                [
                    np.asarray(d.rvs(size=size, random_state=rng), dtype=float).reshape(size)
                    for d in dists
                ]
            )

        # The table only: with marginals no test needs a moment, so none is integrated.
        bound = min(scipy_moments_below(d, integrate=False) for d in dists)
        if "moments_below" in kwargs:
            bound = min(bound, float(kwargs.pop("moments_below")))
        return cls(
            mean=means,
            cov=np.diag(variances),
            parameters=parameters,
            marginals=list(dists),
            gaussian=all(d.dist.name == "norm" for d in dists),
            logpdf=logpdf,
            sample=sample,
            moments_below=bound,
            **kwargs,
        )


def _scipy_multivariate(dist: Any) -> dict[str, Any] | None:
    """:class:`Exact`'s fields from a frozen scipy multivariate distribution other
    than the normal, or None for anything else. Moments in closed form: the
    Dirichlet's; the multivariate t's (``df > 2``); Wishart ``Cov(W_ij, W_kl) =
    df (S_ik S_jl + S_il S_jk)``; inverse Wishart (Press 1982, 5.2) ``Cov(X_ij,
    X_kl) = (2 P_ij P_kl + m (P_ik P_jl + P_il P_jk)) / ((m + 1) m^2 (m - 2))``
    with ``m = df - p - 1`` (``df > p + 3``)."""
    mv = stats._multivariate
    if isinstance(dist, mv.dirichlet_frozen):
        a = np.asarray(dist.alpha, dtype=float)
        a0 = a.sum()
        mean = a / a0
        cov = (np.diag(a) * a0 - np.outer(a, a)) / (a0**2 * (a0 + 1.0))
        return {
            "mean": mean,
            "cov": cov,
            "marginals": [stats.beta(ai, a0 - ai) for ai in a],
            "logpdf": lambda x: dist.logpdf(np.moveaxis(np.asarray(x, dtype=float), -1, 0)),
            "sample": lambda rng, size: dist.rvs(size=size, random_state=rng).reshape(size, -1),
            "free": tuple(range(a.size - 1)),
        }
    if isinstance(dist, mv.multivariate_t_frozen):
        df, loc, shape = float(dist.df), np.asarray(dist.loc, float), np.asarray(dist.shape)
        if not df > 2:
            raise InputError(
                f"Exact.from_scipy: multivariate_t with df={df:g} has no finite covariance; "
                "the agreement test needs one (df > 2)"
            )
        sd = np.sqrt(np.diag(shape))
        return {
            "mean": loc,
            "cov": shape * df / (df - 2.0),
            "marginals": [stats.t(df, loc=m, scale=s) for m, s in zip(loc, sd, strict=True)],
            "logpdf": dist.logpdf,
            "sample": lambda rng, size: dist.rvs(size=size, random_state=rng).reshape(size, -1),
        }
    if isinstance(dist, (mv.wishart_frozen, mv.invwishart_frozen)):
        df, scale = float(dist.df), np.atleast_2d(np.asarray(dist.scale, dtype=float))
        p = scale.shape[0]
        ii, jj = np.meshgrid(np.arange(p), np.arange(p), indexing="ij")
        i, j = ii.ravel(), jj.ravel()
        if isinstance(dist, mv.wishart_frozen):
            mean = df * scale
            cov = df * (
                scale[np.ix_(i, i)] * scale[np.ix_(j, j)]
                + scale[np.ix_(i, j)] * scale[np.ix_(j, i)]
            )
            diagonal = [stats.gamma(df / 2.0, scale=2.0 * scale[k, k]) for k in range(p)]
        else:
            m = df - p - 1.0
            if not m > 2:
                raise InputError(
                    f"Exact.from_scipy: invwishart with df={df:g} and dimension {p} has no "
                    f"finite covariance; the agreement test needs one (df > {p + 3})"
                )
            mean = scale / m
            cov = (
                2.0 * np.outer(scale.ravel(), scale.ravel())
                + m
                * (
                    scale[np.ix_(i, i)] * scale[np.ix_(j, j)]
                    + scale[np.ix_(i, j)] * scale[np.ix_(j, i)]
                )
            ) / ((m + 1.0) * m**2 * (m - 2.0))
            diagonal = [
                stats.invgamma((df - p + 1) / 2.0, scale=scale[k, k] / 2.0) for k in range(p)
            ]
        marginals = [diagonal[a] if a == b else None for a, b in zip(i, j, strict=True)]

        def sample(rng: np.random.Generator, size: int) -> np.ndarray:
            draws = np.asarray(dist.rvs(size=size, random_state=rng), dtype=float)
            return draws.reshape(size, p * p)

        def logpdf(x: Any) -> Any:
            x = np.asarray(x, dtype=float)
            mats = x.reshape(-1, p, p)
            return np.asarray([dist.logpdf(mat) for mat in mats], dtype=float).reshape(x.shape[:-1])

        return {
            "mean": mean.ravel(),
            "cov": cov,
            "marginals": marginals,
            "logpdf": logpdf,
            "sample": sample,
            "free": tuple(int(k) for k in np.flatnonzero(i >= j)),
        }
    return None


#: Tail index of scipy's heavy-tailed families: raw moments of order r are finite
#: exactly for r < tail(shapes) (loc and scale do not change it).  Sources: the
#: densities' power-law tails, e.g. Student-t ~ |x|^-(df+1), Pareto(b) ~ x^-(b+1),
#: inverse gamma(a) ~ x^-(a+1), F(d1, d2) ~ x^-(d2/2+1); Johnson & Kotz,
#: Continuous Univariate Distributions, and scipy's documentation of each family.
HEAVY_TAILS: dict[str, Callable[..., float]] = {
    "t": lambda df: df,
    "nct": lambda df, nc: df,
    "pareto": lambda b: b,
    "lomax": lambda c: c,
    "genpareto": lambda c: 1.0 / c if c > 0 else math.inf,
    "invgamma": lambda a: a,
    "invweibull": lambda c: c,
    "f": lambda dfn, dfd: dfd / 2.0,
    "betaprime": lambda a, b: b,
    "burr": lambda c, d: c,
    "burr12": lambda c, d: c * d,
    "fisk": lambda c: c,
    "loglaplace": lambda c: c,
    "mielke": lambda k, s: s,
    "cauchy": lambda: 0.0,
    "halfcauchy": lambda: 0.0,
    "levy": lambda: 0.5,
    "levy_l": lambda: 0.5,
    "levy_stable": lambda alpha, beta: math.inf if alpha >= 2 else alpha,
}


def scipy_moments_below(dist: Any, *, integrate: bool = True) -> float:
    """The order below which every raw moment of a frozen scipy distribution is finite.

    From :data:`HEAVY_TAILS` for the heavy-tailed families; otherwise, with
    ``integrate``, the
    first order r = 1..9 whose ``dist.moment(r)`` is not finite (``inf``
    when all are: the agreement test needs no more than order 8).  scipy
    computes some moments by numerical integration, which can return a finite
    number for an infinite moment: for a family not in the table, pass
    ``moments_below=`` to :class:`Exact` yourself. Without ``integrate`` a
    family not in the table is taken as ``inf`` (no moment is computed: scipy
    integrates some numerically, 24 s for a von Mises' orders 1-9).
    """
    shapes, _, _ = dist.dist._parse_args(*dist.args, **dist.kwds)
    tail = HEAVY_TAILS.get(dist.dist.name)
    if tail is not None:
        return float(tail(*(float(v) for v in shapes)))
    if not integrate:
        return math.inf
    for order in range(1, 10):
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            try:
                value = float(dist.moment(order))
            except (ValueError, OverflowError, ZeroDivisionError):
                return float(order)
        if not np.isfinite(value):
            return float(order)
    return math.inf


class _QuantileMarginal:
    """A marginal known through its quantile function (and, for d = 1, its density).

    Has what the compare layer asks of a marginal: ``ppf``, ``pdf`` (NaN
    where unknown: the report then draws no exact curve) and, when an iid
    sampler exists, the excess kurtosis ``stats(moments="k")``.
    """

    def __init__(
        self,
        ppf: Callable[[Any], Any],
        pdf: Callable[[Any], Any] | None,
        kurtosis: Callable[[], float] | None,
    ):
        self._ppf, self._pdf, self._kurtosis = ppf, pdf, kurtosis

    def ppf(self, q: Any) -> Any:
        return self._ppf(q)

    def pdf(self, x: Any) -> Any:
        if self._pdf is None:
            return np.full(np.shape(x), np.nan)
        return self._pdf(x)

    def stats(self, moments: str = "mv") -> Any:
        if moments != "k" or self._kurtosis is None:
            raise ValueError("only the excess kurtosis of a sampled marginal is known")
        return self._kurtosis()


@dataclass(frozen=True, eq=False)
class ExactPosteriorAdapter:
    """An :class:`Exact` as the compare layer's ``analytic.ExactPosterior``.

    Hashed by identity, so the agreement test's memoised reference moments
    are computed once per check.
    """

    exact: Exact
    parameters: tuple[str, ...]
    seed: int = 0
    n_reference: int = 200_000

    @property
    def mean(self) -> np.ndarray:
        return self.exact.mean

    @property
    def cov(self) -> np.ndarray:
        return self.exact.cov

    @property
    def mode(self) -> np.ndarray | None:
        if self.exact.mode is not None:
            return self.exact.mode
        return self.exact.mean if self.exact.gaussian else None

    @property
    def mode_interior(self) -> bool:
        return bool(self.exact.mode_interior)

    @property
    def free(self) -> tuple[int, ...]:
        return tuple(self.exact.free or ())  # a tuple after Exact.__post_init__

    @property
    def is_gaussian(self) -> bool:
        return bool(self.exact.gaussian)

    @property
    def has_sampler(self) -> bool:
        return self.exact.sample is not None or self.exact.gaussian

    def check_consistent(self) -> None:
        """Refuse, before anything samples, an ``Exact`` whose parts describe
        different posteriors: marginals whose mean or variance differ from ``mean``
        and ``cov`` by more than 1% of an sd (of a variance), or an iid sampler or
        quantile function that disagrees with them beyond Monte Carlo error (6
        standard errors over :data:`CONSISTENCY_DRAWS` draws: a false refusal is a
        one-in-10^8 event per coordinate). A wrong shape fails here too. Done once
        per ``Exact``: later checks of it skip it (a von Mises marginal's moments
        are integrated numerically, about 1 s)."""
        if self.exact.__dict__.get("_consistent"):
            return
        self._check_consistent()
        self.exact.__dict__["_consistent"] = True

    def _check_consistent(self) -> None:
        names, mean = self.parameters, np.asarray(self.exact.mean, dtype=float)
        sd = np.sqrt(np.diag(np.atleast_2d(np.asarray(self.exact.cov, dtype=float))))
        for i, marginal in enumerate(self.exact.marginals or ()):
            if marginal is None or not hasattr(marginal, "stats") or not sd[i] > 0:
                continue
            with np.errstate(all="ignore"):
                m, v = (float(x) for x in marginal.stats(moments="mv"))
            if np.isfinite(m) and abs(m - mean[i]) > 0.01 * sd[i]:
                raise InputError(
                    f"marginals[{i}] ({names[i]}) has mean {m:.6g} but mean[{i}] is "
                    f"{mean[i]:.6g}; give the same posterior to both"
                )
            if np.isfinite(v) and abs(v - sd[i] ** 2) > 0.01 * sd[i] ** 2:
                raise InputError(
                    f"marginals[{i}] ({names[i]}) has variance {v:.6g} but cov[{i}, {i}] "
                    f"is {sd[i] ** 2:.6g}; give the same posterior to both"
                )
        if not self.has_sampler:
            return
        n = CONSISTENCY_DRAWS
        draws = self.sample(np.random.default_rng([self.seed, 0xC0]), n)
        with np.errstate(all="ignore"):  # a coordinate without variance is not checked
            z = np.where(sd > 0, (draws.mean(axis=0) - mean) / (sd / np.sqrt(n)), 0.0)
        worst = int(np.argmax(np.abs(z)))
        if abs(z[worst]) > 6.0:
            raise InputError(
                f"sample disagrees with mean: the mean of {n} exact draws of "
                f"{names[worst]} is {draws[:, worst].mean():.6g}, mean[{worst}] is "
                f"{mean[worst]:.6g} ({z[worst]:+.1f} standard errors); give the same "
                "posterior to both"
            )
        if self.exact.quantile is None:
            return
        for level in (0.25, 0.5, 0.75):
            below = np.mean(draws < self._quantile_at(level), axis=0)
            z = (below - level) / np.sqrt(level * (1 - level) / n)
            worst = int(np.argmax(np.abs(z)))
            if abs(z[worst]) > 6.0:
                raise InputError(
                    f"quantile({level}) disagrees with sample: {100 * below[worst]:.1f}% "
                    f"of {n} exact draws of {names[worst]} lie below quantile({level})"
                    f"[{worst}] = {self._quantile_at(level)[worst]:.6g}; give the same "
                    "posterior to both"
                )

    @property
    def moments_below(self) -> float:
        """The user's bound, capped at 8 when no fourth moments are available.

        Squares and products of whitened draws need the null variance of
        ``u_i u_j``, a fourth moment: known for a Gaussian, estimated from
        exact iid draws, or (one free coordinate) from a scipy marginal's
        kurtosis.  Without any of these only means and quantiles are tested.
        """
        bound = float(self.exact.moments_below)
        if self.is_gaussian or self.exact.sample is not None:
            return bound
        if len(self.free) == 1 and self._scipy_marginal(self.free[0]) is not None:
            return bound
        return min(bound, 8.0)

    def _scipy_marginal(self, index: int) -> Any:
        if self.exact.marginals is not None:
            return self.exact.marginals[index]
        if self.exact.gaussian:
            return stats.norm(self.exact.mean[index], math.sqrt(self.exact.cov[index, index]))
        return None

    @cached_property
    def _kurtosis(self) -> np.ndarray:
        draws = self.sample(np.random.default_rng(self.seed), self.n_reference)
        return np.asarray(stats.kurtosis(draws, axis=0, fisher=True), dtype=float)

    @cached_property
    def _empirical_quantiles(self) -> np.ndarray:
        draws = self.sample(np.random.default_rng(self.seed + 1), EMPIRICAL_QUANTILE_DRAWS)
        return np.sort(draws, axis=0)

    def _quantile_at(self, p: float) -> np.ndarray:
        """``exact.quantile(p)``: once per level for every coordinate, remembered on
        the ``Exact`` itself, so later checks of it ask again for nothing (a 1.5 s
        quadrature quantile with 10 coordinates cost 45 s of a check; issue 61)."""
        memo: dict[float, np.ndarray] = self.exact.__dict__.setdefault("_quantile_memo", {})
        quantile = self.exact.quantile
        if quantile is None:
            raise ValueError("this Exact has no quantile function")
        if p not in memo:
            value = _vector(f"exact.quantile({p})", quantile(p))
            d = len(self.parameters)
            if value.shape != (d,):
                raise InputError(
                    f"exact.quantile({p}) returned {value.size} values; it must return "
                    f"one quantile per parameter, shape ({d},)"
                )
            for level, known in memo.items():  # quantiles never decrease with the level
                lo, hi = (known, value) if level < p else (value, known)
                wrong = np.flatnonzero(lo > hi)
                if wrong.size:
                    k = int(wrong[0])
                    a, b = sorted((level, p))
                    raise InputError(
                        f"exact.quantile is not monotone: coordinate {k} "
                        f"({self.parameters[k]}) is {lo[k]:.6g} at level {a} and "
                        f"{hi[k]:.6g} at level {b}; a quantile function must not decrease"
                    )
            memo[p] = value
        return memo[p]

    def marginal(self, index: int) -> Any:
        scipy_marginal = self._scipy_marginal(index)
        if scipy_marginal is not None:
            return scipy_marginal
        d = len(self.parameters)
        pdf = None
        if d == 1 and self.exact.logpdf is not None:

            def pdf(x, logpdf=self.exact.logpdf):
                x = np.asarray(x, dtype=float)
                return np.exp(np.asarray(logpdf(x[..., None]), dtype=float))

        kurtosis = (lambda: float(self._kurtosis[index])) if self.has_sampler else None
        if self.exact.quantile is not None:
            quantile_at = self._quantile_at

            def ppf(q):
                q_arr = np.asarray(q, dtype=float)
                out = np.array([quantile_at(float(p))[index] for p in q_arr.ravel()])
                return out.reshape(q_arr.shape) if q_arr.ndim else float(out[0])

            return _QuantileMarginal(ppf, pdf, kurtosis)
        if len(self.free) == 1 and self.exact.sample is not None and index == self.free[0]:
            # One parameter, a sampler and nothing else: the square test needs the
            # kurtosis through this object, and its quantiles come from 1e6 exact draws
            # (their error, sqrt(p(1-p)/1e6), is below a tenth of the MCMC standard error).
            sorted_draws = self._empirical_quantiles[:, index]

            def ppf(q):
                return np.quantile(sorted_draws, q)

            return _QuantileMarginal(ppf, pdf, kurtosis)
        return None

    def logpdf(self, x: np.ndarray) -> np.ndarray:
        if self.exact.logpdf is not None:
            return np.asarray(self.exact.logpdf(np.asarray(x, dtype=float)), dtype=float)
        if self.exact.gaussian:
            return stats.multivariate_normal(self.mean, self.cov).logpdf(x)
        raise ValueError("this Exact has no logpdf; pass logpdf=... to compare.Exact")

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        if self.exact.sample is not None:
            draws = np.asarray(self.exact.sample(rng, size), dtype=float)
            d = len(self.parameters)
            if draws.shape != (size, d):
                raise InputError(
                    f"exact.sample(rng, {size}) returned shape {draws.shape}; it "
                    f"must return an array of shape (size, d) = ({size}, {d})"
                )
            if not np.all(np.isfinite(draws)):
                raise InputError(
                    f"exact.sample(rng, {size}) returned non-finite values; "
                    "an exact sampler's draws must be finite numbers"
                )
            return draws
        if self.exact.gaussian:
            chol = linalg.cholesky(self.cov, lower=True)
            return self.mean + rng.standard_normal((size, self.mean.size)) @ chol.T
        raise ValueError("this Exact has no sampler; pass sample=... or gaussian=True")


class _NoPredictive:
    """A predictive with no known moments (the JSON then holds nulls)."""

    def mean(self) -> float:
        return float("nan")

    def var(self) -> float:
        return float("nan")


# --- results ---------------------------------------------------------------------
@dataclass(frozen=True)
class CheckResult:
    """The outcome of :func:`check`, :func:`check_draws` or :func:`run`.

    Attributes
    ----------
    run : compare.core.runner.RunResult
        Everything the run produced (the CLI works from the same object).
    """

    run: RunResult = field(repr=False)

    @property
    def verdict(self) -> str:
        """``agree``, ``disagree`` or ``inconclusive``."""
        return self.run.verdict

    @property
    def decided_by(self) -> str:
        """The check that decided the verdict (``agreement`` when all passed)."""
        return self.run.decided_by

    @property
    def also_failed(self) -> tuple[str, ...]:
        """Every other failed check, the strongest failed gate first."""
        return self.run.also_failed

    @property
    def agrees(self) -> bool:
        return self.run.verdict == "agree"

    @property
    def exit_code(self) -> int:
        """The CLI's exit code for this verdict: 0 agree, 1 disagree, 2 inconclusive."""
        return self.run.exit_code

    @property
    def parameters(self) -> tuple[str, ...]:
        return self.run.parameters

    @property
    def checks(self) -> tuple:
        """Each check (convergence, agreement, MAP, ...) with statistic and threshold."""
        return self.run.checks

    @property
    def quantities(self) -> tuple:
        """Every tested quantity of the agreement test (z, p, Holm p)."""
        return () if self.run.agreement is None else self.run.agreement.quantities

    @property
    def table(self) -> list[dict[str, Any]]:
        """One row per parameter: exact and MCMC moments, MCSE, z, R-hat, ESS."""
        post, mcmc = self.run.exact.posterior, self.run.mcmc
        exact_sd = np.sqrt(np.diag(post.cov))
        rows = []
        for i, name in enumerate(self.run.parameters):
            z = (mcmc.mean[i] - post.mean[i]) / mcmc.mcse_mean[i]
            rows.append(
                {
                    "parameter": name,
                    "exact mean": float(post.mean[i]),
                    "exact sd": float(exact_sd[i]),
                    "MCMC mean": float(mcmc.mean[i]),
                    "MCMC sd": float(mcmc.sd[i]),
                    "MCSE": float(mcmc.mcse_mean[i]),
                    "z": float(z) if np.isfinite(z) else None,
                    "R-hat": float(mcmc.rhat[i]),
                    "ESS bulk": float(mcmc.ess_bulk[i]),
                    "ESS tail": float(mcmc.ess_tail[i]),
                }
            )
        return rows

    @property
    def diagnostics(self) -> dict[str, Any]:
        """R-hat, bulk/tail ESS and MCSE per parameter, and the divergence count."""
        mcmc = self.run.mcmc
        names = self.run.parameters
        return {
            "rhat": dict(zip(names, mcmc.rhat.tolist())),
            "ess_bulk": dict(zip(names, mcmc.ess_bulk.tolist())),
            "ess_tail": dict(zip(names, mcmc.ess_tail.tolist())),
            "mcse_mean": dict(zip(names, mcmc.mcse_mean.tolist())),
            "divergences": int(mcmc.divergences),
        }

    def to_dict(self) -> dict[str, Any]:
        """The run document as a dict (the keys of the CLI's ``result.json``)."""
        return to_document(self.run)

    def to_json(self) -> str:
        """The run document as JSON text: the CLI's ``result.json`` contract."""
        return dumps(self.to_dict())

    def save(self, directory: str | Path) -> Path:
        """Write ``result.json`` and ``draws.nc`` under ``directory``; return the JSON path."""
        return save_run(self.run, directory)

    def to_html(self, out: str | Path | None = None, *, workers: int = 1) -> Path:
        """Write the report for this run and return the path of its page.

        The page is the built-in topics' run page (same template, tables and
        figures), at ``out/runs/<name>/index.html`` beside the run's
        ``result.json`` and ``draws.nc``, with ``out/index.html`` listing it.
        ``out`` defaults to a new temporary directory. The caller's process is left
        as found: matplotlib's backend, rcParams and open figures
        (:func:`compare.core.drawing.drawing`), and the warning filters (xarray adds
        one at every netCDF read).
        """
        from compare.outputs.report import build_site  # heavy: Jinja2 and the figures

        out = Path(tempfile.mkdtemp(prefix="bayes-compare-")) if out is None else Path(out)
        run_dir = out / "runs" / self.run.topic
        self.save(run_dir)
        with warnings.catch_warnings():
            site = build_site([run_dir], out, workers=workers)
        return site.pages[self.run.topic]

    def __str__(self) -> str:
        return self._text()

    def __repr__(self) -> str:
        return self._text()

    def _text(self) -> str:
        r = self.run
        head = (
            f"{r.topic} on {r.data_source}: {r.verdict.upper()} ({r.decided}); "
            f"{r.settings.chains} chains x {r.settings.draws} draws, "
            f"{r.timings.get('total', 0.0):.2f} s"
        )
        cols = [
            "parameter",
            "exact mean",
            "exact sd",
            "MCMC mean",
            "MCMC sd",
            "MCSE",
            "z",
            "R-hat",
            "ESS bulk",
        ]
        specs = {
            "exact mean": ".4g",
            "exact sd": ".4g",
            "MCMC mean": ".4g",
            "MCMC sd": ".4g",
            "MCSE": ".2g",
            "z": "+.2f",
            "R-hat": ".4f",
            "ESS bulk": ".0f",
        }
        rows = [
            [row["parameter"]] + [fmt(row[c], specs[c]) for c in cols[1:]]
            for row in self.table[:20]
        ]
        widths = [
            max(len(c), *(len(x[k]) for x in rows)) if rows else len(c) for k, c in enumerate(cols)
        ]
        lines = [head, "  ".join(c.rjust(w) for c, w in zip(cols, widths))]
        lines += ["  ".join(x.rjust(w) for x, w in zip(row, widths)) for row in rows]
        if len(self.table) > 20:
            lines.append(f"... {len(self.table) - 20} more parameters (see .table)")
        lines += check_lines(r, map_vectors=False)  # as the CLI prints them
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        r = self.run
        colour = {"agree": "#1a7f37", "disagree": "#cf222e", "inconclusive": "#9a6700"}[r.verdict]
        esc = html.escape
        cols = list(self.table[0]) if self.table else []
        head = "".join(f"<th>{esc(c)}</th>" for c in cols)
        body = "".join(
            "<tr>"
            + "".join(
                f"<td>{esc(fmt(v, '.4g') if not isinstance(v, str) else v)}</td>"
                for v in row.values()
            )
            + "</tr>"
            for row in self.table[:50]
        )
        checks = "".join(
            f"<tr><td>{esc({True: 'ok', False: 'FAIL', None: '-'}[c.passed])}</td>"
            f"<td>{esc(c.name)}</td><td>{esc(fmt(c.statistic, '.4g'))}</td>"
            f"<td>{esc(fmt(c.threshold, '.4g'))}</td><td>{esc(c.note)}</td></tr>"
            for c in r.checks
        )
        return (
            f"<div><p><b>{esc(r.topic)}</b> on {esc(r.data_source)}: "
            f"<b style='color:{colour}'>{esc(r.verdict.upper())}</b> "
            f"({esc(r.decided)})</p>"
            f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
            f"<table><thead><tr><th></th><th>check</th><th>statistic</th>"
            f"<th>threshold</th><th>note</th></tr></thead><tbody>{checks}</tbody></table>"
            "</div>"
        )


# --- settings --------------------------------------------------------------------
def _settings(
    *,
    draws: int | None = None,
    chains: int | None = None,
    tune: int | None = None,
    seed: int | None = None,
    alpha: float | None = None,
    method: str | None = None,
    base: Settings | Mapping[str, Any] | None = None,
) -> Settings:
    try:
        accel.setting()  # BAYES_COMPARE_ACCEL, checked before anything compiles
    except accel.SettingError as err:
        raise InputError(str(err)) from None
    if isinstance(base, Settings):
        settings = base
    else:
        settings = defaults.DEFAULT
        if base:
            known = {f.name for f in dataclasses.fields(Settings)}
            unknown = sorted(set(base) - known)
            if unknown:
                raise InputError(f"unknown setting(s) {unknown}; known: {', '.join(sorted(known))}")
            base = dict(base)
    overrides: dict[str, Any] = {
        k: v
        for k, v in dict(
            draws=draws, chains=chains, tune=tune, seed=seed, alpha=alpha, method=method
        ).items()
        if v is not None
    }
    if isinstance(base, dict):
        overrides = {**base, **overrides}
    try:
        return dataclasses.replace(settings, **overrides)
    except ValueError as err:
        raise InputError(str(err)) from None


# --- checking a PyMC model -------------------------------------------------------
def _observed(model: Any) -> tuple[dict[str, np.ndarray], int]:
    """The model's observed data as named 1-D columns, and their total size."""
    cols, n = {}, 0
    for rv in model.observed_RVs:
        value = model.rvs_to_values[rv]
        data = getattr(value, "data", None)
        if data is None:
            try:
                data = value.eval()
            except Exception:  # noqa: BLE001 - data that cannot be evaluated is not shown
                continue
        arr = np.asarray(data)
        n += int(arr.size)
        if arr.dtype.kind in "biuf" and arr.size <= 2_000_000:
            cols[rv.name] = arr.ravel().astype(float)
    return cols, n


_USER_CACHE: ModelCache | None = None


def _user_cache() -> ModelCache:
    global _USER_CACHE
    if _USER_CACHE is None:
        from compare.core.sampling import ModelCache  # heavy: PyMC only when sampling

        _USER_CACHE = ModelCache()
    return _USER_CACHE


def check(
    model: Any,
    exact: Exact,
    *,
    var_names: Sequence[str] | None = None,
    draws: int | None = None,
    chains: int | None = None,
    tune: int | None = None,
    seed: int | None = None,
    alpha: float | None = None,
    name: str = "user-model",
    sampler_options: Mapping[str, Any] | None = None,
    method: str | None = None,
    settings: Settings | Mapping[str, Any] | None = None,
) -> CheckResult:
    """Sample a PyMC model (with nutpie by default) and test it against an exact posterior.

    Parameters
    ----------
    model : pymc.Model
        Your model, with its data in it (observed values or ``pm.Data``).
        The model is compiled once per process; after ``pm.set_data`` a new
        check samples the new ``pm.Data`` values without compiling again.
    exact : Exact
        The exact posterior of ``var_names``, flattened in C order and
        concatenated in the order given.
    var_names : sequence of str, optional
        The PyMC variables that line up with ``exact`` (default: every free
        variable, in the model's order).
    draws, chains, tune, seed, alpha : optional
        Kept draws per chain, chains, warm-up draws per chain, seed and the
        verdict's family-wise false-alarm rate (defaults:
        :mod:`compare.core.defaults`).
    name : str
        What the run is called in its JSON document and report.
    sampler_options : mapping, optional
        Extra arguments of the sampler's own call (``nutpie.sample`` by default):
        ``{"target_accept": 0.95}`` for smaller steps where a posterior diverges,
        ``{"low_rank_modified_mass_matrix": True}`` for a strongly correlated one.
    settings : compare.core.defaults.Settings or mapping, optional
        Everything else ``compare.run`` takes (:class:`compare.core.defaults.Settings`):
        e.g. ``{"max_extensions": 0, "n_reference": 20_000}`` for a quick check
        that is not extended and takes fewer exact reference draws, or
        ``{"ess_min": 1000}`` for a stricter gate. ``draws``, ``chains``,
        ``tune``, ``seed``, ``alpha`` and ``method`` given as arguments win over
        the same keys here; an unknown key is refused, naming it.
    method : str, optional
        A sampler of :mod:`compare.core.methods` (``nutpie``, the default;
        ``pymc``, ``numpyro``, ``blackjax``, ``smc``), judged by the same
        calibrated verdict. The approximations are run on the built-in topics
        (``compare.run(..., method="advi")``), whose exact side gives the
        log evidence and marginals their distances need.

    Returns
    -------
    CheckResult
        The same verdict, checks and JSON document as ``bayes-compare run``.

    Raises
    ------
    InputError
        (a ``ValueError``) for unknown variables, a dimension mismatch
        between the variables and ``exact``, a bad sampler or bad settings.
    """

    if not isinstance(exact, Exact):
        raise InputError(
            f"exact must be a compare.Exact (mean, cov, ...), got "
            f"{type(exact).__name__}; e.g. compare.Exact(mean=[0.0], cov=[[1.0]])"
        )
    if method is None and settings is not None:
        # A method in settings= counts as if given (the argument wins when both are).
        method = settings.method if isinstance(settings, Settings) else settings.get("method")
    chosen = usable(method or DEFAULT_METHOD)
    if chosen.kind == APPROXIMATION:
        raise InputError(
            f"method={chosen.name!r} is an approximation; compare.check takes the samplers "
            f"({', '.join(m.name for m in METHODS.values() if m.kind == SAMPLER)}); run "
            f"approximations on a topic: compare.run(TOPIC, settings={{'method': {chosen.name!r}}})"
        )
    settings = _settings(
        draws=draws,
        chains=chains,
        tune=tune,
        seed=seed,
        alpha=alpha,
        method=chosen.name,
        base=settings,
    )
    discrete = [rv.name for rv in model.free_RVs if str(rv.dtype).startswith(("int", "uint"))]
    if discrete:
        raise InputError(
            f"the model's free variable(s) {discrete} are discrete, and check "
            f"samples with NUTS ({chosen.name}); marginalise them out, or sample the model "
            "yourself and use compare.check_draws"
        )
    if not model.free_RVs:
        raise InputError("the model has no free variables to sample; give a model with priors")
    if var_names is None:
        var_names = [rv.name for rv in model.free_RVs]
    var_names = [var_names] if isinstance(var_names, str) else [str(v) for v in var_names]
    names, sizes = flat_names(model, var_names)
    if len(names) != exact.d:
        parts = ", ".join(f"{v}: {s}" for v, s in zip(var_names, sizes))
        raise InputError(
            f"var_names {var_names} give {len(names)} values per draw ({parts}) "
            f"but exact.mean has {exact.d}; list the variables whose flattened "
            "values line up with exact.mean, in its order"
        )
    posterior = ExactPosteriorAdapter(
        exact,
        tuple(exact.parameters or names),
        seed=settings.seed,
        n_reference=settings.n_reference,
    )
    posterior.check_consistent()  # its parts agree (and a wrong shape fails) before compiling
    t0 = time.perf_counter()
    try:  # one compile per model and variables; later checks of the same model reuse it
        compiled = _user_cache().get(
            ("user-model", model, tuple(var_names), chosen.name),
            lambda: model,
            var_names,
            compiler=None if chosen.name == DEFAULT_METHOD else _method_compiler(chosen.name),
        )
    except ValueError as err:
        raise InputError(str(err)) from err
    t1 = time.perf_counter()
    # The model's pm.Data as they are now: after pm.set_data, a check of the same
    # model samples the new values without compiling again.
    data = {v.name: np.asarray(v.get_value()) for v in model.data_vars}
    # Extended like a built-in topic's run when ESS alone is short (compare.core.runner.run).
    sampled = sample_enough(
        compiled, data, settings, variables=tuple(var_names), options=dict(sampler_options or {})
    )
    t2 = time.perf_counter()
    tree, mcmc_draws, divergences = sampled.tree, sampled.draws, sampled.divergences
    search = (
        compiled.map_search(data, map_starts(posterior, settings))
        if posterior.mode is not None
        else None
    )
    pymc_map = None if search is None else search.point
    observed, n = _observed(model)
    return CheckResult(
        _verdict(
            name=name,
            posterior=posterior,
            draws=mcmc_draws,
            divergences=divergences,
            pymc_map=pymc_map,
            map_start=None if search is None else search.start,
            map_dispersed=() if search is None else search.dispersed,
            tree=tree,
            settings=settings,
            source="PyMC model",
            n=n,
            variables=tuple(var_names),
            observed=observed,
            map_note=None,
            timings={"compile": t1 - t0, "sample": t2 - t1},
            t_start=t0,
            exact=exact,
            sampled=sampled,
        )
    )


def _method_compiler(name: str) -> Callable[[Any, Sequence[str]], Any]:
    """A ModelCache compiler for a sampler other than nutpie (compare.core.inference)."""
    from compare.core.inference import MethodModel  # heavy: PyMC, for other methods only

    def compiler(model: Any, variables: Sequence[str]) -> Any:
        return MethodModel(model=model, variables=tuple(variables), method=name)

    return compiler


def _verdict(
    *,
    name: str,
    posterior: ExactPosteriorAdapter,
    draws: np.ndarray,
    divergences: int,
    pymc_map: np.ndarray | None,
    tree: Any,
    settings: Settings,
    source: str,
    n: int,
    variables: tuple[str, ...],
    observed: dict[str, np.ndarray],
    timings: dict[str, float],
    t_start: float,
    exact: Exact,
    map_note: str | None,
    sampled: Any = None,
    map_start: np.ndarray | None = None,
    map_dispersed: Sequence[tuple[np.ndarray, np.ndarray | None]] = (),
) -> RunResult:
    """The runner's checks and verdict on draws of shape (chain, draw, d).

    ``map_note`` says why PyMC's MAP was not computed (None when it was);
    ``map_start`` is where its search started, ``map_dispersed`` its searches
    from exact draws (see ``map_check``);
    ``sampled`` (a :class:`compare.core.runner.Sampled`) is how :func:`check`
    sampled, extensions included (None for draws from elsewhere).
    """

    t3 = time.perf_counter()
    extra = Extra()
    diagnosis, after = None, ""
    if sampled is not None:
        after = cap_note(sampled.extensions, sampled.settings.draws, settings)
        diagnosis = sampled.diagnosis
        section = extension_section(settings, sampled.settings.draws, list(sampled.samplings))
        timings = {**timings, "extension": section["seconds"]}
        extra = Extra(
            sections={"extension": section},
            lines=(extension_line(section),) if section["extensions"] or section["retry"] else (),
        )
    checks, diag, agreement = judge(
        draws,
        divergences,
        posterior,
        settings,
        alpha=settings.alpha,
        diagnosis=diagnosis,
        after=after,
        retried=None if sampled is None else sampled.retried,
    )
    if sampled is not None:
        settings = dataclasses.replace(settings, draws=sampled.settings.draws)
    # A user's Exact may give no evidence: None, which the run document writes as null.
    answer = ExactAnswer(
        posterior=posterior,
        mle=exact.mle,
        log_evidence=exact.log_evidence,  # type: ignore[arg-type]
        predictive=_NoPredictive(),
    )
    if posterior.mode is None:
        map_result = Check(
            CheckKind.MAP,
            None,
            settings.map_tol_sd,
            None,
            "no exact mode given (pass mode=... to compare.Exact to check PyMC's MAP)",
        )
    elif map_note is not None:
        map_result = Check(CheckKind.MAP, None, settings.map_tol_sd, None, map_note)
    else:
        map_result = map_check(answer, pymc_map, settings, map_start, map_dispersed)
    checks = (*checks, map_result)
    verdict, decided_by = decide(checks)
    t4 = time.perf_counter()
    return RunResult(
        topic=name,
        parameters=tuple(posterior.parameters),
        verdict=verdict,
        decided_by=decided_by,
        exact=answer,
        mcmc=summarise(draws, diag, divergences, pymc_map),
        agreement=agreement,
        checks=checks,
        settings=settings,
        hyper={},
        data_source=source,
        n=int(n),
        timings={**timings, "check": t4 - t3, "total": t4 - t_start},
        draws=tree,
        variables=variables,
        observed=observed,
        extra=extra,
    )


# --- checking draws from anywhere -------------------------------------------------
def _as_tree(
    draws: Any, var_names: Sequence[str] | None, d: int
) -> tuple[Any, np.ndarray, tuple[str, ...], int]:
    """(DataTree, array (chain, draw, d), variables, divergences) from the user's draws."""
    if isinstance(draws, (np.ndarray, list, tuple)):
        arr = np.asarray(draws, dtype=float)
        if arr.ndim == 2 and d == 1:
            arr = arr[..., None]
        if arr.ndim != 3:
            raise InputError(
                f"draws must have shape (chain, draw, d) = (chain, draw, {d}), got "
                f"shape {arr.shape}; e.g. draws.reshape(chains, -1, {d})"
            )
        if arr.shape[-1] != d:
            raise InputError(
                f"draws have {arr.shape[-1]} values per draw but exact.mean has {d}; "
                "the last axis must line up with exact.mean"
            )
        bad = np.argwhere(~np.isfinite(arr))
        if bad.size:
            c, i, j = bad[0]
            raise InputError(f"draws[{c}, {i}, {j}] is {arr[c, i, j]}; every draw must be finite")
        posterior = xr.Dataset(
            {"theta": (("chain", "draw", "theta_dim_0"), arr)},
            coords={
                "chain": np.arange(arr.shape[0]),
                "draw": np.arange(arr.shape[1]),
                "theta_dim_0": np.arange(d),
            },
        )
        tree = xr.DataTree.from_dict({"/posterior": posterior})
        return tree, arr, ("theta",), 0
    if isinstance(draws, xr.DataTree):
        if "posterior" not in draws.children:
            raise InputError(
                "draws: the DataTree has no 'posterior' group; give "
                "an ArviZ DataTree with a posterior group or an array of shape "
                "(chain, draw, d)"
            )
        posterior = draws["posterior"].to_dataset()
        stats_ds = draws["sample_stats"].to_dataset() if "sample_stats" in draws.children else None
        tree = draws
    elif isinstance(draws, xr.Dataset):
        posterior, stats_ds = draws, None
        tree = xr.DataTree.from_dict({"/posterior": draws})
    else:
        raise InputError(
            f"draws must be an ArviZ DataTree, an xarray Dataset or an array of "
            f"shape (chain, draw, d), got {type(draws).__name__}"
        )
    if isinstance(var_names, str):
        var_names = [var_names]
    names = [str(v) for v in (posterior.data_vars if var_names is None else var_names)]
    missing = [v for v in names if v not in posterior.data_vars]
    if missing:
        raise InputError(
            f"var_names: the draws have no variable(s) {missing}; they have "
            f"{list(posterior.data_vars)}"
        )
    for v in names:
        if "chain" not in posterior[v].dims or "draw" not in posterior[v].dims:
            raise InputError(
                f"draws variable {v!r} has dims {posterior[v].dims}; it needs "
                "'chain' and 'draw' dims"
            )
    arr = posterior_array(posterior, names)
    if arr.shape[-1] != d:
        raise InputError(
            f"var_names {names} give {arr.shape[-1]} values per draw but exact.mean "
            f"has {d}; list the variables that line up with exact.mean"
        )
    if not np.all(np.isfinite(arr)):
        raise InputError("the draws contain NaN or infinite values; every draw must be finite")
    divergences = 0
    if stats_ds is not None and "diverging" in stats_ds:
        divergences = int(np.asarray(stats_ds["diverging"]).sum())
    return tree, arr, tuple(names), divergences


def check_draws(
    draws: Any,
    exact: Exact,
    *,
    var_names: Sequence[str] | None = None,
    alpha: float | None = None,
    seed: int | None = None,
    name: str = "user-draws",
) -> CheckResult:
    """Test draws that came from anywhere against an exact posterior.

    Parameters
    ----------
    draws : xarray.DataTree, xarray.Dataset or array of shape (chain, draw, d)
        An ArviZ DataTree (its ``posterior`` group; divergences are read from
        ``sample_stats.diverging`` when present) or a plain array; for one
        parameter an array of shape (chain, draw) is accepted too.
    exact : Exact
    var_names : sequence of str, optional
        Posterior variables that line up with ``exact`` (default: all, in order).
    alpha : float, optional
        The verdict's family-wise false-alarm rate (default 1e-4).
    seed : int, optional
        Seeds the exact reference draws (null moments without a closed form).
    name : str
        What the run is called in its JSON document and report.

    Returns
    -------
    CheckResult
        The verdict by the same convergence gate and agreement test as a
        topic run; the MAP check is skipped (no model to optimise).
    """
    if not isinstance(exact, Exact):
        raise InputError(
            f"exact must be a compare.Exact (mean, cov, ...), got {type(exact).__name__}"
        )
    t0 = time.perf_counter()
    settings = _settings(alpha=alpha, seed=seed)
    tree, arr, variables, divergences = _as_tree(draws, var_names, exact.d)
    settings = dataclasses.replace(
        settings, chains=int(arr.shape[0]), draws=int(arr.shape[1]), tune=0
    )
    default_names = tuple(f"x[{i}]" for i in range(exact.d)) if variables == ("theta",) else None
    if default_names is None:
        default_names = tuple(_names_from_tree(tree, variables))
    posterior = ExactPosteriorAdapter(
        exact,
        tuple(exact.parameters or default_names),
        seed=settings.seed,
        n_reference=settings.n_reference,
    )
    posterior.check_consistent()
    return CheckResult(
        _verdict(
            name=name,
            posterior=posterior,
            draws=arr,
            divergences=divergences,
            pymc_map=None,
            tree=tree,
            settings=settings,
            source="draws",
            n=0,
            variables=variables,
            observed={},
            timings={"compile": 0.0, "sample": 0.0},
            t_start=t0,
            exact=exact,
            map_note="draws only: there is no model whose MAP could be found",
        )
    )


def _names_from_tree(tree: Any, variables: Sequence[str]) -> list[str]:
    posterior = tree["posterior"].to_dataset()
    names = []
    for v in variables:
        shape = tuple(s for dim, s in posterior[v].sizes.items() if dim not in ("chain", "draw"))
        names += (
            [v]
            if not shape
            else [f"{v}[{','.join(str(i) for i in idx)}]" for idx in np.ndindex(*shape)]
        )
    return names


# --- running a topic --------------------------------------------------------------
def run(
    topic: str,
    *,
    data: Any = None,
    column: str | None = None,
    target: str | None = None,
    features: Sequence[str] | None = None,
    settings: Settings | Mapping[str, Any] | None = None,
    **hyperparameters: Any,
) -> CheckResult:
    """Run a registered topic, as ``bayes-compare run`` does.

    Parameters
    ----------
    topic : str
        A topic name (``bayes-compare list``), builtin or from a topic file
        loaded with :func:`compare.topics.user.load_topic_file`.
    data : optional
        ``None`` (the topic's first builtin data set), ``"builtin:NAME"``, a
        CSV path, an array of observations, ``(x, y)`` for table topics, or
        a ``compare.core.data`` Table / Points.
    column, target, features : optional
        Which CSV columns to read (as the CLI's options).
    settings : compare.core.defaults.Settings or mapping, optional
        Sampler and verdict settings, e.g. ``{"draws": 1000, "alpha": 1e-3}``;
        ``{"method": "advi"}`` runs another inference method
        (:mod:`compare.core.methods`). (They are not keyword arguments because
        hyperparameter names such as ``alpha`` would clash.)
    **hyperparameters
        Prior hyperparameters by their ``--set`` names; they override the
        defaults and the data set's suggestions.  A value given as text is
        read by the same parser as ``--set name=text`` (so
        ``categories="a,b,c"`` is three labels, ``prior="1,2"`` two
        numbers); other values are checked as given (``categories=("a", "b")``).
    """
    t = compare.topics.get_topic(topic)
    values, dataset, source = topic_data(t, data, column, target, features)
    hyper = t.hyper(hyperparameters, dataset=dataset)  # text parsed as --set
    return CheckResult(
        run_topic(t, data=values, hyper=hyper, settings=_settings(base=settings), source=source)
    )
