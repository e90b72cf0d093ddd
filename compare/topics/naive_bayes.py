"""The naive-bayes topic: Naive Bayes: Dirichlet/Beta priors on class and feature probabilities, .

Pairs ``analytic/naive_bayes.py`` (the exact answer) with ``pymc_models/naive_bayes.py`` (the same
prior and likelihood in PyMC).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

import analytic.naive_bayes as a_nb
import analytic.naive_bayes as nb
import pymc_models.naive_bayes as m_nb
from compare.core.checks import Extra, ExtraContext
from compare.core.data import natural_sort, table_from_arrays
from compare.core.registry import (
    BuiltinData,
    Calibration,
    Hyperparameter,
    InputError,
    Sensitivity,
    Simulation,
    Topic,
)
from compare.topics import _classification as clf
from compare.topics._classification import (
    PREDICT_ROWS,
    LabelledRows,
    NBData,
    as_rows,
    bag_of_words,
    categorical_csv,
    held_cells,
    holdout_split,
    label_text,
    read_csv_rows,
    resolve_classes,
    tokenize,
    vocabulary,
)
from compare.topics._classifier_report import reliability
from compare.topics._planted import prior_var, term_bug, variance_for_sd


def _numbers(rows: LabelledRows, j: int, cells: list[tuple[str, Any]], variant: str) -> np.ndarray:
    """Feature j as word counts (multinomial) or 0/1 (Bernoulli), checked cell by cell."""
    if variant == "multinomial":
        what, ok = "a count (a whole number >= 0)", lambda v: v >= 0 and v == round(v)
    else:
        what, ok = "0 or 1", lambda v: v in (0.0, 1.0)
    out = np.empty(len(cells))
    for i, (where, cell) in enumerate(cells):
        try:
            v = float(cell)
        except (TypeError, ValueError):
            v = float("nan")
        if not (np.isfinite(v) and ok(v)):
            raise InputError(
                f"{rows.source}, {where}, column {rows.features[j]!r}: {cell!r} is "
                f"not {what} as the {variant} variant needs; fix it or choose "
                "--set variant=categorical"
            )
        out[i] = v
    return out


def nb_prepare(data, hyper: dict[str, Any]) -> tuple[NBData, dict[str, Any]]:
    """Split, classes, features by variant, sufficient statistics."""
    rows = as_rows(data)
    variant = hyper["variant"]
    try:
        nb.check_variant(variant)
    except ValueError as err:
        raise InputError(str(err)) from None
    if rows.detected and variant == "categorical":  # a CSV's words are category labels here
        rows = dataclasses.replace(rows, kinds=("category",) * len(rows.features))
    train, test = holdout_split(rows.n, hyper.get("holdout"))
    if train.size == 0:
        raise InputError(f"{rows.source}: no training rows; a run needs at least one")
    labels, classes, index = resolve_classes(
        rows, train, test, hyper.get("classes"), needs="naive Bayes needs"
    )
    y = np.array([index[v] for v in labels[train]], dtype=np.int64)
    test_y = np.array([index[v] for v in labels[test]] + [-1] * _n_query(rows), dtype=np.int64)
    test_rows = tuple(f"row {r + 1}" for r in test) + tuple(
        f"query {q + 1}" for q in range(_n_query(rows))
    )
    notes: dict[str, Any] = {}
    text = [k == "text" for k in rows.kinds]
    if variant == "gaussian":
        x, test_x = _gaussian_features(rows, train, test)
        try:
            suff = nb.gaussian_stats(x=x, y=y, n_classes=len(classes))
        except ValueError as err:
            raise InputError(f"{rows.source}: {err}") from None
        notes["rows_per_class"] = {c: int(k) for c, k in zip(classes, suff.class_counts)}
        return NBData(
            variant=variant,
            classes=tuple(classes),
            feature_names=rows.features,
            n_categories=(),
            stats=suff,
            x=x,
            y=y,
            test_x=test_x,
            test_y=test_y,
            test_rows=test_rows,
            notes=notes,
        ), {**hyper, "classes": tuple(classes)}
    if any(text):
        if not all(text):
            raise InputError(
                "mixing text and categorical feature columns is not supported; "
                "choose the text columns with --features"
            )
        if variant == "categorical":
            raise InputError(
                "text columns need --set variant=multinomial or bernoulli "
                "(a bag of words), not categorical"
            )
        x_all = _text_features(rows, train, test, hyper["vocabulary"], notes)
        names = notes["vocabulary"]
        x, test_x = x_all
        if variant == "bernoulli":
            x, test_x = (x > 0).astype(float), (test_x > 0).astype(float)
        n_categories: tuple[int, ...] = ()
    elif variant == "categorical":
        x, test_x, names, n_categories = _categorical_features(rows, train, test)
    else:
        f = len(rows.features)
        x = np.column_stack(
            [
                _numbers(rows, j, [(f"row {r + 1}", rows.columns[j][r]) for r in train], variant)
                for j in range(f)
            ]
        )
        test_x = np.column_stack(
            [_numbers(rows, j, held_cells(rows, j, test), variant) for j in range(f)]
        ).reshape(-1, f)
        names, n_categories = rows.features, ()
    try:
        suff = nb.sufficient_stats(
            variant=variant, x=x, y=y, n_classes=len(classes), n_categories=n_categories or None
        )
    except ValueError as err:
        raise InputError(f"{rows.source}: {err}") from None
    data_out = NBData(
        variant=variant,
        classes=tuple(classes),
        feature_names=tuple(names),
        n_categories=tuple(n_categories),
        stats=suff,
        x=x,
        y=y,
        test_x=test_x,
        test_y=test_y,
        test_rows=test_rows,
        notes=notes,
    )
    return data_out, {**hyper, "classes": tuple(classes)}


def _gaussian_features(rows: LabelledRows, train, test) -> tuple[np.ndarray, np.ndarray]:
    """Real feature values of the training and the held-out/query rows, checked cell by cell."""
    f = len(rows.features)
    cols, test_cols = [], []
    for j, name in enumerate(rows.features):
        cells = [(f"row {r + 1}", rows.columns[j][r]) for r in train] + held_cells(rows, j, test)
        out = np.empty(len(cells))
        for i, (where, cell) in enumerate(cells):
            try:
                v = float(cell)
            except (TypeError, ValueError):
                raise InputError(
                    f"{rows.source}, {where}, column {name!r}: {cell!r} is not a number; the "
                    "gaussian variant needs numeric features: choose them with --features, or "
                    "use --set variant=multinomial for text"
                ) from None
            if not np.isfinite(v):
                raise InputError(
                    f"{rows.source}, {where}, column {name!r}: {cell!r} is not a "
                    "finite number; fix or remove that row"
                )
            out[i] = v
        cols.append(out[: train.size])
        test_cols.append(out[train.size :])
    return (np.column_stack(cols).reshape(train.size, f), np.column_stack(test_cols).reshape(-1, f))


def _n_query(rows: LabelledRows) -> int:
    return len(rows.query[0]) if rows.query else 0


def _text_features(rows: LabelledRows, train, test, size, notes):
    """Bag of words over the text columns (joined), vocabulary from the training rows."""
    if size is None or size < 1:
        raise InputError(
            f"vocabulary must be a whole number >= 1, got {size!r}; e.g. --set vocabulary=20"
        )

    def docs(cells_by_col, idx):
        return [tokenize(" ".join(str(col[i]) for col in cells_by_col)) for i in idx]

    train_docs = docs(rows.columns, train)
    vocab = vocabulary(train_docs, size=size)
    if len(vocab) < 2:
        raise InputError(
            f"{rows.source}: the training text has {len(vocab)} distinct "
            "token(s); a bag of words needs two or more"
        )
    test_docs = docs(rows.columns, test)
    if rows.query:
        test_docs += docs(rows.query, range(_n_query(rows)))
    notes["vocabulary"] = vocab
    notes["tokens_in_vocabulary"] = float(
        sum(sum(t in vocab for t in d) for d in train_docs)
        / max(1, sum(len(d) for d in train_docs))
    )
    return bag_of_words(train_docs, vocab), bag_of_words(test_docs, vocab).reshape(-1, len(vocab))


def _categorical_features(rows: LabelledRows, train, test):
    """Codes per feature; categories = training values (natural order)."""
    codes, test_codes, names, sizes = [], [], [], []
    for j, f in enumerate(rows.features):
        col = np.array([label_text(v) for v in rows.columns[j]], dtype=object)
        cats = natural_sort(set(col[train]))
        if len(cats) < 2:
            raise InputError(
                f"{rows.source}: feature {f!r} takes one value ({cats[0]!r}) in the "
                "training rows; it cannot tell classes apart: drop it with "
                "--features"
            )
        index = {c: k for k, c in enumerate(cats)}
        held = [(where, label_text(v)) for where, v in held_cells(rows, j, test)]
        for where, v in held:
            if v not in index:
                raise InputError(
                    f"{rows.source}, {where}, feature {f!r}: category {v!r} was "
                    f"unseen at training time (seen: {', '.join(cats)}); a "
                    "categorical naive Bayes has no probability for it: fix the "
                    "value, drop the row, or train on every row (--set holdout=0)"
                )
        codes.append([index[v] for v in col[train]])
        test_codes.append([index[v] for _, v in held])
        names += [f"{f}={c}" for c in cats]
        sizes.append(len(cats))
    x = np.array(codes, dtype=np.int64).T.reshape(len(train), -1)
    test_x = np.array(test_codes, dtype=np.int64).T.reshape(-1, len(rows.features))
    return x, test_x, tuple(names), tuple(sizes)


def _nig_prior(hyper) -> dict[str, float]:
    """The Gaussian variant's prior from the hyperparameters (defaults where absent)."""
    return {k: v if hyper.get(k) is None else float(hyper[k]) for k, v in nb.GAUSSIAN_PRIOR.items()}


