"""Registration of the builtin topics: one :func:`register` call each.

Each pairs ``analytic/<topic>.py`` with ``pymc_models/<topic>.py``.
"""

from __future__ import annotations

import dataclasses
from importlib import resources
from typing import Any

import numpy as np

import analytic.beta_binomial as a_bb
import analytic.dirichlet_categorical as a_dc
import analytic.gamma_poisson as a_gp
import analytic.gaussian_process as a_gpr
import analytic.gaussian_mixture as a_gm
import analytic.linear_regression as a_lr
import analytic.linear_regression_nig as a_lrn
import analytic.normal_inverse_gamma as a_nig
import analytic.normal_known_variance as a_nkv
import analytic.pareto_uniform as a_pu
import pymc_models.beta_binomial as m_bb
import pymc_models.dirichlet_categorical as m_dc
import pymc_models.gamma_poisson as m_gp
import pymc_models.gaussian_mixture as m_gm
import pymc_models.gaussian_process as m_gpr
import pymc_models.linear_regression as m_lr
import pymc_models.linear_regression_nig as m_lrn
import pymc_models.normal_inverse_gamma as m_nig
import pymc_models.normal_known_variance as m_nkv
import pymc_models.pareto_uniform as m_pu
from compare import gaussian_process as gpr
from compare import mixture, regression
from compare.data import natural_sort, parse_column, read_column
from compare.registry import (BuiltinData, Hyperparameter, InputError, Simulation, Topic,
                              register)

SIMULATED_SEED = 20261129  # builtin:simulated is the same data on every machine


def _csv(file: str, column: str, kind: str):
    """Loader for a CSV shipped in compare/datasets."""
    def load() -> np.ndarray:
        path = resources.files("compare") / "datasets" / file
        with resources.as_file(path) as p:
            return parse_column(read_column(p, column), kind)
    return load


def _simulator(module):
    """Adapt an analytic module's ``simulate`` to the registry's signature."""
    def simulate(rng: np.random.Generator, n: int, hyper: dict[str, Any]) -> Simulation:
        theta, data = module.simulate(rng, n=n, **hyper)
        return Simulation(theta=theta, data=data)
    return simulate


def _simulated(simulate, n: int, hyper: dict[str, Any], what: str) -> BuiltinData:
    """builtin:simulated: n observations from the prior predictive with a fixed seed."""
    def load() -> np.ndarray:
        return simulate(np.random.default_rng(SIMULATED_SEED), n, dict(hyper)).data
    return BuiltinData(
        name="simulated", description=f"{n} {what} simulated from the prior predictive",
        source=f"simulated, seed {SIMULATED_SEED}, n={n}", load=load, hyper=dict(hyper))


# --- beta-binomial ----------------------------------------------------------
_bb_hyper = (
    Hyperparameter("a", 2.0, "Beta prior's first shape (pseudo-count of ones)"),
    Hyperparameter("b", 2.0, "Beta prior's second shape (pseudo-count of zeros)"),
)
_bb_sim = _simulator(a_bb)
register(Topic(
    name="beta-binomial",
    title="Beta prior, Bernoulli (0/1) likelihood",
    model=("p ~ Beta(a, b);  x_i | p ~ Bernoulli(p)\n"
           "posterior: p | D ~ Beta(a + s, b + n - s), s = sum x_i\n"
           "evidence: B(a + s, b + n - s) / B(a, b) (of the sequence)"),
    data_kind="binary",
    hyperparameters=_bb_hyper,
    solve=a_bb.solve, build_model=m_bb.build_model, model_data=m_bb.model_data,
    variables=m_bb.VARIABLES, simulate=_bb_sim,
    builtin=(
        BuiltinData("birthwt-low", "1 if birth weight < 2.5 kg; 189 births, Springfield MA, 1986",
                    "R MASS::birthwt$low (Hosmer & Lemeshow 1989)",
                    _csv("birthwt_low.csv", "low", "binary")),
        _simulated(_bb_sim, 40, {"a": 2.0, "b": 2.0}, "0/1 outcomes"),
    ),
))

# --- gamma-poisson ----------------------------------------------------------
_gp_hyper = (
    Hyperparameter("shape", 2.0, "Gamma prior's shape"),
    Hyperparameter("rate", 1.0, "Gamma prior's rate (inverse scale); prior mean = shape / rate"),
)
_gp_sim = _simulator(a_gp)
register(Topic(
    name="gamma-poisson",
    title="Gamma prior, Poisson likelihood",
    model=("rate ~ Gamma(shape, rate=rate0);  x_i | rate ~ Poisson(rate)\n"
           "posterior: Gamma(shape + sum x_i, rate0 + n)\n"
           "predictive: NegBinomial(shape_n, rate_n / (rate_n + 1))"),
    data_kind="counts",
    hyperparameters=_gp_hyper,
    solve=a_gp.solve, build_model=m_gp.build_model, model_data=m_gp.model_data,
    variables=m_gp.VARIABLES, simulate=_gp_sim,
    builtin=(
        BuiltinData("discoveries", "great inventions and discoveries per year, 1860-1959",
                    "R datasets::discoveries (World Almanac 1975)",
                    _csv("discoveries.csv", "discoveries", "counts")),
        _simulated(_gp_sim, 30, {"shape": 2.0, "rate": 1.0}, "counts"),
    ),
))

