"""Helpers shared by the PyMC topic modules.

``compare.outputs.export`` inlines the helpers a topic module imports (its
``from pymc_models._common import a, b``) into the exported model file, and
the helpers those call (``normal_wishart_prior`` calls ``simplex_transform``),
so each helper uses only ``np``, ``pm``, ``pt`` (which the importing module
imports too) and other helpers of this module.  An exported topic's module
imports them in one ``from pymc_models._common import ...`` statement (on
one line, or in parentheses).
"""

from __future__ import annotations

import numpy as np


def obs_coords(n_obs: int) -> dict[str, np.ndarray]:
    """Coordinates for the observation dimension (nutpie needs every dim named)."""
    return {"obs": np.arange(n_obs)}


def hyper_data(**values: float) -> dict[str, np.ndarray]:
    """``pm.Data`` values for hyperparameters, keyed ``hp_<name>``."""
    return {f"hp_{name}": np.asarray(value, dtype=float) for name, value in values.items()}


def simplex_transform():
    """PyMC's ``simplex`` transform of a Dirichlet, the same map written in cheaper ops.

    Pass it as ``pm.Dirichlet(..., default_transform=simplex_transform())``. The
    map from the K-1 free reals z to the simplex is PyMC's: with s = sum_j z_j,
    p = softmax([z_1, ..., z_{K-1}, -s]), its inverse z_k = log p_k - mean(log p),
    and ``log_jac_det`` is PyMC's, log K + K s - K log(1 + sum_k exp(z_k + s)).
    PyMC writes both with softmax and logsumexp, ops with an inner graph (and
    a max, a concatenation and their gradients) that numba compiles as graphs
    of their own; multiplying by exp(s) turns them into elementwise exps, one
    sum and one ``set_subtensor``:

        p_k = exp(z_k + s) / (1 + sum_j exp(z_j + s)),   p_K = 1 / (1 + sum_j exp(z_j + s)).

    z_k + s = log(p_k / p_K), so the exps overflow only where p_K / p_k < 1e-308,
    below what a double holds (PyMC's p_K is then 0 and the density -inf or
    +inf: no sampler accepts such a point either). A cold compile of the naive
    Bayes categorical model took 31-35 s with PyMC's transform and 22-23 s with
    this one, the multinomial 26 -> 22 s, the Gaussian classifier's 44 -> 39 s
    (new processes, empty caches, 2026-12-06; docs/speed.md).
    ``tests/pymc_models/test_simplex.py`` checks it is PyMC's map, inverse and
    log-Jacobian.
    """
    import pymc as pm  # heavy: PyMC only when a model is built
    import pytensor.tensor as pt  # heavy: PyMC only when a model is built

    class Simplex(pm.logprob.transforms.Transform):
        name = "simplex"  # PyMC's name: the free variable is still <name>_simplex__
        ndim_supp = 1

        def forward(self, value, *inputs):
            log_value = pt.log(pt.as_tensor(value))
            return log_value[..., :-1] - pt.mean(log_value, axis=-1, keepdims=True)

        def backward(self, value, *inputs):
            value = pt.as_tensor(value)
            ratio = pt.exp(value + pt.sum(value, axis=-1, keepdims=True))  # p_k / p_K
            shape = pt.concatenate([value.shape[:-1], [value.shape[-1] + 1]])
            unnormalised = pt.set_subtensor(pt.ones(shape)[..., :-1], ratio)
            return unnormalised / (1.0 + pt.sum(ratio, axis=-1, keepdims=True))

        def log_jac_det(self, value, *inputs):
            value = pt.as_tensor(value)
            k = (value.shape[-1] + 1).astype(value.dtype)
            total = pt.sum(value, axis=-1)
            ratio = pt.exp(value + pt.shape_padright(total))
            return pt.log(k) + k * total - k * pt.log1p(pt.sum(ratio, axis=-1))

    return Simplex()


