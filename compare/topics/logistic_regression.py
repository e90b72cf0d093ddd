"""The logistic-regression topic's glue: design, builtin data, simulator and extras.

Orchestration only: the maths is in ``analytic/logistic_regression.py``, the
model in ``pymc_models/logistic_regression.py``.

The verdict compares NUTS with the numerical exact posterior (cubature for
d <= 2, Pareto-smoothed importance sampling above).  What a run adds
(JSON sections; no extra statistical test, so the verdict's alpha is not
split):

* ``logistic``: MAP (Newton/IRLS), the MLE or the separation that makes it
  not exist, the reference's method, k-hat, ESS and evidence;
* ``laplace_error``: the Laplace approximation against the reference, in
  posterior sds, on the whole data set and on nested subsets of growing n
  (:data:`LAPLACE_SIZES` of the rows), showing it shrink as n grows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

import analytic.logistic_regression as alr
import pymc_models.logistic_regression as m_logr
import pymc_models.logistic_regression as mlr
from compare.core.agreement import posterior_array
from compare.core.checks import Extra, ExtraContext
from compare.core.data import (
    StreamedTable,
    Table,
    table_from_arrays,
)
from compare.core.registry import (
    BuiltinData,
    Calibration,
    Hyperparameter,
    InputError,
    Simulation,
    Topic,
    Unsupported,
)
from compare.topics import _classification
from compare.topics._classification import LabelledRows, binary_labels, numeric_inputs
from compare.topics._classifier_report import (
    DIGITS,
    binary_log_proba,
    decision_grid,
    most_separating,
    reliability,
)
from compare.topics._common import SIMULATED_SEED
from compare.topics._regression import _features

#: builtin:breast-cancer columns (scikit-learn names), standardised; d = 4 with the
#: intercept, so the reference is importance sampling.  Three weakly related
#: measurements of size, texture and shape: the classes overlap (no separation).
BREAST_CANCER_FEATURES = ("mean radius", "mean texture", "mean smoothness")
#: Shares of the rows in the Laplace-error sweep (nested subsets of one shuffle).
LAPLACE_SIZES = (1 / 16, 1 / 8, 1 / 4, 1 / 2, 1.0)
#: Importance draws per subset in the sweep (the whole-data reference uses reference_draws).
SWEEP_DRAWS = 2**15
#: Fewest rows in a subset of the sweep (fewer rarely hold both classes).
MIN_SWEEP_ROWS = 20
#: MCMC draws (thinned evenly) averaged in the MCMC predictive of the figures.
PREDICT_DRAWS = 1000
#: Reference draws in each weight's histogram of the Laplace-vs-MCMC overlay.
OVERLAY_DRAWS = 20_000
#: Reference pool points behind the exact predictive of the figures (the decision grid,
#: the reliability table): the pool's first 2^15 (``LogisticPredictive.prob``). Their
#: Monte Carlo error is at most 0.5 / sqrt(ESS) ~ 0.003 in a probability (iid bound; on
#: breast-cancer the grid moved by 6e-5 at most), which no figure shows, where all 2^18
#: cost a sigmoid per point and grid row: `run logistic-regression --force` with the
#: model cached took 8.2-8.5 CPU-s with them, 6.0-6.3 with 2^15 (2026-12-05).
FIGURE_POOL_DRAWS = 2**15


@dataclass(frozen=True, eq=False)
class LogisticDesign:
    """A logistic-regression data set ready for both sides.

    Attributes
    ----------
    phi : array of shape (n, d)
        Design matrix, intercept first when present.
    y : array of shape (n,)
        0/1 labels.
    names : tuple of str
        Column names of ``phi`` (``"1"`` for the intercept).
    inputs : tuple of str
    target : str
    raw : array of shape (n, p)
        The input columns before the design (for the decision-boundary grid).
    """

    phi: np.ndarray
    y: np.ndarray
    names: tuple[str, ...]
    inputs: tuple[str, ...]
    target: str
    raw: np.ndarray | None = None

    def __len__(self) -> int:
        return int(self.y.size)


def _labelled_table(rows: LabelledRows) -> Table:
    """A CSV with words as a numeric table: numeric inputs, labels coded 0/1 by
    :func:`compare.topics._classification.binary_labels` (yes/no keep their meaning; other
    two labels in natural order, ``benign``/``malignant``: y = 1 for ``malignant``)."""
    x = numeric_inputs(rows, topic="logistic-regression")
    y = binary_labels(
        rows.labels, source=rows.source, target=rows.target, what="logistic regression needs"
    ).astype(float)
    return table_from_arrays(x, y, features=rows.features, target=rows.target, source=rows.source)


def prepare(table: Table | StreamedTable, hyper: dict[str, Any]) -> tuple[LogisticDesign, dict]:
    """Design matrix (intercept first) and checked 0/1 labels.

    ``table`` may be :class:`compare.topics._classification.LabelledRows` (a CSV with
    words, see :func:`_labelled_table`): the class labels may be text.
    """
    if isinstance(table, LabelledRows):
        table = _labelled_table(table)
    if isinstance(table, StreamedTable):
        raise InputError(
            f"{table.path} is read in chunks, but Newton's method and the "
            "reference need every row at once; pass the file without --stream"
        )
    phi, names = _features(table.x, hyper, table.features)
    try:
        phi, y = alr.check_data(phi=phi, y=table.y)
    except ValueError as err:
        raise InputError(f"{table.source}, target {table.target!r}: {err}") from None
    sweep_sizes(len(y), hyper.get("sizes") or LAPLACE_SIZES)  # refuse bad --sizes before sampling
    return LogisticDesign(
        phi=phi,
        y=y,
        names=tuple(names),
        inputs=table.features,
        target=table.target,
        raw=np.asarray(table.x, dtype=float),
    ), hyper


def solve(
    *,
    x: LogisticDesign,
    prior_sd: float,
    reference_draws: int = alr.DEFAULT_REFERENCE_DRAWS,
    proposal_df: float = alr.DEFAULT_PROPOSAL_DF,
    **_structure,
) -> alr.LogisticAnswer:
    names = tuple("w[intercept]" if n == "1" else f"w[{n}]" for n in x.names)
    return alr.solve(
        phi=x.phi,
        y=x.y,
        prior_sd=prior_sd,
        names=names,
        reference_draws=reference_draws,
        proposal_df=proposal_df,
    )


def model_data(*, x: LogisticDesign, prior_sd: float, **_) -> dict[str, np.ndarray]:
    return mlr.model_data(phi=x.phi, y=x.y, prior_sd=prior_sd)


def structure(x: LogisticDesign, hyper) -> dict[str, int]:
    return {"n_features": int(x.phi.shape[1])}


#: Draws of (weights, labels) before :func:`simulate` gives up on getting both classes.
SIMULATE_TRIES = 1000


def simulate(rng: np.random.Generator, n: int, hyper: dict[str, Any]) -> Simulation:
    """One standard-normal input, weights from the prior, then 0/1 labels with both classes.

    The topic refuses data of one class (``prepare``), and a prior draw can
    give one (a weight of -4 on the intercept makes all 40 labels of the null
    study 0: ``make study`` stopped there on 2026-12-07). Weights and labels
    are drawn again, from the same generator, until both classes appear: the
    prior predictive conditioned on an event of the data alone, which leaves
    the posterior of every data set as it was, so the null study's z-scores
    and SBC's ranks keep their distributions.
    """
    x = np.sort(rng.standard_normal(n))
    phi, _ = _features(x[:, None], {"intercept": hyper.get("intercept", True)}, ("x",))
    for _ in range(SIMULATE_TRIES):
        w, y = alr.simulate(rng, phi=phi, prior_sd=hyper["prior_sd"])
        if 0.0 < y.mean() < 1.0:
            return Simulation(theta=w, data=table_from_arrays(x, y, features=("x",), target="y"))
    raise ValueError(
        f"{SIMULATE_TRIES} prior draws of {n} labels each gave one class: use more rows "
        f"or a smaller prior_sd (got {hyper['prior_sd']})"
    )


# --- builtin data ---------------------------------------------------------------
def _breast_cancer(features: tuple[str, ...]):
    def load() -> Table:
        from sklearn.datasets import (
            load_breast_cancer,  # heavy: scikit-learn only when its data set is loaded
        )

        data = load_breast_cancer()
        cols = [list(data.feature_names).index(f) for f in features]
        x = data.data[:, cols]
        x = (x - x.mean(axis=0)) / x.std(axis=0)
        y = (data.target == 0).astype(float)  # scikit-learn codes malignant as 0
        return table_from_arrays(
            x,
            y,
            features=tuple(f.replace(" ", "_") for f in features),
            target="malignant",
            source="builtin:breast-cancer",
        )

    return load


def builtin(seed: int) -> tuple[BuiltinData, ...]:
    """The topic's builtin data sets (breast cancer first)."""
    sim_hyper = {"prior_sd": 1.5, "intercept": True}
    return (
        BuiltinData(
            "breast-cancer",
            "malignant (1) or benign (0) against mean radius, texture "
            "and smoothness (standardised), 569 tumours; d = 4: importance sampling",
            "scikit-learn load_breast_cancer (Wisconsin diagnostic, Street et al. 1993)",
            _breast_cancer(BREAST_CANCER_FEATURES),
            hyper={"prior_sd": 1.0},
            # describe's names without scikit-learn and the importance-sampling reference
            parameters=(
                "w[intercept]",
                *(f"w[{f.replace(' ', '_')}]" for f in BREAST_CANCER_FEATURES),
            ),
        ),
        BuiltinData(
            "breast-cancer-radius",
            "malignant against mean radius only (standardised), 569 tumours; d = 2: cubature",
            "scikit-learn load_breast_cancer",
            _breast_cancer(("mean radius",)),
            hyper={"prior_sd": 1.0},
        ),
        BuiltinData(
            "simulated",
            "60 labels from the prior predictive, one standard-normal input; d = 2: cubature",
            f"simulated, seed {seed}, n=60",
            lambda: simulate(np.random.default_rng(seed), 60, dict(sim_hyper)).data,
            hyper=sim_hyper,
        ),
    )