# --- normal-known-variance --------------------------------------------------
_nkv_hyper = (
    Hyperparameter("prior_mean", 0.0, "mean of the Normal prior on mu", kind="real"),
    Hyperparameter("prior_sd", 10.0, "standard deviation (not variance) of the prior on mu"),
    Hyperparameter("noise_sd", 1.0, "known standard deviation (not variance) of each observation"),
)
_nkv_sim = _simulator(a_nkv)
register(Topic(
    name="normal-known-variance",
    title="Normal prior on the mean, Normal likelihood with known noise sd",
    model=("mu ~ Normal(prior_mean, prior_sd^2);  x_i | mu ~ Normal(mu, noise_sd^2)\n"
           "posterior precision: 1/prior_sd^2 + n/noise_sd^2\n"
           "posterior mean: (prior_mean/prior_sd^2 + n xbar/noise_sd^2) / precision"),
    data_kind="reals",
    hyperparameters=_nkv_hyper,
    solve=a_nkv.solve, build_model=m_nkv.build_model, model_data=m_nkv.model_data,
    variables=m_nkv.VARIABLES, simulate=_nkv_sim,
    builtin=(
        BuiltinData("morley", "Michelson's 1879 speed of light, km/s - 299,000 (100 runs); "
                    "prior from Foucault's 1862 value 298,000 +- 500 km/s",
                    "R datasets::morley",
                    _csv("morley.csv", "speed", "reals"),
                    hyper={"prior_mean": -1000.0, "prior_sd": 500.0, "noise_sd": 79.0}),
        _simulated(_nkv_sim, 20, {"prior_mean": 0.0, "prior_sd": 10.0, "noise_sd": 1.0},
                   "real observations"),
        # Prior-data conflict (compare/sensitivity.py): the prior says mu = 0 +- 0.5,
        # ten observations say about 3 +- 0.3; both power-scalings move the posterior.
        BuiltinData("conflict", "10 draws of Normal(3, 1) under a prior Normal(0, 0.5^2) "
                    "that conflicts with them (for `bayes-compare sensitivity`)",
                    f"simulated, seed {SIMULATED_SEED}",
                    lambda: np.random.default_rng(SIMULATED_SEED).normal(3.0, 1.0, 10),
                    hyper={"prior_mean": 0.0, "prior_sd": 0.5, "noise_sd": 1.0}),
    ),
))

# --- normal-inverse-gamma ---------------------------------------------------
_nig_hyper = (
    Hyperparameter("mu0", 0.0, "prior mean of mu", kind="real"),
    Hyperparameter("kappa0", 1.0, "prior pseudo-observations on mu: mu | sigma2 ~ N(mu0, sigma2/kappa0)"),
    Hyperparameter("alpha0", 2.0, "InvGamma shape of sigma2"),
    Hyperparameter("beta0", 2.0, "InvGamma scale of sigma2 (prior mean beta0/(alpha0-1))"),
)
_nig_sim = _simulator(a_nig)
register(Topic(
    name="normal-inverse-gamma",
    title="Normal-Inverse-Gamma prior, Normal likelihood with unknown mean and variance",
    model=("sigma2 ~ InvGamma(alpha0, beta0);  mu | sigma2 ~ Normal(mu0, sigma2/kappa0)\n"
           "x_i | mu, sigma2 ~ Normal(mu, sigma2)\n"
           "posterior: kappa_n = kappa0 + n, mu_n = (kappa0 mu0 + n xbar)/kappa_n,\n"
           "  alpha_n = alpha0 + n/2, beta_n = beta0 + SS/2 + kappa0 n (xbar - mu0)^2 / (2 kappa_n)\n"
           "marginals: mu ~ t_{2 alpha_n}(mu_n, beta_n/(alpha_n kappa_n)), "
           "sigma2 ~ InvGamma(alpha_n, beta_n)"),
    data_kind="reals",
    hyperparameters=_nig_hyper,
    solve=a_nig.solve, build_model=m_nig.build_model, model_data=m_nig.model_data,
    variables=m_nig.VARIABLES, simulate=_nig_sim,
    builtin=(
        BuiltinData("newcomb", "Newcomb's 1882 light passage times, ns - 24,800 (66 values)",
                    "R MASS::newcomb (Stigler 1977)",
                    _csv("newcomb.csv", "passage_time", "reals"),
                    hyper={"mu0": 25.0, "kappa0": 0.5, "alpha0": 2.0, "beta0": 100.0}),
        _simulated(_nig_sim, 25, {"mu0": 0.0, "kappa0": 1.0, "alpha0": 2.0, "beta0": 2.0},
                   "real observations"),
    ),
))

# --- pareto-uniform ---------------------------------------------------------
_pu_hyper = (
    Hyperparameter("scale", 1.0, "Pareto prior's scale: the smallest theta it allows"),
    Hyperparameter("shape", 2.0, "Pareto prior's shape (tail index)"),
)
_pu_sim = _simulator(a_pu)
register(Topic(
    name="pareto-uniform",
    title="Pareto prior on theta, Uniform(0, theta) likelihood (German tank problem)",
    model=("theta ~ Pareto(scale, shape);  x_i | theta ~ Uniform(0, theta)\n"
           "posterior: Pareto(max(scale, max x), shape + n)"),
    data_kind="nonnegative",
    hyperparameters=_pu_hyper,
    solve=a_pu.solve, build_model=m_pu.build_model, model_data=m_pu.model_data,
    variables=m_pu.VARIABLES, simulate=_pu_sim,
    builtin=(
        _simulated(_pu_sim, 15, {"scale": 100.0, "shape": 2.0},
                   "serial numbers (German tank problem)"),
    ),
))


