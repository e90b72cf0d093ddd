"""The regression topics' comparisons: design matrix, MAP vs full posterior,
predictive, evidence and decision.

Orchestration only; the maths is in ``analytic/linear_regression.py`` and
``analytic/linear_regression_nig.py``, the models in ``pymc_models/`` under
the same names.

What a regression run adds to the verdict (each a check that joins it):

* ``predictive``: PyMC's posterior predictive draws at ``predictive_points``
  inputs (the model's ``f_grid`` draws plus the likelihood's noise) against
  the exact joint predictive, by the same whitening rule as the posterior;
* ``evidence``: the exact log evidence against ``pm.sample_smc``'s estimate.

and reports (JSON ``predictive``, ``map_vs_posterior``, ``decision``,
``regression``): the MAP plug-in predictive next to the full one, the
expected loss of each point prediction under the exact predictive, the MLE,
the ridge equivalence and the effective number of parameters.
"""

from __future__ import annotations

import logging
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

import analytic.linear_regression as a_lr
import analytic.linear_regression as lr
import analytic.linear_regression_nig as lrn
from analytic._multivariate import MultivariateNormal, MultivariateT
from analytic.decision import expected_absolute_loss, expected_squared_loss
from compare.core.agreement import agreement_test
from compare.core.checks import Check, Extra, ExtraContext
from compare.core.data import (
    StreamedTable,
    Table,
    sklearn_bundled,
    table_from_arrays,
)
from compare.core.registry import (
    Hyperparameter,
    InputError,
    Simulation,
)
from compare.topics._common import SIMULATED_SEED

#: Rows kept from a streamed file to choose prediction inputs from.
RESERVOIR = 10_000


@dataclass(frozen=True, eq=False)
class Design:
    """A regression data set ready for both sides.

    Attributes
    ----------
    stats : analytic.linear_regression.Stats
        Sufficient statistics of (Phi, y); all the PyMC model needs.
    names : tuple of str
        Feature (column of Phi) names, intercept first.
    inputs : tuple of str
        Raw input column names.
    target : str
    phi, y : arrays of shape (n, d) and (n,), or None
        Kept when the data fit in memory (the MLE then uses QR on Phi).
    grid_x : array of shape (G, p)
        Raw inputs where the predictive is compared.
    grid_phi : array of shape (G, d)
    """

    stats: Any
    names: tuple[str, ...]
    inputs: tuple[str, ...]
    target: str
    phi: np.ndarray | None
    y: np.ndarray | None
    grid_x: np.ndarray
    grid_phi: np.ndarray

    def __len__(self) -> int:
        return int(self.stats.n)


def _features(x: np.ndarray, hyper: dict[str, Any], inputs: tuple[str, ...]):
    if hyper.get("degree") is not None and x.shape[1] != 1:
        raise InputError(
            f"--set degree={hyper['degree']} builds polynomial features of one "
            f"input, but there are {x.shape[1]} ({', '.join(inputs)}); choose one "
            "with --features"
        )
    try:
        return lr.design_matrix(
            x=x if x.shape[1] > 1 else x[:, 0],
            degree=hyper.get("degree"),
            intercept=hyper.get("intercept", True),
            names=inputs,
        )
    except ValueError as err:
        raise InputError(str(err)) from None


def prediction_inputs(x: np.ndarray, y: np.ndarray, points: int) -> np.ndarray:
    """Where to compare predictives: an even grid over one input's range, else data rows.

    For several inputs: ``points`` rows spread evenly over the data sorted by
    the target, so the predictions span its range.
    """
    if x.shape[1] == 1:
        lo, hi = float(x.min()), float(x.max())
        if lo == hi:
            lo, hi = lo - 1.0, hi + 1.0
        return np.linspace(lo, hi, points)[:, None]
    order = np.argsort(y, kind="stable")
    rows = order[np.linspace(0, len(order) - 1, min(points, len(order))).round().astype(int)]
    return x[rows]