def cholesky_transform():
    """The free coordinates of a packed lower-triangular Cholesky factor (log of its diagonal).

    For a ``pm.Flat`` of the factor's n(n+1)/2 entries, row by row: the
    diagonal entries are exp(z), the others z, as in PyMC's ``CholeskyCovTransform``
    of a Wishart. ``log_jac_det`` is that transform's, the Jacobian of z -> L L^T,
    n log 2 + sum_k (n - k + 2) z_kk (k from 1), so a density of Lambda = L L^T
    written as a ``Potential`` of L (:func:`wishart_precisions`) is sampled as
    PyMC samples a Wishart, and ``pm.find_MAP`` (which leaves the Jacobian out)
    maximises it in Lambda's coordinates. n is read from the vector's length.
    """
    import pymc as pm  # heavy: PyMC only when a model is built
    import pytensor.tensor as pt  # heavy: PyMC only when a model is built

    def diagonal_and_weights(value):
        # n from n(n+1)/2 entries; the diagonal's entries and their Jacobian weights.
        size = pt.cast(value.shape[-1], "float64")
        n = pt.cast(pt.round((pt.sqrt(8.0 * size + 1.0) - 1.0) / 2.0), "int64")
        rows, cols = pt.tril_indices(n)
        diagonal = pt.eq(rows, cols)
        return n, diagonal, pt.switch(diagonal, n - rows + 1, 0).astype(value.dtype)

    class CholeskyFactor(pm.logprob.transforms.Transform):
        name = "log_diagonal"
        ndim_supp = 1

        def forward(self, value, *inputs):
            value = pt.as_tensor(value)
            _, diagonal, _ = diagonal_and_weights(value)
            return pt.switch(diagonal, pt.log(pt.switch(diagonal, value, 1.0)), value)

        def backward(self, value, *inputs):
            value = pt.as_tensor(value)
            _, diagonal, _ = diagonal_and_weights(value)
            return pt.switch(diagonal, pt.exp(value), value)

        def log_jac_det(self, value, *inputs):
            value = pt.as_tensor(value)
            n, _, weights = diagonal_and_weights(value)
            return n.astype(value.dtype) * np.log(2.0) + pt.sum(weights * value, axis=-1)

    return CholeskyFactor()