# --- dirichlet-categorical --------------------------------------------------
def _dc_prepare(labels: np.ndarray, hyper: dict[str, Any]) -> tuple[np.ndarray, dict[str, Any]]:
    """Labels to codes; categories default to the labels seen, sorted."""
    labels = [str(v) for v in np.asarray(labels, dtype=object)]
    seen = natural_sort(set(labels))
    categories = hyper.get("categories")
    if categories is None:
        categories = tuple(seen)
    else:
        unknown = [c for c in seen if c not in categories]
        if unknown:
            raise InputError(f"label(s) {unknown} are not in categories={','.join(categories)}; "
                             "add them to --set categories or leave categories unset")
    index = {c: i for i, c in enumerate(categories)}
    conc = np.atleast_1d(np.asarray(hyper["concentration"], dtype=float))
    if conc.size not in (1, len(categories)):
        raise InputError(f"concentration has {conc.size} values but there are "
                         f"{len(categories)} categories ({', '.join(categories)}); "
                         "give one number or one per category, in that order")
    if len(categories) < 2:
        raise InputError(f"only one category ({categories[0]!r}) in the data; a categorical "
                         "model needs two or more: list them with --set categories=a,b")
    return np.array([index[s] for s in labels]), {**hyper, "categories": tuple(categories)}


def _dc_simulate(rng: np.random.Generator, n: int, hyper: dict[str, Any]) -> Simulation:
    categories = hyper.get("categories") or ("a", "b", "c")
    theta, codes = a_dc.simulate(rng, n=n, categories=categories,
                                 concentration=hyper["concentration"])
    return Simulation(theta=theta, data=np.array([categories[c] for c in codes], dtype=object))


register(Topic(
    name="dirichlet-categorical",
    title="Dirichlet prior, categorical likelihood",
    model=("p ~ Dirichlet(concentration);  x_i | p ~ Categorical(p)\n"
           "posterior: Dirichlet(concentration + counts)\n"
           "the p[k] sum to one: the agreement test whitens the first K-1"),
    data_kind="labels",
    hyperparameters=(
        Hyperparameter("concentration", 1.0,
                       "Dirichlet concentration: one number for all categories, or one per "
                       "category in sorted label order, comma-separated", kind="positive-list"),
        Hyperparameter("categories", None,
                       "the categories, comma-separated (default: the labels in the data, "
                       "sorted); list unseen ones here", kind="labels", structural=True),
    ),
    solve=a_dc.solve, build_model=m_dc.build_model, model_data=m_dc.model_data,
    variables=m_dc.VARIABLES, simulate=_dc_simulate,
    builtin=(
        BuiltinData("hair-colour", "hair colour of 592 statistics students (Snee 1974)",
                    "R datasets::HairEyeColor, expanded to one line per student",
                    _csv("hair_eye_color.csv", "hair", "labels")),
        _simulated(_dc_simulate, 60, {"concentration": 1.0, "categories": None},
                   "labels"),
    ),
    prepare=_dc_prepare,
    structure=lambda x, hyper: {"n_categories": len(hyper["categories"])},
))


# --- regression topics (compare/regression.py holds their comparisons) ------
def _regression_hyper(*extra: Hyperparameter) -> tuple[Hyperparameter, ...]:
    return (
        *extra,
        Hyperparameter("prior_mean", 0.0, "prior mean of every coefficient w[j]", kind="real"),
        Hyperparameter("intercept", True, "add a column of ones (w[0]) before the inputs",
                       kind="bool", structural=True),
        Hyperparameter("degree", None, "for one input column: polynomial features "
                       "1, x, ..., x^degree (default: the inputs as they are)", kind="count",
                       high=20,
                       structural=True),
    )


def _sinusoid(n: int = 25, noise_sd: float = 0.3):
    def load():
        from compare.data import table_from_arrays

        x, y = a_lr.sinusoid(np.random.default_rng(SIMULATED_SEED), n=n, noise_sd=noise_sd)
        return table_from_arrays(x, y, features=("x",), target="y",
                                 source=f"builtin:sinusoid (seed {SIMULATED_SEED})")
    return load


def _diabetes():
    def load():
        from sklearn.datasets import load_diabetes

        from compare.data import table_from_arrays

        data = load_diabetes(scaled=False)
        x = (data.data - data.data.mean(axis=0)) / data.data.std(axis=0)
        y = (data.target - data.target.mean()) / data.target.std()
        return table_from_arrays(x, y, features=tuple(data.feature_names), target="progression",
                                 source="builtin:diabetes")
    return load


def _regression_simulate(solver_module, hyper_names):
    def simulate(rng: np.random.Generator, n: int, hyper: dict[str, Any]) -> Simulation:
        from compare.data import table_from_arrays

        x = np.sort(rng.uniform(0.0, 1.0, n))
        degree = hyper.get("degree")
        phi, _ = a_lr.design_matrix(x=x, degree=3 if degree is None else degree,
                                    intercept=hyper.get("intercept", True), names=("x",))
        kw = {k: hyper[k] for k in hyper_names}
        theta, y = solver_module.simulate(rng, phi=phi, **kw)  # prior centred at 0
        shift = np.full(phi.shape[1], float(hyper.get("prior_mean", 0.0)))
        theta = np.concatenate([theta[:phi.shape[1]] + shift, theta[phi.shape[1]:]])
        y = y + phi @ shift
        return Simulation(theta=theta, data=table_from_arrays(x, y, features=("x",)))
    return simulate


_SINUSOID = dict(name="sinusoid", description="25 points of sin(2 pi x) + N(0, 0.3^2), "
                 "x uniform on [0, 1] (Bishop 2006, ch. 1 and 3)",
                 source=f"simulated, seed {SIMULATED_SEED}")
_DIABETES = dict(name="diabetes", description="disease progression after one year against 10 "
                 "baseline variables, 442 patients; every column standardised",
                 source="scikit-learn load_diabetes (Efron et al. 2004)")

