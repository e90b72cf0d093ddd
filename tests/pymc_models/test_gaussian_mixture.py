"""The mixture's one model: its labelled and unlabelled rows are the densities they say.

``pymc_models.gaussian_mixture.build_model`` serves the complete-data model
(every row labelled, ``model_data``) and the marginalised mixture (no row
labelled, ``mixture_data``); the Gaussian classifier's model is the same graph
with no unlabelled rows.  ``tests/pymc_models/test_log_density.py`` checks the
complete-data model against the exact posterior; this checks the unlabelled
term against SciPy, that each kind of row adds nothing when it is absent, and
that with no rows the density is the prior's (Dirichlet x Wishart x Normal, SciPy).

At any parameter point the model's log density with the rows given one way,
minus the model's log density with no rows at all (the prior alone), is the
log likelihood of those rows: for unlabelled rows sum_i log sum_k w_k N(x_i;
mu_k, Lambda_k^-1), for labelled ones sum_i log w_{z_i} N(x_i; mu_{z_i},
Lambda_{z_i}^-1).  Both are sums of n terms rounded at eps, so they must agree
to 1e-9 relative.  Power: a reference that gives the components equal weights
(the classic bug of a mixture likelihood without its weights) differs by far
more than that, and the same comparison rejects it.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from scipy.special import logsumexp

from pymc_models import gaussian_mixture as m_gm
from tests.evaluation import EVAL_MODE
from tests.pymc_models.points import value_point

K, D, N = 3, 2, 40


@pytest.fixture(scope="module")
def problem():
    rng = np.random.default_rng(20261205)
    x = rng.normal(size=(N, D)) * 2.0
    labels = rng.integers(0, K, size=N)
    w = rng.dirichlet(np.ones(K))
    mu = rng.normal(size=(K, D))
    a = rng.normal(size=(K, D, D))
    lam = a @ a.transpose(0, 2, 1) + np.eye(D)  # precisions, positive definite
    prior = {
        "alpha": 1.5,
        "m0": np.zeros(D),
        "kappa0": 0.5,
        "nu0": D + 2,
        "w0": np.eye(D),
        "init_w": np.full(K, 1 / K),
        "init_mu": np.zeros((K, D)),
        "init_lambda": np.broadcast_to(np.eye(D), (K, D, D)).copy(),
    }
    model = m_gm.build_model(components=K, n_dims=D)
    # The Python linker: the default (numba) compile of this model's density took 8 s
    # of the suite, for three evaluations (tests/pymc_models/test_log_density.py too).
    logp = model.compile_logp(jacobian=False, mode=EVAL_MODE)
    point = value_point(model, {"w": w, "mu": mu, "Lambda": lam})
    assert set(point) == {v.name for v in model.value_vars}

    def density(data):
        import pymc as pm

        pm.set_data(data, model=model, coords={"obs": np.arange(len(data["x"]))})
        return float(logp(point))

    return x, labels, w, mu, lam, prior, density


def _component_logpdf(x, w, mu, lam, weights=None):
    """(n, K): log w_k + log N(x_i; mu_k, Lambda_k^-1), from SciPy."""
    weights = w if weights is None else weights
    cov = np.linalg.inv(lam)
    return np.stack(
        [np.log(weights[k]) + stats.multivariate_normal(mu[k], cov[k]).logpdf(x) for k in range(K)],
        axis=1,
    )


def _no_rows(prior):
    return m_gm.mixture_data(x=np.zeros((0, D)), **prior)


def test_unlabelled_rows_add_the_mixture_log_likelihood(problem):
    x, _, w, mu, lam, prior, density = problem
    got = density(m_gm.mixture_data(x=x, **prior)) - density(_no_rows(prior))
    want = float(logsumexp(_component_logpdf(x, w, mu, lam), axis=1).sum())
    assert got == pytest.approx(want, rel=1e-9)
    # Power: the mixture likelihood without its weights is told apart.
    unweighted = float(logsumexp(_component_logpdf(x, w, mu, lam, np.full(K, 1 / K)), axis=1).sum())
    assert got != pytest.approx(unweighted, rel=1e-9)


def test_labelled_rows_add_their_components_log_likelihood(problem):
    x, labels, w, mu, lam, prior, density = problem
    data = m_gm.model_data(x=x, labels=labels, components=K, **prior)
    assert data["x"].shape == (0, D)  # no unlabelled rows in the complete-data model
    got = density(data) - density(_no_rows(prior))
    want = float(_component_logpdf(x, w, mu, lam)[np.arange(N), labels].sum())
    assert got == pytest.approx(want, rel=1e-9)


def test_no_rows_of_either_kind_is_the_prior_alone(problem):
    """Empty statistics and no unlabelled rows: the density is the prior's, whatever the
    number of components' statistics given as zeros or the rows given as an empty array."""
    x, labels, w, mu, lam, prior, density = problem
    empty = _no_rows(prior)
    assert np.all(empty["counts"] == 0) and empty["x"].shape == (0, D)
    labelled = m_gm.model_data(x=x[:0], labels=labels[:0], components=K, **prior)
    assert density(labelled) == density(empty)
    # ...and that density is the prior's, from SciPy: Dirichlet x Wishart x Normal.
    w0 = prior["w0"]
    want = stats.dirichlet(np.full(K, prior["alpha"])).logpdf(w) + sum(
        stats.wishart(df=prior["nu0"], scale=w0).logpdf(lam[k])
        + stats.multivariate_normal(prior["m0"], np.linalg.inv(prior["kappa0"] * lam[k])).logpdf(
            mu[k]
        )
        for k in range(K)
    )
    assert density(empty) == pytest.approx(want, rel=1e-9)