def prepare(
    table: Table | StreamedTable, hyper: dict[str, Any], *, points: int = 10
) -> tuple[Design, dict]:
    """Build Phi from the table's inputs (intercept, polynomial degree) and its statistics."""
    if isinstance(table, StreamedTable):
        return _prepare_streamed(table, hyper, points=points), hyper
    phi, names = _features(table.x, hyper, table.features)
    grid_x = prediction_inputs(table.x, table.y, points)
    grid_phi, _ = _features(grid_x, hyper, table.features)
    design = Design(
        stats=lr.sufficient_stats(phi=phi, y=table.y),
        names=tuple(names),
        inputs=table.features,
        target=table.target,
        phi=phi,
        y=table.y,
        grid_x=grid_x,
        grid_phi=grid_phi,
    )
    return design, hyper


def _prepare_streamed(table: StreamedTable, hyper: dict[str, Any], *, points: int) -> Design:
    """Sufficient statistics chunk by chunk; prediction inputs from a sample of rows.

    Memory is bounded by the chunk size plus ``RESERVOIR`` kept rows (the
    first rows of the file), from which the prediction inputs are chosen.
    """
    stats_, names, kept_x, kept_y = None, None, [], []
    lo = hi = None
    kept = 0
    for x, y in table.chunks():
        phi, names = _features(x, hyper, table.features)
        part = lr.sufficient_stats(phi=phi, y=y)
        stats_ = part if stats_ is None else stats_ + part
        lo = x.min(axis=0) if lo is None else np.minimum(lo, x.min(axis=0))
        hi = x.max(axis=0) if hi is None else np.maximum(hi, x.max(axis=0))
        if kept < RESERVOIR:
            take = RESERVOIR - kept
            kept_x.append(x[:take])
            kept_y.append(y[:take])
            kept += len(x[:take])
    sample_x, sample_y = np.concatenate(kept_x), np.concatenate(kept_y)
    if sample_x.shape[1] == 1:  # the grid spans the whole file's range
        sample_x = np.vstack([sample_x, lo[None, :], hi[None, :]])
        sample_y = np.concatenate([sample_y, [0.0, 0.0]])
    grid_x = prediction_inputs(sample_x, sample_y, points)
    grid_phi, _ = _features(grid_x, hyper, table.features)
    return Design(
        stats=stats_,
        names=tuple(names),
        inputs=table.features,
        target=table.target,
        phi=None,
        y=None,
        grid_x=grid_x,
        grid_phi=grid_phi,
    )


def prior_mean_vector(design: Design, hyper: dict[str, Any]) -> np.ndarray:
    return np.full(len(design.names), float(hyper.get("prior_mean", 0.0)))


def solve_known_noise(
    *, x: Design, noise_sd: float, prior_sd: float, prior_mean: float = 0.0, **_structure
):
    kw = dict(
        noise_sd=noise_sd,
        prior_sd=prior_sd,
        prior_mean=prior_mean_vector(x, {"prior_mean": prior_mean}),
    )
    if x.phi is not None:
        return lr.solve(phi=x.phi, y=x.y, **kw)
    return lr.solve_stats(suff=x.stats, **kw)


def solve_nig(
    *,
    x: Design,
    alpha0: float,
    beta0: float,
    prior_scale: float,
    prior_mean: float = 0.0,
    **_structure,
):
    kw = dict(
        alpha0=alpha0,
        beta0=beta0,
        prior_scale=prior_scale,
        prior_mean=prior_mean_vector(x, {"prior_mean": prior_mean}),
    )
    if x.phi is not None:
        return lrn.solve(phi=x.phi, y=x.y, **kw)
    return lrn.solve_stats(suff=x.stats, **kw)


def suff_data(x: Design) -> dict[str, Any]:
    s = x.stats
    return dict(gram=s.gram, phi_t_y=s.phi_t_y, y_t_y=s.y_t_y, n=s.n, phi_grid=x.grid_phi)


def structure(x: Design, hyper) -> dict[str, int]:
    return {"n_features": len(x.names), "n_grid": int(x.grid_phi.shape[0])}