register(Topic(
    name="linear-regression",
    title="Bayesian linear regression with known noise sd (MAP = ridge)",
    model=("w ~ Normal(prior_mean, prior_sd^2 I);  y = Phi(x) w + Normal(0, noise_sd^2)\n"
           "posterior: S_N^-1 = I/prior_sd^2 + Phi^T Phi/noise_sd^2,  "
           "m_N = S_N (prior_mean/prior_sd^2 + Phi^T y/noise_sd^2)\n"
           "MAP = m_N = ridge with lambda = noise_sd^2/prior_sd^2 (when prior_mean = 0)\n"
           "predictive: Normal(phi^T m_N, noise_sd^2 + phi^T S_N phi)\n"
           "evidence: Normal(y; Phi prior_mean, noise_sd^2 I + prior_sd^2 Phi Phi^T)"),
    data_kind="table",
    hyperparameters=_regression_hyper(
        Hyperparameter("noise_sd", 1.0, "known standard deviation (not variance) of the noise"),
        Hyperparameter("prior_sd", 1.0, "prior standard deviation of every coefficient"),
    ),
    solve=regression.solve_known_noise,
    build_model=m_lr.build_model,
    model_data=lambda *, x, noise_sd, prior_sd, prior_mean=0.0, **_: m_lr.model_data(
        **regression.suff_data(x), noise_sd=noise_sd, prior_sd=prior_sd, prior_mean=prior_mean),
    variables=m_lr.VARIABLES,
    simulate=_regression_simulate(a_lr, ("noise_sd", "prior_sd")),
    builtin=(
        BuiltinData(**_SINUSOID, load=_sinusoid(),
                    hyper={"degree": 3, "noise_sd": 0.3, "prior_sd": 10.0}),
        BuiltinData(**_DIABETES, load=_diabetes(), hyper={"noise_sd": 0.7, "prior_sd": 1.0}),
    ),
    prepare=regression.prepare,
    structure=regression.structure,
    extras=regression.extras,
    # Polynomial coefficients are strongly correlated: a low-rank mass matrix
    # took ESS from ~900 to ~13,000 per 8000 draws on builtin:sinusoid.
    sampler_options={"adaptation": "low_rank"},
    extra_tests=1,  # the predictive test shares the verdict's alpha
))

register(Topic(
    name="linear-regression-nig",
    title="Bayesian linear regression with unknown noise variance (Normal-Inverse-Gamma prior)",
    model=("sigma2 ~ InvGamma(alpha0, beta0);  w | sigma2 ~ Normal(prior_mean, sigma2 prior_scale^2 I)\n"
           "y = Phi(x) w + Normal(0, sigma2)\n"
           "posterior: V_N^-1 = I/prior_scale^2 + Phi^T Phi,  m_N = V_N (prior_mean/prior_scale^2 + Phi^T y),\n"
           "  a_N = alpha0 + n/2,  b_N = beta0 + (y^T y + m0^T V0^-1 m0 - m_N^T V_N^-1 m_N)/2\n"
           "marginals: w ~ t_{2 a_N}(m_N, (b_N/a_N) V_N),  sigma2 ~ InvGamma(a_N, b_N)\n"
           "predictive: t_{2 a_N}(phi^T m_N, (b_N/a_N)(1 + phi^T V_N phi))"),
    data_kind="table",
    hyperparameters=_regression_hyper(
        Hyperparameter("alpha0", 3.0, "InvGamma shape of the noise variance sigma2"),
        Hyperparameter("beta0", 1.0, "InvGamma scale of sigma2 (prior mean beta0/(alpha0-1))"),
        Hyperparameter("prior_scale", 1.0, "prior sd of every coefficient per unit noise sd: "
                       "w | sigma2 ~ N(prior_mean, sigma2 prior_scale^2)"),
    ),
    solve=regression.solve_nig,
    build_model=m_lrn.build_model,
    model_data=lambda *, x, alpha0, beta0, prior_scale, prior_mean=0.0, **_: m_lrn.model_data(
        **regression.suff_data(x), alpha0=alpha0, beta0=beta0, prior_scale=prior_scale,
        prior_mean=prior_mean),
    variables=m_lrn.VARIABLES,
    simulate=_regression_simulate(a_lrn, ("alpha0", "beta0", "prior_scale")),
    builtin=(
        BuiltinData(**_SINUSOID, load=_sinusoid(),
                    hyper={"degree": 3, "alpha0": 3.0, "beta0": 0.2, "prior_scale": 30.0}),
        BuiltinData(**_DIABETES, load=_diabetes(),
                    hyper={"alpha0": 3.0, "beta0": 1.0, "prior_scale": 1.0}),
    ),
    prepare=regression.prepare,
    structure=regression.structure,
    extras=regression.extras,
    # Polynomial coefficients are strongly correlated: a low-rank mass matrix
    # took ESS from ~900 to ~13,000 per 8000 draws on builtin:sinusoid.
    sampler_options={"adaptation": "low_rank"},
    extra_tests=1,  # the predictive test shares the verdict's alpha
))


# --- gaussian-mixture (compare/mixture.py holds its comparisons) ------------
def _points_csv(file: str):
    def load():
        from compare.data import read_points

        path = resources.files("compare") / "datasets" / file
        with resources.as_file(path) as p:
            loaded = read_points(p)
        return dataclasses.replace(loaded, source=f"builtin:{file.removesuffix('.csv')}")
    return load


def _iris():
    def load():
        from sklearn.datasets import load_iris

        from compare.data import points_from_array

        data = load_iris()
        names = tuple(n.replace(" (cm)", "").replace(" ", "_") for n in data.feature_names)
        return points_from_array(data.data, features=names, source="builtin:iris")
    return load


#: Well separated, unequal components for builtin:simulated (documented, fixed).
_MIXTURE_TRUTH = dict(weights=[0.3, 0.7], means=[[-2.0, 0.0], [2.0, 1.0]],
                      covariances=[[[1.0, 0.3], [0.3, 0.5]], [[0.6, -0.2], [-0.2, 1.2]]])


