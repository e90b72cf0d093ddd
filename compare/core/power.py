"""What the agreement test could have caught: its power, from its own null and ESS.

For each parameter, the smallest error of the MCMC posterior that the test,
at its threshold and with the run's ESS, detects with probability 0.9
(``PROBABILITY``) -- computed, not simulated:

* a **mean shift** of ``delta`` exact posterior sds in that parameter:
  for a Gaussian posterior it moves the whitened draws by
  ``delta sd_i L^-1 e_i``, so the ``mean:`` quantities' z by that times
  ``sqrt(ESS)``; for another posterior with a continuous marginal it moves
  the mean of the PIT's location component ``L_1(F(x))`` -- computed
  exactly, by quadrature over the marginal's quantiles (about
  ``2 sqrt(3) E[f(X)] sd_i delta`` for small delta, ``f`` its density);
* an **sd off by a factor** ``1 + epsilon`` either way (the draws spread
  about the median by that factor or its inverse): the mean of the PIT's
  scale component ``L_2`` (about 1.23 epsilon for a normal), likewise.

A quantity detects the error with probability 0.9 when its expected raw z
reaches the raw threshold (the t quantile that the verdict's normal
threshold stands for) plus ``Phi^-1(0.9) = 1.28``; the statement takes the
best single quantity, so the other quantities only add power. It uses the
run's own ESS estimate, so it is as exact as that estimate: on real runs of
beta-binomial (NUTS's antithetic draws, ESS high) the stated shift was caught
0.80 of the time, 0.95-0.96 elsewhere (docs/verdict.md).
Coordinates whose PIT is a rank or a randomised cell (no closed-form
density) have no statement (None). ``compare/studies/power.py`` checks the
statement by planting shifts of exactly the stated size in real runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from analytic import ExactPosterior
from compare.core.agreement import Agreement, _is_discrete, _whitener, posterior_scale

#: The detection probability every statement is made at.
PROBABILITY = 0.9

#: Quantile points for the expectations over a marginal.
_POINTS = 512


@dataclass(frozen=True)
class Power:
    """The errors the agreement test would have caught with ``probability``.

    Attributes
    ----------
    probability : float
    mean_shift_sd : float or None
        The largest over parameters of the smallest detectable shift of that
        parameter's posterior mean, in exact posterior sds (None: no
        parameter has a statement).
    sd_relative : float or None
        Likewise for a relative error of a posterior sd (0.04: an sd 4% too
        large or too small).
    parameters : dict
        Parameter name -> ``{"mean_shift_sd": ..., "sd_relative": ...}``.
    """

    probability: float
    mean_shift_sd: float | None
    sd_relative: float | None
    parameters: dict[str, dict[str, float | None]]

    def to_dict(self) -> dict[str, Any]:
        return {
            "probability": self.probability,
            "mean_shift_sd": self.mean_shift_sd,
            "sd_relative": self.sd_relative,
            "parameters": self.parameters,
        }

    def sentence(self) -> str | None:
        """``would have caught ...`` for the text, or None without a statement."""
        parts = []
        if self.mean_shift_sd is not None:
            parts.append(f"a shift of any posterior mean by {self.mean_shift_sd:.2g} sd")
        if self.sd_relative is not None:
            parts.append(f"an sd off by {100 * self.sd_relative:.2g}%")
        if not parts:
            return None
        return (
            f"would have caught {' or '.join(parts)} or more "
            f"(probability {self.probability:g} at this alpha)"
        )


def _need(agreement: Agreement, quantity: Any) -> float:
    """The raw z (before the t-to-normal map) a quantity must reach, on average,
    to pass the threshold with probability ``PROBABILITY``."""
    from scipy import special  # heavy: SciPy only when the maths runs

    # scipy.special, not scipy.stats.t: see compare.core.agreement.t_as_normal.
    tail = float(special.ndtr(-agreement.threshold))
    raw = (
        agreement.threshold
        if not np.isfinite(quantity.df)
        else float(-special.stdtrit(quantity.df, tail))
    )
    return raw + float(special.ndtri(PROBABILITY))


def _se(quantity: Any) -> float:
    """The standard error of a quantity's average in its null-sd units, as the
    test used it (the reference share recovered from its df is not needed: the
    ESS term dominates; the reference's share is at most a few percent)."""
    return float(np.sqrt(1.0 / quantity.ess))


def power_of(agreement: Agreement | None, posterior: ExactPosterior) -> Power | None:
    """The agreement test's power statement for one run (None without a test)."""
    if agreement is None:
        return None
    by_name = {q.name: q for q in agreement.quantities}
    names = posterior.parameters
    per: dict[str, dict[str, float | None]] = {
        n: {"mean_shift_sd": None, "sd_relative": None} for n in names
    }
    if posterior.is_gaussian:
        _gaussian(agreement, posterior, by_name, per)
    else:
        _marginal(agreement, posterior, by_name, per)
    shifts = [v["mean_shift_sd"] for v in per.values() if v["mean_shift_sd"] is not None]
    sds = [v["sd_relative"] for v in per.values() if v["sd_relative"] is not None]
    return Power(
        probability=PROBABILITY,
        mean_shift_sd=max(shifts) if shifts else None,
        sd_relative=max(sds) if sds else None,
        parameters=per,
    )


def _smallest(response: Any, target: float, reach: float = 4.0) -> float | None:
    """The smallest size ``e`` in (0, reach] with ``|response(e)| >= target`` (the
    response grows with e near 0), by bisection on the exact response; None when
    even ``reach`` falls short."""
    from scipy import optimize  # heavy: SciPy only when the maths runs

    if abs(response(reach)) < target:
        return None
    return float(optimize.brentq(lambda e: abs(response(e)) - target, 1e-12, reach, xtol=1e-6))


def _responses(cdf: Any, x: np.ndarray, centre: float, sd: float) -> tuple[Any, Any]:
    """The exact mean of the PIT's location and scale components when the draws
    ``x`` (equal-probability points of the exact marginal) are shifted by ``e`` sds,
    and when they are spread about ``centre`` by ``1 + e`` or ``1 / (1 + e)``
    (the smaller of the two responses: an sd too small or too large)."""
    from compare.core.agreement import legendre  # light: a sibling function

    def shift(e: float) -> float:
        return float(np.mean(legendre(cdf(x + e * sd), 1)))

    def spread(e: float) -> float:
        wide = np.mean(legendre(cdf(centre + (1.0 + e) * (x - centre)), 2))
        narrow = np.mean(legendre(cdf(centre + (x - centre) / (1.0 + e)), 2))
        return float(min(abs(wide), abs(narrow)))

    return shift, spread


def _gaussian(
    agreement: Agreement,
    posterior: ExactPosterior,
    by_name: dict[str, Any],
    per: dict[str, dict[str, float | None]],
) -> None:
    from scipy import linalg  # heavy: SciPy only when the maths runs

    free, _, chol = _whitener(posterior)
    names = [posterior.parameters[i] for i in free]
    means = [by_name.get(f"mean:{n}") for n in names]
    scales = [by_name.get(f"scale:{n}") for n in names]
    if any(q is None for q in means + scales):
        return
    sd = np.sqrt(np.diag(chol @ chol.T))
    # Column i of L^-1: the whitened shift of one sd in coordinate i, per sd.
    unit = linalg.solve_triangular(chol, np.diag(sd), lower=True)
    from scipy import special  # heavy: SciPy only when the maths runs

    reach = np.array([_need(agreement, q) * _se(q) for q in means])
    # A scaled Gaussian stays Gaussian: every whitened coordinate scales alike, so
    # the best scale quantity decides; u at equal-probability points of N(0, 1).
    u = special.ndtri((np.arange(_POINTS) + 0.5) / _POINTS)
    _, spread = _responses(special.ndtr, u, 0.0, 1.0)
    sd_relative = _smallest(spread, min(_need(agreement, q) * _se(q) for q in scales))
    for i, n in enumerate(names):
        response = np.abs(unit[:, i])
        with np.errstate(divide="ignore"):
            per[n]["mean_shift_sd"] = float(np.min(reach / response))  # u_i is linear
        per[n]["sd_relative"] = sd_relative


def _marginal(
    agreement: Agreement,
    posterior: ExactPosterior,
    by_name: dict[str, Any],
    per: dict[str, dict[str, float | None]],
) -> None:
    scale = posterior_scale(posterior)
    p = (np.arange(_POINTS) + 0.5) / _POINTS
    for i in (int(k) for k in posterior.free):
        name = posterior.parameters[i]
        loc, spread = by_name.get(f"loc:{name}"), by_name.get(f"scale:{name}")
        marginal = posterior.marginal(i)
        if (
            loc is None
            or spread is None
            or marginal is None
            or _is_discrete(marginal)
            or not hasattr(marginal, "cdf")
        ):
            continue  # a rank, a cell or a discrete PIT: no density to expand
        x = np.asarray(marginal.ppf(p), dtype=float)
        if not (np.all(np.isfinite(x)) and np.isfinite(scale[i]) and scale[i] > 0):
            continue
        shift, spread_response = _responses(marginal.cdf, x, float(np.median(x)), float(scale[i]))
        per[name]["mean_shift_sd"] = _smallest(shift, _need(agreement, loc) * _se(loc))
        per[name]["sd_relative"] = _smallest(
            spread_response, _need(agreement, spread) * _se(spread)
        )