def nb_solve(*, x: NBData, alpha: float, class_concentration: float, **hyper):
    return nb.answer_from_stats(
        suff=x.stats,
        variant=x.variant,
        classes=x.classes,
        feature_names=x.feature_names,
        alpha=alpha,
        class_concentration=class_concentration,
        n_categories=x.n_categories or None,
        **_nig_prior(hyper),
    )


def nb_model_data(*, x: NBData, alpha: float, class_concentration: float, **hyper):
    if x.variant == "gaussian":
        return m_nb.gaussian_model_data(
            class_counts=x.stats.class_counts,
            feature_mean=x.stats.mean,
            feature_m2=x.stats.m2,
            class_concentration=class_concentration,
            **_nig_prior(hyper),
        )
    return m_nb.model_data(
        class_counts=x.stats.class_counts,
        feature_counts=x.stats.feature_counts,
        alpha=alpha,
        class_concentration=class_concentration,
        n_categories=x.n_categories,
    )


def nb_structure(x: NBData, hyper) -> dict[str, Any]:
    return {
        "variant": x.variant,
        "n_classes": len(x.classes),
        "n_features": len(x.feature_names),
        "n_categories": x.n_categories,
    }


def nb_simulate(rng: np.random.Generator, n: int, hyper: dict[str, Any]):
    """Prior-predictive rows as a numeric Table: 2 classes, 4 features (see analytic)."""

    theta, x, y = nb.simulate(
        rng,
        n=n,
        variant=hyper["variant"],
        alpha=hyper["alpha"],
        class_concentration=hyper["class_concentration"],
        **_nig_prior(hyper),
    )
    return Simulation(
        theta=theta,
        data=table_from_arrays(
            x, y.astype(float), features=tuple(f"f{j}" for j in range(x.shape[1])), target="class"
        ),
    )