def _mixture_simulated(n: int = 300):
    def load():
        from compare.data import points_from_array

        params = a_gm.MixtureParams(**{k: np.array(v) for k, v in _MIXTURE_TRUTH.items()})
        x, _ = a_gm.simulate_from(np.random.default_rng(SIMULATED_SEED), n=n, params=params)
        return points_from_array(x, features=("x0", "x1"), source="builtin:simulated")
    return load


def _mixture_simulate(rng: np.random.Generator, n: int, hyper: dict[str, Any]) -> Simulation:
    """Parameters from a unit-scale prior (m0 = 0, psi0 = nu0 cov_scale I, d = 2), then data."""
    from compare.data import points_from_array

    d = 2
    nu0 = hyper.get("nu0") or d + 2
    prior = a_gm.NormalWishartPrior(alpha=hyper["alpha"], m0=np.zeros(d), kappa0=hyper["kappa0"],
                                    nu0=float(nu0), psi0=nu0 * hyper["cov_scale"] * np.eye(d))
    params, x, _ = a_gm.simulate(rng, n=n, components=hyper["components"], prior=prior)
    theta = np.concatenate([params.weights, params.means.ravel(), params.precisions.ravel()])
    return Simulation(theta=theta, data=points_from_array(x, features=("x0", "x1")))


register(Topic(
    name="gaussian-mixture",
    title="Gaussian mixture, full covariances: EM and MAP-EM against MCMC",
    model=("w ~ Dirichlet(alpha 1_K);  Lambda_k ~ Wishart(nu0, W0);  "
           "mu_k | Lambda_k ~ Normal(m0, (kappa0 Lambda_k)^-1)\n"
           "x_i ~ sum_k w_k Normal(mu_k, Lambda_k^-1)\n"
           "prior from the data (as scikit-learn's BayesianGaussianMixture): m0 = column means,\n"
           "  W0^-1 = nu0 cov_scale diag(column variances)\n"
           "verdict: the complete-data posterior (labels = MAP-EM's assignments) is conjugate:\n"
           "  w ~ Dirichlet(alpha + counts), (mu_k, Lambda_k) ~ Normal-Wishart (Bishop 10.60-10.63)\n"
           "then: the marginalised mixture against ML-EM and MAP-EM (relabelled draws)"),
    data_kind="points",
    hyperparameters=(
        Hyperparameter("components", 2, "number of mixture components K", kind="count",
                       high=50,
                       structural=True),
        Hyperparameter("alpha", 1.0, "Dirichlet concentration of each weight (>= 1 for MAP-EM)",
                       low=1.0),
        Hyperparameter("kappa0", 0.01, "prior pseudo-count of each component mean"),
        Hyperparameter("nu0", None, "Wishart degrees of freedom, an integer > d "
                       "(default d + 2)", kind="count", low=1, high=1e6),
        Hyperparameter("cov_scale", 0.1, "prior component covariance as a share of the data's "
                       "variance", structural=True),
        Hyperparameter("reg_covar", 1e-6, "added to the diagonal of ML-EM covariances",
                       structural=True),
        Hyperparameter("restarts", 5, "EM restarts from k-means++ (the best is kept)",
                       kind="count", structural=True, low=1, high=100),
    ),
    solve=mixture.solve,
    build_model=m_gm.build_model,
    model_data=mixture.model_data,
    variables=m_gm.VARIABLES,
    simulate=_mixture_simulate,
    builtin=(
        BuiltinData("faithful", "Old Faithful: eruption time and waiting time (min), "
                    "272 eruptions", "R datasets::faithful (Azzalini & Bowman 1990)",
                    _points_csv("faithful.csv"), hyper={"components": 2}),
        BuiltinData("iris", "Fisher's iris: 4 flower measurements (cm), 150 plants",
                    "scikit-learn load_iris", _iris(),
                    # With alpha = 1, kappa0 = 0.01 the marginalised mixture also puts mass
                    # on emptying a component (R-hat 1.64: the check says so); a firmer
                    # prior on equal weights and on the means keeps one mode.
                    hyper={"components": 3, "alpha": 10.0, "kappa0": 0.1}),
        BuiltinData("simulated", "300 points from a fixed 2-component 2-D mixture",
                    f"simulated, seed {SIMULATED_SEED}", _mixture_simulated(),
                    hyper={"components": 2}),
    ),
    prepare=mixture.prepare,
    structure=mixture.structure,
    extras=mixture.extras,
))


# --- gaussian-process (compare/gaussian_process.py holds its glue) ----------
def _mcycle():
    def load():
        from compare.data import read_table

        path = resources.files("compare") / "datasets" / "mcycle.csv"
        with resources.as_file(path) as p:
            loaded = read_table(p, target="accel", features=("times",))
        return dataclasses.replace(loaded, source="builtin:mcycle")
    return load


_GP_SIMULATED = {"kernel": "matern52", "lengthscale": 1.0, "signal_sd": 1.0, "noise_sd": 0.3,
                 "jitter": a_gpr.DEFAULT_JITTER, "test_points": 20, "test_inputs": None,
                 "optimise": False}

