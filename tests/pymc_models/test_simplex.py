"""``pymc_models._common.simplex_transform`` is PyMC's simplex transform, in cheaper ops.

The same map, inverse and log-Jacobian as ``pymc.distributions.transforms.simplex``
at points z of the free space, one vector and batches of them, including
large |z| where the two formulations round differently; and the same Dirichlet
log density (with its Jacobian) and gradient in a model. Both sides are sums
of a few terms of size O(|z|) rounded at eps: 1e-12 relative.

Power: the Jacobian with K - 1 in place of K (a plausible slip) is caught.
"""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytensor
import pytensor.tensor as pt
import pytest
from pymc.distributions.transforms import simplex as pymc_simplex

from pymc_models._common import simplex_transform
from tests.evaluation import EVAL_MODE

RTOL = 1e-12


def _functions(transform):
    z = pt.tensor("z", shape=(None,) * 2)
    p = pt.tensor("p", shape=(None,) * 2)
    return pytensor.function(
        [z, p],
        [transform.backward(z), transform.log_jac_det(z), transform.forward(p)],
        mode=EVAL_MODE,
    )


def _points(rng, k: int, scale: float) -> np.ndarray:
    return scale * rng.standard_normal((5, k - 1))


@pytest.mark.parametrize("k", [2, 3, 7])
@pytest.mark.parametrize("scale", [0.1, 3.0, 30.0])
def test_it_is_pymcs_map_inverse_and_log_jacobian(k, scale):
    rng = np.random.default_rng(k)
    z = _points(rng, k, scale)
    p = rng.dirichlet(np.ones(k), size=5)
    ours, pymcs = _functions(simplex_transform())(z, p), _functions(pymc_simplex)(z, p)
    for got, want in zip(ours, pymcs, strict=True):
        np.testing.assert_allclose(got, want, rtol=RTOL, atol=RTOL * np.abs(want).max())
    back, _, _ = ours
    np.testing.assert_allclose(back.sum(axis=-1), 1.0, rtol=RTOL)


def _dirichlet_logp(transform):
    with pm.Model() as model:
        pm.Dirichlet("p", a=np.array([0.7, 2.0, 5.0, 1.0]), default_transform=transform)
    value = model.value_vars[0]
    logp = model.logp()
    return pytensor.function([value], [logp, pt.grad(logp, value)], mode=EVAL_MODE)


def test_a_dirichlets_density_and_gradient_are_pymcs():
    ours, pymcs = _dirichlet_logp(simplex_transform()), _dirichlet_logp(pymc_simplex)
    rng = np.random.default_rng(0)
    for z in rng.standard_normal((10, 3)):
        for got, want in zip(ours(z), pymcs(z), strict=True):
            np.testing.assert_allclose(got, want, rtol=RTOL, atol=RTOL)


def test_a_slip_in_the_jacobian_is_caught():
    class Slipped(type(simplex_transform())):
        def log_jac_det(self, value, *inputs):
            k = value.shape[-1].astype(value.dtype)  # K - 1: the slip
            total = pt.sum(value, axis=-1)
            ratio = pt.exp(value + pt.shape_padright(total))
            return pt.log(k) + k * total - k * pt.log1p(pt.sum(ratio, axis=-1))

    z = _points(np.random.default_rng(1), 3, 1.0)
    p = np.full((5, 3), 1 / 3)
    _, slipped, _ = _functions(Slipped())(z, p)
    _, want, _ = _functions(pymc_simplex)(z, p)
    assert not np.allclose(slipped, want, rtol=1e-3)