def mcmc_log_proba(
    *,
    variant: str,
    pi: np.ndarray,
    theta: np.ndarray,
    x: np.ndarray,
    groups: tuple[tuple[int, int], ...],
) -> np.ndarray:
    """log of the MCMC estimate of P(y = c | x, D), shape (m, C).

    ``log mean_s [pi_c^s p(x | theta_c^s)]`` over S draws (logsumexp), then
    normalised over classes: the posterior predictive by Monte Carlo.

    Parameters
    ----------
    pi : array of shape (S, C)
    theta : array of shape (S, C, P), or (S, C, P, 2) for the Gaussian variant
        (mu, sigma2)
    x : array of shape (m, P) (counts, 0/1, reals) or (m, F) codes (categorical)
    """
    from scipy import special  # heavy: SciPy only where it is used

    with np.errstate(divide="ignore"):
        if variant == "gaussian":
            ll = np.zeros((theta.shape[0], x.shape[0], theta.shape[1]))
            for c in range(theta.shape[1]):  # (S, m) at a time: memory O(S m)
                for j in range(theta.shape[2]):
                    mu, s2 = theta[:, c, j, 0, None], theta[:, c, j, 1, None]
                    r = x[None, :, j] - mu
                    ll[:, :, c] -= 0.5 * (np.log(2 * np.pi * s2) + r * r / s2)
            joint = np.log(pi)[:, None, :] + ll
            avg = special.logsumexp(joint, axis=0) - np.log(joint.shape[0])
            return avg - special.logsumexp(avg, axis=1, keepdims=True)
        logt = np.log(theta)
        if variant == "multinomial":
            ll = np.einsum("mp,scp->smc", x, logt)
        elif variant == "bernoulli":
            log1m = np.log1p(-theta)
            ll = np.einsum("mp,scp->smc", x, logt - log1m) + log1m.sum(axis=2)[:, None, :]
        else:
            ll = np.zeros((theta.shape[0], x.shape[0], theta.shape[1]))
            for j, (s, _) in enumerate(groups):
                ll += np.transpose(logt[:, :, s + x[:, j].astype(np.int64)], (0, 2, 1))
        joint = np.log(pi)[:, None, :] + ll
    avg = special.logsumexp(joint, axis=0) - np.log(joint.shape[0])
    return avg - special.logsumexp(avg, axis=1, keepdims=True)