# --- the extra comparisons ----------------------------------------------------
def exact_predictive(ctx: ExtraContext):
    """The exact joint posterior predictive at the grid, as an ExactPosterior.

    Known noise: Normal(Phi m_N, Phi S_N Phi^T + noise_sd^2 I).  NIG: a
    multivariate t with 2 a_N dof, location Phi m_N and scale matrix
    (b_N / a_N)(I + Phi V_N Phi^T).
    """
    x: Design = ctx.x
    phi = x.grid_phi
    names = tuple(f"y*[{i}]" for i in range(phi.shape[0]))
    post = ctx.exact.posterior
    if isinstance(post, lrn.NIGRegressionPosterior):
        scale = (post.beta / post.alpha) * (np.eye(phi.shape[0]) + phi @ post.scale_cov @ phi.T)
        return MultivariateT(loc=phi @ post.loc, scale=scale, df=2.0 * post.alpha, parameters=names)
    pred = ctx.exact.predictive
    return MultivariateNormal(mean=pred.mean(phi), cov=pred.cov(phi), parameters=names)


def predictive_draws(ctx: ExtraContext) -> np.ndarray:
    """PyMC's posterior predictive draws at the grid: f_grid plus the likelihood's noise."""
    f = np.asarray(ctx.tree.posterior["f_grid"].transpose("chain", "draw", ...).values)
    rng = np.random.default_rng([ctx.settings.seed, 2])
    if "sigma2" in ctx.tree.posterior:
        sd = np.sqrt(np.asarray(ctx.tree.posterior["sigma2"].transpose("chain", "draw").values))
        return f + sd[..., None] * rng.standard_normal(f.shape)
    return f + ctx.hyper["noise_sd"] * rng.standard_normal(f.shape)


def map_plugin(ctx: ExtraContext) -> tuple[np.ndarray, np.ndarray]:
    """Mean and variance of the MAP plug-in predictive N(phi^T w_MAP, s2_MAP)."""
    x: Design = ctx.x
    post = ctx.exact.posterior
    d = len(x.names)
    mode = post.mode
    mean = x.grid_phi @ mode[:d]
    var = mode[d] if "sigma2" in post.parameters else ctx.hyper["noise_sd"] ** 2
    return mean, np.full(mean.shape, float(var))


def expected_losses(dist_of, candidates: dict[str, np.ndarray]) -> dict[str, dict[str, float]]:
    """Average expected loss over the grid of each candidate point prediction.

    Squared loss (minimised by the predictive mean), absolute loss (by the
    median) and, for 0-1 loss in its continuous form, the predictive density
    at the prediction (maximised by the mode); see ``analytic/decision.py``.
    """
    out: dict[str, dict[str, float]] = {}
    for name, a in candidates.items():
        dists = [dist_of(i) for i in range(len(a))]
        out[name] = {
            "squared": float(np.mean([expected_squared_loss(d, ai) for d, ai in zip(dists, a)])),
            "absolute": float(np.mean([expected_absolute_loss(d, ai) for d, ai in zip(dists, a)])),
            "density": float(np.mean([d.pdf(ai) for d, ai in zip(dists, a)])),
        }
    return out


