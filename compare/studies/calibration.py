"""Evidence that the verdict is right: null calibration and power.

* :func:`iid_null` replaces MCMC by exact iid draws, so every z-score of the
  agreement test should be standard normal and the family-wise false-alarm
  rate at most alpha.
* :func:`mcmc_null` runs the real PyMC model on fresh simulated data with
  fresh seeds; the same should hold up to the error of estimated ESS.
* :func:`detection_rate` runs a (deliberately wrong) PyMC model against the
  exact posterior and counts how often the verdict is ``disagree``.

Each topic declares what it is studied on (``Topic.calibration``: a
:class:`~compare.core.registry.Calibration`, or ``Unsupported``);
:func:`null_fixtures` and :func:`power_fixtures` ask every registered topic.
The test suite calls these with enough replications to be decisive;
``benchmarks/verdict_study.py`` calls them with more and prints the figures
quoted in docs/studies.md.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from analytic import ExactPosterior
from compare.core.agreement import agreement_test, bonferroni_threshold
from compare.core.checks import CheckKind
from compare.core.defaults import DEFAULT, Settings
from compare.core.registry import Calibration, Topic
from compare.core.runner import DISAGREE, run
from compare.core.sampling import CACHE, ModelCache
from compare.topics import all_topics


def null_fixtures() -> dict[str, tuple[dict[str, Any], int]]:
    """The null study's fixture of every registered topic that declares one.

    Returns
    -------
    dict
        Topic name -> ``(hyperparameters, n_obs)``, from each topic's
        ``calibration`` (:class:`~compare.core.registry.Calibration`), in the
        registry's order (the catalogue's); topics declaring
        ``Unsupported`` are left out.  Shared by the tests and
        ``benchmarks/verdict_study.py``, which seed each study by its place here.
    """
    return {
        t.name: (dict(t.calibration.hyper), t.calibration.n_obs)
        for t in all_topics()
        if isinstance(t.calibration, Calibration)
    }


def power_fixtures() -> dict[str, tuple[dict[str, Any], int]]:
    """The power study's fixture of every topic that declares one (``Calibration.power``).

    Returns
    -------
    dict
        Topic name -> ``(hyperparameters, n_obs)``: the prior holds a real share
        of the posterior precision, so a planted prior bug is visible.
    """
    return {
        t.name: (dict(t.calibration.power.hyper), t.calibration.power.n_obs)
        for t in all_topics()
        if isinstance(t.calibration, Calibration) and t.calibration.power is not None
    }


def __getattr__(name: str) -> Any:
    """``NULL_FIXTURES`` and ``POWER_FIXTURES``: :func:`null_fixtures` and
    :func:`power_fixtures`, computed when first asked for (loading the topics)."""
    if name == "NULL_FIXTURES":
        return null_fixtures()
    if name == "POWER_FIXTURES":
        return power_fixtures()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


#: Studies skip the SMC evidence check (it is not part of the z-statistics and
#: costs seconds per run); everything else is the default.
STUDY_SETTINGS = dataclasses.replace(DEFAULT, smc_chains=0)


@dataclass(frozen=True)
class NullStudy:
    """z-scores of every test quantity over replications under the null.

    Attributes
    ----------
    names : tuple of str
        Test quantity names, the columns of ``z``.  Predictive quantities
        (regression topics) are prefixed ``predictive:``.
    z : array of shape (replications, quantities)
    family : array of shape (quantities,)
        Which statistical test each column belongs to (0: posterior,
        1: predictive); the verdict splits alpha evenly over the tests.
    verdicts : tuple of str
        The verdict of each replication (MCMC studies only; empty for iid).
    worst_rhat : array of shape (replications,)
        Largest R-hat of each replication (MCMC studies only).
    decided_by : tuple of str
        The check that decided each replication's verdict (MCMC studies only).
    """

    names: tuple[str, ...]
    z: np.ndarray
    family: np.ndarray = dataclasses.field(default_factory=lambda: np.empty(0, dtype=int))
    verdicts: tuple[str, ...] = ()
    worst_rhat: np.ndarray = dataclasses.field(default_factory=lambda: np.empty(0))
    decided_by: tuple[str, ...] = ()
    alpha: float = DEFAULT.alpha

    @classmethod
    def concat(cls, parts: Sequence[NullStudy]) -> NullStudy:
        """One study from studies of consecutive replication ranges of the same fixture."""
        first = parts[0]
        if any(p.names != first.names or p.alpha != first.alpha for p in parts):
            raise ValueError(
                "the parts test different quantities or alphas; they are not one study"
            )
        return cls(
            names=first.names,
            z=np.concatenate([p.z for p in parts]),
            family=first.family,
            verdicts=tuple(v for p in parts for v in p.verdicts),
            worst_rhat=np.concatenate([p.worst_rhat for p in parts]),
            decided_by=tuple(d for p in parts for d in p.decided_by),
            alpha=first.alpha,
        )

    def false_alarm_rate(self, alpha: float) -> float:
        """Share of replications the statistical tests would flag at ``alpha``.

        As in the verdict: alpha split evenly over the tests (families), each
        test flagging when its max |z| exceeds its Bonferroni threshold.
        """
        family = self.family if self.family.size else np.zeros(len(self.names), dtype=int)
        tests = np.unique(family)
        alarm = np.zeros(self.z.shape[0], dtype=bool)
        for f in tests:
            cols = family == f
            threshold = bonferroni_threshold(alpha / tests.size, int(cols.sum()))
            alarm |= np.max(np.abs(self.z[:, cols]), axis=1) > threshold
        return float(np.mean(alarm))


def iid_null(
    posterior: ExactPosterior,
    *,
    replications: int,
    chains: int,
    draws: int,
    rng: np.random.Generator,
    n_reference: int = DEFAULT.n_reference,
) -> NullStudy:
    """Agreement z-scores when the "MCMC" draws are exact iid draws.

    Each replication has a seed of its own, so a null that comes from exact
    reference draws (a multivariate posterior's dependence, a coordinate
    without a marginal) is drawn afresh: the study measures what the standard
    error claims, calibration over reference sets (a posterior with marginals
    and one coordinate needs none, and costs nothing more)."""
    rows, names = [], None
    for r in range(replications):
        sample = posterior.sample(rng, chains * draws).reshape(chains, draws, -1)
        result = agreement_test(sample, posterior, alpha=0.05, seed=r, n_reference=n_reference)
        names = names or tuple(q.name for q in result.quantities)
        rows.append([q.z for q in result.quantities])
    return NullStudy(names=names, z=np.array(rows))


def mcmc_null(
    topic: Topic,
    *,
    replications: int,
    n_obs: int,
    hyper: dict[str, Any],
    seed: int,
    settings: Settings = STUDY_SETTINGS,
    cache: ModelCache = CACHE,
    model_topic: Topic | None = None,
    first: int = 0,
    seeds_per_data: int = 1,
) -> NullStudy:
    """Agreement z-scores of real PyMC runs on fresh prior-predictive data sets.

    Replication ``r`` (``first <= r < first + replications``) simulates data
    with ``default_rng([seed, r // seeds_per_data])`` and samples with seed
    ``seed * 100_003 + r``, so a study split into ranges (one Dask task each)
    and joined with :meth:`NullStudy.concat` is the study run in one piece.
    ``model_topic`` (default ``topic``) supplies the PyMC model: pass a topic
    whose ``build_model`` is wrong to study power with the same machinery.

    ``seeds_per_data`` (default 1: every run on its own data set) samples each
    data set with that many seeds in a row.  The replications' z-scores stay
    independent and standard normal under the null: given the data the exact
    posterior is known, and runs with different seeds have independent Monte
    Carlo errors.  Fewer posteriors are covered, but a method that compiles a
    program per data set (the JAX samplers, whose programs hold the data as
    constants) compiles once per data set instead of once per run.
    """
    if seeds_per_data < 1:
        raise ValueError(f"seeds_per_data must be >= 1, got {seeds_per_data}")
    model_topic = model_topic or topic
    if model_topic.extra_tests == 0:  # extras add no statistical test: skip their cost
        settings = dataclasses.replace(settings, extras=False)
    rows, names, verdicts, rhats, deciders = [], None, [], [], []
    for r in range(first, first + replications):
        sim = topic.simulate(np.random.default_rng([seed, r // seeds_per_data]), n_obs, dict(hyper))
        result = run(
            model_topic,
            data=sim.data,
            hyper=hyper,
            cache=cache,
            settings=dataclasses.replace(settings, seed=seed * 100_003 + r),
        )
        predictive = result.extra.sections.get("predictive", {}).get("quantities", [])
        these = tuple(q.name for q in result.agreement.quantities) + tuple(
            f"predictive:{q['name']}" for q in predictive
        )
        if names is not None and these != names:
            raise ValueError(
                f"replication {r} tested {these}, earlier ones {names}; "
                "fix n_obs and the categories so every replication "
                "tests the same quantities"
            )
        names = these
        rows.append([q.z for q in result.agreement.quantities] + [q["z"] for q in predictive])
        family = np.array([0] * len(result.agreement.quantities) + [1] * len(predictive))
        verdicts.append(result.verdict)
        deciders.append(result.decided_by)
        rhats.append(next(c.statistic for c in result.checks if c.name == CheckKind.RHAT))
    return NullStudy(
        names=names,
        z=np.array(rows),
        family=family,
        verdicts=tuple(verdicts),
        worst_rhat=np.array(rhats),
        decided_by=tuple(deciders),
        alpha=settings.alpha,
    )


def detection_rate(study: NullStudy, *, by: str | None = None) -> float:
    """Share of replications whose verdict is ``disagree``.

    With ``by="agreement"``: the share that the statistical tests alone flag
    (posterior, and predictive where the topic has one, at the run's alpha),
    whatever the MAP and other deterministic checks said.
    """
    if by is None:
        return float(np.mean([v == DISAGREE for v in study.verdicts]))
    if by != CheckKind.AGREEMENT:
        raise ValueError(f"by must be None or 'agreement', got {by!r}")
    return study.false_alarm_rate(study.alpha)
