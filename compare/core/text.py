"""Text shared by every page and table: numbers for a cell, the checks of a run
as lines (the CLI and the Python API print the same ones), and the HTML templates."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from compare.core.checks import CheckKind

if TYPE_CHECKING:
    import jinja2

    from compare.core.runner import RunResult

#: A check's mark: passed, failed, not applicable.
CHECK_MARKS = {True: "ok  ", False: "FAIL", None: "--  "}

#: A MAP vector is printed in the check's line up to this many parameters (longer
#: vectors are in the JSON).
MAP_VECTOR_MAX = 6


def fmt(value: Any, spec: str = ".4g") -> str:
    """A number for a table cell; n/a for missing, text kept as text."""
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (int, np.integer)):
        return str(value)
    if isinstance(value, (float, np.floating)):
        return "n/a" if not math.isfinite(value) else format(value, spec)
    if isinstance(value, (list, tuple)):
        if len(value) > 8:
            return f"[{', '.join(fmt(v, spec) for v in value[:8])}, ... ({len(value)} values)]"
        return "[" + ", ".join(fmt(v, spec) for v in value) + "]"
    return str(value)


def check_lines(run: RunResult, *, map_vectors: bool = True) -> list[str]:
    """The checks of a run, one line each: mark, name, statistic against threshold, context.

    Parameters
    ----------
    run : compare.core.runner.RunResult
        A finished run (its ``checks``, ``agreement``, ``mcmc`` and ``exact``).
    map_vectors : bool
        Show PyMC's MAP and the exact mode in the ``map`` line (up to
        :data:`MAP_VECTOR_MAX` parameters), as the CLI does; otherwise name
        them, as the Python API's text does.

    Returns
    -------
    list of str
        ``"checks:"`` then one indented line per check, then one line per
        quantity the agreement test flagged.
    """
    lines = ["checks:"]
    agreement = run.agreement
    for c in run.checks:
        stat, threshold = c.statistic, c.threshold
        if stat is None:
            text = c.note
        elif c.name == CheckKind.RHAT:
            bound = "<" if c.passed is not False else ">="
            text = f"{fmt(stat, '.4f')} {bound} {threshold:g} (worst rank-normalised split R-hat)"
        elif c.name in (CheckKind.ESS_BULK, CheckKind.ESS_TAIL):
            bound = ">" if c.passed is not False else "<="
            text = f"{fmt(stat, '.0f')} {bound} {threshold:g} (smallest over parameters)"
        elif c.name == CheckKind.DIVERGENCES:
            text = f"{fmt(stat, '.0f')} divergent transitions"
            text += f" > {threshold:g} allowed" if c.passed is False else ""
        elif c.name in (CheckKind.APPROX_MEAN, CheckKind.APPROX_SD):
            # The numbers' own inequality: an unsure check (within its Monte Carlo
            # margin of the tolerance) fails with a statistic below it; its note says so.
            bound = "<=" if stat <= threshold else ">"
            text = f"{fmt(stat, '.3g')} {bound} {fmt(threshold, '.3g')} ({c.note})"
        elif c.name == CheckKind.AGREEMENT:
            n = 0 if agreement is None else len(agreement.quantities)
            alpha = run.settings.alpha if agreement is None else agreement.alpha
            text = (
                f"max |z| {fmt(stat, '.2f')} {'>' if c.passed is False else '<='} "
                f"{threshold:.2f} (Bonferroni over "
                f"{n} quantities, alpha={alpha:g})"
            )
        elif c.name == CheckKind.MAP:
            # Not tested (boundary mode, not informative): the distance without a bound.
            bounds = {True: f" <= {threshold:g} sd", False: f" > {threshold:g} sd", None: ""}
            text = f"{stat:.1e} sd{bounds[c.passed]}"
            starts = f"; {c.brief}" if c.brief else ""
            if not map_vectors:
                text += f" (PyMC's MAP vs the exact mode{starts})"
                starts = ""
            elif len(run.parameters) <= MAP_VECTOR_MAX and (
                run.mcmc.map is not None and run.exact.posterior.mode is not None
            ):
                text += (
                    f": PyMC {np.array2string(run.mcmc.map, precision=5)} vs exact "
                    f"mode {np.array2string(run.exact.posterior.mode, precision=5)}"
                )
            if c.passed is None:
                text += f" ({c.note})"
            elif starts:
                text += f" ({starts[2:]})"
        else:
            text = f"{fmt(stat, '.3g')} vs threshold {fmt(threshold, '.3g')} ({c.note})"
        lines.append(f"  {CHECK_MARKS[c.passed]} {c.name:12s} {text}")
        # A stand-in run (a test's) may have no power statement.
        if c.name == CheckKind.AGREEMENT and stat is not None:
            power = getattr(run, "power", None)
            sentence = None if power is None else power.sentence()
            if sentence is not None:
                lines.append(f"  {'':4} {'power':12s} {sentence}")
    for q in agreement.flagged if agreement is not None else ():
        lines.append(
            f"  flagged {q.name}: MCMC {q.estimate:.4g} vs exact {q.expected:.4g}, "
            f"z={q.z:+.2f}, Holm p={q.p_holm:.2g}"
        )
        lines += [f"    {line}" for line in model_units(run, q.name)]
    return lines


def _involved(name: str, parameters: Sequence[str]) -> list[int]:
    """The parameters a quantity is about: ``loc:lam`` -> lam; ``dep:p,q`` -> p and q
    (parameter names may hold commas, ``w[0,1]``: matched whole)."""
    kind, _, rest = name.partition(":")
    index = {p: i for i, p in enumerate(parameters)}
    if rest in index:
        return [index[rest]]
    if kind == "dep":
        for p, i in index.items():
            if rest.startswith(p + ",") and rest[len(p) + 1 :] in index:
                return [i, index[rest[len(p) + 1 :]]]
    return []


def model_units(run: Any, name: str) -> list[str]:
    """The parameters a flagged quantity is about, in the model's own units: MCMC
    posterior mean and sd beside the exact ones (the quantities are whitened or PIT
    units; a reader knows the parameters). Empty where the run does not say."""
    try:
        exact_mean = np.asarray(run.exact.posterior.mean, dtype=float)
        exact_sd = np.sqrt(np.diag(np.atleast_2d(run.exact.posterior.cov)))
        mcmc_mean, mcmc_sd = np.asarray(run.mcmc.mean), np.asarray(run.mcmc.sd)
        parameters = list(run.parameters)
    except (AttributeError, TypeError, ValueError):  # a stand-in run without them
        return []
    return [
        f"{parameters[i]}: MCMC mean {mcmc_mean[i]:.4g} (exact {exact_mean[i]:.4g}), "
        f"sd {mcmc_sd[i]:.4g} (exact {exact_sd[i]:.4g})"
        for i in _involved(name, parameters)
    ]


def template_env() -> jinja2.Environment:
    """The Jinja2 environment of ``compare/templates`` (autoescaped, strict, with ``fmt``)."""
    import jinja2  # heavy: Jinja2 only where a page is rendered (report, SBC pages)

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("compare", "templates"),
        autoescape=jinja2.select_autoescape(["html"]),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["fmt"] = fmt
    return env