# --- extras -----------------------------------------------------------------------
def sweep_sizes(n: int, sizes: Any = LAPLACE_SIZES) -> list[int]:
    """Row counts of the Laplace-error sweep: ``sizes`` <= 1 are shares of ``n`` rows,
    larger values row counts; each at least :data:`MIN_SWEEP_ROWS`, sorted, distinct."""
    values = np.atleast_1d(np.asarray(sizes, dtype=float))
    too_big = [v for v in values if v > 1 and v > n]
    if too_big:
        raise InputError(
            f"--sizes {','.join(f'{v:g}' for v in values)}: {too_big[0]:g} is more "
            f"than the {n} rows; give row counts up to {n} or shares in (0, 1]"
        )
    rows = {int(round(v * n)) if v <= 1 else int(round(v)) for v in values}
    return sorted({min(n, max(MIN_SWEEP_ROWS, r)) for r in rows})


def laplace_sweep(
    x: LogisticDesign, prior_sd: float, *, sizes: Any = LAPLACE_SIZES, draws: int = SWEEP_DRAWS
) -> tuple[alr.LaplaceError, ...]:
    """Laplace error on nested subsets of ``sizes`` rows (see :func:`sweep_sizes`).

    Sizes whose subset holds one class only are dropped (too few rows to fit).
    """
    out = []
    sizes = sweep_sizes(len(x), sizes)
    for size in sizes:
        try:
            out += alr.laplace_error_by_size(
                phi=x.phi, y=x.y, prior_sd=prior_sd, sizes=(size,), reference_draws=draws
            )
        except ValueError:
            continue
    return tuple(out)


