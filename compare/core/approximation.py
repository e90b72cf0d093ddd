"""How wrong an approximation is: distances from the exact posterior, with their errors.

An approximation (ADVI, full-rank ADVI, Pathfinder, Laplace) is not the
posterior, so "does it agree" is not the question; "how far is it, and is
that within the user's tolerance" is. From S iid draws of the approximation
q (:class:`compare.core.inference.Approximation`) and the exact posterior p:

- **mean error** per parameter, in exact posterior sds:
  ``(mean_q - mean_p) / sd_p``, with Monte Carlo standard error
  ``sd_q / (sqrt(S) sd_p)`` (iid draws);
- **sd ratio** ``sd_q / sd_p``, with standard error ``ratio / sqrt(2 (S - 1))``
  (the sd of a sample sd, normal approximation);
- **90% interval coverage**: the exact probability of the approximation's
  central 90% interval (its 5% and 95% draw quantiles), from the exact
  marginal's CDF (else from exact iid draws); 0.90 is right, less is
  overconfident;
- **KL(q || p)** = E_q[log q(u) - log p(u)] in PyMC's unconstrained space u,
  where log p(u) is the model's log density with the transforms' Jacobian
  minus the exact log evidence (the normalising constant); estimated by the
  mean over the draws, with its standard error. Shown only where the exact
  log evidence is known and the estimate is not below -4 standard errors (a
  model whose density is normalised differently from the exact evidence
  would give a meaningless number);
- **Pareto k-hat** of the importance ratios p/q (Yao et al. 2018, "Yes, but
  did it work?"): below 0.7 the approximation is close enough for importance
  sampling to correct it; independent of normalising constants;
- **2-Wasserstein distance** where p and q are both Gaussian in the exact
  parameters (the exact posterior is Gaussian and the unconstrained space is
  the parameters themselves): ``|m_p - m_q|^2 + tr(S_p + S_q - 2 (S_q^1/2 S_p S_q^1/2)^1/2)``
  (Givens and Shortt 1984), exact.

The verdict (:func:`approximation_checks`): ``agree`` when every parameter's
|mean error| + 3 se <= ``tolerance_sd`` and |sd ratio - 1| + 3 se <=
``tolerance_sd_ratio``; ``disagree`` when some |mean error| - 3 se or
|sd ratio - 1| - 3 se exceeds its tolerance; ``inconclusive`` in between
(more draws would decide it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import linalg

from compare.core.checks import Check
from compare.core.defaults import Settings

#: Standard errors of margin on each side of a tolerance before it decides.
MARGIN_SE = 3.0
#: Pareto k-hat above which importance sampling cannot correct q (Vehtari et al. 2024).
KHAT_OK = 0.7


@dataclass(frozen=True)
class Distances:
    """The distances of one approximation from the exact posterior (see the module).

    Arrays are per parameter, in the exact side's order.
    """

    method: str
    parameters: tuple[str, ...]
    mean_error_sd: np.ndarray
    mean_error_se: np.ndarray
    sd_ratio: np.ndarray
    sd_ratio_se: np.ndarray
    coverage90: np.ndarray
    kl: float | None
    kl_se: float | None
    kl_note: str
    khat: float
    w2: float | None
    draws: int
    fit_seconds: float

    def section(self) -> dict[str, Any]:
        """The run document's ``approximation`` section."""
        return {
            "method": self.method,
            "draws": self.draws,
            "fit_seconds": self.fit_seconds,
            "parameters": [
                {
                    "name": name,
                    "mean_error_sd": float(self.mean_error_sd[i]),
                    "mean_error_se": float(self.mean_error_se[i]),
                    "sd_ratio": float(self.sd_ratio[i]),
                    "sd_ratio_se": float(self.sd_ratio_se[i]),
                    "coverage90": float(self.coverage90[i]),
                }
                for i, name in enumerate(self.parameters)
            ],
            "max_abs_mean_error_sd": float(np.max(np.abs(self.mean_error_sd))),
            "worst_sd_ratio": float(self.sd_ratio[np.argmax(np.abs(self.sd_ratio - 1.0))]),
            "kl": self.kl,
            "kl_se": self.kl_se,
            "kl_note": self.kl_note,
            "khat": self.khat,
            "w2": self.w2,
        }

    def lines(self) -> tuple[str, ...]:
        worst = int(np.argmax(np.abs(self.sd_ratio - 1.0)))
        kl = (
            f"KL(q||p) {self.kl:.3g} ± {self.kl_se:.2g}"
            if self.kl is not None and self.kl_se is not None
            else f"KL not shown ({self.kl_note})"
        )
        return (
            f"{self.method}: max |mean error| {np.max(np.abs(self.mean_error_sd)):.3f} sd, "
            f"sd ratio {self.sd_ratio[worst]:.3f} ({self.parameters[worst]}), "
            f"90% interval covers {np.min(self.coverage90):.3f} at worst; {kl}; "
            f"Pareto k-hat {self.khat:.2f}" + ("" if self.w2 is None else f"; W2 {self.w2:.3g}"),
        )