def nb_extras(ctx: ExtraContext) -> Extra:
    """Predictions on the held-out rows: exact predictive, plug-in and MCMC."""
    data: NBData = ctx.x
    post = ctx.exact.posterior
    pred = ctx.exact.predictive
    if data.variant == "gaussian":
        return _gaussian_extras(ctx)
    # The m-estimate with m = K alpha, p = 1/K, against the posterior mean (an identity).
    alpha = float(ctx.hyper["alpha"])
    m_est = []
    for s, e in post.groups or ():
        k = e - s
        counts = data.stats.feature_counts[:, s:e]
        m_est.append(
            np.max(
                np.abs(
                    nb.m_estimate(
                        n_c=counts,
                        n=counts.sum(axis=1, keepdims=True),
                        m=k * alpha,
                        p=np.full(k, 1 / k),
                    )
                    - post.feature_mean[:, s:e]
                )
            )
        )
    if post.variant == "bernoulli":
        m_est.append(
            np.max(
                np.abs(
                    nb.m_estimate(
                        n_c=data.stats.feature_counts,
                        n=data.stats.class_counts[:, None],
                        m=2 * alpha,
                        p=0.5,
                    )
                    - post.feature_mean
                )
            )
        )
    section: dict[str, Any] = {
        "variant": data.variant,
        "classes": list(data.classes),
        "features": list(data.feature_names),
        "n_train": len(data),
        "n_test": len(data.test_y),
        "m_estimate_max_abs_diff": float(max(m_est)),
        **{k: (list(v) if isinstance(v, tuple) else v) for k, v in data.notes.items()},
    }
    lines = [
        f"naive Bayes ({data.variant}): {len(data)} training rows, {len(data.classes)} "
        f"classes, {len(data.feature_names)} feature columns; m-estimate (n_c + m p)/(n + m) "
        f"with m = K alpha, p = 1/K equals the posterior mean (max diff "
        f"{max(m_est):.1e})"
    ]
    if len(data.test_y):
        exact = np.exp(pred.log_proba(data.test_x))
        plugin = np.exp(pred.plugin_log_proba(data.test_x))
        rows = slice(0, PREDICT_ROWS)
        flat = ctx.tree.posterior
        pi = np.asarray(flat["pi"].transpose("chain", "draw", ...).values).reshape(
            -1, len(data.classes)
        )
        theta = np.asarray(flat["theta"].transpose("chain", "draw", ...).values).reshape(
            pi.shape[0], len(data.classes), -1
        )
        mcmc_lp = mcmc_log_proba(
            variant=data.variant, pi=pi, theta=theta, x=data.test_x[rows], groups=post.groups
        )
        mcmc = np.exp(mcmc_lp)
        calibration = _calibration(
            data, rows, {"exact": pred.log_proba, "plugin": pred.plugin_log_proba}, mcmc_lp
        )
        labelled = data.test_y >= 0
        acc = lambda p: (
            float(np.mean(p[labelled].argmax(axis=1) == data.test_y[labelled]))
            if labelled.any()
            else None
        )
        section["predictions"] = {
            "rows": list(data.test_rows),
            "true": [data.classes[c] if c >= 0 else None for c in data.test_y],
            "exact": exact,
            "plugin": plugin,
            "mcmc": mcmc,
            "accuracy_exact": acc(exact),
            "accuracy_plugin": acc(plugin),
            "max_abs_exact_minus_plugin": float(np.max(np.abs(exact - plugin))),
            "answers_differ": int(np.sum(exact.argmax(1) != plugin.argmax(1))),
            "max_abs_mcmc_minus_exact": float(np.max(np.abs(mcmc - exact[rows]))),
        }
        p = section["predictions"]
        accuracy = (
            ""
            if p["accuracy_exact"] is None
            else f"; held-out accuracy {p['accuracy_exact']:.3f} (plug-in "
            f"{p['accuracy_plugin']:.3f})"
        )
        exact_name = (
            "exact (Dirichlet-multinomial)"
            if data.variant == "multinomial"
            else "exact (the plug-in itself for this variant)"
        )
        lines.append(
            f"predictive on {len(data.test_y)} held-out/query rows: {exact_name} vs plug-in "
            f"max |dP| {p['max_abs_exact_minus_plugin']:.2e}, "
            f"{p['answers_differ']} answers differ{accuracy}; MCMC predictive vs exact max |dP| "
            f"{p['max_abs_mcmc_minus_exact']:.2e}"
        )
        if len(data.test_y) <= 3:
            for i, name in enumerate(data.test_rows):
                probs = ", ".join(f"P({c})={exact[i, k]:.4f}" for k, c in enumerate(data.classes))
                lines.append(f"  {name}: {probs} -> {data.classes[int(exact[i].argmax())]}")
        if calibration is not None:
            section["calibration"] = calibration  # moved to the top level below
    return _nb_extra(section, lines)