register(Topic(
    name="gaussian-process",
    title="Gaussian-process regression with fixed kernel hyperparameters",
    model=("f ~ GP(0, k);  y_i = f(x_i) + Normal(0, noise_sd^2)\n"
           "k: rbf signal_sd^2 exp(-r^2/(2 lengthscale^2)); matern32 signal_sd^2 (1+s) exp(-s), "
           "s = sqrt(3) r/lengthscale;\n"
           "   matern52 signal_sd^2 (1+s+s^2/3) exp(-s), s = sqrt(5) r/lengthscale; "
           "linear signal_sd^2 (1 + x.x'/lengthscale^2)\n"
           "posterior of f at test inputs X*: K_y = K + (noise_sd^2 + jitter) I = L L^T,\n"
           "  mean = K*^T K_y^-1 y,  cov = K** + jitter I - V^T V,  V = L^-1 K*\n"
           "evidence: Normal(y; 0, K_y);  PyMC: pm.gp.Marginal, f = gp.conditional at X*"),
    data_kind="table",
    hyperparameters=(
        Hyperparameter("kernel", "rbf", "covariance function: rbf (squared exponential), "
                       "matern32, matern52 or linear", kind="text", structural=True,
                       choices=a_gpr.KERNELS),
        Hyperparameter("lengthscale", 1.0, "distance in input units over which f decorrelates "
                       "(one for all inputs); linear: slopes have prior sd "
                       "signal_sd/lengthscale"),
        Hyperparameter("signal_sd", 1.0, "prior standard deviation (not variance) of f(x); "
                       "linear: prior sd of the intercept"),
        Hyperparameter("noise_sd", 1.0, "standard deviation (not variance) of the Gaussian "
                       "observation noise"),
        Hyperparameter("jitter", a_gpr.DEFAULT_JITTER, "variance added to the kernel's "
                       "diagonal at the data and the test inputs (both sides), so Cholesky "
                       "succeeds"),
        Hyperparameter("test_points", 20, "number of test inputs: a grid over one input's "
                       "range, or distinct data rows spread over the target (linear: at most "
                       "p + 1)", kind="count", structural=True, low=1, high=1000),
        Hyperparameter("test_inputs", None, "CSV file of test inputs with the input columns "
                       "by name (replaces the grid)", kind="text", structural=True),
        Hyperparameter("optimise", False, "first set lengthscale, signal_sd and noise_sd to "
                       "their type-II maximum-likelihood values (L-BFGS on their logs, "
                       "started at the given values)", kind="bool", structural=True),
    ),
    solve=gpr.solve,
    build_model=m_gpr.build_model,
    model_data=gpr.model_data,
    variables=m_gpr.VARIABLES,
    simulate=gpr.simulate,
    builtin=(
        _simulated(gpr.simulate, 50, _GP_SIMULATED, "points (x, y) of a matern52 GP"),
        BuiltinData("mcycle", "head acceleration (g) against time after impact (ms) in "
                    "simulated motorcycle crashes, 133 measurements",
                    "R MASS::mcycle (Silverman 1985)", _mcycle(),
                    # Type-II ML for the rbf kernel (L-BFGS, rounded): see notes/issue6.md.
                    hyper={"kernel": "rbf", "lengthscale": 5.2, "signal_sd": 45.0,
                           "noise_sd": 22.5}),
    ),
    prepare=gpr.prepare,
    structure=gpr.structure,
    extras=gpr.extras,
    # f at neighbouring test inputs is strongly correlated (condition number ~3e4
    # on builtin:mcycle): a low-rank mass matrix learns those directions.
    sampler_options={"adaptation": "low_rank"},
))


# --- classification topics (compare/classification.py holds their glue) --------
import analytic.naive_bayes as a_nb  # noqa: E402
import pymc_models.bayes_optimal as m_bo  # noqa: E402
import pymc_models.naive_bayes as m_nb  # noqa: E402
from compare import classification as clf  # noqa: E402

