"""Contracts shared by every analytic topic.

A topic's analytic module turns data and prior hyperparameters into an
:class:`ExactAnswer`: the exact posterior (an object satisfying
:class:`ExactPosterior`), the maximum-likelihood estimate, the log evidence and
the posterior predictive.  Everything here is pure: no I/O, no global random
state.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class ExactPosterior(Protocol):
    """What the compare layer needs from an exact posterior over d parameters.

    Attributes
    ----------
    parameters : tuple of str, length d
        Parameter names, in the order of every vector and matrix below.
    mean : array of shape (d,)
    cov : array of shape (d, d)
        May be singular (a Dirichlet's probabilities sum to one); ``free``
        then names a subset of coordinates whose covariance is not.
    mode : array of shape (d,) or None
        The joint posterior mode (MAP); None where it does not exist.
    mode_interior : bool
        False when the mode lies on the boundary of the support (an optimiser
        then runs off to a transformed infinity, so a MAP check is skipped).
    free : tuple of int
        Coordinates with a non-singular joint covariance, used for whitening.
    is_gaussian : bool
        True when the posterior is exactly multivariate normal.
    moments_below : float
        Every marginal has finite raw moments of all orders r < moments_below
        (``inf`` for bounded, normal and gamma posteriors).  The compare layer
        tests a moment only where the moments its null variance needs exist.

    A posterior may also have ``elliptical_kurtosis`` (float): the kurtosis
    parameter kappa of an elliptical distribution (Muirhead 1982, sec. 1.6),
    whose whitened coordinates u have ``E[u_i^4] = 3 (1 + kappa)`` and
    ``E[u_i^2 u_j^2] = 1 + kappa`` (i != j); 0 for a Gaussian. The compare
    layer then takes the null variances of its second-moment tests in closed
    form instead of from exact draws.
    """

    @property
    def parameters(self) -> tuple[str, ...]: ...

    @property
    def mean(self) -> np.ndarray: ...

    @property
    def cov(self) -> np.ndarray: ...

    @property
    def mode(self) -> np.ndarray | None: ...

    @property
    def mode_interior(self) -> bool: ...

    @property
    def free(self) -> tuple[int, ...]: ...

    @property
    def is_gaussian(self) -> bool: ...

    @property
    def moments_below(self) -> float: ...

    def marginal(self, index: int) -> Any:
        """The exact marginal of parameter ``index`` as a frozen scipy distribution.

        None when that coordinate has no closed-form marginal in scipy (e.g.
        an off-diagonal entry of a Wishart matrix); the compare layer then
        skips its quantile checks.
        """
        ...

    def logpdf(self, x: np.ndarray) -> np.ndarray:
        """Log density at ``x`` of shape (..., d); returns shape (...)."""
        ...

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        """Exact iid draws, array of shape (size, d)."""
        ...


@dataclass(frozen=True)
class ExactAnswer:
    """Everything the closed form says about one data set under one prior.

    Attributes
    ----------
    posterior : ExactPosterior
    mle : array of shape (d,) or None
        Maximum-likelihood estimate; None where it does not exist (no data).
    log_evidence : float
        log p(D), the log marginal likelihood of the observed sequence.
    predictive : object
        Posterior predictive for one new observation (a frozen scipy
        distribution or an object with the same ``mean``/``var``/``logpdf``
        or ``logpmf`` methods).
    """

    posterior: ExactPosterior
    mle: np.ndarray | None
    log_evidence: float
    predictive: Any

    @property
    def parameters(self) -> tuple[str, ...]:
        return self.posterior.parameters


def require_positive(name: str, value: float) -> float:
    """Return ``value`` as a float, or raise ValueError naming the fix."""
    value = float(value)
    if not np.isfinite(value) or value <= 0:
        raise ValueError(
            f"{name} must be a finite number > 0, got {value!r}; pass a positive value"
        )
    return value


def require_finite(name: str, value: float) -> float:
    value = float(value)
    if not np.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    return value


def require_drawable(name: float | str, value: float, *, fix: str) -> float:
    """Return a prior draw ``value``, or raise ValueError when float64 cannot hold it.

    Extreme but valid priors (InvGamma shape 1e-50, Pareto shape 1e-3) put most of
    their mass beyond 1e308: a simulator then has nothing finite to return.
    """
    value = float(value)
    if not np.isfinite(value):
        raise ValueError(
            f"the prior draw of {name} is {value} (beyond float64): this prior "
            f"is too heavy-tailed to simulate from; {fix}"
        )
    return value


def as_data(name: str, x: Any) -> np.ndarray:
    """Return ``x`` as a finite 1-D float array, or raise ValueError."""
    arr = np.asarray(x, dtype=float)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array of observations, got shape {arr.shape}")
    bad = ~np.isfinite(arr)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{name}[{i}] is {arr[i]}; every observation must be a finite number")
    return arr


# --- prior sensitivity: what every conjugate topic's sensitivity_path and power_scaled share ---
#: The two parts of the model power-scaling raises to a power alpha.
COMPONENTS = ("prior", "likelihood")


@dataclass(frozen=True, eq=False)
class ConjugatePath:
    """The exact posterior of a conjugate topic at G hyperparameter values.

    What each topic's ``sensitivity_path`` returns (``analytic/<topic>.py``).

    Attributes
    ----------
    mean, sd, lower, upper, mode : arrays of shape (G, d)
        Marginal means and sds (inf where they do not exist, as the posterior
        classes say), the central ``interval`` interval of each marginal, the
        joint mode (NaN where there is none).
    log_evidence : array of shape (G,)
    """

    mean: np.ndarray
    sd: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    mode: np.ndarray
    log_evidence: np.ndarray


def central_interval(
    family: Any, interval: float, *args: Any, **kwds: Any
) -> tuple[np.ndarray, np.ndarray]:
    """The central ``interval`` interval of a scipy ``family`` at (arrays of) parameters,
    as float arrays (lower, upper)."""
    lo = family.ppf(0.5 - interval / 2.0, *args, **kwds)
    hi = family.ppf(0.5 + interval / 2.0, *args, **kwds)
    return np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)


def path_columns(*arrays: Any) -> list[np.ndarray]:
    """Broadcast to a common shape (G,) and return column vectors, arrays of shape (G, 1)."""
    return [np.asarray(a, dtype=float)[:, None] for a in np.broadcast_arrays(*arrays)]


def check_power(alpha: float, component: str) -> float:
    """``alpha`` as a float after checking it is finite and > 0, and that ``component``
    is one of :data:`COMPONENTS` (ValueError otherwise)."""
    alpha = float(alpha)
    if not np.isfinite(alpha) or alpha <= 0:
        raise ValueError(f"the power alpha must be a finite number > 0, got {alpha!r}")
    if component not in COMPONENTS:
        raise ValueError(f"component must be 'prior' or 'likelihood', got {component!r}")
    return alpha


def scaled_shape(name: str, shape: float, alpha: float) -> float:
    """A density with factor x^(shape - 1), raised to alpha, has factor x^(alpha (shape - 1)):
    the shape ``alpha (shape - 1) + 1``, which must be > 0 (ValueError naming ``name`` otherwise)."""
    out = alpha * (shape - 1.0) + 1.0
    if not out > 0:
        raise ValueError(
            f"{name}^alpha with alpha={alpha:g} is not a proper density "
            f"({name} shape would be {out:g}); use alpha closer to 1"
        )
    return out
