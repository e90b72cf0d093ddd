"""Tests for analytic.gaussian_process: posterior of f, noisy predictive, evidence,
its gradient, type-II ML and bad input.

References are independent of the module: scikit-learn's
``GaussianProcessRegressor(optimizer=None)`` with the same kernel (pairwise
distances by scipy's cdist, its own Cholesky path), an n-dimensional
``scipy.stats.multivariate_normal`` density for the evidence, central finite
differences for the gradient, and analytic.linear_regression (a d x d
weight-space computation) for the linear kernel.

Tolerances: scikit-learn and this module evaluate the same formulas in
float64 along different roundings; the data below keep cond(K_y) <~ 1e4, so
the differences are ~1e-12 and 1e-8 (the issue's bound) is safe by four
orders.  Finite differences: a 5-point stencil with step h = 1e-3 in the
log-parameters has truncation error ~h^4 |f^(5)| / 30 ~ 1e-13 and rounding
error ~eps |f| / h ~ 1e-11 here, so 1e-7 relative bounds both.  The linear
identity holds to rounding (~1e-13 measured), tested at 1e-10.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import RBF, ConstantKernel, DotProduct, Matern, WhiteKernel

from analytic import ExactAnswer, ExactPosterior
from analytic import gaussian_process as gp
from analytic import linear_regression as lr

HYPER = dict(lengthscale=0.8, signal_sd=1.3, noise_sd=0.3, jitter=1e-8)
KERNELS = gp.KERNELS


def _sklearn(kernel: str, *, lengthscale, signal_sd, noise_sd, jitter):
    """The same model in scikit-learn: jitter as a WhiteKernel (on K(X, X) and K(X*, X*)
    only, like the module's nugget), noise as ``alpha``."""
    base = {
        "rbf": RBF(lengthscale, "fixed"),
        "matern32": Matern(lengthscale, "fixed", nu=1.5),
        "matern52": Matern(lengthscale, "fixed", nu=2.5),
        # sigma_0^2 + x.x' with sigma_0 = lengthscale, scaled by signal_sd^2 / lengthscale^2
        "linear": DotProduct(sigma_0=lengthscale, sigma_0_bounds="fixed"),
    }[kernel]
    scale = signal_sd**2 / lengthscale**2 if kernel == "linear" else signal_sd**2
    k = ConstantKernel(scale, "fixed") * base + WhiteKernel(jitter, "fixed")
    return GaussianProcessRegressor(kernel=k, alpha=noise_sd**2, optimizer=None)


@pytest.fixture
def data(rng):
    x = rng.uniform(0.0, 5.0, size=(30, 2))
    y = np.sin(x[:, 0]) - 0.5 * x[:, 1] + rng.normal(0.0, 0.3, 30)
    x_test = rng.uniform(-0.5, 5.5, size=(7, 2))
    return x, y, x_test


@pytest.mark.parametrize("kernel", KERNELS)
def test_posterior_and_evidence_match_sklearn(kernel, data):
    x, y, x_test = data
    fit = gp.condition(x=x, y=y, kernel=kernel, **HYPER)
    mean, cov = gp.predict(fit, x_new=x_test)
    ref = _sklearn(kernel, **HYPER).fit(x, y)
    ref_mean, ref_cov = ref.predict(x_test, return_cov=True)
    scale = np.max(np.abs(ref_cov))
    np.testing.assert_allclose(mean, ref_mean, rtol=1e-8, atol=1e-8 * np.max(np.abs(ref_mean)))
    np.testing.assert_allclose(cov, ref_cov, rtol=1e-8, atol=1e-8 * scale)
    assert fit.log_marginal_likelihood == pytest.approx(
        ref.log_marginal_likelihood_value_, rel=1e-8
    )
    # Diagonal-only prediction agrees with the full covariance.
    _, var = gp.predict(fit, x_new=x_test, full_cov=False)
    np.testing.assert_allclose(var, np.diag(cov), rtol=1e-10, atol=1e-12 * scale)


@pytest.mark.parametrize("kernel", KERNELS)
def test_evidence_is_one_multivariate_normal_density(kernel, data):
    x, y, _ = data
    k_y = gp.kernel_matrix(
        kernel=kernel,
        x1=x,
        lengthscale=HYPER["lengthscale"],
        signal_sd=HYPER["signal_sd"],
        jitter=HYPER["jitter"],
    )
    k_y += HYPER["noise_sd"] ** 2 * np.eye(len(y))
    ref = stats.multivariate_normal(np.zeros(len(y)), k_y).logpdf(y)
    assert gp.log_marginal_likelihood(x=x, y=y, kernel=kernel, **HYPER) == pytest.approx(
        ref, rel=1e-10
    )


def _five_point(f, theta: np.ndarray, h: float = 1e-3) -> np.ndarray:
    out = np.empty(theta.size)
    for j in range(theta.size):
        e = np.zeros(theta.size)
        e[j] = h
        out[j] = (-f(theta + 2 * e) + 8 * f(theta + e) - 8 * f(theta - e) + f(theta - 2 * e)) / (
            12 * h
        )
    return out


@pytest.mark.parametrize("kernel", KERNELS)
def test_gradient_matches_finite_differences(kernel, data):
    x, y, _ = data
    value, grad = gp.log_marginal_likelihood_grad(x=x, y=y, kernel=kernel, **HYPER)

    def lml(theta):
        ell, sf, sn = np.exp(theta)
        return gp.log_marginal_likelihood(
            x=x,
            y=y,
            kernel=kernel,
            lengthscale=ell,
            signal_sd=sf,
            noise_sd=sn,
            jitter=HYPER["jitter"],
        )

    theta = np.log([HYPER["lengthscale"], HYPER["signal_sd"], HYPER["noise_sd"]])
    fd = _five_point(lml, theta)
    assert value == pytest.approx(lml(theta), rel=1e-14)
    np.testing.assert_allclose(grad, fd, rtol=1e-7, atol=1e-7 * max(1.0, abs(value)))


def test_linear_kernel_equals_linear_regression(rng):
    """signal_sd^2 (1 + x.x'/l^2) is Bayesian linear regression on [1, x / l] with
    prior_sd = signal_sd: same f posterior at the test inputs, same evidence."""
    x = rng.uniform(-2.0, 3.0, size=(25, 2))
    y = x @ [1.0, -0.5] + 0.3 + rng.normal(0.0, 0.4, 25)
    x_test = rng.uniform(-2.0, 3.0, size=(4, 2))
    ell, sf, sn = 1.7, 2.0, 0.4
    fit = gp.condition(
        x=x, y=y, kernel="linear", lengthscale=ell, signal_sd=sf, noise_sd=sn, jitter=0.0
    )
    mean, cov = gp.predict(fit, x_new=x_test)
    phi, _ = lr.design_matrix(x=x / ell)
    phi_test, _ = lr.design_matrix(x=x_test / ell)
    ref = lr.fit(phi=phi, y=y, noise_sd=sn, prior_sd=sf)
    ref_cov = phi_test @ ref.posterior.cov @ phi_test.T
    np.testing.assert_allclose(
        mean, phi_test @ ref.posterior.mean, rtol=1e-10, atol=1e-10 * np.max(np.abs(mean))
    )
    np.testing.assert_allclose(cov, ref_cov, rtol=1e-10, atol=1e-10 * np.max(np.abs(ref_cov)))
    assert fit.log_marginal_likelihood == pytest.approx(ref.log_evidence, rel=1e-10)
    _, noisy = gp.predict(fit, x_new=x_test, noisy=True)
    np.testing.assert_allclose(
        noisy, ref.predictive.cov(phi_test), rtol=1e-10, atol=1e-10 * np.max(np.abs(noisy))
    )


def test_solve_gives_an_exact_answer_with_the_noisy_predictive(data):
    x, y, x_test = data
    ans = gp.solve(x=x, y=y, x_test=x_test, kernel="matern52", **HYPER)
    assert isinstance(ans, ExactAnswer) and isinstance(ans.posterior, ExactPosterior)
    assert ans.parameters == tuple(f"f[{i}]" for i in range(7))
    assert ans.posterior.is_gaussian and ans.mle is None
    np.testing.assert_array_equal(ans.posterior.mode, ans.posterior.mean)
    fit = gp.condition(x=x, y=y, kernel="matern52", **HYPER)
    mean, cov = gp.predict(fit, x_new=x_test)
    _, cov_y = gp.predict(fit, x_new=x_test, noisy=True)
    np.testing.assert_allclose(cov_y - cov, HYPER["noise_sd"] ** 2 * np.eye(7), atol=1e-15)
    np.testing.assert_allclose(ans.predictive.cov(), cov_y, rtol=1e-14)
    np.testing.assert_allclose(ans.predictive.var(), np.diag(cov_y), rtol=1e-14)
    np.testing.assert_allclose(
        ans.predictive.logpdf(mean),
        stats.norm.logpdf(0.0, 0.0, np.sqrt(np.diag(cov_y))),
        rtol=1e-12,
    )
    assert ans.log_evidence == fit.log_marginal_likelihood


@pytest.mark.parametrize("kernel", ("rbf", "matern32", "matern52"))
def test_far_from_the_data_the_posterior_is_the_prior(kernel, data):
    """Identity: a stationary kernel forgets the data far away: mean 0, cov K** + jitter."""
    x, y, _ = data
    far = np.array([[1e4, 1e4], [2e4, -1e4]])
    fit = gp.condition(x=x, y=y, kernel=kernel, **HYPER)
    mean, cov = gp.predict(fit, x_new=far)
    np.testing.assert_allclose(mean, 0.0, atol=1e-300)
    np.testing.assert_allclose(
        cov, (HYPER["signal_sd"] ** 2 + HYPER["jitter"]) * np.eye(2), rtol=1e-15, atol=1e-300
    )


def test_noise_free_gp_interpolates(rng):
    x = np.sort(rng.uniform(0.0, 5.0, 12))
    y = np.cos(x)
    fit = gp.condition(
        x=x, y=y, kernel="matern52", lengthscale=1.0, signal_sd=1.0, noise_sd=0.0, jitter=1e-12
    )
    mean, var = gp.predict(fit, x_new=x, full_cov=False)
    # The jitter is the only noise left: residuals ~ jitter / lambda_min(K) stay tiny.
    np.testing.assert_allclose(mean, y, atol=1e-6)
    assert np.all(var < 1e-6)


def test_type2_ml_is_a_stationary_point_at_least_as_good_as_sklearn(data):
    x, y, _ = data
    res = gp.type2_ml(x=x, y=y, kernel="rbf", lengthscale=1.0, signal_sd=1.0, noise_sd=1.0)
    assert res.converged and res.start == (1.0, 1.0, 1.0)
    assert np.max(np.abs(res.grad)) < 1e-4
    k = ConstantKernel(1.0, (1e-8, 1e8)) * RBF(1.0, (1e-8, 1e8)) + WhiteKernel(1.0, (1e-8, 1e8))
    ref = GaussianProcessRegressor(kernel=k, alpha=HYPER["jitter"]).fit(x, y)
    assert res.log_marginal_likelihood >= ref.log_marginal_likelihood_value_ - 1e-6
    fitted = ref.kernel_.get_params()
    assert res.lengthscale == pytest.approx(fitted["k1__k2__length_scale"], rel=1e-3)
    assert res.noise_sd == pytest.approx(np.sqrt(fitted["k2__noise_level"]), rel=1e-3)


def test_simulate_is_seeded_and_shaped():
    x, x_test = np.linspace(0, 5, 9), np.linspace(0, 5, 4)
    kw = dict(x=x, x_test=x_test, kernel="rbf", lengthscale=1.0, signal_sd=1.0, noise_sd=0.2)
    f1, y1 = gp.simulate(np.random.default_rng(5), **kw)
    f2, y2 = gp.simulate(np.random.default_rng(5), **kw)
    np.testing.assert_array_equal(f1, f2)
    np.testing.assert_array_equal(y1, y2)
    assert f1.shape == (4,) and y1.shape == (9,)


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "name, value",
    [
        ("lengthscale", 0.0),
        ("lengthscale", -1.0),
        ("signal_sd", 0.0),
        ("signal_sd", np.nan),
        ("noise_sd", -0.1),
        ("jitter", -1e-8),
    ],
)
def test_non_positive_hyperparameters_are_rejected(name, value, data):
    x, y, _ = data
    with pytest.raises(ValueError, match=rf"{name} must be .*got {value!r}"):
        gp.condition(x=x, y=y, kernel="rbf", **{**HYPER, name: value})