def wishart_precisions(name: str, nu, w0, init, *, group: str, d: int):
    """K precision matrices ``name``_k ~ Wishart(nu, W0), d x d (inside a model).

    The density is PyMC's Wishart's, written on the Cholesky factor L_k of
    Lambda_k = L_k L_k^T: a flat variable ``<name>_chol`` holds L_k's entries
    row by row (:func:`cholesky_transform`, the free coordinates of PyMC's
    Wishart), the ``Potential`` ``<name>_prior`` is

        (nu - d - 1)/2 log|Lambda_k| - tr(W0^-1 Lambda_k)/2 - nu d/2 log 2
        - nu/2 log|W0| - log Gamma_d(nu/2),   log|Lambda_k| = 2 sum_i log L_k,ii,

    and ``<name>`` = L_k L_k^T is a ``Deterministic``. Everything is elementwise
    products and sums: a batched ``pm.Wishart`` adds batched matrix products, a
    triangular solve and their gradients, 19-20 s of a 42 s cold compile of the
    classifier (25 s this way; docs/speed.md). ``init`` (K, d, d) is the chains'
    start. W0's inverse and determinant depend on the data only, so the compiled
    model computes them once per data set (``compare/accel/compiled_cache.py``).

    Returns
    -------
    (Lambda, logdet)
        Tensors of shape (K, d, d) and (K,) (log|Lambda_k|).
    """
    import pymc as pm  # heavy: PyMC only when a model is built
    import pytensor.tensor as pt  # heavy: PyMC only when a model is built

    pm.modelcontext(None).add_coord(f"{name}_entry", np.arange(d * (d + 1) // 2))
    n = w0.shape[-1]
    rows, cols = pt.tril_indices(n)
    diagonal = pt.eq(rows, cols)
    factor = pm.Flat(
        f"{name}_chol",
        dims=(group, f"{name}_entry"),
        initval=pt.linalg.cholesky(init)[..., rows, cols],
        default_transform=cholesky_transform(),
    )
    chol = pt.zeros_like(init)[..., rows, cols].set(factor)
    lam = pm.Deterministic(
        name,
        pt.sum(chol[..., :, None, :] * chol[..., None, :, :], axis=-1),
        dims=(group, "dim", "dim_"),
    )
    logdet = 2.0 * pt.sum(pt.log(pt.switch(diagonal, factor, 1.0)), axis=-1)  # (K,)
    dims = pt.cast(n, "float64")
    nu = pt.cast(nu, "float64")
    w0_logdet = 2.0 * pt.sum(pt.log(pt.diagonal(pt.linalg.cholesky(w0))))
    log_gamma_d = 0.25 * dims * (dims - 1.0) * np.log(np.pi) + pt.sum(
        pt.gammaln(0.5 * nu + 0.5 * (1.0 - pt.arange(1, n + 1)))
    )
    pm.Potential(
        f"{name}_prior",
        pt.sum(
            0.5 * (nu - dims - 1.0) * logdet
            - 0.5 * pt.sum(pt.linalg.inv(w0) * lam, axis=(-2, -1))
            - 0.5 * nu * dims * np.log(2.0)
            - 0.5 * nu * w0_logdet
            - log_gamma_d
        ),
    )
    return lam, logdet


def normal_wishart_prior(k: int, d: int, *, weights: str, group: str):
    """Dirichlet x Normal-Wishart prior of K Gaussian groups in d dimensions (inside a model).

    Prior (Bishop 2006, sec. 10.2; Murphy 2012, sec. 4.6.3)::

        weights ~ Dirichlet(alpha 1_K)
        Lambda_k ~ Wishart(nu0, W0)                    # precision of group k
        mu_k | Lambda_k ~ Normal(m0, (kappa0 Lambda_k)^-1)

    Creates the hyperparameters' ``pm.Data`` (``hp_alpha``, ``hp_m0``,
    ``hp_kappa0``, ``hp_nu0``, ``hp_W0``) and the chains' starting values
    (``init_<weights>``, ``init_mu``, ``init_Lambda``), then the variables
    ``<weights>``, ``Lambda`` (:func:`wishart_precisions`: the Wishart density
    on a Cholesky factor, in PyMC's Wishart's free coordinates, so
    ``pm.find_MAP`` maximises the density in (weights, mu, Lambda) coordinates,
    the exact mode's) and ``mu``, whose conditional normal prior is a potential
    on a flat variable (the same density; a batched ``pm.MvNormal`` with a
    precision per group doubled the numba compile time, ~46 s against ~21 s).
    For the same reason the quadratic forms are broadcast products summed, not
    ``pt.einsum`` (an ``OpFromGraph`` of batched dots per call), and
    ``log|Lambda_k|`` comes from the Cholesky factor, not ``pt.linalg.det`` (an
    LU per group, and a matrix inverse in the gradient): a cold compile of the
    classifier 88 -> 72 s, of the mixture 103 -> 65 s.
    ``group`` names the model's
    dimension of the K groups (``dim`` and ``dim_`` name the d coordinates).

    Returns
    -------
    (weights, mu, Lambda, logdet)
        Tensors of shape (K,), (K, d), (K, d, d) and (K,) (log|Lambda_k|).
    """
    import pymc as pm  # heavy: PyMC only when a model is built
    import pytensor.tensor as pt  # heavy: PyMC only when a model is built

    alpha = pm.Data("hp_alpha", 1.0)
    m0 = pm.Data("hp_m0", np.zeros(d), dims="dim")
    kappa0 = pm.Data("hp_kappa0", 1.0)
    nu0 = pm.Data("hp_nu0", np.int64(d + 2))
    w0 = pm.Data("hp_W0", np.eye(d), dims=("dim", "dim_"))
    init_weights = pm.Data(f"init_{weights}", np.full(k, 1.0 / k), dims=group)
    init_mu = pm.Data("init_mu", np.zeros((k, d)), dims=(group, "dim"))
    init_lam = pm.Data(
        "init_Lambda", np.broadcast_to(np.eye(d), (k, d, d)).copy(), dims=(group, "dim", "dim_")
    )
    # Lengths as graphs of the dims (pt.ones_like, mu.shape), never as Python integers: a
    # constant k or d would make each (K, d) another graph and another cold compile.
    pi = pm.Dirichlet(
        weights,
        a=alpha * pt.ones_like(init_weights),
        dims=group,
        initval=init_weights,
        default_transform=simplex_transform(),
    )
    lam, logdet = wishart_precisions("Lambda", nu0, w0, init_lam, group=group, d=d)
    mu = pm.Flat("mu", dims=(group, "dim"), initval=init_mu)
    # log N(mu_k; m0, (kappa0 Lambda_k)^-1), as in mixture_loglik (not called: the
    # export inlines each helper on its own).
    dev = mu - m0
    dims = pt.cast(mu.shape[-1], "float64")
    quad = kappa0 * pt.sum(dev[:, :, None] * lam * dev[:, None, :], axis=(-2, -1))
    pm.Potential(
        "mu_prior",
        pt.sum(
            0.5 * (logdet + dims * pt.log(kappa0)) - 0.5 * dims * np.log(2.0 * np.pi) - 0.5 * quad
        ),
    )
    return pi, mu, lam, logdet


def gaussian_stats_loglik(counts, sum_x, sum_xx, mu, lam, logdet):
    """sum_k sum_{i in k} log N(x_i; mu_k, Lambda_k^-1) from per-group statistics.

    ``counts`` (K,), ``sum_x`` (K, d), ``sum_xx`` (K, d, d) = sum x_i x_i^T; uses
    sum_{i in k} (x_i - mu)^T L (x_i - mu) = tr(L S2) - 2 mu^T L S1 + n mu^T L mu,
    so a gradient costs O(K d^2) whatever n is.
    """
    import pytensor.tensor as pt  # heavy: PyMC only when a model is built

    d = pt.cast(mu.shape[-1], "float64")  # a graph, not a number: one compile for every d
    quad = (
        pt.sum(lam * sum_xx, axis=(-2, -1))
        - 2.0 * pt.sum(mu[:, :, None] * lam * sum_x[:, None, :], axis=(-2, -1))
        + counts * pt.sum(mu[:, :, None] * lam * mu[:, None, :], axis=(-2, -1))
    )
    return pt.sum(0.5 * counts * logdet - 0.5 * counts * d * np.log(2.0 * np.pi) - 0.5 * quad)


def normal_wishart_data(
    *, weights: str, alpha, m0, kappa0, nu0, w0, init_weights, init_mu, init_lambda
) -> dict[str, np.ndarray]:
    """``pm.Data`` values of :func:`normal_wishart_prior`: hyperparameters and starts."""
    return {
        "hp_alpha": np.asarray(alpha, dtype=float),
        "hp_m0": np.asarray(m0, dtype=float),
        "hp_kappa0": np.asarray(kappa0, dtype=float),
        "hp_nu0": np.int64(nu0),
        "hp_W0": np.asarray(w0, dtype=float),
        f"init_{weights}": np.asarray(init_weights, dtype=float),
        "init_mu": np.asarray(init_mu, dtype=float),
        "init_Lambda": np.asarray(init_lambda, dtype=float),
    }


def mixture_loglik(x, weights, mu, lam, logdet):
    """sum_i log sum_k weights_k N(x_i; mu_k, Lambda_k^-1): rows ``x`` (n, d) whose group
    is not known, from ``weights`` (K,), ``mu`` (K, d), ``Lambda`` (K, d, d) and
    log|Lambda_k| (K,).  With n = 0 rows it is 0 (an empty sum), and so is its gradient.

    The Gaussian classifier's and the mixture's models both carry this term next to
    :func:`gaussian_stats_loglik` of the labelled rows, so that one compiled model
    serves the classifier (no unlabelled rows), the mixture's complete-data model
    (every row labelled) and its marginalised model (no row labelled).
    """
    import pymc as pm  # heavy: PyMC only when a model is built
    import pytensor.tensor as pt  # heavy: PyMC only when a model is built

    d = pt.cast(mu.shape[-1], "float64")  # a graph, not a number: one compile for every d
    dev = x[:, None, :] - mu[None, :, :]  # (n, K, d)
    # Broadcast and sum rather than einsum: the same numbers, far less for numba to compile.
    quad = pt.sum(dev[..., :, None] * lam * dev[..., None, :], axis=(-2, -1))  # (n, K)
    log_comp = pt.log(weights) + 0.5 * logdet - 0.5 * d * np.log(2.0 * np.pi) - 0.5 * quad
    return pt.sum(pm.math.logsumexp(log_comp, axis=1))
