"""Report sections the classifiers share: a decision-boundary grid and a reliability table.

Both are computed when a run ends (in the topic's extras), where the exact
predictive and the MCMC draws are at hand, and saved in the run's JSON as
the sections ``decision_boundary`` and ``calibration``; the figures of the
same names in :mod:`compare.outputs.figures` draw them from the saved files alone.

Conventions: a *predictor* maps raw input rows, an array of shape (m, p),
to log class probabilities of shape (m, K).  Methods are named ``exact``
(the topic's exact posterior predictive), ``mcmc`` (the same predictive
averaged over the MCMC draws) and ``plugin`` (the class probabilities at one
point estimate, named in the section's ``plugin`` key).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

#: Points per axis of a two-input grid (a one-input line gets GRID ** 2 // 8).
GRID = 30
#: Equal-width probability bins of the reliability table.
BINS = 10
#: Digits kept in the JSON (probabilities to 1e-5 are far finer than a figure shows).
DIGITS = 5

Predictor = Callable[[np.ndarray], np.ndarray]


def most_separating(*, x: np.ndarray, y: np.ndarray, count: int = 2) -> tuple[int, ...]:
    """Indices of the ``count`` inputs with the largest one-way ANOVA F across classes.

    The inputs that separate the classes best on their own: the natural axes
    for a two-dimensional picture of the decision boundary.
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y)
    groups = [x[y == c] for c in np.unique(y)]
    grand = x.mean(axis=0)
    between = sum(g.shape[0] * (g.mean(axis=0) - grand) ** 2 for g in groups)
    within = sum(((g - g.mean(axis=0)) ** 2).sum(axis=0) for g in groups)
    f = between / np.maximum(within, np.finfo(float).tiny)
    return tuple(int(j) for j in np.argsort(-f, kind="stable")[:count])


def decision_grid(
    *,
    x: np.ndarray,
    features: Sequence[str],
    classes: Sequence[str],
    predictors: Mapping[str, Predictor],
    plugin: str = "",
    shown: Sequence[int] = (0, 1),
    size: int = GRID,
) -> dict[str, Any]:
    """Class probabilities over the range of one or two inputs (the others at their mean).

    Parameters
    ----------
    x : array of shape (n, p)
        The training inputs; the grid spans their range plus 5% on each side.
        Inputs not in ``shown`` are held at their training mean (a slice
        through the input space, named in ``fixed``).
    features : sequence of str, length p
    classes : sequence of str, length K
    predictors : mapping of method name to predictor (see the module docstring)
    plugin : str
        What the ``plugin`` method plugs in (e.g. "posterior mean").
    shown : sequence of int
        The inputs on the axes (see :func:`most_separating`); with one input
        in all, just that one.
    size : int
        Points per axis.

    Returns
    -------
    dict
        ``features`` (the one or two inputs on the axes), ``axes`` (their
        grid values), ``fixed`` (the other inputs' values), ``classes``,
        ``plugin`` and ``probability``: per method an array of shape
        (len(axes[0]), K) for one input, (size, size, K) for two
        (``[i][j]`` at ``axes[0][i]``, ``axes[1][j]``).
    """
    x = np.asarray(x, dtype=float)
    p = x.shape[1]
    lo, hi = x.min(axis=0), x.max(axis=0)
    pad = 0.05 * np.where(hi > lo, hi - lo, 1.0)
    centre = x.mean(axis=0)
    shown = [int(j) for j in shown if 0 <= j < p][:2] or [0]
    axes = [
        np.linspace(lo[j] - pad[j], hi[j] + pad[j], size if len(shown) == 2 else size**2 // 8)
        for j in shown
    ]
    rows = np.tile(centre, (int(np.prod([a.size for a in axes])), 1))
    mesh = np.meshgrid(*axes, indexing="ij")
    for j, values in zip(shown, mesh):
        rows[:, j] = values.ravel()
    shape = tuple(a.size for a in axes) + (len(classes),)
    probability = {
        name: np.round(np.exp(f(rows)), DIGITS).reshape(shape).tolist()
        for name, f in predictors.items()
    }
    return {
        "features": [features[j] for j in shown],
        "axes": [a.tolist() for a in axes],
        "fixed": {features[j]: float(centre[j]) for j in range(p) if j not in shown},
        "classes": list(classes),
        "plugin": plugin,
        "probability": probability,
    }


def reliability(
    *,
    log_proba: Mapping[str, np.ndarray],
    truth: np.ndarray,
    classes: Sequence[str],
    rows: str,
    bins: int = BINS,
) -> dict[str, Any]:
    """Reliability (calibration) table of predicted class probabilities.

    Two classes: the predicted P(second class) against how often it is the
    true class.  More classes: the top class's probability (confidence)
    against how often the top class is right.  Also the Brier score and the
    log loss of each method (lower is better).

    Parameters
    ----------
    log_proba : mapping of method name to array of shape (m, K)
    truth : array of shape (m,)
        True class index of each row.
    classes : sequence of str, length K
    rows : str
        Which rows these are (e.g. "30 held-out rows").
    bins : int
        Equal-width bins over [0, 1]; empty bins are left out.

    Returns
    -------
    dict
        ``kind``, ``rows``, ``n`` and, per method, ``bins`` (lo, hi, count,
        mean_predicted, observed, se: the binomial standard error of
        ``observed`` at ``mean_predicted``), ``brier``, ``log_loss`` and
        ``ece`` (the count-weighted mean |observed - mean_predicted|).
    """
    truth = np.asarray(truth, dtype=np.int64)
    k = len(classes)
    edges = np.linspace(0.0, 1.0, bins + 1)
    out: dict[str, Any] = {
        "kind": (f"P({classes[1]})" if k == 2 else "top-class confidence"),
        "rows": rows,
        "n": int(truth.size),
        "classes": list(classes),
        "methods": {},
    }
    for name, lp in log_proba.items():
        lp = np.asarray(lp, dtype=float)
        prob = np.exp(lp)
        if k == 2:
            score, hit = prob[:, 1], truth == 1
        else:
            score, hit = prob.max(axis=1), prob.argmax(axis=1) == truth
        which = np.clip(np.searchsorted(edges, score, side="right") - 1, 0, bins - 1)
        table = []
        for b in range(bins):
            sel = which == b
            if not sel.any():
                continue
            mean_p = float(score[sel].mean())
            table.append(
                {
                    "lo": float(edges[b]),
                    "hi": float(edges[b + 1]),
                    "count": int(sel.sum()),
                    "mean_predicted": mean_p,
                    "observed": float(hit[sel].mean()),
                    "se": float(np.sqrt(mean_p * (1.0 - mean_p) / sel.sum())),
                }
            )
        onehot = np.eye(k)[truth]
        out["methods"][name] = {
            "bins": table,
            "brier": float(np.mean(np.sum((prob - onehot) ** 2, axis=1))),
            "log_loss": float(-np.mean(lp[np.arange(truth.size), truth])),
            "ece": float(
                sum(r["count"] * abs(r["observed"] - r["mean_predicted"]) for r in table)
                / max(truth.size, 1)
            ),
        }
    return out


def binary_log_proba(p1: np.ndarray) -> np.ndarray:
    """Log probabilities of shape (m, 2) from P(class 1), without log(0) warnings."""
    p1 = np.clip(np.asarray(p1, dtype=float), 0.0, 1.0)
    with np.errstate(divide="ignore"):
        return np.column_stack([np.log1p(-p1), np.log(p1)])