def extras(ctx: ExtraContext) -> Extra:
    x: LogisticDesign = ctx.x
    answer: alr.LogisticAnswer = ctx.exact
    post = answer.posterior
    ref = post.reference
    sep = answer.separation
    whole = alr.laplace_error(answer=answer)
    sweep = laplace_sweep(x, ctx.hyper["prior_sd"], sizes=ctx.hyper.get("sizes") or LAPLACE_SIZES)
    sections = {
        "logistic": {
            "features": list(x.names),
            "map": post.mode,
            "map_newton_iterations": answer.map_fit.iterations,
            "mle": answer.mle,
            "separation": sep.kind,
            "separating_direction": sep.direction,
            "reference": {
                "method": ref.method,
                "khat": ref.khat,
                "khat_max": alr.KHAT_MAX,
                "ess": ref.ess,
                "cubature_relative_error": ref.error,
                "log_evidence": ref.log_evidence,
            },
            "laplace": {"mean": post.laplace.mean, "cov": post.laplace.cov},
            "exact": {"mean": post.mean, "cov": post.cov},
        },
        "laplace_error": {
            "note": "Laplace N(MAP, H^-1) against the exact reference: mean shift "
            "(MAP - E[w]) / sd[w] and sd ratio sqrt(diag(H^-1) / Var[w]) per weight; "
            "nested subsets of one seeded shuffle",
            "parameters": list(post.parameters),
            "rows": [_row(e) for e in sweep],
            "whole": _row(whole),
        },
    }
    sections.update(_figure_sections(ctx, answer))
    lines = [_reference_line(ref, x), _laplace_table(post.parameters, sweep)]
    if sep.separated:
        lines.append(
            f"note: the classes are {sep.kind}ly separated: the MLE does not exist "
            "(the likelihood keeps growing along the direction "
            f"{np.round(sep.direction, 3).tolist()}); the MAP and the posterior do, "
            "thanks to the prior"
        )
    return Extra(sections=sections, lines=tuple(lines))