def distances(
    *,
    method: str,
    theta: np.ndarray,
    logq: np.ndarray,
    logp_u: np.ndarray,
    exact: Any,
    rng: np.random.Generator,
    gaussian_theta: tuple[np.ndarray, np.ndarray] | None,
    fit_seconds: float,
) -> Distances:
    """Every distance of the module docstring.

    Parameters
    ----------
    theta : array of shape (S, d)
        The approximation's draws of the exact parameters.
    logq, logp_u : arrays of shape (S,)
        log q and the model's unnormalised log density (with Jacobian) at
        the same draws, in the unconstrained space.
    exact : ExactAnswer
    gaussian_theta : (mean, cov), optional
        q's moments when q is Gaussian in the exact parameters themselves.
    """
    from arviz_stats.base import array_stats  # heavy: ArviZ only when draws are checked

    post = exact.posterior
    S, d = theta.shape
    sd_p = np.sqrt(np.clip(np.diag(post.cov), 0.0, None))
    sd_p = np.where(sd_p > 0, sd_p, np.nan)
    mean_q = theta.mean(axis=0)
    sd_q = theta.std(axis=0, ddof=1)
    err = (mean_q - post.mean) / sd_p
    err_se = sd_q / (np.sqrt(S) * sd_p)
    ratio = sd_q / sd_p
    ratio_se = ratio / np.sqrt(2.0 * (S - 1))
    lo, hi = np.quantile(theta, [0.05, 0.95], axis=0)
    coverage = np.empty(d)
    reference = None
    for i in range(d):
        marginal = post.marginal(i)
        if marginal is not None:
            coverage[i] = float(marginal.cdf(hi[i]) - marginal.cdf(lo[i]))
        else:
            if reference is None:
                reference = post.sample(rng, 100_000)
            coverage[i] = float(np.mean((reference[:, i] >= lo[i]) & (reference[:, i] <= hi[i])))
    diff = logq - logp_u
    kl = kl_se = None
    log_z = getattr(exact, "log_evidence", None)
    if log_z is None or not np.isfinite(log_z):
        kl_note = "the exact log evidence is not known"
    elif not np.all(np.isfinite(diff)):
        kl_note = "some draws fall outside the posterior's support"
    else:
        estimate = float(np.mean(diff) + log_z)
        se = float(np.std(diff, ddof=1) / np.sqrt(S))
        if estimate < -4.0 * se - 1e-9:
            kl_note = (
                f"the estimate {estimate:.3g} ± {se:.2g} is negative: the model's density "
                "is not normalised like the exact evidence"
            )
        else:
            kl, kl_se, kl_note = estimate, se, ""
    finite = np.isfinite(diff)
    if np.all(finite) and np.ptp(diff) < 1e-8:
        khat = 0.0  # q is p (constant ratios: no tail at all)
    else:
        _, khat = array_stats.psislw(np.where(finite, -diff, -np.inf))
    w2 = None
    if gaussian_theta is not None and post.is_gaussian:
        w2 = gaussian_w2(post.mean, post.cov, *gaussian_theta)
    return Distances(
        method=method,
        parameters=tuple(post.parameters),
        mean_error_sd=err,
        mean_error_se=err_se,
        sd_ratio=ratio,
        sd_ratio_se=ratio_se,
        coverage90=coverage,
        kl=kl,
        kl_se=kl_se,
        kl_note=kl_note,
        khat=float(khat),
        w2=w2,
        draws=S,
        fit_seconds=fit_seconds,
    )


def gaussian_w2(m1: np.ndarray, s1: np.ndarray, m2: np.ndarray, s2: np.ndarray) -> float:
    """2-Wasserstein distance between N(m1, s1) and N(m2, s2) (closed form)."""
    root2 = linalg.sqrtm(s2)
    cross = linalg.sqrtm(root2 @ s1 @ root2)
    value = float(np.sum((m1 - m2) ** 2) + np.trace(s1 + s2 - 2.0 * np.real(cross)))
    return float(np.sqrt(max(value, 0.0)))


def _decide(name: str, errors: Any, ses: Any, tolerance: float, what: str) -> Check:
    """Per parameter: within ``tolerance`` beyond 3 se, beyond it, or unsure (module docstring).

    ``errors`` and ``ses`` are the parameters' errors and Monte Carlo standard
    errors (or one of each); the statistic shown is the largest error.
    """
    errors, ses = np.atleast_1d(np.asarray(errors, float)), np.atleast_1d(np.asarray(ses, float))
    statistic = float(np.nanmax(errors))
    if np.all(errors + MARGIN_SE * ses <= tolerance):
        return Check(name, statistic, tolerance, True, what)
    if np.any(errors - MARGIN_SE * ses > tolerance):
        return Check(name, statistic, tolerance, False, what)
    unsure = int(np.argmax(errors + MARGIN_SE * ses - tolerance))
    return Check(
        name,
        statistic,
        tolerance,
        False,
        what
        + f"; within {MARGIN_SE:g} Monte Carlo se ({ses[unsure]:.2g}) of the tolerance: draw more",
        on_fail="inconclusive",
    )


def approximation_checks(found: Distances, settings: Settings) -> tuple[Check, ...]:
    """The approximation's checks against the user's tolerances (module docstring)."""
    err = np.abs(found.mean_error_sd)
    i = int(np.nanargmax(err))
    dev = np.abs(found.sd_ratio - 1.0)
    j = int(np.nanargmax(dev))
    return (
        _decide(
            "approx_mean",
            err,
            found.mean_error_se,
            settings.tolerance_sd,
            f"largest |mean error| ({found.parameters[i]}) in exact posterior sds must not "
            "exceed --tolerance-sd",
        ),
        _decide(
            "approx_sd",
            dev,
            found.sd_ratio_se,
            settings.tolerance_sd_ratio,
            f"largest |sd ratio - 1| ({found.parameters[j]}, ratio {found.sd_ratio[j]:.3f}) "
            "must not exceed --tolerance-sd-ratio",
        ),
    )
