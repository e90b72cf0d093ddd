"""A topic file: your own topic, run by the CLI like the built-in ones.

Waiting times x_i >= 0 (e.g. hours between failures) with an exponential
likelihood and a Gamma prior on its rate (Gelman et al. 2013, sec. 2.6):

    lam ~ Gamma(shape, rate);   x_i | lam ~ Exponential(lam)
    posterior: Gamma(shape + n, rate + sum x),   mode (shape + n - 1) / (rate + sum x)
    evidence:  rate^shape Gamma(shape + n) / (Gamma(shape) (rate + sum x)^(shape + n))

    bayes-compare run --topic-file examples/my_topic.py failure-waits
    bayes-compare report --topic-file examples/my_topic.py failure-waits
    bayes-compare export --topic-file examples/my_topic.py failure-waits --out pdb

The package has this model built in (``exponential-gamma``); a topic file is
how you would add it, or change it, without touching the package.  The file
defines ``TOPIC``, a ``compare.core.registry.Topic`` with the same parts
as the built-in topics (README, "Adding a topic"): the exact side (``solve``),
the PyMC side (``build_model``, ``model_data``, ``VARIABLES``), a simulator
and a builtin data set.
"""

import numpy as np
import pymc as pm
from scipy import special, stats

from analytic import ExactAnswer
from compare import Exact
from compare.core.registry import BuiltinData, Hyperparameter, Simulation, Topic

VARIABLES = ("lam",)


def solve(*, x, shape, rate):
    """Exact posterior of the rate for waiting times ``x`` of shape (n,)."""
    n, total = x.size, float(np.sum(x))
    a, b = shape + n, rate + total
    exact = Exact.from_scipy(
        stats.gamma(a, scale=1 / b),
        parameters=VARIABLES,
        mode=[(a - 1) / b] if a > 1 else None,
        mode_interior=a > 1,
    )
    log_evidence = (
        shape * np.log(rate) - special.gammaln(shape) + special.gammaln(a) - a * np.log(b)
    )
    return ExactAnswer(
        posterior=exact.as_posterior(),
        mle=np.array([n / total]),
        log_evidence=float(log_evidence),
        predictive=stats.lomax(a, scale=b),
    )


def build_model(*, n_obs=1):
    with pm.Model(coords={"obs": np.arange(n_obs)}) as model:
        x = pm.Data("x", np.ones(n_obs), dims="obs")
        shape = pm.Data("hp_shape", 1.0)
        rate = pm.Data("hp_rate", 1.0)
        lam = pm.Gamma("lam", alpha=shape, beta=rate)
        pm.Exponential("x_obs", lam=lam, observed=x, dims="obs")
    return model


def model_data(*, x, shape, rate):
    return {
        "x": np.asarray(x, dtype=float),
        "hp_shape": np.asarray(shape, dtype=float),
        "hp_rate": np.asarray(rate, dtype=float),
    }


def simulate(rng, n, hyper):
    lam = rng.gamma(hyper["shape"], 1 / hyper["rate"])
    return Simulation(theta=np.array([lam]), data=rng.exponential(1 / lam, size=n))


def _waits():
    # Hours between 12 failures of a pump (made-up numbers for the example).
    return np.array([2.1, 0.4, 5.3, 1.2, 3.3, 0.9, 7.5, 2.8, 1.6, 0.2, 4.4, 2.0])


TOPIC = Topic(
    name="failure-waits",
    title="Gamma prior on the rate of exponential waiting times",
    model=(
        "lam ~ Gamma(shape, rate);  x_i | lam ~ Exponential(lam)\n"
        "posterior: Gamma(shape + n, rate + sum x_i)"
    ),
    data_kind="nonnegative",
    hyperparameters=(
        Hyperparameter("shape", 2.0, "Gamma prior's shape"),
        Hyperparameter("rate", 4.0, "Gamma prior's rate (inverse scale), in hours"),
    ),
    solve=solve,
    build_model=build_model,
    model_data=model_data,
    variables=VARIABLES,
    simulate=simulate,
    builtin=(
        BuiltinData(
            "pump", "hours between 12 failures of a pump (made up)", "examples/my_topic.py", _waits
        ),
    ),
)