def _nb_extra(section: dict[str, Any], lines: list[str]) -> Extra:
    """The naive-Bayes JSON section, with the reliability table as its own section."""
    sections = {"naive_bayes": section}
    if "calibration" in section:
        sections["calibration"] = section.pop("calibration")
    return Extra(checks=(), sections=sections, lines=tuple(lines))


def _calibration(
    data: NBData, rows: slice, exact: dict[str, Any], mcmc_lp: np.ndarray
) -> dict[str, Any] | None:
    """Reliability table over the labelled held-out rows that MCMC also predicted.

    ``exact`` maps a method name to a function of rows giving log class
    probabilities (None leaves the method out); ``mcmc_lp`` covers ``rows``.
    """
    x, truth = data.test_x[rows], data.test_y[rows]
    labelled = truth >= 0
    if not labelled.any():
        return None
    log_proba = {name: f(x[labelled]) for name, f in exact.items() if f is not None}
    log_proba["mcmc"] = mcmc_lp[labelled]
    return reliability(
        log_proba=log_proba,
        truth=truth[labelled],
        classes=data.classes,
        rows=f"{int(labelled.sum())} held-out rows",
    )


def _gaussian_extras(ctx: ExtraContext) -> Extra:
    """Gaussian variant: exact Student-t predictive, MLE plug-in (GaussianNB), MCMC."""
    data: NBData = ctx.x
    pred = ctx.exact.predictive
    g = ctx.exact.posterior.gaussian
    section: dict[str, Any] = {
        "variant": data.variant,
        "classes": list(data.classes),
        "features": list(data.feature_names),
        "n_train": len(data),
        "n_test": len(data.test_y),
        **{k: (list(v) if isinstance(v, tuple) else v) for k, v in data.notes.items()},
    }
    try:
        nb.gaussian_mle(g.stats)
        mle_note = None
    except ValueError as err:
        mle_note = str(err)
    lines = [
        f"naive Bayes (gaussian): {len(data)} training rows, {len(data.classes)} classes, "
        f"{len(data.feature_names)} features; a Normal-Inverse-Gamma posterior per class "
        "and feature" + ("" if mle_note is None else f"; no MLE plug-in: {mle_note}")
    ]
    if len(data.test_y):
        exact = np.exp(pred.log_proba(data.test_x))
        plugin = None if mle_note else np.exp(pred.plugin_log_proba(data.test_x))
        rows = slice(0, PREDICT_ROWS)
        flat = ctx.tree.posterior
        pi = np.asarray(flat["pi"].transpose("chain", "draw", ...).values).reshape(
            -1, len(data.classes)
        )
        theta = np.asarray(flat["theta"].transpose("chain", "draw", ...).values).reshape(
            pi.shape[0], len(data.classes), -1, 2
        )
        mcmc_lp = mcmc_log_proba(
            variant="gaussian", pi=pi, theta=theta, x=data.test_x[rows], groups=()
        )
        mcmc = np.exp(mcmc_lp)
        calibration = _calibration(
            data,
            rows,
            {"exact": pred.log_proba, "plugin": None if mle_note else pred.plugin_log_proba},
            mcmc_lp,
        )
        labelled = data.test_y >= 0
        acc = lambda p: (
            None
            if p is None or not labelled.any()
            else float(np.mean(p[labelled].argmax(axis=1) == data.test_y[labelled]))
        )
        section["predictions"] = {
            "rows": list(data.test_rows),
            "true": [data.classes[c] if c >= 0 else None for c in data.test_y],
            "exact": exact,
            "plugin": plugin,
            "mcmc": mcmc,
            "accuracy_exact": acc(exact),
            "accuracy_plugin": acc(plugin),
            "max_abs_exact_minus_plugin": (
                None if plugin is None else float(np.max(np.abs(exact - plugin)))
            ),
            "answers_differ": (
                None if plugin is None else int(np.sum(exact.argmax(1) != plugin.argmax(1)))
            ),
            "max_abs_mcmc_minus_exact": float(np.max(np.abs(mcmc - exact[rows]))),
        }
        p = section["predictions"]
        versus = (
            ""
            if plugin is None
            else f" vs plug-in MLE (GaussianNB) max |dP| {p['max_abs_exact_minus_plugin']:.2e}, "
            f"{p['answers_differ']} answers differ"
        )
        accuracy = (
            ""
            if p["accuracy_exact"] is None
            else f"; held-out accuracy {p['accuracy_exact']:.3f}"
            + ("" if plugin is None else f" (plug-in {p['accuracy_plugin']:.3f})")
        )
        lines.append(
            f"predictive on {len(data.test_y)} held-out/query rows: exact (Student-t)"
            f"{versus}{accuracy}; MCMC predictive vs exact max |dP| "
            f"{p['max_abs_mcmc_minus_exact']:.2e}"
        )
        if calibration is not None:
            section["calibration"] = calibration  # moved to the top level below
    return _nb_extra(section, lines)


