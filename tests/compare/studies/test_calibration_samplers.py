"""Null calibration of the verdict for every sampler of ``--method`` but nutpie.

nutpie, the default, is calibrated by test_calibration.py and
test_calibration_structured.py. Here each other sampler (``pymc``,
``numpyro``, ``blackjax``, ``smc``: the catalogue's samplers) runs
:data:`RUNS` times on fresh prior-predictive data sets and seeds of the first
topic that declares ``Calibration.samplers``, 4 chains x 1000 draws after 500
warm-up (the z-scores are ESS-based, so calibrated at any length the gate
admits), :data:`SEEDS_PER_DATA` seeds on each data set.
``benchmarks/sampler_calibration.py`` (``make study``) runs the same with 100
runs, each on its own data set, on each of the three declaring topics;
docs/audit.md quotes it.

Why several seeds per data set: given the data the exact posterior is known,
so runs with different seeds have independent Monte Carlo errors and their
z-scores are independent N(0, 1) under the null, as across data sets; the
checks below hold as stated. Fewer posteriors are covered (the study covers
100 per topic), and the JAX samplers, whose XLA programs hold the data as
constants, compile once per data set instead of once per run (then load the
program from JAX's persistent cache: compare/accel/compiled_cache.py).

Three checks per sampler, each with a stated false-failure rate under a
calibrated sampler:

* **the gate admits every null run** (no ``inconclusive``, the MAP check
  never decides). For SMC this is the test of how the gate applies: its
  particles are not a Markov chain, ArviZ's ESS over the particle index is
  the gate's figure, and it must still clear 400 on a correct posterior;
* **no z is over-dispersed**: per quantity, sum over runs of z^2 is
  chi^2(RUNS) when the Monte Carlo standard errors are right (runs are
  independent); it must stay below the chi^2 quantile at 1e-5 / quantities
  (Bonferroni: false failure <= 1e-5 per sampler; ~1e-4 if the ESS
  estimate leaves var(z) at 1.1, the worst the nutpie study measured on
  this topic). An under-dispersed z (conservative MCSE) passes;
* **the realised false-alarm rate** at alpha = 0.05 stays within the exact
  Binomial(RUNS, 0.05) 1e-5 tail (runs on one data set are independent
  alarms of probability <= 0.05 each given the data, so their count is
  dominated by that binomial).

The null runs (:func:`test_the_verdict_of_every_sampler_is_calibrated`, ~3 minutes)
are marked ``study``: ``make study`` runs them before sampler_calibration.py, and
``make test`` leaves them out; there every sampler's agreement on a conjugate
posterior (tests/compare/core/test_inference.py) and the check's power below stay.

Power: :func:`test_the_dispersion_check_catches_overconfident_errors` feeds
the same check z-scores whose standard errors are 4x too small (ESS
overstated 16x: correlated draws counted as independent) and sees it fail.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from scipy import stats

from compare.core.methods import DEFAULT_METHOD, METHODS, SAMPLER
from compare.studies.calibration import STUDY_SETTINGS, NullStudy, iid_null, mcmc_null
from compare.topics import all_topics

pytestmark = pytest.mark.mcmc

RUNS = 20
SEEDS_PER_DATA = 4
SETTINGS = dataclasses.replace(STUDY_SETTINGS, draws=1000, tune=500, extras=False)
OTHER_SAMPLERS = [
    m.name for m in METHODS.values() if m.kind == SAMPLER and m.name != DEFAULT_METHOD
]
#: The first topic declaring the per-sampler study (a conjugate one: cheapest to run).
TOPIC = next(t for t in all_topics() if getattr(t.calibration, "samplers", False))


def dispersion_bound(study: NullStudy, false_failure: float = 1e-5) -> float:
    """The chi^2(runs) quantile each quantity's sum of z^2 must stay below."""
    runs, quantities = study.z.shape
    return float(stats.chi2.isf(false_failure / quantities, runs))


def assert_not_over_dispersed(study: NullStudy) -> None:
    sums = np.sum(study.z**2, axis=0)
    bound = dispersion_bound(study)
    worst = int(np.argmax(sums))
    assert sums[worst] < bound, (
        f"{study.names[worst]}: sum of z^2 over {study.z.shape[0]} runs is "
        f"{sums[worst]:.1f} >= {bound:.1f} (var(z) {sums[worst] / study.z.shape[0]:.2f}): "
        "the Monte Carlo standard errors are too small"
    )


@pytest.mark.study
@pytest.mark.parametrize("method", OTHER_SAMPLERS)
def test_the_verdict_of_every_sampler_is_calibrated(method):
    study = mcmc_null(
        TOPIC,
        replications=RUNS,
        n_obs=TOPIC.calibration.n_obs,
        hyper=dict(TOPIC.calibration.hyper),
        seed=41_000 + OTHER_SAMPLERS.index(method),
        settings=dataclasses.replace(SETTINGS, method=method),
        seeds_per_data=SEEDS_PER_DATA,
    )
    assert set(study.decided_by) <= {"agreement"}, study.decided_by
    assert float(np.max(study.worst_rhat)) < SETTINGS.rhat_max
    assert_not_over_dispersed(study)
    alarms = round(study.false_alarm_rate(0.05) * RUNS)
    assert alarms <= stats.binom.isf(1e-5, RUNS, 0.05), alarms


def test_the_dispersion_check_catches_overconfident_errors(rng):
    """Exact iid draws give calibrated z's (the check passes); the same z's with
    standard errors 4x too small fail it. P(miss) = P(chi^2(20) < bound/16) < 1e-4."""
    sim = TOPIC.simulate(rng, TOPIC.calibration.n_obs, dict(TOPIC.calibration.hyper))
    x, hyper = TOPIC.prepare(sim.data, dict(TOPIC.calibration.hyper))
    exact = TOPIC.solve(x=x, **hyper)
    study = iid_null(exact.posterior, replications=RUNS, chains=4, draws=1000, rng=rng)
    assert_not_over_dispersed(study)
    planted = dataclasses.replace(study, z=study.z * 4.0)
    with pytest.raises(AssertionError, match="too small"):
        assert_not_over_dispersed(planted)