def test_unknown_kernel_lists_the_choices(data):
    x, y, _ = data
    with pytest.raises(ValueError, match="rbf, matern32, matern52, linear, got 'cubic'"):
        gp.condition(x=x, y=y, kernel="cubic", **HYPER)


def test_duplicated_inputs_with_zero_noise_are_named():
    x = np.array([0.0, 1.0, 2.0, 1.0])
    with pytest.raises(
        ValueError,
        match=r"x rows 1 and 3 are the same input \(1\) and "
        r"noise_sd = 0.*set noise_sd > 0",
    ):
        gp.condition(x=x, y=np.zeros(4), kernel="rbf", lengthscale=1.0, signal_sd=1.0, noise_sd=0.0)
    # With noise the same data are fine.
    gp.condition(x=x, y=np.zeros(4), kernel="rbf", lengthscale=1.0, signal_sd=1.0, noise_sd=0.1)


def test_not_positive_definite_after_jitter_names_the_jitter_and_a_larger_one():
    x = np.linspace(0.0, 1.0, 40)  # smooth rbf on dense inputs: K is numerically singular
    with pytest.raises(
        ValueError,
        match=r"not positive definite.*with jitter=0; try a larger "
        r"jitter, e\.g\. jitter=1e-08",
    ):
        gp.condition(
            x=x, y=np.sin(x), kernel="rbf", lengthscale=1.0, signal_sd=1.0, noise_sd=0.0, jitter=0.0
        )
    gp.condition(
        x=x, y=np.sin(x), kernel="rbf", lengthscale=1.0, signal_sd=1.0, noise_sd=0.0, jitter=1e-8
    )  # the suggested jitter works


def test_shapes_are_checked(data):
    x, y, x_test = data
    with pytest.raises(ValueError, match=r"y must be an array of shape \(30,\)"):
        gp.condition(x=x, y=y[:-1], kernel="rbf", **HYPER)
    fit = gp.condition(x=x, y=y, kernel="rbf", **HYPER)
    with pytest.raises(ValueError, match="x_new must have 2 input column"):
        gp.predict(fit, x_new=x_test[:, :1])
    with pytest.raises(ValueError, match=r"x\[3, 1\] is nan"):
        bad = x.copy()
        bad[3, 1] = np.nan
        gp.condition(x=bad, y=y, kernel="rbf", **HYPER)
