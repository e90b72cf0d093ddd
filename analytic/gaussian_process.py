"""Gaussian-process regression with fixed hyperparameters: posterior of f, evidence, type-II ML.

Model (Rasmussen & Williams 2006, "Gaussian Processes for Machine Learning",
ch. 2 and 5; Bishop 2006, sec. 6.4)::

    f ~ GP(0, k),   k(x, x') = signal_sd^2 rho(x, x') (+ jitter where x and x' are one point)
    y_i = f(x_i) + Normal(0, noise_sd^2)

Kernels (``r = ||x - x'||``, one ``lengthscale`` shared by every input)::

    rbf       signal_sd^2 exp(-r^2 / (2 lengthscale^2))                 squared exponential
    matern32  signal_sd^2 (1 + s) exp(-s),            s = sqrt(3) r / lengthscale
    matern52  signal_sd^2 (1 + s + s^2 / 3) exp(-s),  s = sqrt(5) r / lengthscale
    linear    signal_sd^2 (1 + x.x' / lengthscale^2)

``linear`` is Bayesian linear regression with an intercept: ``f(x) = w0 + w.x``
with ``w0 ~ Normal(0, signal_sd^2)`` and each slope ``~ Normal(0, (signal_sd /
lengthscale)^2)``.

Hyperparameters, each in the convention its name says:

* ``lengthscale`` (> 0), in the units of the inputs: how far apart two inputs
  must be before f at them decorrelates (rbf: correlation exp(-1/2) at one
  lengthscale);
* ``signal_sd`` (> 0), in the units of y: the prior standard deviation (not
  variance) of f(x) for the stationary kernels;
* ``noise_sd`` (>= 0), in the units of y: the standard deviation (not
  variance) of the observation noise; 0 means noise-free interpolation;
* ``jitter`` (>= 0): a variance (a "nugget") added to the kernel's diagonal at
  the data and at the test inputs, so that a Cholesky factor exists in
  floating point.  It is part of the model on both sides of a comparison
  (PyMC's ``gp.Marginal`` adds the same ``jitter`` in the same two places).

Posterior at test inputs X* (Rasmussen & Williams 2006, Algorithm 2.1 and
eqs. 2.25-2.26), through one Cholesky factor ``L L^T = K_y``::

    K_y   = K(X, X) + (noise_sd^2 + jitter) I
    alpha = K_y^-1 y = L^-T L^-1 y
    V     = L^-1 K(X, X*)
    mean  = K(X*, X) alpha
    cov   = K(X*, X*) + jitter I - V^T V        (f at X*)
    cov_y = cov + noise_sd^2 I                  (noisy predictive y* at X*)

    log p(y) = -y^T alpha / 2 - sum_i log L_ii - n/2 log(2 pi)          (eq. 2.30)
    d log p(y) / d theta_j = tr((alpha alpha^T - K_y^-1) dK_y/dtheta_j) / 2   (eq. 5.9)

Everything is pure: no I/O, no global random state.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from analytic._base import ExactAnswer, require_positive
from analytic._multivariate import MultivariateNormal

KERNELS = ("rbf", "matern32", "matern52", "linear")

#: Nugget variance added to the kernel's diagonal when none is given.
DEFAULT_JITTER = 1e-8

_LOG_2PI = math.log(2.0 * math.pi)
_SQRT3, _SQRT5 = math.sqrt(3.0), math.sqrt(5.0)


# ---------------------------------------------------------------- validation


def check_kernel(kernel: str) -> str:
    """Return ``kernel`` if it names a supported kernel, else raise ValueError."""
    if kernel not in KERNELS:
        raise ValueError(
            f"kernel must be one of {', '.join(KERNELS)}, got {kernel!r}; e.g. kernel='rbf'"
        )
    return kernel


def require_nonnegative(name: str, value: float) -> float:
    value = float(value)
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}; pass a value >= 0")
    return value


@dataclass(frozen=True)
class Hyper:
    """Checked kernel hyperparameters (see the module docstring for each)."""

    kernel: str
    lengthscale: float
    signal_sd: float
    noise_sd: float
    jitter: float = DEFAULT_JITTER

    def __post_init__(self) -> None:
        object.__setattr__(self, "kernel", check_kernel(self.kernel))
        object.__setattr__(self, "lengthscale", require_positive("lengthscale", self.lengthscale))
        object.__setattr__(self, "signal_sd", require_positive("signal_sd", self.signal_sd))
        object.__setattr__(self, "noise_sd", require_nonnegative("noise_sd", self.noise_sd))
        object.__setattr__(self, "jitter", require_nonnegative("jitter", self.jitter))


def as_inputs(name: str, x: npt.ArrayLike, p: int | None = None) -> np.ndarray:
    """``x`` as a finite float array of shape (n, p); a 1-D ``x`` is one input column."""
    arr = np.asarray(x, dtype=float)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2 or arr.shape[1] == 0:
        raise ValueError(
            f"{name} must be an array of shape (n,) or (n, p) with p >= 1, "
            f"got shape {np.shape(x)}; pass one row per input"
        )
    if p is not None and arr.shape[1] != p:
        raise ValueError(
            f"{name} must have {p} input column(s) like the data, got shape "
            f"{arr.shape}; pass the same input columns"
        )
    bad = ~np.isfinite(arr)
    if bad.any():
        i, j = (int(v) for v in np.argwhere(bad)[0])
        raise ValueError(f"{name}[{i}, {j}] is {arr[i, j]}; every input must be a finite number")
    return np.ascontiguousarray(arr)


def _as_targets(y: npt.ArrayLike, n: int) -> np.ndarray:
    arr = np.asarray(y, dtype=float)
    if arr.shape != (n,):
        raise ValueError(
            f"y must be an array of shape ({n},), one target per row of x, got shape {arr.shape}"
        )
    bad = ~np.isfinite(arr)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"y[{i}] is {arr[i]}; every target must be a finite number")
    return arr


def _check_duplicates(x: np.ndarray, hyper: Hyper) -> None:
    """Noise-free data at one input twice: K(X, X) has two equal rows, singular."""
    if hyper.noise_sd > 0 or x.shape[0] < 2:
        return
    _, first, inverse = np.unique(x, axis=0, return_index=True, return_inverse=True)
    inverse = np.ravel(inverse)
    dup = np.flatnonzero(first[inverse] != np.arange(x.shape[0]))
    if dup.size:
        j = int(dup[0])
        i = int(first[inverse[j]])
        shown = ", ".join(f"{v:g}" for v in x[j])
        raise ValueError(
            f"x rows {i} and {j} are the same input ({shown}) and noise_sd = 0: "
            f"a noise-free GP must pass through both targets, so K(X, X) is "
            f"singular; set noise_sd > 0 or average the duplicated rows"
        )


# ---------------------------------------------------------------- kernels


def _scaled(x: np.ndarray, lengthscale: float) -> np.ndarray:
    return x * (1.0 / lengthscale)


def _sq_dist(a: np.ndarray, b: np.ndarray, same: bool) -> np.ndarray:
    """Squared distances ``|a_i|^2 + |b_j|^2 - 2 a_i.b_j`` with one BLAS call, clipped at 0.

    The expansion loses digits for points much closer than their norms; the
    diagonal of a matrix of a set with itself is set to exactly 0.
    """
    out = a @ b.T
    out *= -2.0
    out += np.einsum("ij,ij->i", a, a)[:, None]
    out += np.einsum("ij,ij->i", b, b)[None, :]
    np.maximum(out, 0.0, out=out)
    if same:
        np.fill_diagonal(out, 0.0)
    return out


def _kernel(
    kernel: str,
    a: np.ndarray,
    b: np.ndarray,
    lengthscale: float,
    signal_sd: float,
    same: bool,
    grad: bool = False,
) -> Any:
    """k(a, b) without jitter, array of shape (len(a), len(b)); with ``grad``,
    also ``dk / d log lengthscale`` of the same shape.

    Built in place on the matrix of inner products to keep memory traffic at a
    few passes over an (n, m) array.
    """
    var = signal_sd * signal_sd
    a = _scaled(a, lengthscale)
    b = a if same else _scaled(b, lengthscale)
    if kernel == "linear":
        dot = a @ b.T  # x.x' / lengthscale^2
        k = var * (1.0 + dot)
        return (k, -2.0 * var * dot) if grad else k
    if kernel == "rbf":
        if grad:
            r2 = _sq_dist(a, b, same)
            k = np.exp(-0.5 * r2)
            k *= var
            return k, k * r2  # d/dlog l of exp(-r^2 / 2 l^2) = (r^2 / l^2) k
        # exp(a.b - |a|^2/2 - |b|^2/2 + log var) = var exp(-r^2/2) in three passes.
        k = a @ b.T
        k += (math.log(var) - 0.5 * np.einsum("ij,ij->i", a, a))[:, None]
        k -= 0.5 * np.einsum("ij,ij->i", b, b)[None, :]
        np.minimum(k, math.log(var), out=k)  # rounding must not lift k above var
        np.exp(k, out=k)
        if same:
            np.fill_diagonal(k, var)
        return k
    s = _sq_dist(a, b, same)
    np.sqrt(s, out=s)
    s *= _SQRT3 if kernel == "matern32" else _SQRT5
    e = np.exp(-s)
    if kernel == "matern32":
        k = (1.0 + s) * e
        dk = s * s * e if grad else None  # d/dlog l: s^2 exp(-s)
    else:
        poly = 1.0 + s + s * s / 3.0
        k = poly * e
        dk = s * s * (1.0 + s) / 3.0 * e if grad else None  # s^2 (1 + s) exp(-s) / 3
    k *= var
    if dk is not None:  # exactly when grad
        dk *= var
        return k, dk
    return k


def kernel_matrix(
    *,
    kernel: str,
    x1: npt.ArrayLike,
    x2: npt.ArrayLike | None = None,
    lengthscale: float,
    signal_sd: float,
    jitter: float = 0.0,
) -> np.ndarray:
    """The kernel matrix ``k(x1, x2)``, array of shape (n1, n2).

    Parameters
    ----------
    kernel : {"rbf", "matern32", "matern52", "linear"}
    x1 : array of shape (n1,) or (n1, p)
    x2 : array of shape (n2,) or (n2, p), optional
        Default ``x1``: the symmetric matrix of a set with itself, with
        ``jitter`` added to its diagonal.
    lengthscale, signal_sd : float
        > 0.
    jitter : float
        >= 0; only used when ``x2`` is omitted.
    """
    kernel = check_kernel(kernel)
    lengthscale = require_positive("lengthscale", lengthscale)
    signal_sd = require_positive("signal_sd", signal_sd)
    jitter = require_nonnegative("jitter", jitter)
    a = as_inputs("x1", x1)
    if x2 is None:
        k = _kernel(kernel, a, a, lengthscale, signal_sd, same=True)
        k[np.diag_indices_from(k)] += jitter
        return k
    b = as_inputs("x2", x2, p=a.shape[1])
    return _kernel(kernel, a, b, lengthscale, signal_sd, same=False)


# ---------------------------------------------------------------- conditioning


@dataclass(frozen=True, eq=False)
class Conditioned:
    """A GP conditioned on data: everything prediction and the evidence need.

    Attributes
    ----------
    hyper : Hyper
    x : array of shape (n, p)
    y : array of shape (n,)
    chol : array of shape (n, n)
        Lower Cholesky factor L of ``K_y = K(X, X) + (noise_sd^2 + jitter) I``
        (the upper triangle holds left-over values: read it with ``lower=True``).
    alpha : array of shape (n,)
        ``K_y^-1 y``.
    log_marginal_likelihood : float
        ``log p(y | X, hyper)`` (Rasmussen & Williams 2006, eq. 2.30).
    """

    hyper: Hyper
    x: np.ndarray
    y: np.ndarray
    chol: np.ndarray
    alpha: np.ndarray
    log_marginal_likelihood: float

    @property
    def n(self) -> int:
        return int(self.y.size)


def _factor(x: np.ndarray, hyper: Hyper) -> np.ndarray:
    """Lower Cholesky factor of K_y, in place on K_y (LAPACK potrf, no copies or checks).

    K_y is symmetric, so its C-ordered array read as Fortran-ordered (``.T``)
    is K_y again: LAPACK then factors it where it lies, and the factor comes
    back in Fortran order, which the later solves (potrs, trtrs) also take
    without copying.  (Passed in C order, f2py would first make a transposed
    copy, ~0.3 s at n = 5000.)
    """
    from scipy import linalg  # heavy: SciPy (0.5 s) only when the maths runs

    k = _kernel(hyper.kernel, x, x, hyper.lengthscale, hyper.signal_sd, same=True).T
    k[np.diag_indices_from(k)] += hyper.noise_sd**2 + hyper.jitter
    try:
        chol, _ = linalg.cho_factor(k, lower=True, overwrite_a=True, check_finite=False)
    except linalg.LinAlgError:
        larger = max(hyper.jitter * 100.0, 1e-8 * hyper.signal_sd**2)
        raise ValueError(
            f"K(X, X) + (noise_sd^2 + jitter) I is not positive definite in floating point "
            f"(kernel {hyper.kernel}, lengthscale={hyper.lengthscale:g}, "
            f"signal_sd={hyper.signal_sd:g}, noise_sd={hyper.noise_sd:g}, n={x.shape[0]}) "
            f"with jitter={hyper.jitter:g}; try a larger jitter, e.g. jitter={larger:g}, or "
            f"a larger noise_sd"
        ) from None
    return chol


def condition(
    *,
    x: npt.ArrayLike,
    y: npt.ArrayLike,
    kernel: str,
    lengthscale: float,
    signal_sd: float,
    noise_sd: float,
    jitter: float = DEFAULT_JITTER,
) -> Conditioned:
    """Factor ``K_y`` once and solve for ``alpha`` (Rasmussen & Williams 2006, Algorithm 2.1).

    Parameters
    ----------
    x : array of shape (n,) or (n, p)
        Training inputs.
    y : array of shape (n,)
        Targets.
    kernel, lengthscale, signal_sd, noise_sd, jitter
        See the module docstring.  ``noise_sd = 0`` needs distinct inputs.

    Raises
    ------
    ValueError
        Bad hyperparameters or data; duplicated inputs with ``noise_sd = 0``;
        ``K_y`` not positive definite with this jitter (the message suggests a
        larger one).
    """
    from scipy import linalg  # heavy: SciPy (0.5 s) only when the maths runs

    hyper = Hyper(
        kernel=kernel,
        lengthscale=lengthscale,
        signal_sd=signal_sd,
        noise_sd=noise_sd,
        jitter=jitter,
    )
    x = as_inputs("x", x)
    if x.shape[0] == 0:
        raise ValueError("x has no rows; a GP needs at least one observation")
    y = _as_targets(y, x.shape[0])
    _check_duplicates(x, hyper)
    chol = _factor(x, hyper)
    alpha = linalg.cho_solve((chol, True), y, check_finite=False)
    half_logdet = float(np.sum(np.log(np.diag(chol))))
    lml = -0.5 * float(y @ alpha) - half_logdet - 0.5 * y.size * _LOG_2PI
    return Conditioned(hyper=hyper, x=x, y=y, chol=chol, alpha=alpha, log_marginal_likelihood=lml)


def predict(
    gp: Conditioned, *, x_new: npt.ArrayLike, noisy: bool = False, full_cov: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """Posterior mean and covariance of f (or, with ``noisy``, of y) at ``x_new``.

    ``cov = K(X*, X*) + jitter I - V^T V`` with ``V = L^-1 K(X, X*)``
    (Rasmussen & Williams 2006, eq. 2.26 and Algorithm 2.1); ``noisy`` adds
    ``noise_sd^2 I`` (eq. 2.24 with the noise).  The result is symmetrised.

    Parameters
    ----------
    gp : Conditioned
    x_new : array of shape (m,) or (m, p)
    noisy : bool
        The predictive of new observations ``y* = f(x*) + noise``.
    full_cov : bool
        Return the (m, m) covariance; else only its diagonal, shape (m,).

    Returns
    -------
    mean : array of shape (m,)
    cov : array of shape (m, m), or the variances of shape (m,)
    """
    from scipy import linalg  # heavy: SciPy (0.5 s) only when the maths runs

    h = gp.hyper
    x_new = as_inputs("x_new", x_new, p=gp.x.shape[1])
    # K(X*, X) in C order is K(X, X*) in Fortran order: trtrs overwrites it in place.
    k_cross = _kernel(h.kernel, x_new, gp.x, h.lengthscale, h.signal_sd, same=False)  # (m, n)
    mean = k_cross @ gp.alpha
    v = linalg.solve_triangular(
        gp.chol, k_cross.T, lower=True, overwrite_b=True, check_finite=False
    )  # (n, m)
    extra = h.jitter + (h.noise_sd**2 if noisy else 0.0)
    if not full_cov:
        if h.kernel == "linear":
            scaled = _scaled(x_new, h.lengthscale)
            prior_var = h.signal_sd**2 * (1.0 + np.einsum("ij,ij->i", scaled, scaled))
        else:
            prior_var = np.full(x_new.shape[0], h.signal_sd**2)
        return mean, np.maximum(prior_var + extra - np.einsum("ij,ij->j", v, v), 0.0)
    cov = _kernel(h.kernel, x_new, x_new, h.lengthscale, h.signal_sd, same=True)
    cov -= v.T @ v
    cov = 0.5 * (cov + cov.T)
    cov[np.diag_indices_from(cov)] += extra
    return mean, cov


# ---------------------------------------------------------------- evidence


def log_marginal_likelihood(
    *,
    x: npt.ArrayLike,
    y: npt.ArrayLike,
    kernel: str,
    lengthscale: float,
    signal_sd: float,
    noise_sd: float,
    jitter: float = DEFAULT_JITTER,
) -> float:
    """``log Normal(y; 0, K_y)`` (Rasmussen & Williams 2006, eq. 2.30)."""
    return condition(
        x=x,
        y=y,
        kernel=kernel,
        lengthscale=lengthscale,
        signal_sd=signal_sd,
        noise_sd=noise_sd,
        jitter=jitter,
    ).log_marginal_likelihood


def log_marginal_likelihood_grad(
    *,
    x: npt.ArrayLike,
    y: npt.ArrayLike,
    kernel: str,
    lengthscale: float,
    signal_sd: float,
    noise_sd: float,
    jitter: float = DEFAULT_JITTER,
) -> tuple[float, np.ndarray]:
    """Log marginal likelihood and its gradient in the log-hyperparameters.

    Gradient with respect to ``(log lengthscale, log signal_sd, log noise_sd)``
    (Rasmussen & Williams 2006, eq. 5.9)::

        d/dtheta_j = tr((alpha alpha^T - K_y^-1) dK_y/dtheta_j) / 2

    with ``dK_y/dlog signal_sd = 2 K`` (jitter excluded: it is fixed),
    ``dK_y/dlog noise_sd = 2 noise_sd^2 I`` and the kernel's own
    ``dK/dlog lengthscale``.  ``K_y^-1`` is formed (``cho_solve`` on the
    identity) because the trace needs all its entries; it costs the same
    O(n^3) as the factor.  ``noise_sd`` must be > 0 (its log must exist).

    Returns
    -------
    value : float
    grad : array of shape (3,)
    """
    noise_sd = require_positive("noise_sd", noise_sd)
    gp = condition(
        x=x,
        y=y,
        kernel=kernel,
        lengthscale=lengthscale,
        signal_sd=signal_sd,
        noise_sd=noise_sd,
        jitter=jitter,
    )
    return gp.log_marginal_likelihood, _grad(gp)


def _grad(gp: Conditioned) -> np.ndarray:
    from scipy import linalg  # heavy: SciPy (0.5 s) only when the maths runs

    h = gp.hyper
    k, dk_dlog_l = _kernel(h.kernel, gp.x, gp.x, h.lengthscale, h.signal_sd, same=True, grad=True)
    k_inv = linalg.cho_solve((gp.chol, True), np.eye(gp.n), check_finite=False)
    w = np.outer(gp.alpha, gp.alpha)
    w -= k_inv  # alpha alpha^T - K_y^-1
    return np.array(
        [
            0.5 * float(np.einsum("ij,ij->", w, dk_dlog_l)),
            float(np.einsum("ij,ij->", w, k)),  # (1/2) tr(W 2K)
            h.noise_sd**2 * float(np.trace(w)),  # (1/2) tr(W 2 s^2 I)
        ]
    )


@dataclass(frozen=True)
class TypeIIML:
    """Type-II maximum likelihood (empirical Bayes) hyperparameters.

    Attributes
    ----------
    lengthscale, signal_sd, noise_sd : float
        The maximiser of the log marginal likelihood found by L-BFGS-B on the
        log-hyperparameters; ``jitter`` and the kernel are held fixed.
    log_marginal_likelihood : float
        Its value there.
    grad : array of shape (3,)
        Gradient in the log-hyperparameters there (near 0 at an interior optimum).
    converged : bool
        The optimiser's own success flag.
    iterations : int
    message : str
    start : tuple of float
        ``(lengthscale, signal_sd, noise_sd)`` the search started from.
    """

    lengthscale: float
    signal_sd: float
    noise_sd: float
    log_marginal_likelihood: float
    grad: np.ndarray
    converged: bool
    iterations: int
    message: str
    start: tuple[float, float, float]

    def hyper(self) -> dict[str, float]:
        return {
            "lengthscale": self.lengthscale,
            "signal_sd": self.signal_sd,
            "noise_sd": self.noise_sd,
        }


#: Log-hyperparameters are searched within exp(+-_LOG_BOUND) of 1.
_LOG_BOUND = 20.0


def type2_ml(
    *,
    x: npt.ArrayLike,
    y: npt.ArrayLike,
    kernel: str,
    lengthscale: float,
    signal_sd: float,
    noise_sd: float,
    jitter: float = DEFAULT_JITTER,
    max_iter: int = 500,
) -> TypeIIML:
    """Maximise the log marginal likelihood over (lengthscale, signal_sd, noise_sd).

    L-BFGS-B on the log-hyperparameters with the analytic gradient
    (:func:`log_marginal_likelihood_grad`), started at the given values (Rasmussen
    & Williams 2006, sec. 5.4.1).  The surface can have several local maxima
    (a short lengthscale that fits the noise, a long one that calls it
    noise); the result is the one reached from this start.  A trial point
    whose ``K_y`` cannot be factored counts as -inf.
    """
    from scipy import optimize  # heavy: SciPy (0.5 s) only when the maths runs

    x = as_inputs("x", x)
    y = _as_targets(y, x.shape[0])
    start = (
        require_positive("lengthscale", lengthscale),
        require_positive("signal_sd", signal_sd),
        require_positive("noise_sd", noise_sd),
    )
    if isinstance(max_iter, bool) or not isinstance(max_iter, numbers.Integral) or max_iter < 1:
        raise ValueError(f"max_iter must be an integer >= 1, got {max_iter!r}")

    def objective(theta: np.ndarray) -> tuple[float, np.ndarray]:
        ell, sf, sn = np.exp(theta)
        try:
            value, grad = log_marginal_likelihood_grad(
                x=x, y=y, kernel=kernel, lengthscale=ell, signal_sd=sf, noise_sd=sn, jitter=jitter
            )
        except ValueError:
            return math.inf, np.zeros(3)
        return -value, -grad

    res = optimize.minimize(
        objective,
        np.log(start),
        jac=True,
        method="L-BFGS-B",
        bounds=[(-_LOG_BOUND, _LOG_BOUND)] * 3,
        options={"maxiter": int(max_iter), "gtol": 1e-8, "ftol": 1e-13},
    )
    ell, sf, sn = (float(v) for v in np.exp(res.x))
    value, grad = log_marginal_likelihood_grad(
        x=x, y=y, kernel=kernel, lengthscale=ell, signal_sd=sf, noise_sd=sn, jitter=jitter
    )
    return TypeIIML(
        lengthscale=ell,
        signal_sd=sf,
        noise_sd=sn,
        log_marginal_likelihood=value,
        grad=grad,
        converged=bool(res.success),
        iterations=int(res.nit),
        message=str(res.message),
        start=start,
    )


# ---------------------------------------------------------------- exact answer


@dataclass(frozen=True, eq=False)
class GPPredictive:
    """Joint posterior predictive of y* = f(x*) + noise at the m test inputs.

    Attributes
    ----------
    f_mean : array of shape (m,)
    f_cov : array of shape (m, m)
        Posterior covariance of f at the test inputs (with the jitter).
    noise_sd : float
    """

    f_mean: np.ndarray
    f_cov: np.ndarray
    noise_sd: float

    def mean(self) -> np.ndarray:
        return self.f_mean

    def cov(self) -> np.ndarray:
        """``f_cov + noise_sd^2 I``, shape (m, m)."""
        return self.f_cov + self.noise_sd**2 * np.eye(self.f_mean.size)

    def var(self) -> np.ndarray:
        return np.diag(self.f_cov) + self.noise_sd**2

    def logpdf(self, y_new: np.ndarray) -> np.ndarray:
        """Marginal log density of each y_new[k] at test input k; shape (m,)."""
        from scipy import stats  # heavy: SciPy (0.5 s) only when the maths runs

        return stats.norm.logpdf(np.asarray(y_new, dtype=float), self.f_mean, np.sqrt(self.var()))


def posterior_names(m: int) -> tuple[str, ...]:
    return tuple(f"f[{i}]" for i in range(m))


def solve(
    *,
    x: npt.ArrayLike,
    y: npt.ArrayLike,
    x_test: npt.ArrayLike,
    kernel: str,
    lengthscale: float,
    signal_sd: float,
    noise_sd: float,
    jitter: float = DEFAULT_JITTER,
) -> ExactAnswer:
    """The exact posterior of f at ``x_test`` as an :class:`analytic.ExactAnswer`.

    Parameters
    ----------
    x : array of shape (n,) or (n, p)
    y : array of shape (n,)
    x_test : array of shape (m,) or (m, p)
    kernel, lengthscale, signal_sd, noise_sd, jitter
        See the module docstring.

    Returns
    -------
    ExactAnswer
        ``posterior``: Normal over ``f[0], ..., f[m-1]`` (mean = mode);
        ``mle``: None (f at the test inputs has no likelihood of its own);
        ``log_evidence``: the log marginal likelihood; ``predictive``:
        :class:`GPPredictive`.
    """
    gp = condition(
        x=x,
        y=y,
        kernel=kernel,
        lengthscale=lengthscale,
        signal_sd=signal_sd,
        noise_sd=noise_sd,
        jitter=jitter,
    )
    mean, cov = predict(gp, x_new=x_test)
    try:
        post = MultivariateNormal(mean=mean, cov=cov, parameters=posterior_names(mean.size))
    except ValueError:
        raise ValueError(
            f"the posterior covariance of f at the {mean.size} test inputs is singular in "
            f"floating point with jitter={gp.hyper.jitter:g} (test inputs too close for the "
            f"lengthscale {gp.hyper.lengthscale:g}, or more of them than a {kernel} kernel "
            f"has degrees of freedom); use fewer test inputs or a larger jitter"
        ) from None
    return ExactAnswer(
        posterior=post,
        mle=None,
        log_evidence=gp.log_marginal_likelihood,
        predictive=GPPredictive(f_mean=mean, f_cov=cov, noise_sd=gp.hyper.noise_sd),
    )


# ---------------------------------------------------------------- simulation


def simulate(
    rng: np.random.Generator,
    *,
    x: npt.ArrayLike,
    x_test: npt.ArrayLike,
    kernel: str,
    lengthscale: float,
    signal_sd: float,
    noise_sd: float,
    jitter: float = DEFAULT_JITTER,
) -> tuple[np.ndarray, np.ndarray]:
    """Draw f at ``x`` and ``x_test`` jointly from the prior, then y = f(x) + noise.

    Returns
    -------
    f_test : array of shape (m,)
        The prior draw of f at the test inputs.
    y : array of shape (n,)
    """
    from scipy import linalg  # heavy: SciPy (0.5 s) only when the maths runs

    hyper = Hyper(
        kernel=kernel,
        lengthscale=lengthscale,
        signal_sd=signal_sd,
        noise_sd=noise_sd,
        jitter=jitter,
    )
    x = as_inputs("x", x)
    x_test = as_inputs("x_test", x_test, p=x.shape[1])
    both = np.vstack([x, x_test])
    k = kernel_matrix(
        kernel=kernel, x1=both, lengthscale=lengthscale, signal_sd=signal_sd, jitter=hyper.jitter
    )
    try:
        chol = linalg.cholesky(k, lower=True)
    except linalg.LinAlgError:
        raise ValueError(
            f"the prior covariance at the {both.shape[0]} inputs is not positive "
            f"definite with jitter={hyper.jitter:g}; pass a larger jitter"
        ) from None
    f = chol @ rng.standard_normal(both.shape[0])
    n = x.shape[0]
    return f[n:], f[:n] + noise_sd * rng.standard_normal(n)