def smc_evidence(ctx: ExtraContext) -> tuple[Check, dict[str, Any]]:
    """Exact log evidence against pm.sample_smc (several chains; their spread reported),
    with PyMC's independent Metropolis-Hastings kernel batched over the particles
    (compare/core/batched_smc.py: the same estimate for a seed, in a fraction of the time)."""
    import pymc as pm  # heavy: PyMC only when a model is built or sampled

    from compare.core.batched_smc import BatchedIMH  # heavy: imports PyMC

    settings = ctx.settings
    exact = float(ctx.exact.log_evidence)
    if settings.smc_chains < 1:
        return Check("evidence", None, settings.smc_tol_nats, None, "SMC check skipped"), {}
    model = ctx.compiled.model  # its pm.Data already point at this data set (MAP step)
    logger = logging.getLogger("pymc")
    level = logger.level
    logger.setLevel(logging.ERROR)  # keep SMC's progress lines off the user's terminal
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            trace = pm.sample_smc(
                draws=settings.smc_draws,
                chains=settings.smc_chains,
                cores=1,
                model=model,
                start=prior_population(
                    model, settings.smc_draws, settings.smc_chains, seed=settings.seed
                ),
                random_seed=settings.seed,
                progressbar=False,
                compute_convergence_checks=False,
                kernel=BatchedIMH,
            )
    finally:
        logger.setLevel(level)
    raw = trace.sample_stats["log_marginal_likelihood"].values
    per_chain = np.array(
        [
            _last_finite(np.asarray(list(row), dtype=float).ravel())
            for row in raw.reshape(raw.shape[0], -1)
        ]
    )
    mean, sd = float(per_chain.mean()), float(per_chain.std(ddof=1)) if per_chain.size > 1 else 0.0
    tol = max(settings.smc_tol_nats, 5.0 * sd)
    diff = abs(exact - mean)
    # Informational (issue 60): this rule failed an unbiased SMC about 2e-3 of the
    # time, 20x the default alpha, and a log of SMC's unbiased evidence estimate is
    # biased low by about half its variance; with 4 chains no rule is calibrated at
    # alpha 1e-4 and still has power. The distance is reported, the verdict does not
    # read it.
    check = Check(
        "evidence",
        diff,
        tol,
        None,
        f"informational, not in the verdict: |exact - SMC| log evidence in nats "
        f"{'within' if diff <= tol else 'beyond'} max(0.5, 5 sd over chains); SMC mean "
        f"{mean:.3f} +- {sd:.3f} over {per_chain.size} chains; exact {exact:.3f}",
    )
    return check, {
        "exact": exact,
        "smc_per_chain": per_chain.tolist(),
        "smc_mean": mean,
        "smc_sd": sd,
        "tolerance": tol,
    }


def prior_population(model: Any, draws: int, chains: int, *, seed: int) -> list[dict[str, Any]]:
    """Each SMC chain's first population: ``draws`` prior draws of the free variables, in
    the sampler's (transformed) coordinates, keyed by their value variables' names.

    ``pm.sample_smc`` draws the same itself, but through a function compiled by the
    default (numba) backend and called once per draw, 4,000 calls for our default
    4 chains x 1,000 draws: 0.96 CPU-s for the Normal-Inverse-Gamma regression's
    model against 0.22 with PyTensor's Python linker, whose ops draw with NumPy
    (2026-12-05). The expression is PyMC's own (``make_initial_point_expression``
    with the prior as every variable's start, as the SMC kernel builds it); each
    chain draws from its own stream of ``seed``.
    """
    import pymc as pm  # heavy: PyMC only when a model is built or sampled
    from pymc.initial_point import make_initial_point_expression  # heavy: as above
    from pytensor.compile.mode import Mode  # heavy: as above

    expression = make_initial_point_expression(
        free_rvs=model.free_RVs,
        rvs_to_transforms=model.rvs_to_transforms,
        initval_strategies={**model.rvs_to_initial_values},
        default_strategy="prior",
        return_transformed=True,
    )
    names = [model.rvs_to_values[rv].name for rv in model.free_RVs]
    mode = Mode(linker="py", optimizer="fast_compile")  # type: ignore[no-untyped-call]
    population = []
    for stream in np.random.SeedSequence(seed).spawn(chains):
        values = pm.draw(
            expression, draws=draws, random_seed=np.random.default_rng(stream), mode=mode
        )
        population.append(dict(zip(names, values, strict=True)))
    return population


def _last_finite(values: np.ndarray) -> float:
    finite = values[np.isfinite(values)]
    return float(finite[-1]) if finite.size else float("nan")


