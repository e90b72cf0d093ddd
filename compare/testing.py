"""Calibrated checks for your own test suite: ``assert_agrees`` and the pytest plugin.

Tests that assert a fixed tolerance on MCMC output flake: the error of an
MCMC mean is random, and a tolerance tight enough to catch a bug fails by
chance now and then. :func:`assert_agrees` uses the project's calibrated
verdict instead (:func:`compare.check`): it fails only when the draws and the
closed form differ by more than Monte Carlo error allows at ``alpha``.

With pytest, installing the package enables the plugin
(:mod:`compare.pytest_plugin`): the ``bayes_check`` fixture calls
:func:`assert_agrees` with the test's share of a suite-wide false-alarm
budget and a seed derived from the test's node id.

    def test_my_model(bayes_check):
        with pm.Model() as model:
            lam = pm.Gamma("lam", 2.0, 1.0)
            pm.Poisson("y", lam, observed=y)
        bayes_check(model, compare.Exact.from_scipy(stats.gamma(2 + y.sum(), scale=1 / (1 + len(y)))))
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

#: What ``inconclusive`` does (``--bayes-inconclusive``): fail the test, mark it
#: xfail, or run the check once more with twice the draws and then fail.
INCONCLUSIVE_POLICIES = ("fail", "xfail", "rerun")


class DisagreementError(AssertionError):
    """The draws and the closed form disagree (or stayed inconclusive); the message says how.

    ``result`` is the :class:`compare.CheckResult` that failed.
    """

    def __init__(self, message: str, result: Any = None):
        super().__init__(message)
        self.result = result


#: Mixed into :func:`derived_seed` so that its seeds differ from a run's extension seeds.
RERUN_STREAM = 0x52455255


def derived_seed(seed: int, stream: int) -> int:
    """A seed of its own for the ``stream``-th extra check made from ``seed``
    (:func:`compare.core.runner.derived_seed` on a stream of the checks' own).

    The rerun after an inconclusive check, and the second and later checks of one
    pytest test, use one: nutpie's draws for a seed are the same prefix whatever the
    length, so a divergence or a stuck chain would otherwise recur with certainty.
    """
    from compare.core.runner import derived_seed as derive  # NumPy: only when a check runs

    return derive(seed, RERUN_STREAM, stream)


def failure_report(result: Any, page: Path | None = None, *, rerun_draws: int | None = None) -> str:
    """A readable report of a check that did not agree.

    The verdict (and, after the ``rerun`` policy's second check, its draws),
    every check's line (convergence gate, agreement, MAP) with the flagged
    quantities' z and Holm p-values, and the saved run page.
    """
    from compare.core.text import check_lines  # the same lines as `bayes-compare run`

    lines = [f"bayes-compare: {result.verdict.upper()} ({result.run.decided})"]
    if rerun_draws is not None:
        lines.append(
            f"after one rerun with twice the draws ({rerun_draws} per chain) and a seed "
            f"of its own ({result.run.settings.seed})"
        )
    lines += check_lines(result.run, map_vectors=False)
    if page is not None:
        lines.append(f"run page: {page}")
    return "\n".join(lines)


#: The share of a check's alpha kept for its rerun after an inconclusive first run
#: (alpha spending): the rerun is rare, and twice the draws make up for its
#: higher threshold.
RERUN_SHARE = 0.1


def assert_agrees(
    model: Any,
    exact: Any,
    *,
    var_names: Sequence[str] | None = None,
    alpha: float | None = None,
    seed: int | None = None,
    draws: int | None = None,
    inconclusive: str = "rerun",
    page_dir: str | Path | None = None,
    **check_options: Any,
) -> Any:
    """Check ``model`` against ``exact`` (:func:`compare.check`); raise unless they agree.

    Parameters
    ----------
    model, exact, var_names :
        As for :func:`compare.check`.
    alpha : float, optional
        The check's family-wise false-alarm rate, rerun included (default
        1e-4; the pytest fixture passes this call's share of the suite's
        budget). With ``inconclusive="rerun"`` it is spent in two parts, as in
        Gandy & Scott's sequential MCMC tests: the first run tests at
        ``(1 - RERUN_SHARE) alpha`` and the rerun, made only when the first
        was inconclusive, at ``RERUN_SHARE alpha``, so an
        inconclusive-then-fail is a false alarm inside ``alpha``.
    seed, draws : int, optional
        As for :func:`compare.check`.
    inconclusive : {"rerun", "fail", "xfail"}
        What an ``inconclusive`` verdict (the sampler did not converge, so no
        verdict on agreement) does: ``rerun`` once with twice the draws and a
        seed of its own (:func:`derived_seed`), then fail; ``fail`` at once;
        ``xfail`` marks the pytest test xfail. Never a silent pass.
    page_dir : path, optional
        Where the run page of a failed check is written (default: a new
        temporary folder).
    **check_options :
        Passed to :func:`compare.check` (``chains``, ``tune``, ``method``, ...).

    Returns
    -------
    CheckResult
        When the verdict is ``agree``.

    Raises
    ------
    DisagreementError
        With :func:`failure_report` as its message.
    """
    import compare  # the public API (PyMC is imported when the model is checked)

    if inconclusive not in INCONCLUSIVE_POLICIES:
        raise ValueError(
            f"inconclusive must be one of {', '.join(INCONCLUSIVE_POLICIES)}, got {inconclusive!r}"
        )
    from compare.core.defaults import DEFAULT  # light: dataclasses only

    total = DEFAULT.alpha if alpha is None else float(alpha)
    first = total * (1.0 - RERUN_SHARE) if inconclusive == "rerun" else total
    result = compare.check(
        model, exact, var_names=var_names, alpha=first, seed=seed, draws=draws, **check_options
    )
    more: int | None = None
    if result.verdict == "inconclusive":
        if inconclusive == "xfail":
            import pytest  # only a pytest run asks for xfail

            pytest.xfail(failure_report(result))
        if inconclusive == "rerun":
            more = 2 * (draws if draws is not None else result.run.settings.draws)
            result = compare.check(
                model,
                exact,
                var_names=var_names,
                alpha=total * RERUN_SHARE,
                seed=derived_seed(result.run.settings.seed, 0),
                draws=more,
                **check_options,
            )
    if result.verdict != "agree":
        page = None
        try:
            page = result.to_html(page_dir)
        except Exception:  # noqa: BLE001 - the report is a help; the verdict is the failure
            page = None
        raise DisagreementError(failure_report(result, page, rerun_draws=more), result)
    return result
