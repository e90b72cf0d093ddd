"""The one place for sampler and verdict defaults; nothing else hard-codes them."""

from __future__ import annotations

import numbers
from dataclasses import dataclass


@dataclass(frozen=True)
class Settings:
    """How a run samples and decides.

    Attributes
    ----------
    draws, tune, chains : int
        Kept draws and warm-up draws per chain, and the number of chains.
    seed : int
        Seeds the sampler and the exact reference draws.
    alpha : float
        Family-wise false-alarm rate of the agreement test (Bonferroni).
    rhat_max, ess_min : float
        Convergence gate (Vehtari et al. 2021): rank-normalised split R-hat
        below ``rhat_max`` and bulk and tail ESS above ``ess_min`` for every
        parameter, and no divergent transition.
    map_tol_sd : float
        Largest distance, in exact posterior sds, between PyMC's MAP and the
        exact mode before the MAP check fails.
    n_reference : int
        Exact iid draws used for null moments that have no closed form.
    predictive_points : int
        Inputs at which regression topics test the joint posterior predictive.
    smc_draws, smc_chains : int
        Particles per chain and chains of ``pm.sample_smc`` for the evidence
        check (0 chains skips it).
    extras : bool
        Run the topic's extra comparisons (predictive, evidence, the
        marginalised mixture); null studies skip them where they add no
        statistical test.
    smc_tol_nats : float
        Smallest tolerance of the evidence check; the check allows
        ``max(smc_tol_nats, 5 x sd over chains)`` between the exact log
        evidence and the SMC mean (SMC is noisy and biased low).
    """

    draws: int = 2000
    tune: int = 1000
    chains: int = 4
    seed: int = 20261129
    alpha: float = 1e-4
    rhat_max: float = 1.01
    ess_min: float = 400.0
    map_tol_sd: float = 1e-2
    n_reference: int = 200_000
    predictive_points: int = 10
    smc_draws: int = 1000
    smc_chains: int = 4
    smc_tol_nats: float = 0.5
    extras: bool = True

    def __post_init__(self) -> None:
        for name in ("draws", "chains", "n_reference"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
        if not isinstance(self.tune, int) or self.tune < 0:
            raise ValueError(f"tune must be an integer >= 0, got {self.tune!r}")
        # numpy's generators, int64 arrays and nutpie's u64 all accept [0, 2**63 - 1]; outside
        # it nutpie raised OverflowError only after the model had compiled.
        if (isinstance(self.seed, bool) or not isinstance(self.seed, numbers.Integral)
                or not 0 <= self.seed <= 2**63 - 1):
            raise ValueError(f"seed must be a whole number from 0 to 2**63 - 1 = {2**63 - 1}, "
                             f"got {self.seed!r}; e.g. --seed 20261129")
        if not 0.0 < self.alpha < 1.0:
            raise ValueError(f"alpha must be in (0, 1), got {self.alpha!r}; e.g. --alpha 1e-4")


DEFAULT = Settings()
