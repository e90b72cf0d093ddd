"""How wrong an approximation is: distances from the exact posterior, with their errors.

An approximation (ADVI, full-rank ADVI, Pathfinder, Laplace) is not the
posterior, so "does it agree" is not the question; "how far is it, and is
that within the user's tolerance" is. From S iid draws of the approximation
q (:class:`compare.core.inference.Approximation`) and the exact posterior p:

- **mean error** per parameter, in exact posterior sds:
  ``(mean_q - mean_p) / sd_p``, with Monte Carlo standard error
  ``sd_q / (sqrt(S) sd_p)`` (iid draws);
- **sd ratio** ``sd_q / sd_p``, with standard error
  ``ratio / 2 sqrt(2 / (S - 1) + kappa / S)``, kappa q's sample excess
  kurtosis (the delta method on the sample variance, whose variance is
  ``sd^4 (2 / (S - 1) + kappa / S)``; issue 60: with kappa taken as 0 the se
  was half the truth for a lognormal q of sigma 0.5, a quarter at 0.8);
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

ADVI also says whether its optimisation had levelled off
(:func:`loss_trend`, :class:`Optimisation`): a fit stopped while its loss
was still falling is a fit that more steps would move, which tells "ADVI
gets this posterior wrong" from "ADVI had not got there yet". It informs;
the verdict is the distances' alone.

The verdict (:func:`approximation_checks`): ``agree`` when every parameter's
|mean error| + c se <= ``tolerance_sd`` and |sd ratio - 1| + c se <=
``tolerance_sd_ratio``; ``disagree`` when some |mean error| - c se or
|sd ratio - 1| - c se exceeds its tolerance; ``inconclusive`` in between
(more draws would decide it). The margin c is 3 for one decision and grows
with the 2 d decisions of d parameters (:func:`margin_se`), so the chance
that the whole verdict is decisive and wrong stays at a single 3-se
decision's, 0.13%.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import linalg

from compare.core.checks import Check, CheckKind
from compare.core.defaults import Settings

#: Standard errors of margin on each side of a tolerance before one decision decides.
MARGIN_SE = 3.0


def margin_se(decisions: int) -> float:
    """The margin, in standard errors, for ``decisions`` decisions at once: the
    one-sided tail of a single ``MARGIN_SE`` decision split over them
    (Bonferroni), so 3 for one and about 3.2 for two, 4.4 for 200."""
    from scipy import stats  # light: SciPy is imported by this module already

    return float(stats.norm.isf(stats.norm.sf(MARGIN_SE) / max(int(decisions), 1)))


#: Pareto k-hat above which importance sampling cannot correct q (Vehtari et al. 2024).
KHAT_OK = 0.7
#: :func:`loss_trend`: the last tenth of the steps against the tenth before, each cut
#: into this many batches; and the z above which the loss is still falling.
TREND_BATCHES = 10
STILL_FALLING_Z = 4.0
#: Fewer steps than this leave too few per batch to judge a trend.
TREND_MIN_STEPS = 20 * TREND_BATCHES


@dataclass(frozen=True)
class Optimisation:
    """Whether an optimiser's loss had levelled off at its last step (:func:`loss_trend`).

    Attributes
    ----------
    steps : int
        Optimisation steps taken.
    loss_drop : float
        Mean loss over the tenth of the steps before the last tenth, minus
        the mean over the last tenth (> 0: still falling); NaN when a loss
        there was not finite or when there were too few steps to judge.
    loss_drop_se : float
        Its standard error, from batch means (NaN as above).
    note : str
        Why there is no trend, when ``loss_drop`` is NaN; else empty.
    """

    steps: int
    loss_drop: float
    loss_drop_se: float
    note: str = ""

    @property
    def z(self) -> float:
        if not np.isfinite(self.loss_drop):
            return float("nan")
        if self.loss_drop_se > 0:
            return self.loss_drop / self.loss_drop_se
        return 0.0 if self.loss_drop == 0 else float(np.copysign(np.inf, self.loss_drop))

    @property
    def converged(self) -> bool | None:
        """True when the loss had levelled off, False when it was still falling or
        not finite, None when there were too few steps to tell."""
        if self.note.startswith("too few"):
            return None
        return bool(np.isfinite(self.loss_drop) and self.z <= STILL_FALLING_Z)

    def section(self) -> dict[str, Any]:
        """The ``approximation`` section's ``optimisation`` entry of a run document."""
        finite = bool(np.isfinite(self.loss_drop))
        return {
            "steps": self.steps,
            "loss_drop": float(self.loss_drop) if finite else None,
            "loss_drop_se": float(self.loss_drop_se) if finite else None,
            "z": float(self.z) if finite and np.isfinite(self.z) else None,
            "converged": self.converged,
            "note": self.note,
        }

    def text(self, method: str) -> str:
        if self.converged is None or not np.isfinite(self.loss_drop):
            return f"{method}'s optimisation after {self.steps} steps: {self.note}"
        trend = (
            f"the loss of the last tenth {self.loss_drop:.3g} below the tenth before "
            f"(z {self.z:.1f}, {STILL_FALLING_Z:g} or less is level)"
        )
        if self.converged:
            return f"{method}'s optimisation levelled off in {self.steps} steps: {trend}"
        return (
            f"{method}'s optimisation had NOT converged in {self.steps} steps: {trend}; "
            "more steps (--vi-steps) would move the fit, so the distances above are "
            "those of an unfinished fit"
        )