register(Topic(
    name="naive-bayes",
    title="Naive Bayes: Dirichlet/Beta priors on class and feature probabilities, "
          "Normal-Inverse-Gamma on Gaussian features",
    model=("pi ~ Dirichlet(class_concentration);  y_i ~ Categorical(pi)\n"
           "multinomial: theta_c ~ Dirichlet(alpha);  word counts x_i | c ~ Multinomial(theta_c)\n"
           "bernoulli:   theta_cj ~ Beta(alpha, alpha);  x_ij | c ~ Bernoulli(theta_cj)\n"
           "categorical: theta_cj ~ Dirichlet(alpha);  x_ij | c ~ Categorical(theta_cj)\n"
           "gaussian:    sigma2_cj ~ InvGamma(alpha0, beta0);  mu_cj | sigma2_cj ~ "
           "Normal(mu0, sigma2_cj/kappa0);\n"
           "             x_ij | c ~ Normal(mu_cj, sigma2_cj);  theta[c,j] = (mu_cj, sigma2_cj)\n"
           "posterior: Dirichlet/Beta(prior + counts), independent blocks; its mean is the\n"
           "  m-estimate (n_c + m p)/(n + m) with m = K alpha, p = 1/K (scikit-learn's alpha);\n"
           "  gaussian: one Normal-Inverse-Gamma block per class and feature\n"
           "predictive: E[pi_c] p(x | c, D), Dirichlet-multinomial for word counts, a product\n"
           "  of Student-t densities for gaussian (exact), against the plug-in (the posterior\n"
           "  means; gaussian: the MLE, scikit-learn's GaussianNB); in log space (logsumexp)"),
    data_kind="table",
    hyperparameters=(
        Hyperparameter("variant", "multinomial", "multinomial (word counts), bernoulli (0/1 "
                       "presence), categorical (one category per column) or gaussian (real "
                       "numbers)", kind="text", structural=True, choices=a_nb.VARIANTS),
        Hyperparameter("alpha", 1.0, "Dirichlet/Beta concentration of every feature "
                       "probability (scikit-learn's alpha; 1 = Laplace smoothing)"),
        Hyperparameter("class_concentration", 1.0, "Dirichlet concentration of every class "
                       "probability"),
        Hyperparameter("classes", None, "the classes, comma-separated (default: the labels of "
                       "the training rows, sorted)", kind="labels", structural=True),
        Hyperparameter("vocabulary", 20, "text columns: keep the tokens found in the most "
                       "training rows, this many", kind="count", structural=True, low=1,
                       high=100_000),
        Hyperparameter("holdout", 5, "hold out every k-th row (k = holdout) and classify it "
                       "after the fit; 0 keeps every row for training", kind="count",
                       structural=True, high=1e6),
        Hyperparameter("mu0", a_nb.GAUSSIAN_PRIOR["mu0"], "gaussian: prior mean of every class "
                       "mean mu_cj (0 suits standardised features)", kind="real"),
        Hyperparameter("kappa0", a_nb.GAUSSIAN_PRIOR["kappa0"], "gaussian: prior pseudo-count "
                       "of every class mean (mu_cj has prior variance sigma2_cj / kappa0)"),
        Hyperparameter("alpha0", a_nb.GAUSSIAN_PRIOR["alpha0"], "gaussian: InvGamma shape of "
                       "every class variance sigma2_cj"),
        Hyperparameter("beta0", a_nb.GAUSSIAN_PRIOR["beta0"], "gaussian: InvGamma scale (not "
                       "rate) of every class variance; prior mean beta0 / (alpha0 - 1)"),
    ),
    solve=clf.nb_solve,
    build_model=m_nb.build_model,
    model_data=clf.nb_model_data,
    variables=m_nb.VARIABLES,
    simulate=clf.nb_simulate,
    builtin=(
        BuiltinData("spam", "86 short text messages labelled spam or ham (a bag of words "
                    "over the 20 most common tokens)", "written for this project",
                    clf.load_spam),
        BuiltinData("titanic", "class, sex and age against survival of the 2201 people on "
                    "the Titanic", "R datasets::Titanic (Dawson 1995), one line per person",
                    clf.load_titanic, hyper={"variant": "categorical"}),
        BuiltinData("play-tennis", "Mitchell's 14 PlayTennis days; classifies <sunny, cool, "
                    "high, strong>", "Mitchell (1997), Table 3.2 and sec. 6.9.1",
                    clf.load_play_tennis, hyper={"variant": "categorical", "holdout": 0}),
        BuiltinData("iris", "Fisher's iris: 4 flower measurements of 3 species, 150 plants, "
                    "each column standardised (gaussian variant)",
                    "scikit-learn load_iris (bundled)", clf.load_iris,
                    hyper={"variant": "gaussian"}),
    ),
    prepare=clf.nb_prepare,
    structure=clf.nb_structure,
    extras=clf.nb_extras,
    # Words a class never uses have Beta(alpha, ~n)-shaped marginals, steep on one side in
    # the unconstrained space: 4-9 divergences per run on builtin:spam at the default 0.8,
    # none in 4 seeded runs at 0.95.
    sampler_options={"target_accept": 0.95},
))

register(Topic(
    name="bayes-optimal",
    title="Finite hypothesis spaces: exact posterior, MAP, Bayes-optimal and Gibbs classifiers",
    model=("h ~ prior over H (uniform unless given);  y_i | h ~ Bernoulli(P(y_i = 1 | h)),\n"
           "  each label flipped with probability noise\n"
           "posterior: P(h | D) = P(D | h) P(h) / P(D) (logsumexp); noise-free data and a\n"
           "  uniform prior: 1/|VS| on the version space, 0 elsewhere\n"
           "new x: Bayes-optimal answers + iff P(+ | x, D) = sum_h P(+ | h, x) P(h | D) > 1/2;\n"
           "  MAP answers with h_MAP; Gibbs with h ~ P(h | D);\n"
           "  E[error_Gibbs] = 2p(1-p) <= 2 min(p, 1-p) = 2 E[error_BayesOptimal]\n"
           "tables: H = conjunctions of attribute = value or ? constraints, plus the empty one\n"
           "compared: P(h in bucket) for the most probable hypotheses and the rest lumped;\n"
           "  PyMC samples h with CategoricalGibbsMetropolis (uniform proposals), not NUTS"),
    data_kind="table",
    hyperparameters=(
        Hyperparameter("noise", 0.0, "probability that an observed label is flipped, in "
                       "[0, 0.5); 0 = noise-free concept learning", kind="real", low=0.0,
                       high=0.5,
                       high_open=True),
        Hyperparameter("prior", None, "prior weights, one per hypothesis in order "
                       "(default: uniform)", kind="positive-list"),
        Hyperparameter("top", 10, "compare at most this many hypotheses one by one (the "
                       "most probable), the rest lumped as 'other'", kind="count",
                       structural=True, low=1, high=1000),
        Hyperparameter("min_mass", 0.02, "a hypothesis (or the lumped rest) is compared on "
                       "its own only with at least this posterior probability",
                       structural=True, high=0.5, high_open=True),
    ),
    solve=clf.bo_solve,
    build_model=m_bo.build_model,
    model_data=clf.bo_model_data,
    variables=m_bo.VARIABLES,
    simulate=clf.bo_simulate,
    builtin=(
        BuiltinData("enjoy-sport", "Mitchell's 4 EnjoySport examples, 6 attributes, 973 "
                    "conjunctive hypotheses; new instances: the other 92",
                    "Mitchell (1997), Table 2.1", clf.load_enjoy_sport),
        BuiltinData("three-hypotheses", "P(h|D) = .4, .3, .3; on x h1 says +, h2 and h3 "
                    "say -: MAP says +, Bayes-optimal says -",
                    "Mitchell (1997), sec. 6.7", clf.load_three_hypotheses),
        BuiltinData("medical-test", "cancer given a positive test: P(cancer) = 0.008, "
                    "sensitivity 0.98, false-positive rate 0.03 -> P(cancer|+) = 0.21",
                    "Mitchell (1997), sec. 6.2.1", clf.load_medical_test,
                    hyper={"prior": (0.008, 0.992)}),
    ),
    prepare=clf.bo_prepare,
    structure=clf.bo_structure,
    extras=clf.bo_extras,
    step=m_bo.step_methods,
))


