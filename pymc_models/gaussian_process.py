"""PyMC model: f ~ GP(0, k) with fixed hyperparameters; y = f(X) + Normal(0, noise_sd^2).

See analytic/gaussian_process.py.  The model is PyMC's own ``pm.gp.Marginal``
with PyMC's covariance functions (``pm.gp.cov.ExpQuad``, ``Matern32``,
``Matern52``, ``Constant`` + ``Linear``), scaled by ``signal_sd^2``:

* ``y_obs``: ``gp.marginal_likelihood`` -- y ~ MvNormal(0, K + noise_sd^2 I +
  jitter I), f integrated out;
* ``f``: ``gp.conditional`` at the test inputs -- the free variable NUTS
  samples, MvNormal with PyMC's conditional mean and covariance (jitter added
  to the training and test diagonals, as on the exact side).

The kernel is structural (one compile per kernel); inputs, targets, test
inputs and every hyperparameter are ``pm.Data`` (hyperparameters named
``hp_<name>``), so one nutpie compile serves every data set and value.
The training inputs are called ``x`` so that the compare layer resizes the
``obs`` dimension with them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pymc as pm


VARIABLES = ("f",)
#: Free variables of ``build_hyper_model``, in this order.
HYPER_VARIABLES = ("lengthscale", "signal_sd", "noise_sd")


def covariance(kernel: str, input_dim: int, lengthscale, signal_sd):
    """PyMC covariance function ``signal_sd^2 rho(x, x')`` for one of the analytic kernels."""
    import pymc as pm  # heavy: PyMC only when a model is built

    if kernel == "rbf":
        rho = pm.gp.cov.ExpQuad(input_dim, ls=lengthscale)
    elif kernel == "matern32":
        rho = pm.gp.cov.Matern32(input_dim, ls=lengthscale)
    elif kernel == "matern52":
        rho = pm.gp.cov.Matern52(input_dim, ls=lengthscale)
    elif kernel == "linear":
        # 1 + x.x' / lengthscale^2: an intercept and slopes with sd 1 / lengthscale.
        rho = pm.gp.cov.Constant(1.0) + pm.gp.cov.Linear(input_dim, c=0.0) * lengthscale**-2
    else:
        raise ValueError(f"kernel must be one of rbf, matern32, matern52, linear, got {kernel!r}")
    return signal_sd**2 * rho


def build_model(*, kernel: str, input_dim: int = 1, n_test: int = 1, n_obs: int = 1) -> pm.Model:
    """The GP model with data placeholders; fill them with ``model_data``.

    ``n_obs`` sizes the placeholders (the runner resizes the ``obs`` dimension
    with the data; an exported model is built with the data's size).
    """
    import pymc as pm  # heavy: PyMC only when a model is built

    coords = {"obs": np.arange(n_obs), "input": np.arange(input_dim), "test": np.arange(n_test)}
    with pm.Model(coords=coords) as model:
        x = pm.Data("x", np.zeros((n_obs, input_dim)), dims=("obs", "input"))
        y = pm.Data("y", np.zeros(n_obs), dims="obs")
        x_test = pm.Data(
            "x_test",
            np.linspace(0.0, 1.0, n_test)[:, None] * np.ones((1, input_dim)),
            dims=("test", "input"),
        )
        lengthscale = pm.Data("hp_lengthscale", 1.0)
        signal_sd = pm.Data("hp_signal_sd", 1.0)
        noise_sd = pm.Data("hp_noise_sd", 1.0)
        jitter = pm.Data("hp_jitter", 1e-8)
        gp = pm.gp.Marginal(cov_func=covariance(kernel, input_dim, lengthscale, signal_sd))
        gp.marginal_likelihood("y_obs", X=x, y=y, sigma=noise_sd, jitter=jitter, dims="obs")
        gp.conditional("f", Xnew=x_test, jitter=jitter, dims="test")
    return model


def model_data(
    *, x, y, x_test, lengthscale: float, signal_sd: float, noise_sd: float, jitter: float
) -> dict[str, np.ndarray]:
    """``pm.Data`` values: x (n, p), y (n,), x_test (m, p) and the hyperparameters."""
    return {
        "x": np.asarray(x, dtype=float),
        "y": np.asarray(y, dtype=float),
        "x_test": np.asarray(x_test, dtype=float),
        "hp_lengthscale": np.asarray(lengthscale, dtype=float),
        "hp_signal_sd": np.asarray(signal_sd, dtype=float),
        "hp_noise_sd": np.asarray(noise_sd, dtype=float),
        "hp_jitter": np.asarray(jitter, dtype=float),
    }


def build_hyper_model(
    *,
    kernel: str,
    x: np.ndarray,
    y: np.ndarray,
    medians: dict[str, float],
    log_sds: dict[str, float],
    jitter: float,
) -> pm.Model:
    """The same GP with log-normal priors on the hyperparameters (not conjugate).

    ``h ~ LogNormal(log medians[h], log_sds[h])`` for h in lengthscale,
    signal_sd, noise_sd; y ~ MvNormal(0, K + (noise_sd^2 + jitter) I) through
    ``gp.marginal_likelihood``.  The data are constants: this model is
    compiled for one data set (see compare.gaussian_process.hyperparameter_posterior).
    """
    import pymc as pm  # heavy: PyMC only when a model is built

    x = np.asarray(x, dtype=float)
    x = x[:, None] if x.ndim == 1 else x
    coords = {"obs": np.arange(x.shape[0])}
    with pm.Model(coords=coords) as model:
        h = {
            name: pm.LogNormal(name, mu=float(np.log(medians[name])), sigma=float(log_sds[name]))
            for name in HYPER_VARIABLES
        }
        gp = pm.gp.Marginal(
            cov_func=covariance(kernel, x.shape[1], h["lengthscale"], h["signal_sd"])
        )
        gp.marginal_likelihood(
            "y_obs",
            X=x,
            y=np.asarray(y, dtype=float),
            sigma=h["noise_sd"],
            jitter=jitter,
            dims="obs",
        )
    return model
