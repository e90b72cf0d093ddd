"""The naive-bayes topic: Naive Bayes: Dirichlet/Beta priors on class and feature probabilities, .

Pairs ``analytic/naive_bayes.py`` (the exact answer) with ``pymc_models/naive_bayes.py`` (the same
prior and likelihood in PyMC).
"""

from __future__ import annotations

import analytic.naive_bayes as a_nb
import pymc_models.naive_bayes as m_nb
from compare.core.registry import (
                              BuiltinData,
                              Hyperparameter,
                              Sensitivity,
                              Topic,
)
from compare.topics import _classification as clf

TOPIC = Topic(
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
    text_table=clf.text_table,
    # --- what the studies ask of it ---
    sensitivity=Sensitivity(default_param="alpha"),
    # --- calibration and planted bugs ---
    calibration=None,
    planted=(),
)