# --- gaussian-classifier (compare/gaussian_classifier.py holds its glue) --------
import pymc_models.gaussian_classifier as m_gcl  # noqa: E402
from compare import gaussian_classifier as gcl  # noqa: E402

register(Topic(
    name="gaussian-classifier",
    title="Gaussian class-conditional classifier: LDA/QDA (MLE) and the conjugate posterior",
    model=("pi ~ Dirichlet(alpha 1_K);  y_i ~ Categorical(pi)\n"
           "Lambda_k ~ Wishart(nu0, W0);  mu_k | Lambda_k ~ Normal(m0, (kappa0 Lambda_k)^-1);  "
           "x_i | y_i = k ~ Normal(mu_k, Lambda_k^-1)\n"
           "prior from the training rows: m0 = column means, W0^-1 = nu0 cov_scale "
           "diag(column variances)\n"
           "posterior: pi ~ Dirichlet(alpha + N), (mu_k, Lambda_k) ~ Normal-Wishart "
           "(Bishop 10.60-10.63)\n"
           "MLE: pi_k = N_k/N, mu_k = xbar_k, Sigma_k = S_k/N_k (QDA), Sigma = sum S_k/N (LDA);\n"
           "  LDA: a_k = w_k^T x + w_k0, w_k = Sigma^-1 mu_k, "
           "w_k0 = -1/2 mu_k^T Sigma^-1 mu_k + log pi_k\n"
           "predictive: P(y=k|x,D) ~ E[pi_k] St(x | m_k, nu_k-d+1, psi_k (kappa_k+1)/"
           "(kappa_k (nu_k-d+1)))"),
    data_kind="table",
    hyperparameters=(
        Hyperparameter("alpha", 1.0, "Dirichlet concentration of every class prior pi_k"),
        Hyperparameter("kappa0", 0.01, "prior pseudo-count of each class mean"),
        Hyperparameter("nu0", None, "Wishart degrees of freedom of each class precision, an "
                       "integer > d (default d + 2)", kind="count", low=1, high=1e6),
        Hyperparameter("cov_scale", 0.1, "prior class covariance as a share of the training "
                       "rows' variance per column", structural=True),
        Hyperparameter("classes", None, "the classes, comma-separated (default: the labels of "
                       "the training rows, sorted)", kind="labels", structural=True),
        Hyperparameter("holdout", 5, "hold out every k-th row (k = holdout) and classify it "
                       "after the fit; 0 keeps every row for training", kind="count",
                       structural=True, high=1e6),
    ),
    solve=gcl.solve,
    build_model=m_gcl.build_model,
    model_data=gcl.model_data,
    variables=m_gcl.VARIABLES,
    simulate=gcl.simulate,
    builtin=(
        BuiltinData("iris", "Fisher's iris: 4 flower measurements (cm) of 3 species, 150 "
                    "plants", "scikit-learn load_iris (bundled)", gcl.load_iris),
        BuiltinData("wine", "5 of 13 chemical measurements (alcohol, malic acid, flavanoids, "
                    "colour intensity, proline; standardised) of 178 wines from 3 cultivars",
                    "scikit-learn load_wine (bundled; UCI wine recognition)", gcl.load_wine),
    ),
    prepare=gcl.prepare,
    structure=gcl.structure,
    extras=gcl.extras,
))


# --- logistic-regression (compare/logistic_regression.py holds its glue) ---------
import pymc_models.logistic_regression as m_logr  # noqa: E402
from compare import logistic_regression as logr  # noqa: E402

register(Topic(
    name="logistic-regression",
    title="Bayesian logistic regression: MLE, MAP and Laplace against a numerical exact posterior",
    model=("w ~ Normal(0, prior_sd^2 I) (intercept included);  "
           "y_i ~ Bernoulli(sigmoid(phi_i^T w))\n"
           "MAP and MLE by Newton/IRLS; MAP = scikit-learn LogisticRegression(C=prior_sd^2, "
           "fit_intercept=False) on Phi\n"
           "MLE: none when the classes are separated (linear programme, Konis 2007)\n"
           "Laplace: Normal(MAP, H^-1), H = Phi^T diag(p(1-p)) Phi + I/prior_sd^2\n"
           "exact reference (no closed form): d <= 2 adaptive cubature; d > 2 Pareto-smoothed\n"
           "  importance sampling (scrambled Sobol', Student-t proposal at the Laplace), "
           "refused when k-hat > 0.7"),
    data_kind="table",
    hyperparameters=(
        Hyperparameter("prior_sd", 1.0, "prior standard deviation (not variance) of every "
                       "weight, the intercept included"),
        Hyperparameter("intercept", True, "add a column of ones (w[intercept]) before the "
                       "inputs", kind="bool", structural=True),
        Hyperparameter("reference_draws", 2**18, "importance draws of the exact reference "
                       "(rounded up to a power of two)", kind="count", structural=True,
                       low=1000, high=2**22),
        Hyperparameter("proposal_df", 10.0, "degrees of freedom of the Student-t importance "
                       "proposal", structural=True, low=1.0),
        Hyperparameter("sizes", logr.LAPLACE_SIZES, "rows in the Laplace-error sweep (also "
                       "--sizes): numbers <= 1 are shares of the rows, larger ones row counts; "
                       "nested subsets of one seeded shuffle, each at least 20 rows",
                       kind="positive-list", structural=True),
    ),
    solve=logr.solve,
    build_model=m_logr.build_model,
    model_data=logr.model_data,
    variables=m_logr.VARIABLES,
    simulate=logr.simulate,
    builtin=logr.builtin(SIMULATED_SEED),
    prepare=logr.prepare,
    structure=logr.structure,
    extras=logr.extras,
))