def extras(ctx: ExtraContext) -> Extra:
    """Predictive, evidence, MAP vs posterior and decision for a regression run."""
    x: Design = ctx.x
    settings = ctx.settings
    exact_pred = exact_predictive(ctx)
    draws = predictive_draws(ctx)
    pred_test = agreement_test(
        draws, exact_pred, alpha=ctx.alpha, seed=settings.seed, n_reference=settings.n_reference
    )
    pred_check = Check(
        "predictive",
        pred_test.max_abs_z,
        pred_test.threshold,
        pred_test.passed,
        f"posterior predictive at {draws.shape[-1]} inputs: max |z| over "
        f"{len(pred_test.quantities)} quantities (Bonferroni, "
        f"alpha={ctx.alpha:g})",
    )
    evidence_check, evidence = smc_evidence(ctx)

    flat = draws.reshape(-1, draws.shape[-1])
    exact_var = np.diag(exact_pred.cov)
    plug_mean, plug_var = map_plugin(ctx)
    marg = exact_pred.marginal
    candidates = {
        "posterior predictive mean": np.asarray(exact_pred.mean),
        "predictive median": np.array([marg(i).median() for i in range(len(plug_mean))]),
        "MAP plug-in": plug_mean,
    }
    if ctx.exact.mle is not None:
        candidates["MLE plug-in"] = x.grid_phi @ np.asarray(ctx.exact.mle)[: len(x.names)]
    losses = expected_losses(marg, candidates)
    post = ctx.exact.posterior
    d = len(x.names)
    mle = ctx.exact.mle
    sections = {
        "predictive": {
            "inputs": x.grid_x,
            "input_names": list(x.inputs),
            "exact": {"mean": exact_pred.mean, "var": exact_var},
            "mcmc": {"mean": flat.mean(axis=0), "var": flat.var(axis=0, ddof=1)},
            "map_plugin": {"mean": plug_mean, "var": plug_var},
            "max_abs_z": pred_test.max_abs_z,
            "threshold": pred_test.threshold,
            "quantities": [
                {"name": q.name, "z": q.z, "p_holm": q.p_holm} for q in pred_test.quantities
            ],
        },
        "evidence": evidence,
        "map_vs_posterior": {
            "exact_map": post.mode,
            "pymc_map": ctx.pymc_map,
            "exact_mean": post.mean,
            "mcmc_mean": ctx.tree.posterior["w"].mean(("chain", "draw")).values,
            "note": "the posterior mode of w equals its mean here (symmetric posterior); "
            "the MAP plug-in predictive ignores parameter uncertainty",
        },
        "decision": losses,
        "regression": {
            "features": list(x.names),
            "mle_unique": mle is not None,
            "ridge_lambda": ctx.hyper["noise_sd"] ** 2 / ctx.hyper["prior_sd"] ** 2
            if "noise_sd" in ctx.hyper
            else None,
        },
    }
    lines = [
        _predictive_table(x, exact_pred.mean, exact_var, flat, plug_mean, plug_var),
        _decision_table(losses),
    ]
    if mle is None:
        lines.append(
            f"note: the MLE is not unique (Phi has rank < {d}: more features than "
            "rows, or duplicated/collinear columns); drop columns or lower the "
            "degree for an MLE. The posterior and MAP are still defined."
        )
    return Extra(checks=(pred_check, evidence_check), sections=sections, lines=tuple(lines))


def _predictive_table(x: Design, mean, var, flat, plug_mean, plug_var) -> str:
    head = (
        f"predictive at {len(mean)} inputs (exact vs MCMC vs MAP plug-in; "
        f"inputs: {', '.join(x.inputs)})"
    )
    rows = [
        head,
        f"  {'input':>18s} {'exact mean':>11s} {'exact sd':>9s} {'MCMC mean':>10s} "
        f"{'MCMC sd':>9s} {'MAP mean':>9s} {'MAP sd':>8s}",
    ]
    mc_mean, mc_sd = flat.mean(axis=0), flat.std(axis=0, ddof=1)
    for i in range(len(mean)):
        label = ", ".join(f"{v:.3g}" for v in x.grid_x[i])
        rows.append(
            f"  {label[:18]:>18s} {mean[i]:11.4g} {np.sqrt(var[i]):9.4g} "
            f"{mc_mean[i]:10.4g} {mc_sd[i]:9.4g} {plug_mean[i]:9.4g} "
            f"{np.sqrt(plug_var[i]):8.4g}"
        )
    return "\n".join(rows)


