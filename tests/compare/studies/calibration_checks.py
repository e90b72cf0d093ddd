"""Shared checks of the real-MCMC null studies, for the two calibration test files.

The studies are split over ``test_calibration.py`` (the six one-parameter-family
conjugate topics) and ``test_calibration_structured.py`` (regression, mixture,
GP and classification topics) so that ``make test``'s two pytest-xdist
workers can run them side by side.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping

import numpy as np
from scipy import stats

from compare.studies.calibration import NULL_FIXTURES, STUDY_SETTINGS, NullStudy, mcmc_null
from compare.topics import get_topic

REPLICATIONS = 50

#: Slower runs get fewer replications (the mixture's complete-data model costs
#: ~2.3 s a run, a regression run ~1 s); the six conjugate topics keep 50.
FEWER = {
    "gaussian-mixture": 20,
    "linear-regression": 30,
    "linear-regression-nig": 30,
    "gaussian-process": 20,
    "naive-bayes": 30,
    # pm.sample's Python-level Metropolis-within-Gibbs: ~4 s a run.
    "bayes-optimal": 12,
    "logistic-regression": 20,
    # The classifier's conjugate model (the mixture's complete-data one): ~2.5 s a run.
    "gaussian-classifier": 20,
}

#: Half-length runs (4 x 1000 draws after 500 warm-up) for every topic but the
#: Bayes-optimal sampler: the z-scores are ESS-based, so calibrated at any run length,
#: and the smallest ESS stays far above the gate's 400. Measured on 4 runs each of the
#: structured topics (above 2000), and for the six conjugate topics on every builtin
#: data set (2026-12-05: 925 for dirichlet-categorical, 1014 pareto-uniform, 1555-2591
#: the others; none extended). Halves the cost of every study (the conjugate ones: 23.7
#: -> 12.8 CPU-s for beta-binomial's and gamma-poisson's together).
SHORT = dataclasses.replace(STUDY_SETTINGS, draws=1000, tune=500)
#: pm.sample's Metropolis-within-Gibbs keeps the default length.
FULL_LENGTH = {"bayes-optimal"}

CONJUGATE = (
    "beta-binomial",
    "gamma-poisson",
    "normal-known-variance",
    "normal-inverse-gamma",
    "pareto-uniform",
    "dirichlet-categorical",
)
STRUCTURED = tuple(name for name in NULL_FIXTURES if name not in CONJUGATE)


def null_studies(names) -> dict[str, NullStudy]:
    """One null study per topic, seeded by the topic's place in NULL_FIXTURES (the
    topics' ``Topic.calibration``, in the catalogue's order).

    Every replication's MAP is found with the objective compiled by the Python
    linker (``sampling.MAP_FIRST_MODE``, what a single ``run`` uses), never moved to
    the C one.  After ``MAP_SWITCH_SECONDS`` (8 s of wall time, so sooner on a busy
    machine) of searching, a ``MapFinder`` compiles its objective in C: the
    classifier's, mixture's and naive Bayes's cost 58-79 s each on a cold cache
    (sampling.py), and nothing else in the suite needs them, while 20-30 searches
    in Python cost these studies seconds.  Measured on a cold cache (2 busy cores),
    the gaussian-classifier, naive-bayes and gaussian-mixture studies together: 430
    CPU-s with the switch (the classifier's C objective alone 106 CPU-s of g++; the
    mixture's did not switch that time), 327 without.  Both objectives reach
    the same mode (~1e-8 on the builtin data, sampling.py), and the MAP check still
    runs on every replication; ``assert_z_scores_standard_normal`` still requires
    that it never decides a verdict.  The switch itself is tested in
    tests/compare/core/test_sampling.py.
    """
    import pytest

    from compare.core import sampling

    order = list(NULL_FIXTURES)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sampling, "MAP_SWITCH_SECONDS", float("inf"))
        return {
            name: mcmc_null(
                get_topic(name),
                replications=FEWER.get(name, REPLICATIONS),
                n_obs=NULL_FIXTURES[name][1],
                hyper=NULL_FIXTURES[name][0],
                seed=20261129 + order.index(name),
                settings=STUDY_SETTINGS if name in FULL_LENGTH else SHORT,
            )
            for name in names
        }


class LazyStudies(Mapping[str, NullStudy]):
    """:func:`null_studies` of ``names``, each computed when first asked for: a run of
    one topic's test (``-k beta-binomial``, CI's step without accelerators) pays for
    that topic's study alone."""

    def __init__(self, names) -> None:
        self._names = list(names)
        self._done: dict[str, NullStudy] = {}

    def __getitem__(self, name: str) -> NullStudy:
        if name not in self._names:
            raise KeyError(name)
        if name not in self._done:
            self._done.update(null_studies([name]))
        return self._done[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)


def assert_z_scores_standard_normal(study: NullStudy) -> None:
    """Per quantity, the replications' z's pass a KS test against N(0, 1) (the
    spread test's, a one-sided p-value's deviate, against the half-normal).

    Bonferroni over the quantities at 1e-4 per topic: a correctly calibrated
    test fails here with probability <= 1e-4.  ESS is estimated, so the z's
    are slightly over- or under-dispersed; 50 runs cannot see that, the
    study in benchmarks/verdict_study.py (500 runs) measures it.
    """
    m = len(study.names)
    # The spread test's z is the normal deviate of a one-sided p-value: half-normal.
    ks = np.array(
        [
            stats.kstest(
                study.z[:, j], stats.halfnorm.cdf if name.startswith("spread:") else "norm"
            ).pvalue
            for j, name in enumerate(study.names)
        ]
    )
    assert ks.min() * m > 1e-4, dict(zip(study.names, ks.round(5)))
    # The deterministic checks never fire on a correct model: every verdict is
    # decided by a statistical test (which may, rarely, say disagree).
    assert set(study.decided_by) <= {"agreement", "predictive"}, study.decided_by


def assert_pooled_false_alarm_near_alpha(studies: Mapping[str, NullStudy]) -> None:
    """Pooled over the topics: the alarms at alpha=0.05 stay within the binomial's 1e-5 tail.

    The bound is the exact Binomial(n, 0.05) quantile exceeded with probability
    below 1e-5, so a test calibrated at 0.05 fails this by chance at most that
    often. (It was 0.05 + 4 normal-approximation SEs, whose exact tail is
    3.4e-4 at n = 182: the normal approximation underestimates a binomial's
    right tail at small p.)
    """
    rates = {name: s.false_alarm_rate(0.05) for name, s in studies.items()}
    runs = {name: len(s.verdicts) for name, s in studies.items()}
    n = sum(runs.values())
    alarms = round(sum(rates[k] * runs[k] for k in rates))
    bound = int(stats.binom.isf(1e-5, n, 0.05))  # P(alarms > bound) <= 1e-5
    print(
        f"MCMC false-alarm rate at alpha=0.05 over {n} runs: pooled {alarms / n:.3f} "
        f"({alarms} alarms, bound {bound}), per topic {rates}"
    )
    assert alarms <= bound, rates