def loss_trend(loss: np.ndarray) -> Optimisation:
    """Whether a loss history (one noisy estimate per step) was still falling at its end.

    The mean of the last tenth of the steps is compared with that of the
    tenth before. Each tenth is cut into ``TREND_BATCHES`` batches and the
    standard error of its mean taken from the spread of the batch means
    (batch means: the optimiser's iterates make neighbouring estimates
    correlated, so the per-step spread would understate it). With the loss
    level and its correlation shorter than a batch (at ADVI's 20,000 steps a
    batch is 200 steps), ``z = drop / se`` is close to Student's t with
    about 2 (TREND_BATCHES - 1) = 18 degrees of freedom, and ``z > 4``
    happens with probability about 4e-4: that is the false "not converged"
    rate (tests/compare/core/test_approximation.py measures it on simulated
    correlated noise, 1-4 in 2000, and the power on a loss still falling by
    1.5 of its noise's sd per tenth of the steps: 999 in 1000).

    Parameters
    ----------
    loss : array of shape (steps,)
        The loss at each step (ADVI: the negative ELBO's estimate, ``pm.fit``'s
        ``approx.hist``).
    """
    loss = np.asarray(loss, dtype=float).ravel()
    steps = loss.size
    if steps < TREND_MIN_STEPS:
        return Optimisation(
            steps,
            float("nan"),
            float("nan"),
            f"too few steps to judge a trend (< {TREND_MIN_STEPS})",
        )
    width = steps // 10
    last, before = loss[steps - width :], loss[steps - 2 * width : steps - width]
    if not (np.all(np.isfinite(last)) and np.all(np.isfinite(before))):
        return Optimisation(
            steps,
            float("nan"),
            float("nan"),
            "the loss was not finite over the last fifth of the steps: the optimisation diverged",
        )

    def mean_and_se(window: np.ndarray) -> tuple[float, float]:
        means = np.array([b.mean() for b in np.array_split(window, TREND_BATCHES)])
        return float(window.mean()), float(means.std(ddof=1) / np.sqrt(TREND_BATCHES))

    (m_last, se_last), (m_before, se_before) = mean_and_se(last), mean_and_se(before)
    return Optimisation(steps, m_before - m_last, float(np.hypot(se_last, se_before)))


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
    optimisation: Optimisation | None = None

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
            "optimisation": None if self.optimisation is None else self.optimisation.section(),
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
        ) + (() if self.optimisation is None else (self.optimisation.text(self.method),))


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
    optimisation: Optimisation | None = None,
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
    optimisation : Optimisation, optional
        Whether the fit's optimisation had levelled off (ADVI), carried to the
        section and the lines.
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
    centred = theta - mean_q
    kappa = np.mean(centred**4, axis=0) / np.maximum(np.mean(centred**2, axis=0) ** 2, 1e-300) - 3
    ratio_se = ratio / 2.0 * np.sqrt(np.maximum(2.0 / (S - 1) + kappa / S, 0.0))
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
        optimisation=optimisation,
    )


def gaussian_w2(m1: np.ndarray, s1: np.ndarray, m2: np.ndarray, s2: np.ndarray) -> float:
    """2-Wasserstein distance between N(m1, s1) and N(m2, s2) (closed form)."""
    root2 = linalg.sqrtm(s2)
    cross = linalg.sqrtm(root2 @ s1 @ root2)
    value = float(np.sum((m1 - m2) ** 2) + np.trace(s1 + s2 - 2.0 * np.real(cross)))
    return float(np.sqrt(max(value, 0.0)))


def _decide(
    name: str, errors: Any, ses: Any, tolerance: float, what: str, margin: float = MARGIN_SE
) -> Check:
    """Per parameter: within ``tolerance`` beyond 3 se, beyond it, or unsure (module docstring).

    ``errors`` and ``ses`` are the parameters' errors and Monte Carlo standard
    errors (or one of each); the statistic shown is the largest error.
    """
    errors, ses = np.atleast_1d(np.asarray(errors, float)), np.atleast_1d(np.asarray(ses, float))
    statistic = float(np.nanmax(errors))
    if np.all(errors + margin * ses <= tolerance):
        return Check(name, statistic, tolerance, True, what)
    if np.any(errors - margin * ses > tolerance):
        return Check(name, statistic, tolerance, False, what)
    unsure = int(np.argmax(errors + margin * ses - tolerance))
    return Check(
        name,
        statistic,
        tolerance,
        False,
        what
        + f"; within {margin:.2g} Monte Carlo se ({ses[unsure]:.2g}) of the tolerance: draw more",
        on_fail="inconclusive",
    )


def approximation_checks(found: Distances, settings: Settings) -> tuple[Check, ...]:
    """The approximation's checks against the user's tolerances (module docstring)."""
    err = np.abs(found.mean_error_sd)
    i = int(np.nanargmax(err))
    dev = np.abs(found.sd_ratio - 1.0)
    j = int(np.nanargmax(dev))
    margin = margin_se(2 * len(found.parameters))  # every parameter's two decisions
    return (
        _decide(
            CheckKind.APPROX_MEAN,
            err,
            found.mean_error_se,
            settings.tolerance_sd,
            f"largest |mean error| ({found.parameters[i]}) in exact posterior sds must not "
            "exceed --tolerance-sd",
            margin,
        ),
        _decide(
            CheckKind.APPROX_SD,
            dev,
            found.sd_ratio_se,
            settings.tolerance_sd_ratio,
            f"largest |sd ratio - 1| ({found.parameters[j]}, ratio {found.sd_ratio[j]:.3f}) "
            "must not exceed --tolerance-sd-ratio",
            margin,
        ),
    )