#: builtin:spam's classes (sorted) and the vocabulary its default (the 20 tokens found in
#: the most training rows) keeps, in the exact side's order: describe's parameter names.
SPAM_CLASSES = ("ham", "spam")
SPAM_VOCABULARY = (
    "now", "free", "call", "claim", "cash", "prize", "win", "home", "reply", "txt",
    "mobile", "tomorrow", "tonight", "dinner", "later", "work", "entry", "meeting", "offer",
    "phone",
)  # fmt: skip


def load_spam() -> LabelledRows:
    """builtin:spam: short messages labelled spam/ham, written for this project."""
    rows = read_csv_rows("spam_ham.csv")
    header, body = rows[0], rows[1:]
    return LabelledRows(
        features=("message",),
        columns=(np.array([r[1] for r in body], dtype=object),),
        kinds=("text",),
        labels=np.array([r[0] for r in body], dtype=object),
        target=header[0],
        source="builtin:spam",
    )


def load_iris() -> LabelledRows:
    """builtin:iris for the Gaussian variant: scikit-learn's bundled iris (no download),
    each of the 4 measurements standardised to mean 0, sd 1 over the 150 plants (so the
    prior mean mu0 = 0 and prior variance scale beta0 = 1 fit every column)."""
    from sklearn.datasets import (
        load_iris as sk,  # heavy: scikit-learn only when its data set is loaded
    )

    data = sk()
    x = np.asarray(data.data, dtype=float)
    x = (x - x.mean(axis=0)) / x.std(axis=0)
    names = tuple(f.replace(" (cm)", "").replace(" ", "_") for f in data.feature_names)
    return LabelledRows(
        features=names,
        columns=tuple(np.array(list(x[:, j]), dtype=object) for j in range(x.shape[1])),
        kinds=("category",) * len(names),
        labels=np.array([str(data.target_names[t]) for t in data.target], dtype=object),
        target="species",
        source="builtin:iris",
    )


