"""``pymc_models._common.wishart_precisions`` is PyMC's batched Wishart, in cheaper ops.

The Normal-Wishart models write the precisions' Wishart density on their
Cholesky factor (a flat variable, ``cholesky_transform``, and a Potential) to
avoid batched matrix products and solves in the compiled model. At points z of
the free space (PyMC's Wishart's: the factor's rows, its diagonal logged), the
model's log density with its Jacobian, its gradient, its log density without
the Jacobian (what ``pm.find_MAP`` maximises: SciPy's Wishart density) and the
precisions themselves must be ``pm.Wishart``'s with its ``CholeskyCovTransform`` (at integer degrees of
freedom: PyMC's Wishart rounds nu down to an integer, ours does not; the
topics' nu0 is an integer). Both sides are sums
of O(d^2) terms of size O(|log p|) rounded at eps: 1e-12 relative.

Power: the Jacobian's weights n - k + 1 in place of n - k + 2 (a plausible
slip) are caught.
"""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytensor
import pytensor.tensor as pt
import pytest
from scipy import stats

from pymc_models import _common
from pymc_models._common import cholesky_transform, wishart_precisions
from tests.evaluation import EVAL_MODE

RTOL = 1e-12
K = 3
#: How far PyMC's densities are from ours: K d (1 + nu / 2) log(2) with log(2) rounded to
#: float32 (2e-9 off) is at most 3 * 4 * 4 * 2e-9 here.
FLOAT32_LOG2 = 1e-7


def _models(d: int, nu: float, w0: np.ndarray) -> tuple[pm.Model, pm.Model]:
    coords = {"group": np.arange(K), "dim": np.arange(d), "dim_": np.arange(d)}
    with pm.Model(coords=coords) as pymcs:
        pm.Wishart("Lambda", nu=nu, V=w0, dims=("group", "dim", "dim_"))
    with pm.Model(coords=coords) as ours:
        init = pm.Data("init", np.broadcast_to(np.eye(d), (K, d, d)).copy())
        wishart_precisions("Lambda", nu, pm.Data("w0", w0), init, group="group", d=d)
    return pymcs, ours


def _functions(model: pm.Model):
    [value] = model.value_vars
    with_jacobian, without = model.logp(), model.logp(jacobian=False)
    return pytensor.function(
        [value],
        [
            with_jacobian,
            pt.grad(with_jacobian, value),
            without,
            model.replace_rvs_by_values([model["Lambda"]])[0],
        ],
        mode=EVAL_MODE,
        on_unused_input="ignore",
    )


@pytest.mark.parametrize("d", [1, 2, 4])
@pytest.mark.parametrize("scale", [0.1, 1.5])
def test_it_is_pymcs_wishart_in_its_free_coordinates(d, scale):
    rng = np.random.default_rng(10 * d)
    a = rng.normal(size=(d, d))
    w0 = a @ a.T + d * np.eye(d)
    pymcs, ours = _models(d, d + 2, w0)
    z = scale * rng.standard_normal((K, d * (d + 1) // 2))
    (with_jac, grad, without, lam), (p_with_jac, p_grad, p_without, p_lam) = (
        _functions(ours)(z),
        _functions(pymcs)(z),
    )
    close = np.testing.assert_allclose
    close(lam, p_lam, rtol=RTOL)
    close(grad, p_grad, rtol=RTOL, atol=RTOL * np.abs(p_grad).max())
    # The Jacobian against its formula (PyMC's CholeskyCovTransform's docstring), and the
    # density against SciPy's: PyMC's adds d log(2) and nu d log(2) / 2 with log(2)
    # rounded to float32, 1e-9 off.
    rows, cols = np.tril_indices(d)
    weights = np.where(rows == cols, d - rows + 1, 0)
    jacobian = K * d * np.log(2.0) + float(np.sum(weights * z))
    close(with_jac - without, jacobian, rtol=RTOL, atol=RTOL * abs(with_jac))
    assert with_jac - without == pytest.approx(p_with_jac - p_without, abs=FLOAT32_LOG2)
    want = sum(stats.wishart(df=d + 2, scale=w0).logpdf(lam[k]) for k in range(K))
    close(without, want, rtol=RTOL)
    assert without == pytest.approx(p_without, abs=FLOAT32_LOG2)


def test_forward_inverts_backward():
    rng = np.random.default_rng(5)
    z = rng.standard_normal((K, 10))
    transform = cholesky_transform()
    back = transform.backward(pt.as_tensor(z))
    again = pytensor.function([], transform.forward(back), mode=EVAL_MODE)()
    np.testing.assert_allclose(again, z, rtol=RTOL, atol=RTOL)


def test_a_jacobian_slip_is_caught(monkeypatch):
    """Power: weights n - k + 1 for the diagonal, in place of n - k + 2."""
    real = _common.cholesky_transform

    def slipped():
        transform = real()
        log_jac_det = transform.log_jac_det

        def wrong(value, *inputs):
            size = pt.cast(value.shape[-1], "float64")
            n = pt.cast(pt.round((pt.sqrt(8.0 * size + 1.0) - 1.0) / 2.0), "int64")
            rows, cols = pt.tril_indices(n)
            return log_jac_det(value, *inputs) - pt.sum(
                pt.switch(pt.eq(rows, cols), value, 0.0), -1
            )

        transform.log_jac_det = wrong
        return transform

    d = 3
    z = np.random.default_rng(1).standard_normal((K, 6))
    pymcs, ours = _models(d, d + 2, np.eye(d))
    want, real_got = _functions(pymcs)(z)[0], _functions(ours)(z)[0]
    assert real_got == pytest.approx(want, abs=FLOAT32_LOG2)
    monkeypatch.setattr(_common, "cholesky_transform", slipped)
    _, slipped_model = _models(d, d + 2, np.eye(d))
    assert _functions(slipped_model)(z)[0] != pytest.approx(want, abs=FLOAT32_LOG2)
