"""analytic/_frozen.py: ``freeze`` is scipy's freeze without its copy of the distribution.

Every method of the frozen object gives what scipy's frozen object gives, bit for
bit (both call the same distribution method with the same arguments), for
continuous and discrete distributions with shape, ``loc`` and ``scale``
arguments; draws under a seed are the same; reseeding one frozen object leaves
the module-level distribution alone; a frozen object survives pickling; and no
distribution object is built at a freeze (the point of it).
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from scipy import stats

from analytic._frozen import freeze

#: (distribution, args, kwds, points): the families the analytic marginals freeze.
CASES = [
    (stats.beta, (2.5, 4.0), {}, [0.1, 0.5, 0.93]),
    (stats.gamma, (3.0,), {"scale": 0.4}, [0.2, 1.1, 4.0]),
    (stats.invgamma, (4.5,), {"scale": 2.0}, [0.3, 0.7, 2.5]),
    (stats.t, (5.0,), {"loc": 1.5, "scale": 0.3}, [-1.0, 1.5, 2.2]),
    (stats.norm, (0.2, 1.7), {}, [-3.0, 0.0, 2.0]),
    (stats.pareto, (3.0,), {"scale": 2.0}, [2.1, 3.0, 9.0]),
    (stats.lomax, (2.5,), {"scale": 1.5}, [0.0, 0.4, 7.0]),
    (stats.nbinom, (4.0, 0.35), {}, [0, 3, 11]),
    (stats.bernoulli, (0.3,), {}, [0, 1]),
]


@pytest.mark.parametrize("dist, args, kwds, points", CASES, ids=[c[0].name for c in CASES])
def test_every_method_is_scipys(dist, args, kwds, points):
    ours, theirs = freeze(dist, *args, **kwds), dist(*args, **kwds)
    assert isinstance(ours, type(theirs))
    assert ours.dist is dist, "the module-level distribution object is shared, not copied"
    assert (ours.a, ours.b, ours.args, ours.kwds) == (theirs.a, theirs.b, theirs.args, theirs.kwds)
    density = "pmf" if isinstance(dist, stats.rv_discrete) else "pdf"
    x = np.asarray(points)
    for name in (density, f"log{density}", "cdf", "logcdf", "sf", "logsf"):
        np.testing.assert_array_equal(getattr(ours, name)(x), getattr(theirs, name)(x), name)
    q = np.array([0.01, 0.3, 0.5, 0.97])
    for name in ("ppf", "isf"):
        np.testing.assert_array_equal(getattr(ours, name)(q), getattr(theirs, name)(q), name)
    for name in ("mean", "var", "std", "median", "entropy"):
        np.testing.assert_array_equal(getattr(ours, name)(), getattr(theirs, name)(), name)
    np.testing.assert_array_equal(ours.interval(0.9), theirs.interval(0.9))
    np.testing.assert_array_equal(ours.support(), theirs.support())
    np.testing.assert_array_equal(ours.moment(2), theirs.moment(2))
    np.testing.assert_array_equal(ours.rvs(size=5, random_state=7), theirs.rvs(5, random_state=7))


def test_reseeding_a_frozen_object_leaves_the_module_level_one_alone():
    module_state = stats.beta.random_state
    ours = freeze(stats.beta, 2.0, 3.0)
    ours.random_state = 11
    assert stats.beta.random_state is module_state
    assert ours.dist is not stats.beta
    theirs = stats.beta(2.0, 3.0)
    theirs.random_state = 11
    np.testing.assert_array_equal(ours.rvs(size=4), theirs.rvs(size=4))


def test_a_frozen_object_pickles():
    ours = freeze(stats.t, 4.0, loc=1.0, scale=2.0)
    back = pickle.loads(pickle.dumps(ours))
    assert type(back) is type(ours)
    np.testing.assert_array_equal(back.ppf([0.1, 0.9]), ours.ppf([0.1, 0.9]))


def test_a_freeze_builds_no_distribution_object(monkeypatch):
    """Power: scipy's freeze builds one (``rv_frozen.__init__`` copies the distribution),
    and the counter sees it; ``freeze`` builds none."""
    built = []
    init = type(stats.gamma).__init__

    def counting(self, *args, **kwds):
        built.append(self)
        init(self, *args, **kwds)

    monkeypatch.setattr(type(stats.gamma), "__init__", counting)
    stats.gamma(2.0)
    assert len(built) == 1
    freeze(stats.gamma, 2.0)
    assert len(built) == 1


def test_anything_else_is_frozen_by_scipy():
    """A distribution object that is not one of scipy's generic families (here a
    multivariate one) is called as it is."""
    mvn = freeze(stats.multivariate_normal, [0.0, 1.0], np.eye(2))
    assert mvn.logpdf([0.0, 1.0]) == stats.multivariate_normal([0.0, 1.0], np.eye(2)).logpdf(
        [0.0, 1.0]
    )
