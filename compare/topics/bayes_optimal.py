"""The bayes-optimal topic: Finite hypothesis spaces: exact posterior, MAP, Bayes-optimal and Gibbs classifiers.

Pairs ``analytic/bayes_optimal.py`` (the exact answer) with ``pymc_models/bayes_optimal.py`` (the same
prior and likelihood in PyMC).
"""

from __future__ import annotations

import pymc_models.bayes_optimal as m_bo
from compare.core.registry import (
                              BuiltinData,
                              Hyperparameter,
                              Sensitivity,
                              Topic,
)
from compare.topics import _classification as clf

TOPIC = Topic(
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
    text_table=clf.text_table,
    # --- what the studies ask of it ---
    # Label noise over [0, 0.2]: at larger noise on builtin:enjoy-sport the posterior's
    # mass leaves the compared hypotheses and solve refuses.
    sensitivity=Sensitivity(default_param="noise", linear_grids={"noise": (0.0, 0.2)},
                            not_swept=("min_mass",)),
    # --- calibration and planted bugs ---
    calibration=None,
    planted=(),
)
