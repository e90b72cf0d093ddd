"""Is the power statement true on real runs? (issue 60, item 3)

:func:`planted_shift_rate` runs a topic's real PyMC model on fresh data from
its null fixture, reads the run's own power statement
(:func:`compare.core.power.power_of`), moves the run's draws of the first
parameter by exactly the stated shift (in exact posterior sds), and tests
them again with the run's alpha and seed: the share caught should be about
0.9 (the statement takes the best single quantity, so more is allowed).
``benchmarks/power_study.py`` prints the figures quoted in docs/verdict.md.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from compare.core.agreement import agreement_test, posterior_array
from compare.core.power import power_of
from compare.studies.calibration import STUDY_SETTINGS, null_fixtures
from compare.topics import get_topic


@dataclass(frozen=True)
class ShiftRate:
    """How often a shift of the stated size was caught."""

    topic: str
    caught: int
    runs: int
    mean_shift_sd: float

    @property
    def rate(self) -> float:
        return self.caught / self.runs if self.runs else float("nan")

    @property
    def se(self) -> float:
        return float(np.sqrt(0.9 * 0.1 / self.runs)) if self.runs else float("nan")


def planted_shift_rate(topic_name: str, *, replications: int, seed: int) -> ShiftRate:
    """Shifts of exactly the stated size in real runs of ``topic_name``'s null fixture;
    runs that are not ``agree`` (no statement to check) are skipped."""
    from compare.core.runner import run  # heavy: PyMC when the study runs

    topic = get_topic(topic_name)
    hyper, n_obs = null_fixtures()[topic_name]
    caught = runs = 0
    shifts = []
    for r in range(replications):
        sim = topic.simulate(np.random.default_rng([seed, r]), n_obs, dict(hyper))
        settings = dataclasses.replace(STUDY_SETTINGS, seed=seed * 100_003 + r)
        result = run(topic, data=sim.data, hyper=hyper, settings=settings)
        power = power_of(result.agreement, result.exact.posterior)
        if result.verdict != "agree" or power is None or result.agreement is None:
            continue
        first = result.parameters[0]
        delta = power.parameters[first]["mean_shift_sd"]
        if delta is None:
            continue
        draws = posterior_array(result.draws.posterior, result.variables)
        sd = float(np.sqrt(result.exact.posterior.cov[0, 0]))
        draws[..., 0] += delta * sd
        again = agreement_test(
            draws,
            result.exact.posterior,
            alpha=result.agreement.alpha,
            seed=settings.seed,
            n_reference=settings.n_reference,
        )
        caught += not again.passed
        runs += 1
        shifts.append(delta)
    return ShiftRate(
        topic=topic_name,
        caught=caught,
        runs=runs,
        mean_shift_sd=float(np.mean(shifts)) if shifts else float("nan"),
    )
