"""The bayes-optimal topic: Finite hypothesis spaces: exact posterior, MAP, Bayes-optimal and Gibbs classifiers.

Pairs ``analytic/bayes_optimal.py`` (the exact answer) with ``pymc_models/bayes_optimal.py`` (the same
prior and likelihood in PyMC).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

import analytic.bayes_optimal as bo
import pymc_models.bayes_optimal as m_bo
from compare.core.checks import Check, Extra, ExtraContext
from compare.core.data import natural_sort, table_from_arrays
from compare.core.ess import ess_mean
from compare.core.registry import (
    BuiltinData,
    Calibration,
    Hyperparameter,
    InputError,
    Sensitivity,
    Simulation,
    Topic,
    Unsupported,
)
from compare.topics import _classification as clf
from compare.topics._classification import (
    PREDICT_ROWS,
    LabelledRows,
    as_rows,
    binary_labels,
    categorical_csv,
    label_text,
)


@dataclass(frozen=True, eq=False)
class ExplicitProblem:
    """A hypothesis space listed by hand (textbook examples), as builtin data."""

    problem: bo.FiniteProblem
    source: str
    description: str = ""

    @property
    def features(self) -> tuple[str, ...]:
        return self.problem.features

    def __len__(self) -> int:
        return len(self.problem)


@dataclass(frozen=True, eq=False)
class BOData:
    """A finite-hypothesis problem with its exact solution (computed once)."""

    problem: bo.FiniteProblem
    solution: bo.Solution
    key: tuple
    space: str

    def __len__(self) -> int:
        return len(self.problem)


def _bo_key(hyper) -> tuple:
    prior = hyper.get("prior")
    return (
        float(hyper["noise"]),
        None if prior is None else tuple(np.atleast_1d(prior)),
        int(hyper["top"]),
        float(hyper["min_mass"]),
    )


def bo_prepare(data, hyper: dict[str, Any]) -> tuple[BOData, dict[str, Any]]:
    """The hypothesis space (conjunctions for tables), then the exact solution."""
    try:
        if isinstance(data, ExplicitProblem):
            problem, space = data.problem, "explicit"
        else:
            rows = as_rows(data)
            problem, space = _concept_problem(rows), "conjunctions"
        solution = bo.solve_problem(
            problem=problem,
            noise=hyper["noise"],
            prior=hyper.get("prior"),
            top=hyper["top"],
            min_mass=hyper["min_mass"],
        )
    except ValueError as err:
        raise InputError(str(err)) from None
    return BOData(problem=problem, solution=solution, key=_bo_key(hyper), space=space), hyper


def _concept_problem(rows: LabelledRows) -> bo.FiniteProblem:
    y = list(
        binary_labels(
            rows.labels,
            source=rows.source,
            target=rows.target,
            what="concept learning needs positive and negative examples,",
        )
    )
    if not rows.detected and any(k != "category" for k in rows.kinds):
        # A CSV read with detect=True marks columns of words "text": for concept
        # learning every attribute value is a category label, words included.
        raise InputError("concept learning reads categorical attributes, not text")
    domains = rows.domains
    cols = [np.array([label_text(v) for v in c], dtype=object) for c in rows.columns]
    if domains is None:
        domains = tuple(tuple(natural_sort(set(c))) for c in cols)
    codes = np.empty((rows.n, len(cols)), dtype=np.int64)
    for j, (col, dom) in enumerate(zip(cols, domains)):
        index = {v: k for k, v in enumerate(dom)}
        for i, v in enumerate(col):
            if v not in index:
                raise InputError(
                    f"{rows.source}, row {i + 1}, attribute {rows.features[j]!r}: "
                    f"{v!r} is not one of its values ({', '.join(dom)})"
                )
            codes[i, j] = index[v]
    space = bo.conjunctions(attributes=rows.features, domains=domains)
    return bo.concept_problem(space=space, x=codes, y=np.array(y))


def bo_solve(*, x: BOData, noise: float, top: int, min_mass: float, prior=None, **_):
    hyper = {"noise": noise, "prior": prior, "top": top, "min_mass": min_mass}
    if _bo_key(hyper) == x.key:
        return x.solution.answer
    return bo.solve_problem(problem=x.problem, **hyper).answer


def bo_model_data(*, x: BOData, noise: float, prior=None, **_):
    m = len(x.problem.hypotheses)
    return m_bo.model_data(
        prob=x.problem.prob,
        y=x.problem.y,
        prior=np.exp(bo.prior_vector(prior, m)),
        noise=noise,
        bucket_of=x.solution.buckets.of_hypothesis,
    )


def bo_structure(x: BOData, hyper) -> dict[str, Any]:
    return {
        "factors": tuple(x.problem.factors),
        "has_empty": bool(x.problem.has_empty),
        "n_hypotheses": len(x.problem.hypotheses),
        "n_obs": len(x.problem),
        "n_buckets": len(x.solution.buckets.names),
    }


def bo_simulate(rng: np.random.Generator, n: int, hyper: dict[str, Any]):
    """Conjunctions over two binary attributes, instances in a fixed cycle (see analytic)."""

    theta, x, y = bo.simulate(rng, n=n, noise=float(hyper["noise"]))
    return Simulation(
        theta=theta,
        data=table_from_arrays(
            x.astype(float), y.astype(float), features=("a0", "a1"), target="label"
        ),
    )


def bo_extras(ctx: ExtraContext) -> Extra:
    """Classifiers on new instances, the Gibbs bound, version space and support checks."""
    data: BOData = ctx.x
    sol = data.solution
    problem = data.problem
    post = sol.posterior_probs
    h = np.asarray(
        ctx.tree.posterior["hypothesis"].transpose("chain", "draw").values, dtype=np.int64
    )
    outside = int(np.sum(post[h] == 0))
    checks = [
        Check(
            "support",
            float(outside),
            0.0,
            outside == 0,
            "draws of hypotheses with posterior probability 0 must be absent",
        )
    ]
    cls = sol.classification
    h_map = cls.map_hypothesis
    section: dict[str, Any] = {
        "hypotheses": len(problem.hypotheses),
        "space": data.space,
        "map_hypothesis": problem.hypotheses[h_map],
        "map_probability": float(post[h_map]),
        "draws_outside_support": outside,
        "buckets": list(sol.buckets.names),
    }
    lines = [
        f"hypothesis space: {len(problem.hypotheses)} hypotheses ({data.space}); MAP "
        f"hypothesis {problem.hypotheses[h_map]} with P(h|D) = {post[h_map]:.4g}"
    ]
    vs = bo.version_space(problem=problem)
    noise_free = float(ctx.hyper["noise"]) == 0.0 and ctx.hyper.get("prior") is None
    if noise_free and vs.size:
        section["version_space"] = {
            "size": int(vs.size),
            "max_abs_posterior_minus_1_over_VS": float(np.max(np.abs(post[vs] - 1.0 / vs.size))),
        }
        lines.append(
            f"noise-free data, uniform prior: version space |VS| = {vs.size}, "
            f"P(h|D) = 1/|VS| = {1 / vs.size:.4g} on it, 0 elsewhere"
        )
    m = len(problem.new_names)
    if m:
        errors = cls.mean_errors
        bound = cls.gibbs_bound_holds
        checks.append(
            Check(
                "gibbs_bound",
                errors["gibbs"],
                2.0 * errors["bayes_optimal"],
                bound,
                "E[error_Gibbs] <= 2 E[error_BayesOptimal] over the new instances",
            )
        )
        # MCMC's estimate of P(+ | x, D): the new instances' answers averaged over the draws.
        shown = slice(0, PREDICT_ROWS)
        series = problem.new_prob[h.ravel()][:, shown].T.reshape(-1, *h.shape)
        p_mcmc = series.mean(axis=(1, 2))
        ess = ess_mean(series)
        sd = np.sqrt(cls.p_positive[shown] * (1 - cls.p_positive[shown]))
        with np.errstate(divide="ignore", invalid="ignore"):
            z = np.where(sd > 0, (p_mcmc - cls.p_positive[shown]) / (sd / np.sqrt(ess)), 0.0)
        disagree = int(np.sum((cls.map_label != cls.bayes_optimal) & ~cls.tie))
        section["new_instances"] = {
            "names": list(problem.new_names),
            "p_positive": cls.p_positive,
            "p_positive_mcmc": p_mcmc,
            "z_mcmc": z,
            "bayes_optimal": cls.bayes_optimal,
            "map": cls.map_label,
            "tie": cls.tie,
            "error_bayes_optimal": cls.error_bayes_optimal,
            "error_map": cls.error_map,
            "error_gibbs": cls.error_gibbs,
            "mean_errors": errors,
            "gibbs_bound_holds": bound,
            "map_differs_from_bayes_optimal": disagree,
        }
        lines.append(
            f"{m} new instances: expected error Bayes-optimal "
            f"{errors['bayes_optimal']:.4f}, MAP {errors['map']:.4f}, Gibbs "
            f"{errors['gibbs']:.4f} <= 2 x {errors['bayes_optimal']:.4f} "
            f"({'holds' if bound else 'FAILS'}); MAP and "
            f"Bayes-optimal answer differently on {disagree}; MCMC P(+|x,D) max |z| "
            f"{np.max(np.abs(z)):.2f}"
        )
        if m <= 4:
            for i, name in enumerate(problem.new_names):
                sign = lambda v: "+" if v else "-"
                bo_answer = "tie" if cls.tie[i] else sign(cls.bayes_optimal[i])
                lines.append(
                    f"  {name}: P(+|x,D) = {cls.p_positive[i]:.4g} (MCMC "
                    f"{p_mcmc[i]:.4g}); Bayes-optimal {bo_answer}, MAP "
                    f"{sign(cls.map_label[i])}"
                )
    return Extra(checks=tuple(checks), sections={"bayes_optimal": section}, lines=tuple(lines))


#: Mitchell (1997), Table 2.1's attributes and their values (sec. 2.2).
ENJOY_SPORT_DOMAINS = (
    ("Sunny", "Cloudy", "Rainy"),
    ("Warm", "Cold"),
    ("Normal", "High"),
    ("Strong", "Weak"),
    ("Warm", "Cool"),
    ("Same", "Change"),
)


def load_enjoy_sport() -> LabelledRows:
    """builtin:enjoy-sport: Mitchell's four training examples (Table 2.1)."""
    return categorical_csv("enjoy_sport.csv", "builtin:enjoy-sport", domains=ENJOY_SPORT_DOMAINS)