def _decision_table(losses: dict[str, dict[str, float]]) -> str:
    rows = [
        "decision: expected loss under the exact predictive, averaged over the inputs",
        f"  {'point prediction':28s} {'squared':>10s} {'absolute':>10s} {'density (0-1)':>14s}",
    ]
    for name, loss in losses.items():
        rows.append(
            f"  {name:28s} {loss['squared']:10.5g} {loss['absolute']:10.5g} {loss['density']:14.5g}"
        )
    return "\n".join(rows)


# --- evidence-based model selection -------------------------------------------
@dataclass(frozen=True)
class EvidenceRow:
    """One polynomial degree in an evidence table.

    ``train_rmse`` is the least-squares (MLE) training error, the minimum-norm
    solution where the MLE is not unique: it keeps falling as the degree
    grows, while the evidence peaks (Bishop 2006, sec. 3.4).
    """

    degree: int
    n_features: int
    log_evidence: float
    train_rmse: float
    mle_unique: bool
    smc_mean: float | None = None
    smc_sd: float | None = None


def parse_degrees(text: str) -> list[int]:
    """'0-9' or '0,2,5' (or a mix) into a sorted list of degrees >= 0."""
    out: set[int] = set()
    try:
        for part in text.split(","):
            part = part.strip()
            if "-" in part:
                lo, hi = (int(p) for p in part.split("-", 1))
                if hi < lo:
                    raise ValueError
                out.update(range(lo, hi + 1))
            else:
                out.add(int(part))
    except ValueError:
        raise InputError(
            f"--degrees {text!r}: give a range like 0-9 or a list like 0,3,9"
        ) from None
    if not out or min(out) < 0:
        raise InputError(f"--degrees {text!r}: degrees must be whole numbers >= 0")
    return sorted(out)


def _smc_log_evidence(topic, design: Design, hyper: dict[str, Any], settings) -> np.ndarray:
    """pm.sample_smc's log evidence per chain, on a model built for this design."""
    import pymc as pm  # heavy: PyMC only when a model is built or sampled

    from compare.core.batched_smc import BatchedIMH  # heavy: imports PyMC

    model = topic.build_model(**structure(design, hyper))
    pm.set_data(topic.model_data(x=design, **hyper), model=model)
    logger = logging.getLogger("pymc")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            trace = pm.sample_smc(
                draws=settings.smc_draws,
                chains=max(settings.smc_chains, 2),
                cores=1,
                model=model,
                random_seed=settings.seed,
                progressbar=False,
                compute_convergence_checks=False,
                kernel=BatchedIMH,
            )
    finally:
        logger.setLevel(level)
    raw = trace.sample_stats["log_marginal_likelihood"].values
    return np.array(
        [
            _last_finite(np.asarray(list(row), dtype=float).ravel())
            for row in raw.reshape(raw.shape[0], -1)
        ]
    )


def evidence_table(
    topic,
    table: Table,
    hyper: dict[str, Any],
    degrees: list[int],
    *,
    smc_degrees: list[int] | None,
    settings,
) -> list[EvidenceRow]:
    """Exact log evidence, MLE training error and (for some degrees) SMC per degree.

    ``smc_degrees=None`` picks the smallest, the best and the largest degree.
    """
    if table.x.shape[1] != 1:
        raise InputError(
            f"the evidence table varies the polynomial degree of one input, but "
            f"the data have {table.x.shape[1]} ({', '.join(table.features)}); "
            "choose one with --features"
        )
    rows, designs = [], {}
    for degree in degrees:
        h = {**hyper, "degree": degree}
        design, _ = prepare(table, h, points=settings.predictive_points)
        exact = topic.solve(x=design, **h)
        coef, *_ = np.linalg.lstsq(design.phi, design.y, rcond=None)
        rmse = float(np.sqrt(np.mean((design.y - design.phi @ coef) ** 2)))
        rows.append(
            EvidenceRow(
                degree, len(design.names), float(exact.log_evidence), rmse, exact.mle is not None
            )
        )
        designs[degree] = (design, h)
    if smc_degrees is None:
        best = max(rows, key=lambda r: r.log_evidence).degree
        smc_degrees = sorted({degrees[0], best, degrees[-1]})
    out = []
    for row in rows:
        if row.degree in smc_degrees and settings.smc_chains > 0:
            design, h = designs[row.degree]
            per_chain = _smc_log_evidence(topic, design, h, settings)
            row = EvidenceRow(
                **{
                    **row.__dict__,
                    "smc_mean": float(per_chain.mean()),
                    "smc_sd": float(per_chain.std(ddof=1)),
                }
            )
        out.append(row)
    return out


