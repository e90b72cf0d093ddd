"""PyMC model: a hypothesis index h from the prior; labels y_i ~ Bernoulli(q_h,i).

See analytic/bayes_optimal.py.  The hypothesis index is written as discrete
coordinates with uniform priors -- one categorical digit per factor (for a
conjunctive space: one per attribute, value or ``?``) and, for conjunctive
spaces, a Bernoulli flag for the empty hypothesis -- so that

    h = empty ? M - 1 : sum_a z_a stride_a        (mixed radix, C order)

is uniform over the M hypotheses; a ``Potential`` then reweights it to the
prior, ``log prior[h] + log M``.  Digits instead of one categorical over all
M hypotheses let the sampler move one attribute at a time: with a uniform
proposal over 973 EnjoySport hypotheses a move would be accepted about
|VS| / M = 0.6% of the time.

NUTS needs gradients, so the run samples with PyMC's
``CategoricalGibbsMetropolis`` (:func:`step_methods`), one coordinate at a
time with a **uniform** proposal (Metropolis within Gibbs).  Its
``proposal="proportional"`` variant is not used: in PyMC 6.4 it accepts with
``(1 - p_i) / (1 - p_j')`` where p_j' is the proposal probability renormalised
without the current value instead of p_j (Liu 1996), so its stationary law
is wrong (0.363 instead of 0.4 on Mitchell's three-hypothesis example,
measured) and with two categories it never moves;
``tests/compare/test_classification.py`` shows the verdict catching it.

Recorded per draw: ``hypothesis`` (the index) and ``bucket``, the one-hot
indicator of the hypothesis's bucket (``bucket_of`` maps hypotheses to
buckets; -1, no bucket, for hypotheses of posterior probability 0).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pymc as pm


VARIABLES = ("bucket",)


def build_model(
    *, factors: tuple[int, ...], has_empty: bool, n_hypotheses: int, n_obs: int, n_buckets: int
) -> pm.Model:
    import pymc as pm  # heavy: PyMC only when a model is built
    import pytensor.tensor as pt  # heavy: PyMC only when a model is built

    m = int(n_hypotheses)
    coords = {"hyp": np.arange(m), "obs": np.arange(n_obs), "bucket_index": np.arange(n_buckets)}
    strides = np.cumprod((1, *factors[:0:-1]))[::-1]  # C order: the last digit is fastest
    with pm.Model(coords=coords) as model:
        prob = pm.Data("prob", np.zeros((m, n_obs)), dims=("hyp", "obs"))
        y = pm.Data("y", np.zeros(n_obs, dtype=np.int64), dims="obs")
        prior = pm.Data("hp_prior", np.full(m, 1.0 / m), dims="hyp")
        noise = pm.Data("hp_noise", 0.0)
        bucket_of = pm.Data("bucket_of", np.zeros(m, dtype=np.int64), dims="hyp")
        index = 0
        for a, (k, stride) in enumerate(zip(factors, strides)):
            index = index + int(stride) * pm.Categorical(f"z{a}", p=np.full(k, 1.0 / k))
        if has_empty:
            empty = pm.Bernoulli("empty", p=1.0 / m)
            index = pt.switch(pt.eq(empty, 1), m - 1, index)
        h = pm.Deterministic("hypothesis", index)
        pm.Potential("prior", pt.log(prior[h]) + np.log(m))
        q = prob[h] * (1.0 - noise) + (1.0 - prob[h]) * noise
        pm.Bernoulli("y_obs", p=q, observed=y, dims="obs")
        pm.Deterministic(
            "bucket",
            pt.eq(bucket_of[h], pt.arange(n_buckets)).astype("float64"),
            dims="bucket_index",
        )
    return model


def step_methods(model: pm.Model):
    """Metropolis within Gibbs over every discrete coordinate, uniform proposals.

    The step's log density is compiled with ``trust_input=True``: PyMC hands
    it arrays it has already cast to each variable's dtype, and PyTensor's
    check of every input on every call was a third of the sampling time
    (4.4 -> 2.9 s for EnjoySport's 4 x 3000 steps; the same draws). Where
    the joint values can be enumerated (the builtin spaces), the run reads
    each proposal's log density from the enumeration instead of calling it
    (``compare.core.sampling.tabulate``; the same draws, EnjoySport's run
    5.1 -> 1.9 s).
    """
    import pymc as pm  # heavy: PyMC only when a model is built

    return pm.CategoricalGibbsMetropolis(
        model.free_RVs,
        proposal="uniform",
        model=model,
        compile_kwargs={"trust_input": True},
    )


def model_data(
    *, prob: np.ndarray, y: np.ndarray, prior: np.ndarray, noise: float, bucket_of: np.ndarray
) -> dict[str, np.ndarray]:
    """``pm.Data`` values; ``prior`` normalised, of shape (M,)."""
    return {
        "prob": np.asarray(prob, dtype=float),
        "y": np.asarray(y, dtype=np.int64),
        "hp_prior": np.asarray(prior, dtype=float),
        "hp_noise": np.asarray(noise, float),
        "bucket_of": np.asarray(bucket_of, dtype=np.int64),
    }