def load_three_hypotheses() -> ExplicitProblem:
    """Mitchell (1997), sec. 6.7: P(h1|D) = .4, P(h2|D) = .3, P(h3|D) = .3.

    Mitchell gives only the posteriors; here they come from a uniform prior
    and one observation whose likelihoods under h1, h2, h3 are in the ratio
    .4 : .3 : .3.  On the new instance h1 says + and h2, h3 say -.
    """
    problem = bo.explicit(
        hypotheses=("h1", "h2", "h3"),
        prob=np.array([[0.4], [0.3], [0.3]]),
        y=np.array([1]),
        new_prob=np.array([[1.0], [0.0], [0.0]]),
        new_names=("x",),
        features=("D",),
    )
    return ExplicitProblem(problem, "builtin:three-hypotheses")


def load_medical_test() -> ExplicitProblem:
    """Mitchell (1997), sec. 6.2.1: cancer or not, given one positive lab test.

    P(cancer) = 0.008 (the prior, a hyperparameter of the data set), P(+ |
    cancer) = 0.98, P(+ | no cancer) = 0.03; the new instance is the patient,
    on whom ``cancer`` says + and ``no-cancer`` says -.
    """
    problem = bo.explicit(
        hypotheses=("cancer", "no-cancer"),
        prob=np.array([[0.98], [0.03]]),
        y=np.array([1]),
        new_prob=np.array([[1.0], [0.0]]),
        new_names=("patient",),
        features=("test",),
    )
    return ExplicitProblem(problem, "builtin:medical-test")