# --- shared by the two regression topics' registrations -------------------
def regression_hyper(*extra: Hyperparameter) -> tuple[Hyperparameter, ...]:
    return (
        *extra,
        Hyperparameter("prior_mean", 0.0, "prior mean of every coefficient w[j]", kind="real"),
        Hyperparameter(
            "intercept",
            True,
            "add a column of ones (w[0]) before the inputs",
            kind="bool",
            structural=True,
        ),
        Hyperparameter(
            "degree",
            None,
            "for one input column: polynomial features "
            "1, x, ..., x^degree (default: the inputs as they are)",
            kind="count",
            high=20,
            structural=True,
        ),
    )


def sinusoid_loader(n: int = 25, noise_sd: float = 0.3):
    def load():
        x, y = a_lr.sinusoid(np.random.default_rng(SIMULATED_SEED), n=n, noise_sd=noise_sd)
        return table_from_arrays(
            x, y, features=("x",), target="y", source=f"builtin:sinusoid (seed {SIMULATED_SEED})"
        )

    return load


#: scikit-learn's ``load_diabetes().feature_names``.
DIABETES_FEATURES = ("age", "sex", "bmi", "bp", "s1", "s2", "s3", "s4", "s5", "s6")


def diabetes_loader():
    def load():
        # scikit-learn's load_diabetes(scaled=False) reads these two files with
        # np.loadtxt; reading them here spares the import of scikit-learn.
        raw = np.loadtxt(sklearn_bundled("diabetes_data_raw.csv.gz"))
        target = np.loadtxt(sklearn_bundled("diabetes_target.csv.gz"))
        x = (raw - raw.mean(axis=0)) / raw.std(axis=0)
        y = (target - target.mean()) / target.std()
        return table_from_arrays(
            x, y, features=DIABETES_FEATURES, target="progression", source="builtin:diabetes"
        )

    return load


def regression_simulate(solver_module, hyper_names):
    def simulate(rng: np.random.Generator, n: int, hyper: dict[str, Any]) -> Simulation:
        x = np.sort(rng.uniform(0.0, 1.0, n))
        degree = hyper.get("degree")
        phi, _ = a_lr.design_matrix(
            x=x,
            degree=3 if degree is None else degree,
            intercept=hyper.get("intercept", True),
            names=("x",),
        )
        kw = {k: hyper[k] for k in hyper_names}
        theta, y = solver_module.simulate(rng, phi=phi, **kw)  # prior centred at 0
        shift = np.full(phi.shape[1], float(hyper.get("prior_mean", 0.0)))
        theta = np.concatenate([theta[: phi.shape[1]] + shift, theta[phi.shape[1] :]])
        y = y + phi @ shift
        return Simulation(theta=theta, data=table_from_arrays(x, y, features=("x",)))

    return simulate


#: The regression topics' builtin data sets' names and descriptions (BuiltinData's fields).
SINUSOID: dict[str, Any] = dict(
    name="sinusoid",
    description="25 points of sin(2 pi x) + N(0, 0.3^2), "
    "x uniform on [0, 1] (Bishop 2006, ch. 1 and 3)",
    source=f"simulated, seed {SIMULATED_SEED}",
)
DIABETES: dict[str, Any] = dict(
    name="diabetes",
    description="disease progression after one year against 10 "
    "baseline variables, 442 patients; every column standardised",
    source="scikit-learn load_diabetes (Efron et al. 2004)",
)