def load_titanic() -> LabelledRows:
    """builtin:titanic: class, sex, age and survival of the 2201 people aboard."""
    return categorical_csv("titanic.csv", "builtin:titanic")


#: Mitchell (1997), sec. 6.9: the new instance to classify.
PLAY_TENNIS_QUERY = (("Sunny", "Cool", "High", "Strong"),)


def load_play_tennis() -> LabelledRows:
    """builtin:play-tennis: Mitchell's Table 3.2 and the query of sec. 6.9."""
    return categorical_csv("play_tennis.csv", "builtin:play-tennis", query=PLAY_TENNIS_QUERY)


TOPIC = Topic(
    name="naive-bayes",
    title="Naive Bayes: Dirichlet/Beta priors on class and feature probabilities, "
    "Normal-Inverse-Gamma on Gaussian features",
    model=(
        "pi ~ Dirichlet(class_concentration);  y_i ~ Categorical(pi)\n"
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
        "  means; gaussian: the MLE, scikit-learn's GaussianNB); in log space (logsumexp)"
    ),
    data_kind="table",
    hyperparameters=(
        Hyperparameter(
            "variant",
            "multinomial",
            "multinomial (word counts), bernoulli (0/1 "
            "presence), categorical (one category per column) or gaussian (real "
            "numbers)",
            kind="text",
            structural=True,
            choices=a_nb.VARIANTS,
        ),
        Hyperparameter(
            "alpha",
            1.0,
            "Dirichlet/Beta concentration of every feature "
            "probability (scikit-learn's alpha; 1 = Laplace smoothing)",
        ),
        Hyperparameter(
            "class_concentration", 1.0, "Dirichlet concentration of every class probability"
        ),
        Hyperparameter(
            "classes",
            None,
            "the classes, comma-separated (default: the labels of the training rows, sorted)",
            kind="labels",
            structural=True,
        ),
        Hyperparameter(
            "vocabulary",
            20,
            "text columns: keep the tokens found in the most training rows, this many",
            kind="count",
            structural=True,
            low=1,
            high=100_000,
        ),
        Hyperparameter(
            "holdout",
            5,
            "hold out every k-th row (k = holdout) and classify it "
            "after the fit; 0 keeps every row for training",
            kind="count",
            structural=True,
            high=1e6,
        ),
        Hyperparameter(
            "mu0",
            a_nb.GAUSSIAN_PRIOR["mu0"],
            "gaussian: prior mean of every class mean mu_cj (0 suits standardised features)",
            kind="real",
        ),
        Hyperparameter(
            "kappa0",
            a_nb.GAUSSIAN_PRIOR["kappa0"],
            "gaussian: prior pseudo-count "
            "of every class mean (mu_cj has prior variance sigma2_cj / kappa0)",
        ),
        Hyperparameter(
            "alpha0",
            a_nb.GAUSSIAN_PRIOR["alpha0"],
            "gaussian: InvGamma shape of every class variance sigma2_cj",
        ),
        Hyperparameter(
            "beta0",
            a_nb.GAUSSIAN_PRIOR["beta0"],
            "gaussian: InvGamma scale (not "
            "rate) of every class variance; prior mean beta0 / (alpha0 - 1)",
        ),
    ),
    solve=nb_solve,
    build_model=m_nb.build_model,
    model_data=nb_model_data,
    variables=m_nb.VARIABLES,
    simulate=nb_simulate,
    builtin=(
        BuiltinData(
            "spam",
            "86 short text messages labelled spam or ham (a bag of words "
            "over the 20 most common tokens)",
            "written for this project",
            load_spam,
            parameters=(  # describe's names, without solving (checked against the solved ones)
                *(f"pi[{c}]" for c in SPAM_CLASSES),
                *(f"theta[{c},{w}]" for c in SPAM_CLASSES for w in SPAM_VOCABULARY),
            ),
        ),
        BuiltinData(
            "titanic",
            "class, sex and age against survival of the 2201 people on the Titanic",
            "R datasets::Titanic (Dawson 1995), one line per person",
            load_titanic,
            hyper={"variant": "categorical"},
        ),
        BuiltinData(
            "play-tennis",
            "Mitchell's 14 PlayTennis days; classifies <sunny, cool, high, strong>",
            "Mitchell (1997), Table 3.2 and sec. 6.9.1",
            load_play_tennis,
            hyper={"variant": "categorical", "holdout": 0},
        ),
        BuiltinData(
            "iris",
            "Fisher's iris: 4 flower measurements of 3 species, 150 plants, "
            "each column standardised (gaussian variant)",
            "scikit-learn load_iris (bundled)",
            load_iris,
            hyper={"variant": "gaussian"},
        ),
    ),
    prepare=nb_prepare,
    structure=nb_structure,
    extras=nb_extras,
    # Words a class never uses have Beta(alpha, ~n)-shaped marginals, steep on one side in
    # the unconstrained space: 4-9 divergences per run on builtin:spam at the default 0.8,
    # none in 4 seeded runs at 0.95.
    sampler_options={"target_accept": 0.95},
    text_table=clf.text_table,
    # --- what the studies ask of it ---
    sensitivity=Sensitivity(default_param="alpha"),
    # --- calibration and planted bugs ---
    calibration=Calibration(
        # Bernoulli variant, 2 declared classes, 4 binary features: 2 + 8 parameters.
        hyper={
            "variant": "bernoulli",
            "alpha": 1.5,
            "class_concentration": 2.0,
            "classes": ("0", "1"),
            "vocabulary": 20,
            "holdout": 0,
        },
        n_obs=30,
    ),
    planted=(
        # The Gaussian variant's (the count variants have no variances to get wrong).
        prior_var("mu", needs={"variant": "gaussian"}),
        term_bug(
            "noise_sd",
            "the features' sd multiplied by factor in the likelihood "
            "(sigma2 x factor^2; the prior keeps sigma2)",
            term="feature_loglik",
            variable="sigma2",
            change=lambda var, f: var * f**2,
            needs={"variant": "gaussian"},
        ),
        variance_for_sd("mu", needs={"variant": "gaussian"}),
    ),
    cold_seconds=50,  # a first run, compiles included (2 idle cores, 2026-12-02)
)