def _figure_sections(ctx: ExtraContext, answer: alr.LogisticAnswer) -> dict[str, Any]:
    """Decision boundary, reliability table and the Laplace-vs-MCMC overlay's densities."""
    from scipy import special  # heavy: SciPy only when the maths runs

    x: LogisticDesign = ctx.x
    post = answer.posterior
    w = posterior_array(ctx.tree.posterior, ctx.compiled.variables).reshape(-1, post.mean.size)
    w = w[:: max(1, w.shape[0] // PREDICT_DRAWS)]
    shown = min(FIGURE_POOL_DRAWS, post.pool.draws.shape[0])  # both powers of two

    def design(rows: np.ndarray) -> np.ndarray:
        return _features(rows, ctx.hyper, x.inputs)[0]

    predictors = {
        "exact": lambda rows: binary_log_proba(answer.predictive.prob(design(rows), draws=shown)),
        "mcmc": lambda rows: binary_log_proba(special.expit(design(rows) @ w.T).mean(axis=1)),
        "plugin": lambda rows: binary_log_proba(special.expit(design(rows) @ post.mean)),
    }
    sections: dict[str, Any] = {}
    classes = ("0", "1")
    if x.raw is not None:
        sections["decision_boundary"] = decision_grid(
            x=x.raw,
            features=x.inputs,
            classes=classes,
            predictors=predictors,
            plugin="exact posterior mean of w",
            shown=most_separating(x=x.raw, y=x.y),
        )
        sections["calibration"] = reliability(
            log_proba={name: f(x.raw) for name, f in predictors.items()},
            truth=x.y,
            classes=classes,
            rows=f"the {len(x)} training rows (in-sample)",
        )
    # Each weight's exact marginal as a histogram of reference draws, beside the
    # Laplace normal; the figure adds the MCMC draws.
    ref = post.sample(np.random.default_rng(ctx.settings.seed), OVERLAY_DRAWS)
    overlay = []
    for i, name in enumerate(post.parameters):
        lo, hi = np.quantile(np.concatenate([ref[:, i], w[:, i]]), [0.0005, 0.9995])
        edges = np.linspace(lo, hi, 61)
        density, _ = np.histogram(ref[:, i], bins=edges, density=True)
        overlay.append(
            {
                "parameter": name,
                "edges": np.round(edges, 8).tolist(),
                "reference_density": np.round(density, DIGITS).tolist(),
                "laplace_mean": float(post.laplace.mean[i]),
                "laplace_sd": float(np.sqrt(post.laplace.cov[i, i])),
            }
        )
    sections["laplace_overlay"] = {"reference_draws": OVERLAY_DRAWS, "parameters": overlay}
    return sections


def _row(e: alr.LaplaceError) -> dict[str, Any]:
    return {
        "n": e.n,
        "mean_shift": e.mean_shift,
        "sd_ratio": e.sd_ratio,
        "max_abs_shift": e.max_abs_shift,
        "max_log_sd_ratio": e.max_log_sd_ratio,
        "method": e.method,
        "khat": e.khat,
    }


def _reference_line(ref: alr.Reference, x: LogisticDesign) -> str:
    if ref.method == "quadrature":
        how = f"adaptive cubature (estimated relative error {ref.error:.1e})"
    else:
        how = f"Pareto-smoothed importance sampling (k-hat {ref.khat:.2f} <= {alr.KHAT_MAX})"
    return (
        f"exact reference for d = {x.phi.shape[1]}: {how}; ESS of the resampling pool "
        f"{ref.ess:,.0f}; log evidence {ref.log_evidence:.4f}"
    )


def _laplace_table(names: tuple[str, ...], rows: tuple[alr.LaplaceError, ...]) -> str:
    out = [
        "Laplace error in posterior sds (nested subsets): max |MAP - mean|/sd and "
        "max |log sd ratio|",
        f"  {'n':>6s} {'max shift':>10s} {'max |log sd ratio|':>19s} {'reference':>11s} "
        f"{'k-hat':>6s}",
    ]
    for e in rows:
        out.append(
            f"  {e.n:6d} {e.max_abs_shift:10.4f} {e.max_log_sd_ratio:19.4f} "
            f"{e.method:>11s} {e.khat:6.2f}"
        )
    return "\n".join(out)


# --- the registration -----------------------------------------------------

TOPIC = Topic(
    name="logistic-regression",
    not_closed_form="its reference posterior is numerical (cubature or Pareto-smoothed "
    "importance sampling), not closed form",
    title="Bayesian logistic regression: MLE, MAP and Laplace against a numerical exact posterior",
    model=(
        "w ~ Normal(0, prior_sd^2 I) (intercept included);  "
        "y_i ~ Bernoulli(sigmoid(phi_i^T w))\n"
        "MAP and MLE by Newton/IRLS; MAP = scikit-learn LogisticRegression(C=prior_sd^2, "
        "fit_intercept=False) on Phi\n"
        "MLE: none when the classes are separated (linear programme, Konis 2007)\n"
        "Laplace: Normal(MAP, H^-1), H = Phi^T diag(p(1-p)) Phi + I/prior_sd^2\n"
        "exact reference (no closed form): d <= 2 adaptive cubature; d > 2 Pareto-smoothed\n"
        "  importance sampling (scrambled Sobol', Student-t proposal at the Laplace), "
        "refused when k-hat > 0.7"
    ),
    data_kind="table",
    hyperparameters=(
        Hyperparameter(
            "prior_sd",
            1.0,
            "prior standard deviation (not variance) of every weight, the intercept included",
        ),
        Hyperparameter(
            "intercept",
            True,
            "add a column of ones (w[intercept]) before the inputs",
            kind="bool",
            structural=True,
        ),
        Hyperparameter(
            "reference_draws",
            2**18,
            "importance draws of the exact reference (rounded up to a power of two)",
            kind="count",
            structural=True,
            low=1000,
            high=2**22,
        ),
        Hyperparameter(
            "proposal_df",
            10.0,
            "degrees of freedom of the Student-t importance proposal",
            structural=True,
            low=1.0,
        ),
        Hyperparameter(
            "sizes",
            LAPLACE_SIZES,
            "rows in the Laplace-error sweep (also "
            "--sizes): numbers <= 1 are shares of the rows, larger ones row counts; "
            "nested subsets of one seeded shuffle, each at least 20 rows",
            kind="positive-list",
            structural=True,
        ),
    ),
    solve=solve,
    build_model=m_logr.build_model,
    model_data=model_data,
    variables=m_logr.VARIABLES,
    simulate=simulate,
    builtin=builtin(SIMULATED_SEED),
    prepare=prepare,
    structure=structure,
    extras=extras,
    text_table=_classification.text_table,
    # --- what the studies ask of it ---
    sensitivity=Unsupported(
        "its exact reference is cubature or importance sampling, not a closed form"
    ),
    # --- calibration and planted bugs ---
    calibration=Calibration(
        # One input and the intercept (d = 2): the reference is cubature in every replication.
        hyper={"prior_sd": 1.5, "intercept": True, "reference_draws": 2**16, "proposal_df": 10.0},
        n_obs=40,
    ),
    planted=Unsupported(
        "its reference is numerical (cubature or importance sampling), not a "
        "closed form to measure a planted mistake against"
    ),
    cold_seconds=15,  # a first run, compiles included (2 idle cores, 2026-12-02)
)
