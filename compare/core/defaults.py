"""The one place for sampler and verdict defaults; nothing else hard-codes them."""

from __future__ import annotations

import numbers
from dataclasses import dataclass

from compare.core.methods import DEFAULT_METHOD, METHODS


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
    max_draws, max_extensions : int
        The run's extension (see ``compare.core.runner.run``): when the chains
        explore one mode but too few effective draws were kept (bulk or tail
        ESS at most ``ess_min``, or R-hat above ``rhat_max`` with the chains
        less than ``mode_gap_sd`` apart), the run is sampled again, afresh,
        with more draws per chain, at most ``max_extensions`` times and never
        beyond ``max_draws`` per chain (nor below the starting ``draws``).
        ``max_extensions=0`` turns it off.
    extension_growth : float
        Each extension multiplies the draws by ``extension_growth x ess_min /
        smallest ESS`` (ESS grows about linearly with draws; the factor is the
        margin), kept between 1.5 and 4.
    mode_gap_sd : float
        Chains whose means of some parameter lie more than this many pooled
        within-chain sds apart sit in different modes: with R-hat above the
        gate that is ``inconclusive`` at once, and drawing more is not tried.
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
    method : str
        The inference method (:mod:`compare.core.methods`): ``nutpie`` by
        default; another sampler, or an approximation (then ``chains x
        draws`` iid draws are taken from it and judged by the tolerances below).
    tolerance_sd, tolerance_sd_ratio : float
        An approximation agrees when every parameter's mean is within
        ``tolerance_sd`` exact posterior sds of the exact mean and its sd
        within ``tolerance_sd_ratio`` (relative) of the exact sd, both beyond
        3 Monte Carlo standard errors (:mod:`compare.core.approximation`).
    vi_steps : int
        Optimisation steps of ADVI (``pm.fit(n=...)``).
    retry_target_accept : float
        When a nutpie run diverged while its chains agree (R-hat passes; the
        effective draws may be short), the run is sampled once more, afresh, with this
        ``target_accept`` (smaller steps; nutpie's default is 0.8) unless the
        run already asked for at least as much: the decision reads diagnostics
        only, so the verdict stays calibrated. 0 turns it off.
    """

    draws: int = 2000
    tune: int = 1000
    chains: int = 4
    seed: int = 20261129
    alpha: float = 1e-4
    rhat_max: float = 1.01
    ess_min: float = 400.0
    max_draws: int = 16_000
    max_extensions: int = 2
    extension_growth: float = 1.25
    mode_gap_sd: float = 1.0
    map_tol_sd: float = 1e-2
    n_reference: int = 200_000
    predictive_points: int = 10
    smc_draws: int = 1000
    smc_chains: int = 4
    smc_tol_nats: float = 0.5
    extras: bool = True
    method: str = DEFAULT_METHOD
    tolerance_sd: float = 0.1
    tolerance_sd_ratio: float = 0.1
    vi_steps: int = 20_000
    retry_target_accept: float = 0.95

    def __post_init__(self) -> None:
        for name in ("draws", "chains", "n_reference"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
        if not isinstance(self.tune, int) or self.tune < 0:
            raise ValueError(f"tune must be an integer >= 0, got {self.tune!r}")
        # numpy's generators, int64 arrays and nutpie's u64 all accept [0, 2**63 - 1]; outside
        # it nutpie raised OverflowError only after the model had compiled.
        if (
            isinstance(self.seed, bool)
            or not isinstance(self.seed, numbers.Integral)
            or not 0 <= self.seed <= 2**63 - 1
        ):
            raise ValueError(
                f"seed must be a whole number from 0 to 2**63 - 1 = {2**63 - 1}, "
                f"got {self.seed!r}; e.g. --seed 20261129"
            )
        if not isinstance(self.max_extensions, int) or self.max_extensions < 0:
            raise ValueError(
                f"max_extensions must be an integer >= 0, got "
                f"{self.max_extensions!r}; 0 turns the extension off"
            )
        if not isinstance(self.max_draws, int) or self.max_draws < 1:
            raise ValueError(f"max_draws must be an integer >= 1, got {self.max_draws!r}")
        if not self.extension_growth >= 1.0:
            raise ValueError(f"extension_growth must be >= 1, got {self.extension_growth!r}")
        if not self.mode_gap_sd > 0.0:
            raise ValueError(f"mode_gap_sd must be > 0, got {self.mode_gap_sd!r}")
        if self.method not in METHODS:
            raise ValueError(
                f"method must be one of {', '.join(METHODS)}, got {self.method!r}; "
                "e.g. --method pymc"
            )
        for name in ("tolerance_sd", "tolerance_sd_ratio"):
            if not getattr(self, name) > 0.0:
                raise ValueError(f"{name} must be > 0, got {getattr(self, name)!r}")
        if not isinstance(self.vi_steps, int) or self.vi_steps < 1:
            raise ValueError(
                f"vi_steps must be an integer >= 1, got {self.vi_steps!r}; e.g. --vi-steps 100000"
            )
        if not (self.retry_target_accept == 0.0 or 0.0 < self.retry_target_accept < 1.0):
            raise ValueError(
                f"retry_target_accept must be in (0, 1), or 0 for no retry, got "
                f"{self.retry_target_accept!r}; e.g. 0.95"
            )
        if not 0.0 < self.alpha < 1.0:
            raise ValueError(f"alpha must be in (0, 1), got {self.alpha!r}; e.g. --alpha 1e-4")


DEFAULT = Settings()
