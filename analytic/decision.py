"""Expected losses of point predictions under a predictive distribution.

Squared loss is minimised by the predictive mean (E[(y - a)^2] =
var + (mean - a)^2), absolute loss by the median, 0-1 loss (continuous form:
the density at a) by the mode.  Closed forms for the normal and Student-t;
numerical integration otherwise.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def expected_squared_loss(dist: Any, a: float) -> float:
    """E[(y - a)^2] = var + (mean - a)^2 for a frozen scipy distribution."""
    return float(dist.var() + (dist.mean() - a) ** 2)


def expected_absolute_loss(dist: Any, a: float) -> float:
    """E|y - a| for a frozen scipy distribution.

    Normal(m, s): ``s [2 phi(z) + z (2 Phi(z) - 1)]`` with ``z = (a - m)/s``.
    Student-t(nu, m, s), nu > 1: ``s [z (2 F(z) - 1) + 2 (nu + z^2)/(nu - 1) f(z)]``,
    from ``int_{-inf}^{z} x f(x) dx = -(nu + x^2)/(nu - 1) f(z)`` for the
    standard t.  Other distributions: ``dist.expect`` (quadrature).
    """
    from scipy import stats  # heavy: SciPy (0.5 s) only when the maths runs

    name = getattr(getattr(dist, "dist", None), "name", "")
    loc, scale = dist.kwds.get("loc", 0.0), dist.kwds.get("scale", 1.0)
    if name == "norm":
        args = dist.args
        loc = args[0] if args else loc
        scale = args[1] if len(args) > 1 else scale
        z = (a - loc) / scale
        return float(scale * (2 * stats.norm.pdf(z) + z * (2 * stats.norm.cdf(z) - 1)))
    if name == "t" and dist.args and dist.args[0] > 1:
        nu = dist.args[0]
        loc = dist.args[1] if len(dist.args) > 1 else loc
        scale = dist.args[2] if len(dist.args) > 2 else scale
        z = (a - loc) / scale
        return float(
            scale
            * (z * (2 * stats.t.cdf(z, nu) - 1) + 2 * (nu + z * z) / (nu - 1) * stats.t.pdf(z, nu))
        )
    return float(dist.expect(lambda y: np.abs(y - a)))
