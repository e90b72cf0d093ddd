"""The dirichlet-categorical topic: Dirichlet prior, categorical likelihood.

Pairs ``analytic/dirichlet_categorical.py`` (the exact answer) with ``pymc_models/dirichlet_categorical.py`` (the same
prior and likelihood in PyMC).
"""

from __future__ import annotations

from typing import Any

import numpy as np

import analytic.dirichlet_categorical as a_dc
import pymc_models.dirichlet_categorical as m_dc
from compare.core.data import natural_sort
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
from compare.topics._common import csv_column, simulated_data


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
            raise InputError(
                f"label(s) {unknown} are not in categories={','.join(categories)}; "
                "add them to --set categories or leave categories unset"
            )
    index = {c: i for i, c in enumerate(categories)}
    conc = np.atleast_1d(np.asarray(hyper["concentration"], dtype=float))
    if conc.size not in (1, len(categories)):
        raise InputError(
            f"concentration has {conc.size} values but there are "
            f"{len(categories)} categories ({', '.join(categories)}); "
            "give one number or one per category, in that order"
        )
    if len(categories) < 2:
        raise InputError(
            f"only one category ({categories[0]!r}) in the data; a categorical "
            "model needs two or more: list them with --set categories=a,b"
        )
    return np.array([index[s] for s in labels]), {**hyper, "categories": tuple(categories)}


def _dc_simulate(rng: np.random.Generator, n: int, hyper: dict[str, Any]) -> Simulation:
    categories = hyper.get("categories") or ("a", "b", "c")
    theta, codes = a_dc.simulate(
        rng, n=n, categories=categories, concentration=hyper["concentration"]
    )
    return Simulation(theta=theta, data=np.array([categories[c] for c in codes], dtype=object))


TOPIC = Topic(
    name="dirichlet-categorical",
    title="Dirichlet prior, categorical likelihood",
    model=(
        "p ~ Dirichlet(concentration);  x_i | p ~ Categorical(p)\n"
        "posterior: Dirichlet(concentration + counts)\n"
        "the p[k] sum to one: the agreement test whitens the first K-1"
    ),
    data_kind="labels",
    hyperparameters=(
        Hyperparameter(
            "concentration",
            1.0,
            "Dirichlet concentration: one number for all categories, or one per "
            "category in sorted label order, comma-separated",
            kind="positive-list",
        ),
        Hyperparameter(
            "categories",
            None,
            "the categories, comma-separated (default: the labels in the data, "
            "sorted); list unseen ones here",
            kind="labels",
            structural=True,
        ),
    ),
    solve=a_dc.solve,
    build_model=m_dc.build_model,
    model_data=m_dc.model_data,
    variables=m_dc.VARIABLES,
    simulate=_dc_simulate,
    builtin=(
        BuiltinData(
            "hair-colour",
            "hair colour of 592 statistics students (Snee 1974)",
            "R datasets::HairEyeColor, expanded to one line per student",
            csv_column("hair_eye_color.csv", "hair", "labels"),
            parameters=(
                "p[Black]",
                "p[Blond]",
                "p[Brown]",
                "p[Red]",
            ),  # describe's names, without solving (checked against the solved names in the tests)
        ),
        simulated_data(_dc_simulate, 60, {"concentration": 1.0, "categories": None}, "labels"),
    ),
    prepare=_dc_prepare,
    structure=lambda x, hyper: {"n_categories": len(hyper["categories"])},
    # --- what the studies ask of it ---
    sensitivity=Sensitivity(
        default_param="concentration",
        path=a_dc.sensitivity_path,
        grid_column=True,  # one concentration per category, swept as one
        power_scaled=a_dc.power_scaled,
    ),
    # --- calibration and planted bugs ---
    calibration=Calibration(
        hyper={"concentration": (1.5, 2.0, 2.5), "categories": ("a", "b", "c")}, n_obs=30
    ),
    planted=Unsupported(
        "a Dirichlet prior and a Categorical likelihood have no Normal "
        "variance or sd to get wrong; the planted mistakes (a prior variance "
        "or a noise sd scaled, a variance passed as an sd) are measured on "
        "the Normal topics"
    ),
    cold_seconds=25,  # a first run, compiles included (2 idle cores, 2026-12-02)
)
