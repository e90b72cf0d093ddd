"""Run one topic on one data set: exact answer, MCMC, checks, verdict.

Orchestration only: the maths is in ``analytic``, the model in
``pymc_models``, the statistics in :mod:`compare.core.agreement`.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from analytic import ExactAnswer, ExactPosterior
from compare.core.agreement import Agreement, agreement_test, posterior_array, posterior_scale
from compare.core.checks import (
    GATES,
    MAP_RULE,
    MODES,
    SHORT,
    Check,
    CheckKind,
    Diagnosis,
    Extra,
    ExtraContext,
    decided_text,
    diagnose,
)
from compare.core.data import check_array
from compare.core.defaults import DEFAULT, Settings
from compare.core.methods import APPROXIMATION, DEFAULT_METHOD, usable
from compare.core.power import Power, power_of
from compare.core.registry import InputError, Topic

if TYPE_CHECKING:  # sampling imports PyMC; checking draws alone (compare.check_draws) does not
    import xarray as xr

    from compare.core.sampling import ModelCache

AGREE, DISAGREE, INCONCLUSIVE = "agree", "disagree", "inconclusive"


@dataclass(frozen=True)
class McmcSummary:
    """MCMC estimates, vectors in parameter order."""

    mean: np.ndarray
    cov: np.ndarray
    sd: np.ndarray
    mcse_mean: np.ndarray
    ess_bulk: np.ndarray
    ess_tail: np.ndarray
    rhat: np.ndarray
    divergences: int
    map: np.ndarray | None


@dataclass(frozen=True)
class RunResult:
    """Everything one run produced; ``to_json`` gives the public document."""

    topic: str
    parameters: tuple[str, ...]
    verdict: str
    decided_by: str
    exact: ExactAnswer
    mcmc: McmcSummary
    agreement: Agreement | None
    checks: tuple[Check, ...]
    settings: Settings
    hyper: dict[str, Any]
    data_source: str
    n: int
    timings: dict[str, float]
    draws: xr.DataTree = field(repr=False)
    extra: Extra = field(default_factory=Extra)
    #: PyMC variables whose flattened draws line up with ``parameters``.
    variables: tuple[str, ...] = ()
    #: The data as named columns (kept beside the draws for the report).
    observed: dict[str, np.ndarray] = field(default_factory=dict, repr=False)

    @cached_property
    def power(self) -> Power | None:
        """What the agreement test could have caught (:mod:`compare.core.power`),
        computed once: the text, the run document and the plugin all read it."""
        return power_of(self.agreement, self.exact.posterior)

    @property
    def also_failed(self) -> tuple[str, ...]:
        """Every failed check but the one that decided, in :func:`failing`'s order
        (the strongest failed gate first)."""
        return tuple(n for n in failing(self.checks) if n != self.decided_by)

    @property
    def decided(self) -> str:
        """``decided by rhat; also failed: ess_bulk`` (the verdict lines say it)."""
        return decided_text(self.decided_by, self.also_failed)

    @property
    def exit_code(self) -> int:
        return {AGREE: 0, DISAGREE: 1, INCONCLUSIVE: 2}[self.verdict]

    @property
    def map_distance_sd(self) -> np.ndarray | None:
        """|PyMC MAP - exact mode| in exact posterior sds, per parameter."""
        mode = self.exact.posterior.mode
        if mode is None or self.mcmc.map is None:
            return None
        return np.abs(self.mcmc.map - mode) / posterior_scale(self.exact.posterior)


def convergence_checks(
    draws: np.ndarray,
    divergences: int,
    settings: Settings,
    *,
    diagnosis: Diagnosis | None = None,
    after: str = "",
    retried: tuple[int, float] | None = None,
) -> tuple[tuple[Check, ...], dict[str, np.ndarray]]:
    """R-hat, bulk/tail ESS and divergence checks on draws of shape (chain, draw, d).

    When the chains explore one mode but too few effective draws were kept
    (state ``"short"`` of :func:`compare.core.checks.diagnose`), the failing
    checks carry ``short_ess`` so that :func:`run` samples again with more
    draws; ``after`` (e.g. "after 2 extensions") is added to their notes.
    """
    d = diagnose(draws, divergences, settings) if diagnosis is None else diagnosis
    short = d.min_ess if d.state == SHORT else None
    tail = ""
    if d.state == SHORT:
        tail = (
            f"; too few effective draws{' ' + after if after else ''} (chains "
            f"{d.mode_gap_sd:.2f} sd apart, one mode): draw more"
        )
    elif d.state == MODES:
        tail = (
            f"; chains sit in different modes ({d.mode_gap_sd:.1f} within-chain sds "
            "apart): more draws would not join them"
        )
    checks = (
        Check(
            CheckKind.RHAT,
            d.worst_rhat,
            settings.rhat_max,
            d.worst_rhat < settings.rhat_max,
            "largest rank-normalised split R-hat must be below the threshold"
            + (tail if d.worst_rhat >= settings.rhat_max else ""),
            short_ess=short if d.worst_rhat >= settings.rhat_max else None,
        ),
        Check(
            CheckKind.ESS_BULK,
            d.min_bulk,
            settings.ess_min,
            d.min_bulk > settings.ess_min,
            "smallest bulk ESS must exceed the threshold"
            + (tail if d.min_bulk <= settings.ess_min else ""),
            short_ess=short if d.min_bulk <= settings.ess_min else None,
        ),
        Check(
            CheckKind.ESS_TAIL,
            d.min_tail,
            settings.ess_min,
            d.min_tail > settings.ess_min,
            "smallest tail ESS must exceed the threshold"
            + (tail if d.min_tail <= settings.ess_min else ""),
            short_ess=short if d.min_tail <= settings.ess_min else None,
        ),
        Check(
            CheckKind.DIVERGENCES,
            float(divergences),
            0.0,
            divergences == 0,
            "no divergent transitions allowed" + divergence_advice(divergences, retried),
        ),
    )
    return checks, {"rhat": d.rhat, "ess_bulk": d.ess_bulk, "ess_tail": d.ess_tail}


def divergence_advice(divergences: int, retried: tuple[int, float] | None) -> str:
    """What the divergences check adds to its rule: the retry's outcome, and the
    change that would help when divergences remain."""
    if retried is None:
        if not divergences:
            return ""
        return (
            "; the sampler could not follow the posterior somewhere: reparameterise "
            "(a non-centred form; a prior that keeps the draws off a hard boundary) or "
            "ask for smaller steps, sampler_options={'target_accept': 0.95}"
        )
    before, target = retried
    if not divergences:
        return f"; {before} in the first run, none after resampling at target_accept {target:g}"
    return (
        f"; {before} in the first run, still {divergences} after resampling at "
        f"target_accept {target:g}: reparameterise (a non-centred form; a prior that "
        "keeps the draws off a hard boundary), or ask for smaller steps still, "
        "sampler_options={'target_accept': 0.99}"
    )


def cap_note(extensions: int, draws: int, settings: Settings) -> str:
    """Why a run still short of effective draws was not extended further."""
    if settings.max_extensions == 0:
        return "with the extension off (max_extensions=0)"
    cap = (
        f"the cap: at most {settings.max_extensions} extension(s) and "
        f"{settings.max_draws} draws per chain"
    )
    return f"after {extensions} extension(s) to {draws} draws per chain ({cap})"


def derived_seed(seed: int, *stream: int) -> int:
    """A seed of its own for the draws ``stream`` names, derived from ``seed`` alone
    (``numpy.random.SeedSequence``): reproducible, and independent of ``seed``'s draws
    (nutpie's draws for one seed share their prefix whatever the length)."""
    state = np.random.SeedSequence([int(seed) % 2**64, *stream]).generate_state(1, np.uint32)
    return int(state[0])


def extension_seed(seed: int, attempt: int) -> int:
    """Sampler seed of a run's ``attempt``-th sampling (0: the run's own seed).

    Derived from the run's seed alone (:func:`derived_seed`), so an extended run is
    reproducible from its settings.
    """
    return seed if attempt == 0 else derived_seed(seed, attempt)


def next_draws(draws: int, min_ess: float, settings: Settings) -> int | None:
    """Draws per chain for the next extension; None when the cap leaves no room.

    ESS grows about linearly with the draws, so the factor is
    ``extension_growth x ess_min / min_ess``, kept in [1.5, 4] (1.5: each
    extension must be worth its warm-up; 4: an ESS estimate from few draws
    is rough), and the draws never exceed ``settings.max_draws``.
    """
    factor = settings.extension_growth * settings.ess_min / max(float(min_ess), 1.0)
    factor = min(max(factor, 1.5), 4.0)
    new = min(settings.max_draws, math.ceil(draws * factor))
    return new if new > draws else None


@dataclass(frozen=True)
class Sampling:
    """One sampling of a run: the first of its model (attempt 0), or an extension."""

    model: str  # "topic" (the verdict's model) or "extras" (e.g. the marginalised mixture)
    attempt: int
    draws: int
    seed: int
    seconds: float
    min_ess: float | None
    worst_rhat: float | None
    state: str
    #: Divergent transitions of this sampling, and the ``target_accept`` it asked
    #: for where it was the divergences' retry (None otherwise).
    divergences: int = 0
    target_accept: float | None = None


@dataclass(frozen=True)
class Sampled:
    """What :func:`sample_enough` kept: the last sampling and how it was reached."""

    tree: xr.DataTree
    draws: np.ndarray  # (chain, draw, d) in parameter order
    divergences: int
    diagnosis: Diagnosis
    #: The run as sampled: the last sampling's draws per chain; the seed stays the
    #: run's own (it also seeds the exact reference draws; the extensions' seeds are
    #: in ``samplings``).
    settings: Settings
    samplings: tuple[Sampling, ...]

    @property
    def extensions(self) -> int:
        """Samplings after the first for too few effective draws (not the retry)."""
        return sum(1 for s in self.samplings[1:] if s.target_accept is None)

    @property
    def retried(self) -> tuple[int, float] | None:
        """``(divergences before, target_accept)`` of the divergences' retry, if made."""
        for before, s in itertools.pairwise(self.samplings):
            if s.target_accept is not None:
                return before.divergences, s.target_accept
        return None


def sample_enough(
    compiled: Any,
    data: Mapping[str, np.ndarray],
    settings: Settings,
    *,
    variables: tuple[str, ...] | list[str],
    options: Mapping[str, Any],
    n_parameters: int | None = None,
    what: str = "the model",
    on_extension: Callable[[], None] | None = None,
) -> Sampled:
    """Sample, then extend while the chains show one mode but too few effective draws.

    The extension rule of :func:`run` (see its Notes), shared by the built-in
    topics and by users' own models (:func:`compare.interfaces.api.check`).
    """
    samplings: list[Sampling] = []
    run_settings = settings
    retried = False
    while True:  # the first sampling, then extensions while ESS alone is short
        ts = time.perf_counter()
        tree = compiled.sample(data, run_settings, seed=run_settings.seed, options=dict(options))
        draws = posterior_array(tree.posterior, variables)
        if n_parameters is not None and draws.shape[-1] != n_parameters:
            raise ValueError(
                f"{what}: PyMC variables {tuple(variables)} give "
                f"{draws.shape[-1]} values per draw, the exact posterior has "
                f"{n_parameters} parameters"
            )
        divergences = int(np.asarray(tree.sample_stats["diverging"]).sum())
        diagnosis = diagnose(draws, divergences, settings)
        samplings.append(
            Sampling(
                "topic",
                len(samplings),
                run_settings.draws,
                run_settings.seed,
                time.perf_counter() - ts,
                diagnosis.min_ess,
                diagnosis.worst_rhat,
                diagnosis.state,
                divergences,
                options.get("target_accept") if retried else None,
            )
        )
        more = None
        if diagnosis.state == SHORT and len(samplings) <= settings.max_extensions:
            more = next_draws(run_settings.draws, diagnosis.min_ess, settings)
        elif not retried and _retry_divergences(diagnosis, settings, options):
            # Divergences alone failed: once more, afresh, with smaller steps. The
            # decision reads the diagnostics only, never z (the verdict is the
            # fresh run's, whatever the first one's draws said).
            retried = True
            options = {**options, "target_accept": settings.retry_target_accept}
            more = run_settings.draws
        if more is None:
            break
        if on_extension is not None:
            on_extension()
        run_settings = dataclasses.replace(
            settings, draws=more, seed=extension_seed(settings.seed, len(samplings))
        )
    return Sampled(
        tree=tree,
        draws=draws,
        divergences=divergences,
        diagnosis=diagnosis,
        settings=dataclasses.replace(settings, draws=run_settings.draws),
        samplings=tuple(samplings),
    )


def _retry_divergences(
    diagnosis: Diagnosis, settings: Settings, options: Mapping[str, Any]
) -> bool:
    """Whether a run that diverged while its chains agree (R-hat passes; the
    effective draws may be short, which divergences keep the extension from
    curing) is sampled once more with ``settings.retry_target_accept`` (nutpie
    only: its ``target_accept``)."""
    asked = float(options.get("target_accept", 0.0) or 0.0)
    return (
        diagnosis.divergences > 0
        and settings.method == DEFAULT_METHOD
        and settings.retry_target_accept > 0.0
        and asked < settings.retry_target_accept
        and diagnosis.worst_rhat < settings.rhat_max
    )


def extension_section(
    settings: Settings, final_draws: int, samplings: list[Sampling]
) -> dict[str, Any]:
    """The result document's ``extension`` key: what extending the run cost."""
    later = [s for s in samplings if s.attempt > 0]
    extensions = [s for s in later if s.target_accept is None]
    retry = next(
        (
            {
                "target_accept": s.target_accept,
                "divergences_before": before.divergences,
                "divergences_after": s.divergences,
                "seconds": s.seconds,
            }
            for before, s in itertools.pairwise(samplings)
            if s.target_accept is not None
        ),
        None,
    )
    return {
        "extensions": len(extensions),
        # The divergences' retry (``Settings.retry_target_accept``), or None.
        "retry": retry,
        "draws_requested": settings.draws,
        "draws_final": final_draws,
        "max_draws": settings.max_draws,
        "max_extensions": settings.max_extensions,
        "seconds": float(sum(s.seconds for s in later)),
        "samplings": [dataclasses.asdict(s) for s in samplings],
    }


def extension_line(section: dict[str, Any]) -> str:
    """One line for the terminal saying that, and at what cost, a run was extended."""
    parts = []
    for model in ("topic", "extras"):
        runs = [s for s in section["samplings"] if s["model"] == model]
        if len(runs) > 1:
            what = "the model" if model == "topic" else "the extra comparisons' model"
            draws = " -> ".join(str(s["draws"]) for s in runs)
            parts.append(
                f"{what} {draws} draws per chain (ESS "
                + " -> ".join("ok" if s["min_ess"] is None else f"{s['min_ess']:.0f}" for s in runs)
                + ")"
            )
    said = []
    if section["extensions"]:
        said.append(
            f"extended {section['extensions']} time(s) for too few effective draws: "
            + "; ".join(parts)
        )
    retry = section.get("retry")
    if retry:
        said.append(
            f"resampled at target_accept {retry['target_accept']:g} after "
            f"{retry['divergences_before']} divergent transition(s): "
            f"{retry['divergences_after']} after"
        )
    return "; ".join(said) + f"; +{section['seconds']:.1f} s"


#: Exact posterior draws the MAP search also starts from (besides PyMC's initial
#: point): a draw lies about sqrt(d) sds from the mode, so a search that converges
#: from there is a test even where PyMC's initial point is the exact mode; two, so
#: one draw near the mode cannot make the check uninformative.
MAP_STARTS = 2

#: Seed stream of the MAP starts (the run's seed, then this).
MAP_STREAM = 7


def map_starts(posterior: ExactPosterior, settings: Settings) -> np.ndarray | None:
    """:data:`MAP_STARTS` exact posterior draws to start the MAP search from; None
    where the check will not test (no mode, or one on the boundary of the support)
    or the posterior has no sampler (a user's Exact without one)."""
    if posterior.mode is None or not posterior.mode_interior:
        return None
    if not bool(getattr(posterior, "has_sampler", True)):
        return None
    rng = np.random.default_rng(derived_seed(settings.seed, MAP_STREAM))
    return np.asarray(posterior.sample(rng, MAP_STARTS), dtype=float)


def _sds(x: float) -> str:
    """A distance in posterior sds, short: 0.49, 2.3, 230."""
    return f"{x:.2g}" if x < 10 else f"{x:.0f}"


def map_check(
    exact: ExactAnswer,
    pymc_map: np.ndarray | None,
    settings: Settings,
    start: np.ndarray | None = None,
    dispersed: Sequence[tuple[np.ndarray, np.ndarray | None]] = (),
) -> Check:
    """PyMC's MAP against the exact mode, in exact posterior sds (IQR/1.349 where infinite).

    ``start`` is the point the search began at (PyMC's initial point), ``dispersed``
    the same search from other starts (exact posterior draws: ``(start, found)``
    pairs, :class:`compare.core.sampling.MapSearch`). The statistic is the largest
    distance of any converged search's optimum from the exact mode; a search from a
    draw that did not converge is left out and said. Where every start already lies
    within the tolerance of the exact mode and the searches stayed there, the check
    could not have failed: it reads ``not informative`` (passed None), never ``ok``;
    a search that left the mode fails as any other. Otherwise the note says how far
    from the mode the searches started.
    """
    post = exact.posterior
    tol = settings.map_tol_sd
    if post.mode is None:
        return Check(CheckKind.MAP, None, tol, None, "the exact posterior has no unique mode")
    if pymc_map is None:  # an optimiser that stops short says nothing about the maths
        return Check(
            CheckKind.MAP,
            None,
            tol,
            False,
            "PyMC's MAP optimisation did not converge "
            "(iteration limit after restarts, or a non-finite point)",
            on_fail=INCONCLUSIVE,
        )
    scale = posterior_scale(post)

    def sds(point: np.ndarray) -> float:
        return float(np.max(np.abs(point - post.mode) / scale))

    found = [p for _, p in dispersed if p is not None and p.shape == post.mode.shape]
    dist = max([sds(pymc_map), *(sds(p) for p in found)])
    if not post.mode_interior:
        return Check(
            CheckKind.MAP,
            dist,
            tol,
            None,
            "the mode lies on the boundary of the support; reported, not tested",
        )
    initial = sds(start) if start is not None and start.shape == post.mode.shape else None
    drawn = [sds(s) for s, p in dispersed if p is not None and s.shape == post.mode.shape]
    starts = drawn if initial is None else [initial, *drawn]
    failed = sum(p is None for _, p in dispersed)
    if starts and max(starts) <= tol and dist <= tol:  # a search that moved away still fails
        return Check(
            CheckKind.MAP,
            dist,
            tol,
            None,
            f"not informative: every start is already within {max(starts):.1e} sd of "
            "the exact mode, so the search could not have failed",
        )
    parts = [] if initial is None else [f"PyMC's initial point ({_sds(initial)} sd away)"]
    if drawn:
        span = "-".join(_sds(d) for d in sorted({min(drawn), max(drawn)}))
        parts.append(
            f"{len(drawn)} exact posterior draw{'s' if len(drawn) > 1 else ''} ({span} sd away)"
        )
    started = f"; searched from {' and '.join(parts)}" if parts else ""
    away = sorted(starts)
    brief = (
        f"{len(away)} start{'s' if len(away) > 1 else ''} "
        f"{'-'.join(_sds(d) for d in sorted({away[0], away[-1]}))} sd away"
        if away
        else ""
    )
    if failed:
        started += f"; {failed} search(es) from exact draws did not converge (left out)"
        brief += f", {failed} not converged"
    return Check(CheckKind.MAP, dist, tol, dist <= tol, MAP_RULE + started, brief=brief)


def judge(
    draws: np.ndarray,
    divergences: int,
    posterior: ExactPosterior,
    settings: Settings,
    *,
    alpha: float,
    diagnosis: Diagnosis | None = None,
    after: str = "",
    retried: tuple[int, float] | None = None,
) -> tuple[tuple[Check, ...], dict[str, np.ndarray], Agreement]:
    """The statistical part of every verdict, one path for the runner and the API
    (``compare.check``, ``check_draws``): the convergence gate's checks, the
    agreement test at ``alpha`` and its check, and the diagnostics behind them.

    Returns
    -------
    checks : tuple of Check
        R-hat, bulk and tail ESS, divergences, then ``agreement``.
    diagnostics : dict
        Per-parameter ESS and R-hat (:func:`summarise` reads them).
    agreement : Agreement
    """
    checks, diagnostics = convergence_checks(
        draws, divergences, settings, diagnosis=diagnosis, after=after, retried=retried
    )
    agreement = agreement_test(
        draws, posterior, alpha=alpha, seed=settings.seed, n_reference=settings.n_reference
    )
    agreement_check = Check(
        CheckKind.AGREEMENT,
        agreement.max_abs_z,
        agreement.threshold,
        agreement.passed,
        f"max |z| over {len(agreement.quantities)} quantities must not "
        f"exceed the Bonferroni threshold for alpha={alpha:g}",
    )
    return (*checks, agreement_check), diagnostics, agreement


def failing(checks: Sequence[Check]) -> tuple[str, ...]:
    """Every failed check, in the order that decides a verdict: the convergence
    gates strongest first (:data:`compare.core.checks.GATES`: divergences before
    R-hat, before the effective draws), then the checks that question trust
    (``on_fail`` inconclusive, e.g. a multimodal mixture), then the rest (the
    agreement test, the MAP, a topic's checks) in their order."""
    by_name = {c.name: c for c in checks}
    gates = [g for g in GATES if g in by_name and by_name[g].passed is False]
    rest = [c for c in checks if c.name not in GATES and c.passed is False]
    trust = [c.name for c in rest if c.on_fail == INCONCLUSIVE]
    truth = [c.name for c in rest if c.on_fail != INCONCLUSIVE]
    return (*gates, *trust, *truth)


def decide(checks: tuple[Check, ...]) -> tuple[str, str]:
    """Verdict and the name of the check that decided it.

    Convergence failures make the run inconclusive (the MCSEs are not
    trustworthy), before agreement is looked at; otherwise any failed
    agreement or MAP check is a disagreement. The first of :func:`failing`
    decides: among failed gates the strongest.
    """
    missing = [g for g in GATES if g not in {c.name for c in checks}]
    if missing:
        raise ValueError(f"decide needs every convergence gate; missing {missing}")
    failed = failing(checks)
    if not failed:
        return AGREE, CheckKind.AGREEMENT
    first = next(c for c in checks if c.name == failed[0])
    if first.name in GATES or first.on_fail == INCONCLUSIVE:
        return INCONCLUSIVE, first.name
    return DISAGREE, first.name


def summarise(
    draws: np.ndarray, extra: dict[str, np.ndarray], divergences: int, pymc_map: np.ndarray | None
) -> McmcSummary:
    from arviz_stats.base import array_stats  # heavy: ArviZ only when draws are checked

    flat = draws.reshape(-1, draws.shape[-1])
    arr = np.moveaxis(draws, -1, 0)
    return McmcSummary(
        mean=flat.mean(axis=0),
        cov=np.atleast_2d(np.cov(flat, rowvar=False)),
        sd=flat.std(axis=0, ddof=1),
        mcse_mean=np.asarray(array_stats.mcse(arr, method="mean"), dtype=float),
        ess_bulk=extra["ess_bulk"],
        ess_tail=extra["ess_tail"],
        rhat=extra["rhat"],
        divergences=divergences,
        map=pymc_map,
    )


def run(
    topic: Topic,
    *,
    data: np.ndarray,
    hyper: Mapping[str, Any] | None = None,
    settings: Settings = DEFAULT,
    source: str = "array",
    cache: ModelCache | None = None,
    on_stage: Callable[[str], None] | None = None,
) -> RunResult:
    """Compare the exact posterior with PyMC's on one data set.

    Parameters
    ----------
    topic : Topic
    data : array of shape (n,)
        One column of observations (numbers, or labels for categorical topics).
    hyper : mapping, optional
        Complete hyperparameters (see ``Topic.hyper``); defaults when None.
    settings : Settings
    source : str
        Where the data came from, for the report.
    cache : ModelCache, optional
        Compiled models; one compile per topic and structure (default: the
        process-wide ``compare.core.sampling.CACHE``).
    on_stage : callable, optional
        Called with "compiling", "sampling", "checking" as the run progresses
        ("sampling" again for each extension).

    Notes
    -----
    **Extension.**  Too few effective draws is a property of the run, not of
    the posterior, so it is settled by drawing more rather than reported as
    ``inconclusive``.  When the chains explore one mode (R-hat below
    ``rhat_max``, or above it with no two chains in different modes; see
    :func:`compare.core.checks.diagnose`) and no transition diverged, but the
    smallest bulk or tail ESS is at most ``ess_min``, the model is sampled
    again, afresh, with ``next_draws`` draws per chain (about
    ``1.25 x ess_min / ESS`` times more) and a seed derived from the run's
    (:func:`extension_seed`), at most ``settings.max_extensions`` times and
    never beyond ``settings.max_draws`` per chain.  The topic's extra
    comparisons do the same with their own model (the marginalised mixture).
    Several modes and divergences stay ``inconclusive`` at once; a run still
    short at the cap is ``inconclusive`` and its notes say so.

    The verdict stays calibrated: the decision to extend looks only at
    convergence diagnostics (ESS, R-hat, the chains' mode gap), never at the
    z-scores, and the verdict is computed on the last sampling alone, whose
    draws are fresh (new seed, new warm-up), so given its length the
    ESS-based z-scores are exactly as calibrated as for a run of that length
    asked for directly.  The cost is shown: ``timings["extension"]`` (seconds
    of every sampling after the first, included in ``sample`` and ``check``),
    the ``extension`` section of the result document (samplings with their
    draws, seeds, seconds and ESS), and one line in ``extra.lines``.  The
    result's ``settings.draws`` is the last sampling's draws per chain.
    """
    if cache is None:
        from compare.core.sampling import CACHE  # heavy: PyMC; check_draws needs none

        cache = CACHE
    stage = on_stage or (lambda _: None)
    t0 = time.perf_counter()
    hyper = dict(topic.hyper() if hyper is None else hyper)
    structured = topic.data_kind in ("table", "points")
    column = data if structured else check_array(np.asarray(data), topic.data_kind, source)
    if structured and not hasattr(column, "features"):
        raise InputError(
            f"{topic.name} takes {topic.data_kind} data: build it with "
            "compare.core.data.table_from_arrays(x, y) or points_from_array(x)"
        )
    x, hyper = topic.prepare(column, hyper)
    try:
        exact = topic.solve(x=x, **hyper)
    except ValueError as err:
        raise InputError(str(err)) from err
    structure = topic.structure(x, hyper)
    method = usable(settings.method)
    other = method.name != DEFAULT_METHOD
    if other and topic.step is not None:
        raise InputError(f"{topic.name}: {method.not_applicable(discrete=True)}")
    key = (topic.name, tuple(sorted(structure.items())), topic.build_model) + (
        (method.name,) if other else ()
    )
    if key not in cache:
        stage("compiling")
    t1 = time.perf_counter()
    compiler = None
    if other:
        from compare.core.inference import MethodModel  # heavy: PyMC, for other methods only

        def compiler(model: Any, variables: Any) -> Any:
            return MethodModel(model=model, variables=tuple(variables), method=method.name)

    compiled = cache.get(
        key,
        lambda: topic.build_model(**structure),
        topic.variables,
        compiler=compiler,
        **({} if topic.step is None else {"step": topic.step}),
    )
    t2 = time.perf_counter()
    model_data = topic.model_data(x=x, **hyper)
    if other:
        # The topic's extra comparisons sample their own models with nutpie: a run of
        # another method judges that method's draws alone (alpha is split as always).
        settings = dataclasses.replace(settings, extras=False)
    if method.kind == APPROXIMATION:
        stage("sampling")
        return _approximated(
            topic,
            compiled=compiled,
            model_data=model_data,
            exact=exact,
            settings=settings,
            hyper=hyper,
            source=source,
            n=int(len(x)),
            column=column,
            started=(t0, t1, t2),
            stage=stage,
        )
    stage("sampling")
    sampled = sample_enough(
        compiled,
        model_data,
        settings,
        variables=topic.variables,
        options=topic.sampler_options,
        n_parameters=len(exact.parameters),
        what=f"topic {topic.name}",
        on_extension=lambda: stage("sampling"),
    )
    tree, draws, divergences = sampled.tree, sampled.draws, sampled.divergences
    diagnosis, final, samplings = sampled.diagnosis, sampled.settings, list(sampled.samplings)
    t3 = time.perf_counter()
    stage("checking")
    after = cap_note(sampled.extensions, final.draws, settings)
    alpha_each = settings.alpha / (1 + topic.extra_tests)  # Bonferroni across the tests
    checks, diag, agreement = judge(
        draws,
        divergences,
        exact.posterior,
        settings,
        alpha=alpha_each,
        diagnosis=diagnosis,
        after=after,
        retried=sampled.retried,
    )
    search = compiled.map_search(model_data, map_starts(exact.posterior, settings))
    pymc_map = search.point
    checks = (*checks, map_check(exact, pymc_map, settings, search.start, search.dispersed))
    extra = Extra()
    if topic.extras is not None and settings.extras:
        # The extras start at the requested draws too: each sampled model is
        # extended on its own evidence.
        extra = _extras(
            topic,
            x=x,
            hyper=hyper,
            exact=exact,
            tree=tree,
            compiled=compiled,
            settings=settings,
            pymc_map=pymc_map,
            alpha=alpha_each,
            samplings=samplings,
        )
        checks = (*checks, *extra.checks)
    section = extension_section(settings, final.draws, samplings)
    extension_seconds = section["seconds"]
    lines = extra.lines + (
        (extension_line(section),) if section["extensions"] or section["retry"] else ()
    )
    extra = dataclasses.replace(
        extra, sections={**extra.sections, "extension": section}, lines=lines
    )
    verdict, decided_by = decide(checks)
    t4 = time.perf_counter()
    return RunResult(
        topic=topic.name,
        parameters=tuple(exact.parameters),
        verdict=verdict,
        decided_by=decided_by,
        exact=exact,
        mcmc=summarise(draws, diag, divergences, pymc_map),
        agreement=agreement,
        checks=checks,
        settings=final,
        hyper=hyper,
        data_source=source,
        n=int(len(x)),
        timings={
            "compile": t2 - t1,
            "sample": t3 - t2,
            "check": t4 - t3,
            "total": t4 - t0,
            "extension": extension_seconds,
        },
        draws=tree,
        extra=extra,
        variables=tuple(topic.variables),
        observed=observed_columns(column),
    )


def _approximated(
    topic: Topic,
    *,
    compiled: Any,
    model_data: dict[str, Any],
    exact: ExactAnswer,
    settings: Settings,
    hyper: dict[str, Any],
    source: str,
    n: int,
    column: Any,
    started: tuple[float, float, float],
    stage: Callable[[str], None],
) -> RunResult:
    """A run of an approximation (:mod:`compare.core.approximation`): how far it is, and the verdict.

    ``chains x draws`` iid draws are taken from the fitted approximation and
    kept as the run's draws (``mcmc`` summarises them as for any method; the
    convergence checks pass for iid draws and are kept for the record). The
    agreement test is replaced by the tolerance checks ``approx_mean`` and
    ``approx_sd``; the MAP check is PyMC's MAP, as in every run.
    """
    import xarray as xr  # heavy: only when a run has draws

    from compare.core.approximation import (  # heavy: ArviZ's PSIS, for approximations only
        approximation_checks,
        distances,
    )

    t0, t1, t2 = started
    fitted = compiled.approximate(model_data, settings, seed=settings.seed)
    space = compiled.space
    theta = np.array([space.values(u) for u in fitted.draws])
    logp_u = np.array([space.logp(u) for u in fitted.draws])
    gaussian_theta = None
    if fitted.mean is not None and fitted.cov is not None and space.is_identity():
        gaussian_theta = (fitted.mean, fitted.cov)
    t3 = time.perf_counter()
    stage("checking")
    found = distances(
        method=settings.method,
        theta=theta,
        logq=fitted.logq,
        logp_u=logp_u,
        exact=exact,
        rng=np.random.default_rng(settings.seed),
        gaussian_theta=gaussian_theta,
        fit_seconds=fitted.seconds,
        optimisation=fitted.optimisation,
    )
    draws = theta.reshape(settings.chains, settings.draws, -1)
    checks, diag = convergence_checks(draws, 0, settings)
    search = compiled.map_search(model_data, map_starts(exact.posterior, settings))
    pymc_map = search.point
    checks = (
        *checks,
        *approximation_checks(found, settings),
        map_check(exact, pymc_map, settings, search.start, search.dispersed),
    )
    verdict, decided_by = decide(checks)
    clear = [c for c in checks if c.passed is False and c.on_fail == DISAGREE]
    if verdict == INCONCLUSIVE and clear:  # a tolerance clearly missed outweighs one unsure
        verdict, decided_by = DISAGREE, clear[0].name
    if verdict == AGREE:
        decided_by = "approximation"
    posterior = xr.Dataset(
        {
            name: (("chain", "draw", *[f"{name}_dim_{k}" for k in range(len(shape))]), values)
            for name, shape, values in space.split(draws, settings.chains, settings.draws)
        }
    )
    stats = xr.Dataset(
        {"diverging": (("chain", "draw"), np.zeros((settings.chains, settings.draws), bool))}
    )
    tree = xr.DataTree.from_dict({"posterior": posterior, "sample_stats": stats})
    t4 = time.perf_counter()
    return RunResult(
        topic=topic.name,
        parameters=tuple(exact.parameters),
        verdict=verdict,
        decided_by=decided_by,
        exact=exact,
        mcmc=summarise(draws, diag, 0, pymc_map),
        agreement=None,
        checks=checks,
        settings=settings,
        hyper=hyper,
        data_source=source,
        n=n,
        timings={
            "compile": t2 - t1,
            "sample": t3 - t2,
            "check": t4 - t3,
            "total": t4 - t0,
            "extension": 0.0,
        },
        draws=tree,
        extra=Extra(sections={"approximation": found.section()}, lines=found.lines()),
        variables=tuple(topic.variables),
        observed=observed_columns(column),
    )


def _extras(
    topic: Topic, *, settings: Settings, samplings: list[Sampling], **context: Any
) -> Extra:
    """The topic's extra comparisons, extended like the run itself.

    A check of the extras that failed only for want of effective draws
    (``Check.short_ess``, e.g. the marginalised mixture's) makes them run
    again with more draws, afresh, at most ``settings.max_extensions`` times.
    The extras' seeds derive from the run's (attempt ``100 + i``), apart
    from those of the topic's model.
    """
    extras = topic.extras
    assert extras is not None  # run() calls this only for topics with extras
    run_settings = settings
    attempt = 0
    while True:
        ts = time.perf_counter()
        extra = extras(ExtraContext(settings=run_settings, **context))
        short = [c.short_ess for c in extra.checks if c.passed is False and c.short_ess is not None]
        failed = any(c.passed is False for c in extra.checks)
        if short or attempt > 0:
            samplings.append(
                Sampling(
                    "extras",
                    attempt,
                    run_settings.draws,
                    run_settings.seed,
                    time.perf_counter() - ts,
                    min(short) if short else None,
                    None,
                    SHORT if short else "failed" if failed else "passed",
                )
            )
        more = None
        if short and attempt < settings.max_extensions:
            more = next_draws(run_settings.draws, min(short), settings)
        if more is None:
            if short:  # say why the extras were not extended further
                note = cap_note(attempt, run_settings.draws, settings)
                extra = dataclasses.replace(
                    extra,
                    checks=tuple(
                        dataclasses.replace(c, note=f"{c.note}; still short {note}")
                        if c.passed is False and c.short_ess is not None
                        else c
                        for c in extra.checks
                    ),
                )
            return extra
        attempt += 1
        run_settings = dataclasses.replace(
            settings, draws=more, seed=extension_seed(settings.seed, 100 + attempt)
        )


#: Largest data set (in values) whose columns are kept beside the draws.
OBSERVED_MAX_VALUES = 2_000_000


def observed_columns(column: Any) -> dict[str, np.ndarray]:
    """The run's data as named columns; empty when streamed or very large."""
    if hasattr(column, "y"):  # Table
        cols = {name: column.x[:, j] for j, name in enumerate(column.features)}
        cols[column.target] = column.y
    elif hasattr(column, "x") and hasattr(column, "features"):  # Points
        cols = {name: column.x[:, j] for j, name in enumerate(column.features)}
        labels = getattr(column, "labels", None)  # LabelledPoints: the class of each row
        if labels is not None:
            cols[getattr(column, "target", None) or "label"] = np.asarray(labels).astype(str)
    elif isinstance(column, np.ndarray):
        cols = {"x": column}
    else:  # StreamedTable: never held in memory
        return {}
    if sum(np.asarray(v).size for v in cols.values()) > OBSERVED_MAX_VALUES:
        return {}
    return {str(k): np.asarray(v) for k, v in cols.items()}