TOPIC = Topic(
    name="bayes-optimal",
    title="Finite hypothesis spaces: exact posterior, MAP, Bayes-optimal and Gibbs classifiers",
    model=(
        "h ~ prior over H (uniform unless given);  y_i | h ~ Bernoulli(P(y_i = 1 | h)),\n"
        "  each label flipped with probability noise\n"
        "posterior: P(h | D) = P(D | h) P(h) / P(D) (logsumexp); noise-free data and a\n"
        "  uniform prior: 1/|VS| on the version space, 0 elsewhere\n"
        "new x: Bayes-optimal answers + iff P(+ | x, D) = sum_h P(+ | h, x) P(h | D) > 1/2;\n"
        "  MAP answers with h_MAP; Gibbs with h ~ P(h | D);\n"
        "  E[error_Gibbs] = 2p(1-p) <= 2 min(p, 1-p) = 2 E[error_BayesOptimal]\n"
        "tables: H = conjunctions of attribute = value or ? constraints, plus the empty one\n"
        "compared: P(h in bucket) for the most probable hypotheses and the rest lumped;\n"
        "  PyMC samples h with CategoricalGibbsMetropolis (uniform proposals), not NUTS"
    ),
    data_kind="table",
    hyperparameters=(
        Hyperparameter(
            "noise",
            0.0,
            "probability that an observed label is flipped, in "
            "[0, 0.5); 0 = noise-free concept learning",
            kind="real",
            low=0.0,
            high=0.5,
            high_open=True,
        ),
        Hyperparameter(
            "prior",
            None,
            "prior weights, one per hypothesis in order (default: uniform)",
            kind="positive-list",
        ),
        Hyperparameter(
            "top",
            10,
            "compare at most this many hypotheses one by one (the "
            "most probable), the rest lumped as 'other'",
            kind="count",
            structural=True,
            low=1,
            high=1000,
        ),
        Hyperparameter(
            "min_mass",
            0.02,
            "a hypothesis (or the lumped rest) is compared on "
            "its own only with at least this posterior probability",
            structural=True,
            high=0.5,
            high_open=True,
        ),
    ),
    solve=bo_solve,
    build_model=m_bo.build_model,
    model_data=bo_model_data,
    variables=m_bo.VARIABLES,
    simulate=bo_simulate,
    builtin=(
        BuiltinData(
            "enjoy-sport",
            "Mitchell's 4 EnjoySport examples, 6 attributes, 973 "
            "conjunctive hypotheses; new instances: the other 92",
            "Mitchell (1997), Table 2.1",
            load_enjoy_sport,
            # describe's names (the version space's buckets), without solving (checked
            # against the solved names in the tests)
            parameters=tuple(
                f"P(h=<{h}>)"
                for h in (
                    "?,Warm,?,?,?,?",
                    "?,Warm,?,Strong,?,?",
                    "Sunny,?,?,?,?,?",
                    "Sunny,?,?,Strong,?,?",
                    "Sunny,Warm,?,?,?,?",
                    "Sunny,Warm,?,Strong,?,?",
                )
            ),
        ),
        BuiltinData(
            "three-hypotheses",
            "P(h|D) = .4, .3, .3; on x h1 says +, h2 and h3 "
            "say -: MAP says +, Bayes-optimal says -",
            "Mitchell (1997), sec. 6.7",
            load_three_hypotheses,
        ),
        BuiltinData(
            "medical-test",
            "cancer given a positive test: P(cancer) = 0.008, "
            "sensitivity 0.98, false-positive rate 0.03 -> P(cancer|+) = 0.21",
            "Mitchell (1997), sec. 6.2.1",
            load_medical_test,
            hyper={"prior": (0.008, 0.992)},
        ),
    ),
    prepare=bo_prepare,
    structure=bo_structure,
    extras=bo_extras,
    step=m_bo.step_methods,
    text_table=clf.text_table,
    # --- what the studies ask of it ---
    # Label noise over [0, 0.2]: at larger noise on builtin:enjoy-sport the posterior's
    # mass leaves the compared hypotheses and solve refuses.
    sensitivity=Sensitivity(
        default_param="noise", linear_grids={"noise": (0.0, 0.2)}, not_swept=("min_mass",)
    ),
    # --- calibration and planted bugs ---
    calibration=Calibration(
        # Conjunctions over two binary attributes (10 hypotheses), 6 labels flipped with
        # probability 0.45: every P(h|D) >= 1/(1 + 9 (0.55/0.45)^6) = 0.033 > min_mass, so
        # all ten are compared one by one in every replication.
        hyper={"noise": 0.45, "prior": None, "top": 10, "min_mass": 0.01},
        n_obs=6,
    ),
    planted=Unsupported(
        "a discrete prior over hypotheses and a label-noise likelihood have no "
        "variance or sd to get wrong"
    ),
    cold_seconds=15,  # a first run, compiles included (2 idle cores, 2026-12-02)
)
