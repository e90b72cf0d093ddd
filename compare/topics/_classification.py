"""The classification topics' glue: data preparation, a tokenizer, builtin data
and the comparisons beyond the verdict.

Orchestration only: the maths is in ``analytic/naive_bayes.py`` and
``analytic/bayes_optimal.py``, the models in ``pymc_models/`` under the same
names.

Data.  Both topics read a table: a target column and feature columns.  From
a CSV (``--target``, ``--features``) of numbers the cells are read by
:func:`compare.core.data.read_table`: word counts, 0/1 indicators, real numbers
(the Gaussian variant), or codes whose values are treated as categories.  A
naive-bayes CSV with a cell that is not a number (labels such as ``spam``,
messages) is read by :func:`read_labelled` with ``detect=True``: a feature
column with any non-numeric cell is text (tokenised, see :func:`tokenize`;
with ``variant=categorical``, category labels).  Builtin data (and the
Python API) use :class:`LabelledRows`, whose columns may be text or
category labels.

Held-out rows (naive Bayes).  With ``holdout = k >= 2`` every k-th row
(rows k, 2k, ... counting from 1) is kept out of the fit and classified
afterwards; the classes, categories and vocabulary come from the training
rows only, so a held-out row with a class or category never seen in
training is bad input (exit 3), while unseen words are ignored (they are
outside the vocabulary).
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from arviz_stats.base import array_stats

import analytic.bayes_optimal as bo
import analytic.naive_bayes as nb
import pymc_models.bayes_optimal as m_bo
import pymc_models.naive_bayes as m_nb
from compare.core.checks import Check, Extra, ExtraContext
from compare.core.data import StreamedTable, Table, natural_sort
from compare.core.registry import InputError
from compare.topics._classifier_report import reliability

#: Rows whose MCMC predictive is compared with the exact one (the first ones).
PREDICT_ROWS = 200

#: Topics whose CSVs may hold text: the command line reads them with
#: ``read_labelled(..., detect=True)`` when a cell is not a number.  Every
#: classification topic reads text class labels; naive-bayes and
#: bayes-optimal read text attributes too (words, or category labels), while
#: gaussian-classifier and logistic-regression need numeric inputs and name
#: the text column (:func:`numeric_inputs`).


# --- raw data -----------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class LabelledRows:
    """Labelled rows with text or categorical feature columns.

    Attributes
    ----------
    features : tuple of str, length F
    columns : tuple of object arrays of shape (n,)
        One per feature, cells as text.
    kinds : tuple of str
        ``text`` (tokenised) or ``category`` per feature.
    labels : object array of shape (n,)
        Class labels as text.
    target : str
    source : str
    query : tuple of object arrays of shape (m,)
        Unlabelled rows to classify (one array per feature), may be empty.
    domains : tuple of tuple of str, optional
        The values each categorical feature can take (default: those seen).
    detected : bool
        True when the kinds were guessed from the cells (a CSV read with
        ``read_labelled(..., detect=True)``): a column with any non-numeric
        cell is ``text``; with ``--set variant=categorical`` such columns are
        read as category labels instead.
    """

    features: tuple[str, ...]
    columns: tuple[np.ndarray, ...]
    kinds: tuple[str, ...]
    labels: np.ndarray
    target: str
    source: str
    query: tuple[np.ndarray, ...] = ()
    domains: tuple[tuple[str, ...], ...] | None = None
    detected: bool = False

    def __post_init__(self) -> None:
        n = len(self.labels)
        if len(self.columns) != len(self.features) or len(self.kinds) != len(self.features):
            raise InputError(f"{self.source}: {len(self.features)} features but "
                             f"{len(self.columns)} columns and {len(self.kinds)} kinds")
        for name, col, kind in zip(self.features, self.columns, self.kinds):
            if len(col) != n:
                raise InputError(f"{self.source}: column {name!r} has {len(col)} rows, the "
                                 f"labels {n}; give one row per observation")
            if kind not in ("text", "category"):
                raise InputError(f"{self.source}: column {name!r} has kind {kind!r}; use "
                                 "text or category")
        for i, label in enumerate(self.labels):
            if label is None or str(label).strip() == "":
                raise InputError(f"{self.source}, row {i + 1}, column {self.target!r}: missing "
                                 "label; fill it in or remove that row")

    @property
    def n(self) -> int:
        return len(self.labels)


def read_labelled(path, *, target: str, features: tuple[str, ...] | None = None,
                  text: tuple[str, ...] = (), detect: bool = False) -> LabelledRows:
    """Read a CSV whose feature cells are text (columns in ``text``) or categories.

    With ``detect=True`` (what the command line does for a CSV with
    non-numeric cells, see :func:`has_text`) every feature column holding a
    cell that is not a number is a text column, the others categories (read
    as numbers by the count and Gaussian variants).
    """
    import csv
    from pathlib import Path

    path = Path(path)
    if not path.is_file():
        raise InputError(f"data file {str(path)!r} does not exist")
    with path.open(newline="", encoding="utf-8-sig") as fh:
        rows = [r for r in csv.reader(fh) if any(c.strip() for c in r)]
    if len(rows) < 2:
        raise InputError(f"{path} needs a header line and at least one data line")
    header = [h.strip() for h in rows[0]]
    if target not in header:
        raise InputError(f"{path} has no target column {target!r}; its columns are: "
                         f"{', '.join(header)}")
    features = tuple(h for h in header if h != target) if features is None else features
    missing = [f for f in features if f not in header]
    if missing:
        raise InputError(f"{path} has no column(s) {', '.join(map(repr, missing))}")
    cols = {h: np.array([r[j].strip() if j < len(r) else "" for r in rows[1:]], dtype=object)
            for j, h in enumerate(header)}
    if detect:
        text = tuple(f for f in features if not all(_is_number(c) for c in cols[f]))
    return LabelledRows(features=tuple(features), columns=tuple(cols[f] for f in features),
                        kinds=tuple("text" if f in text else "category" for f in features),
                        labels=cols[target], target=target, source=str(path), detected=detect)


def _is_number(cell: str) -> bool:
    try:
        float(cell)
    except (TypeError, ValueError):
        return False
    return True


def numeric_inputs(rows: LabelledRows, *, topic: str) -> np.ndarray:
    """The feature columns of ``rows`` as a float array of shape (n, F).

    For the topics whose inputs are real numbers (gaussian-classifier,
    logistic-regression): a cell that is not a finite number is bad input,
    named by row, column and value.
    """
    from compare.core.data import MISSING

    x = np.empty((rows.n, len(rows.features)))
    for j, (name, col) in enumerate(zip(rows.features, rows.columns)):
        for i, cell in enumerate(col):
            text = str(cell).strip()
            if text.lower() in MISSING:
                raise InputError(f"{rows.source}, row {i + 1}, column {name!r}: missing value; "
                                 "fill it in or leave the row out")
            try:
                value = float(text)
            except ValueError:
                raise InputError(
                    f"{rows.source}, row {i + 1}, column {name!r}: {text!r} is not a number; "
                    f"{topic} needs numeric inputs (only the class column may hold words): "
                    f"code column {name!r} as numbers or leave it out with --features") from None
            if not np.isfinite(value):
                raise InputError(f"{rows.source}, row {i + 1}, column {name!r}: {text!r} is not "
                                 "a finite number; fix it or leave the row out")
            x[i, j] = value
    return x


def has_text(path, *, target: str, features: tuple[str, ...]) -> bool:
    """Whether the target or a feature column of the CSV has a cell that is not a number
    (a missing cell counts as a number here: the numeric reader reports it)."""
    import csv
    from pathlib import Path

    from compare.core.data import MISSING

    with Path(path).open(newline="", encoding="utf-8-sig") as fh:
        reader = csv.reader(fh)
        header = [h.strip() for h in next(reader, [])]
        idx = [header.index(c) for c in (target, *features) if c in header]
        for row in reader:
            for j in idx:
                cell = row[j].strip() if j < len(row) else ""
                if cell.lower() not in MISSING and not _is_number(cell):
                    return True
    return False


# --- a tokenizer for text columns ---------------------------------------------------
#: Common English function words, dropped before counting.
STOP_WORDS = frozenset("""
a about after all am an and any are as at be been but by can could did do does for from
had has have he her here him his how i if in into is it its just me my no not of on or our
out she so than that the their them then there these they this to up us was we were what
when where which who will with would you your yours
""".split())

_TOKEN = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def tokenize(text: str) -> list[str]:
    """Lower-case word tokens of ``text``: letters and digits, without stop words.

    ``"Call NOW to claim your FREE prize!"`` -> ``['call', 'now', 'claim',
    'free', 'prize']``.  Tokens of one character are dropped.
    """
    return [t for t in _TOKEN.findall(str(text).lower()) if len(t) > 1 and t not in STOP_WORDS]


def vocabulary(docs: list[list[str]], *, size: int) -> tuple[str, ...]:
    """The ``size`` tokens found in the most documents (ties: alphabetical)."""
    df = Counter(t for doc in docs for t in set(doc))
    ranked = sorted(df.items(), key=lambda kv: (-kv[1], kv[0]))
    return tuple(t for t, _ in ranked[:size])


def bag_of_words(docs: list[list[str]], vocab: tuple[str, ...]) -> np.ndarray:
    """Counts of each vocabulary token per document, shape (n, V); others ignored."""
    index = {t: k for k, t in enumerate(vocab)}
    out = np.zeros((len(docs), len(vocab)))
    for i, doc in enumerate(docs):
        for t in doc:
            k = index.get(t)
            if k is not None:
                out[i, k] += 1.0
    return out


# --- naive Bayes: preparation ---------------------------------------------------------
@dataclass(frozen=True, eq=False)
class NBData:
    """A naive-Bayes data set ready for both sides.

    Attributes
    ----------
    variant : str
    classes : tuple of str, length C
    feature_names : tuple of str, length P
    n_categories : tuple of int
        Values per feature (categorical variant; empty otherwise).
    stats : analytic.naive_bayes.Stats
        Sufficient statistics of the training rows.
    x, y : arrays of shape (n, P or F) and (n,)
        Training rows (features as the variant reads them, class codes).
    test_x : array of shape (m, P or F)
        Held-out and query rows.
    test_y : int array of shape (m,)
        Their class codes; -1 for unlabelled query rows.
    test_rows : tuple of str
        Where each test row came from (``row 5``, ``query 1``).
    """

    variant: str
    classes: tuple[str, ...]
    feature_names: tuple[str, ...]
    n_categories: tuple[int, ...]
    stats: nb.Stats
    x: np.ndarray
    y: np.ndarray
    test_x: np.ndarray
    test_y: np.ndarray
    test_rows: tuple[str, ...]
    notes: dict[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return int(self.y.size)


def _label_text(v: Any) -> str:
    if isinstance(v, (float, np.floating)) and float(v).is_integer():
        return str(int(v))
    return str(v).strip()


def _as_rows(data) -> LabelledRows:
    """A numeric Table as LabelledRows of category cells (numbers as text)."""
    if isinstance(data, LabelledRows):
        return data
    if isinstance(data, StreamedTable):
        raise InputError(f"{data.path}: the classification topics read the whole file; "
                         "--stream is for the regression topics (use a smaller CSV)")
    if isinstance(data, Table):
        cols = tuple(np.array([_label_text(v) for v in data.x[:, j]], dtype=object)
                     for j in range(data.x.shape[1]))
        return LabelledRows(features=data.features, columns=cols,
                            kinds=("category",) * len(cols),
                            labels=np.array([_label_text(v) for v in data.y], dtype=object),
                            target=data.target, source=data.source)
    raise InputError("the classification topics take a table: build it with "
                     "compare.core.data.table_from_arrays(x, y) or compare.topics._classification.LabelledRows")


def _split(n: int, holdout: int | None) -> tuple[np.ndarray, np.ndarray]:
    if holdout in (None, 0):
        return np.arange(n), np.arange(0)
    if holdout == 1:
        raise InputError("holdout=1 would hold out every row; use 0 (none) or k >= 2 (every "
                         "k-th row), e.g. --set holdout=5")
    test = (np.arange(n) + 1) % holdout == 0
    return np.flatnonzero(~test), np.flatnonzero(test)


def _held(rows: LabelledRows, j: int, test: np.ndarray) -> list[tuple[str, Any]]:
    """(where, cell) of feature j in the held-out rows, then in the query rows."""
    held = [(f"row {r + 1}", rows.columns[j][r]) for r in test]
    if rows.query:
        held += [(f"query row {q + 1}", v) for q, v in enumerate(rows.query[j])]
    return held


def _numbers(rows: LabelledRows, j: int, cells: list[tuple[str, Any]], variant: str
             ) -> np.ndarray:
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
            raise InputError(f"{rows.source}, {where}, column {rows.features[j]!r}: {cell!r} is "
                             f"not {what} as the {variant} variant needs; fix it or choose "
                             "--set variant=categorical")
        out[i] = v
    return out


def resolve_classes(rows, train: np.ndarray, test: np.ndarray,
                    classes: tuple[str, ...] | None, *, needs: str
                    ) -> tuple[np.ndarray, tuple[str, ...], dict[str, int]]:
    """Labels as text, the classes (declared or seen in the training rows) and their codes.

    Refuses one class only, training labels outside declared classes and a
    held-out class unseen at training time, each in one line naming the fix;
    ``needs`` starts the two-class message ("naive Bayes needs").
    """
    labels = np.array([_label_text(v) for v in rows.labels], dtype=object)
    seen = natural_sort(set(labels[train]))
    if classes is None:
        classes = tuple(seen)
        if len(classes) < 2:
            raise InputError(f"{rows.source}: the labels in column {rows.target!r} have one class "
                             f"only ({classes[0]!r}); {needs} two or more: add rows of "
                             "another class, or list the classes with --set classes=a,b")
    else:
        unknown = [c for c in seen if c not in classes]
        if unknown:
            raise InputError(f"label(s) {unknown} are not in classes={','.join(classes)}; add "
                             "them to --set classes or leave classes unset")
        if len(classes) < 2:
            raise InputError(f"classes={','.join(classes)}: {needs} two or more")
    index = {c: i for i, c in enumerate(classes)}
    for r in test:
        if labels[r] not in index:
            raise InputError(f"{rows.source}, held-out row {r + 1}: class {labels[r]!r} was "
                             f"unseen at training time (classes: {', '.join(classes)}); list it "
                             "with --set classes=..., or use --set holdout=0")
    return labels, tuple(classes), index


def nb_prepare(data, hyper: dict[str, Any]) -> tuple[NBData, dict[str, Any]]:
    """Split, classes, features by variant, sufficient statistics."""
    rows = _as_rows(data)
    variant = hyper["variant"]
    try:
        nb.check_variant(variant)
    except ValueError as err:
        raise InputError(str(err)) from None
    if rows.detected and variant == "categorical":  # a CSV's words are category labels here
        rows = dataclasses.replace(rows, kinds=("category",) * len(rows.features))
    train, test = _split(rows.n, hyper.get("holdout"))
    if train.size == 0:
        raise InputError(f"{rows.source}: no training rows; a run needs at least one")
    labels, classes, index = resolve_classes(rows, train, test, hyper.get("classes"),
                                             needs="naive Bayes needs")
    y = np.array([index[v] for v in labels[train]], dtype=np.int64)
    test_y = np.array([index[v] for v in labels[test]] + [-1] * _n_query(rows), dtype=np.int64)
    test_rows = tuple(f"row {r + 1}" for r in test) + tuple(
        f"query {q + 1}" for q in range(_n_query(rows)))
    notes: dict[str, Any] = {}
    text = [k == "text" for k in rows.kinds]
    if variant == "gaussian":
        x, test_x = _gaussian_features(rows, train, test)
        try:
            suff = nb.gaussian_stats(x=x, y=y, n_classes=len(classes))
        except ValueError as err:
            raise InputError(f"{rows.source}: {err}") from None
        notes["rows_per_class"] = {c: int(k) for c, k in zip(classes, suff.class_counts)}
        return NBData(variant=variant, classes=tuple(classes), feature_names=rows.features,
                      n_categories=(), stats=suff, x=x, y=y, test_x=test_x, test_y=test_y,
                      test_rows=test_rows, notes=notes), {**hyper, "classes": tuple(classes)}
    if any(text):
        if not all(text):
            raise InputError("mixing text and categorical feature columns is not supported; "
                             "choose the text columns with --features")
        if variant == "categorical":
            raise InputError("text columns need --set variant=multinomial or bernoulli "
                             "(a bag of words), not categorical")
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
        x = np.column_stack([_numbers(rows, j, [(f"row {r + 1}", rows.columns[j][r])
                                                for r in train], variant) for j in range(f)])
        test_x = np.column_stack([_numbers(rows, j, _held(rows, j, test), variant)
                                  for j in range(f)]).reshape(-1, f)
        names, n_categories = rows.features, ()
    try:
        suff = nb.sufficient_stats(variant=variant, x=x, y=y, n_classes=len(classes),
                                   n_categories=n_categories or None)
    except ValueError as err:
        raise InputError(f"{rows.source}: {err}") from None
    data_out = NBData(variant=variant, classes=tuple(classes), feature_names=tuple(names),
                      n_categories=tuple(n_categories), stats=suff, x=x, y=y, test_x=test_x,
                      test_y=test_y, test_rows=test_rows, notes=notes)
    return data_out, {**hyper, "classes": tuple(classes)}


def _gaussian_features(rows: LabelledRows, train, test) -> tuple[np.ndarray, np.ndarray]:
    """Real feature values of the training and the held-out/query rows, checked cell by cell."""
    f = len(rows.features)
    cols, test_cols = [], []
    for j, name in enumerate(rows.features):
        cells = [(f"row {r + 1}", rows.columns[j][r]) for r in train] + _held(rows, j, test)
        out = np.empty(len(cells))
        for i, (where, cell) in enumerate(cells):
            try:
                v = float(cell)
            except (TypeError, ValueError):
                raise InputError(
                    f"{rows.source}, {where}, column {name!r}: {cell!r} is not a number; the "
                    "gaussian variant needs numeric features: choose them with --features, or "
                    "use --set variant=multinomial for text") from None
            if not np.isfinite(v):
                raise InputError(f"{rows.source}, {where}, column {name!r}: {cell!r} is not a "
                                 "finite number; fix or remove that row")
            out[i] = v
        cols.append(out[:train.size])
        test_cols.append(out[train.size:])
    return (np.column_stack(cols).reshape(train.size, f),
            np.column_stack(test_cols).reshape(-1, f))


def _n_query(rows: LabelledRows) -> int:
    return len(rows.query[0]) if rows.query else 0


def _text_features(rows: LabelledRows, train, test, size, notes):
    """Bag of words over the text columns (joined), vocabulary from the training rows."""
    if size is None or size < 1:
        raise InputError(f"vocabulary must be a whole number >= 1, got {size!r}; e.g. "
                         "--set vocabulary=20")

    def docs(cells_by_col, idx):
        return [tokenize(" ".join(str(col[i]) for col in cells_by_col)) for i in idx]

    train_docs = docs(rows.columns, train)
    vocab = vocabulary(train_docs, size=size)
    if len(vocab) < 2:
        raise InputError(f"{rows.source}: the training text has {len(vocab)} distinct "
                         "token(s); a bag of words needs two or more")
    test_docs = docs(rows.columns, test)
    if rows.query:
        test_docs += docs(rows.query, range(_n_query(rows)))
    notes["vocabulary"] = vocab
    notes["tokens_in_vocabulary"] = float(sum(sum(t in vocab for t in d) for d in train_docs)
                                          / max(1, sum(len(d) for d in train_docs)))
    return bag_of_words(train_docs, vocab), bag_of_words(test_docs, vocab).reshape(-1, len(vocab))


def _categorical_features(rows: LabelledRows, train, test):
    """Codes per feature; categories = training values (natural order)."""
    codes, test_codes, names, sizes = [], [], [], []
    for j, f in enumerate(rows.features):
        col = np.array([_label_text(v) for v in rows.columns[j]], dtype=object)
        cats = natural_sort(set(col[train]))
        if len(cats) < 2:
            raise InputError(f"{rows.source}: feature {f!r} takes one value ({cats[0]!r}) in the "
                             "training rows; it cannot tell classes apart: drop it with "
                             "--features")
        index = {c: k for k, c in enumerate(cats)}
        held = [(where, _label_text(v)) for where, v in _held(rows, j, test)]
        for where, v in held:
            if v not in index:
                raise InputError(f"{rows.source}, {where}, feature {f!r}: category {v!r} was "
                                 f"unseen at training time (seen: {', '.join(cats)}); a "
                                 "categorical naive Bayes has no probability for it: fix the "
                                 "value, drop the row, or train on every row (--set holdout=0)")
        codes.append([index[v] for v in col[train]])
        test_codes.append([index[v] for _, v in held])
        names += [f"{f}={c}" for c in cats]
        sizes.append(len(cats))
    x = np.array(codes, dtype=np.int64).T.reshape(len(train), -1)
    test_x = np.array(test_codes, dtype=np.int64).T.reshape(-1, len(rows.features))
    return x, test_x, tuple(names), tuple(sizes)


def _nig_prior(hyper) -> dict[str, float]:
    """The Gaussian variant's prior from the hyperparameters (defaults where absent)."""
    return {k: v if hyper.get(k) is None else float(hyper[k])
            for k, v in nb.GAUSSIAN_PRIOR.items()}


def nb_solve(*, x: NBData, alpha: float, class_concentration: float, **hyper):
    return nb.answer_from_stats(suff=x.stats, variant=x.variant, classes=x.classes,
                                feature_names=x.feature_names, alpha=alpha,
                                class_concentration=class_concentration,
                                n_categories=x.n_categories or None, **_nig_prior(hyper))


def nb_model_data(*, x: NBData, alpha: float, class_concentration: float, **hyper):
    if x.variant == "gaussian":
        return m_nb.gaussian_model_data(class_counts=x.stats.class_counts,
                                        feature_mean=x.stats.mean, feature_m2=x.stats.m2,
                                        class_concentration=class_concentration,
                                        **_nig_prior(hyper))
    return m_nb.model_data(class_counts=x.stats.class_counts,
                           feature_counts=x.stats.feature_counts, alpha=alpha,
                           class_concentration=class_concentration)


def nb_structure(x: NBData, hyper) -> dict[str, Any]:
    return {"variant": x.variant, "n_classes": len(x.classes),
            "n_features": len(x.feature_names), "n_categories": x.n_categories}


def nb_simulate(rng: np.random.Generator, n: int, hyper: dict[str, Any]):
    """Prior-predictive rows as a numeric Table: 2 classes, 4 features (see analytic)."""
    from compare.core.data import table_from_arrays
    from compare.core.registry import Simulation

    theta, x, y = nb.simulate(rng, n=n, variant=hyper["variant"], alpha=hyper["alpha"],
                              class_concentration=hyper["class_concentration"],
                              **_nig_prior(hyper))
    return Simulation(theta=theta, data=table_from_arrays(
        x, y.astype(float), features=tuple(f"f{j}" for j in range(x.shape[1])), target="class"))


def mcmc_log_proba(*, variant: str, pi: np.ndarray, theta: np.ndarray, x: np.ndarray,
                   groups: tuple[tuple[int, int], ...]) -> np.ndarray:
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
    from scipy import special

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
    for s, e in (post.groups or ()):
        k = e - s
        counts = data.stats.feature_counts[:, s:e]
        m_est.append(np.max(np.abs(nb.m_estimate(
            n_c=counts, n=counts.sum(axis=1, keepdims=True), m=k * alpha, p=np.full(k, 1 / k))
            - post.feature_mean[:, s:e])))
    if post.variant == "bernoulli":
        m_est.append(np.max(np.abs(nb.m_estimate(
            n_c=data.stats.feature_counts, n=data.stats.class_counts[:, None], m=2 * alpha,
            p=0.5) - post.feature_mean)))
    section: dict[str, Any] = {
        "variant": data.variant, "classes": list(data.classes),
        "features": list(data.feature_names), "n_train": len(data), "n_test": len(data.test_y),
        "m_estimate_max_abs_diff": float(max(m_est)),
        **{k: (list(v) if isinstance(v, tuple) else v) for k, v in data.notes.items()},
    }
    lines = [f"naive Bayes ({data.variant}): {len(data)} training rows, {len(data.classes)} "
             f"classes, {len(data.feature_names)} feature columns; m-estimate (n_c + m p)/(n + m) "
             f"with m = K alpha, p = 1/K equals the posterior mean (max diff "
             f"{max(m_est):.1e})"]
    if len(data.test_y):
        exact = np.exp(pred.log_proba(data.test_x))
        plugin = np.exp(pred.plugin_log_proba(data.test_x))
        rows = slice(0, PREDICT_ROWS)
        flat = ctx.tree.posterior
        pi = np.asarray(flat["pi"].transpose("chain", "draw", ...).values).reshape(
            -1, len(data.classes))
        theta = np.asarray(flat["theta"].transpose("chain", "draw", ...).values).reshape(
            pi.shape[0], len(data.classes), -1)
        mcmc_lp = mcmc_log_proba(variant=data.variant, pi=pi, theta=theta,
                                 x=data.test_x[rows], groups=post.groups)
        mcmc = np.exp(mcmc_lp)
        calibration = _calibration(data, rows, {"exact": pred.log_proba,
                                                "plugin": pred.plugin_log_proba}, mcmc_lp)
        labelled = data.test_y >= 0
        acc = (lambda p: float(np.mean(p[labelled].argmax(axis=1) == data.test_y[labelled]))
               if labelled.any() else None)
        section["predictions"] = {
            "rows": list(data.test_rows), "true": [data.classes[c] if c >= 0 else None
                                                   for c in data.test_y],
            "exact": exact, "plugin": plugin, "mcmc": mcmc,
            "accuracy_exact": acc(exact), "accuracy_plugin": acc(plugin),
            "max_abs_exact_minus_plugin": float(np.max(np.abs(exact - plugin))),
            "answers_differ": int(np.sum(exact.argmax(1) != plugin.argmax(1))),
            "max_abs_mcmc_minus_exact": float(np.max(np.abs(mcmc - exact[rows]))),
        }
        p = section["predictions"]
        accuracy = ("" if p["accuracy_exact"] is None else
                    f"; held-out accuracy {p['accuracy_exact']:.3f} (plug-in "
                    f"{p['accuracy_plugin']:.3f})")
        exact_name = ("exact (Dirichlet-multinomial)" if data.variant == "multinomial" else
                      "exact (the plug-in itself for this variant)")
        lines.append(
            f"predictive on {len(data.test_y)} held-out/query rows: {exact_name} vs plug-in "
            f"max |dP| {p['max_abs_exact_minus_plugin']:.2e}, "
            f"{p['answers_differ']} answers differ{accuracy}; MCMC predictive vs exact max |dP| "
            f"{p['max_abs_mcmc_minus_exact']:.2e}")
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


def _calibration(data: NBData, rows: slice, exact: dict[str, Any],
                 mcmc_lp: np.ndarray) -> dict[str, Any] | None:
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
    return reliability(log_proba=log_proba, truth=truth[labelled], classes=data.classes,
                       rows=f"{int(labelled.sum())} held-out rows")


def _gaussian_extras(ctx: ExtraContext) -> Extra:
    """Gaussian variant: exact Student-t predictive, MLE plug-in (GaussianNB), MCMC."""
    data: NBData = ctx.x
    pred = ctx.exact.predictive
    g = ctx.exact.posterior.gaussian
    section: dict[str, Any] = {
        "variant": data.variant, "classes": list(data.classes),
        "features": list(data.feature_names), "n_train": len(data), "n_test": len(data.test_y),
        **{k: (list(v) if isinstance(v, tuple) else v) for k, v in data.notes.items()},
    }
    try:
        nb.gaussian_mle(g.stats)
        mle_note = None
    except ValueError as err:
        mle_note = str(err)
    lines = [f"naive Bayes (gaussian): {len(data)} training rows, {len(data.classes)} classes, "
             f"{len(data.feature_names)} features; a Normal-Inverse-Gamma posterior per class "
             "and feature"
             + ("" if mle_note is None else f"; no MLE plug-in: {mle_note}")]
    if len(data.test_y):
        exact = np.exp(pred.log_proba(data.test_x))
        plugin = None if mle_note else np.exp(pred.plugin_log_proba(data.test_x))
        rows = slice(0, PREDICT_ROWS)
        flat = ctx.tree.posterior
        pi = np.asarray(flat["pi"].transpose("chain", "draw", ...).values).reshape(
            -1, len(data.classes))
        theta = np.asarray(flat["theta"].transpose("chain", "draw", ...).values).reshape(
            pi.shape[0], len(data.classes), -1, 2)
        mcmc_lp = mcmc_log_proba(variant="gaussian", pi=pi, theta=theta,
                                 x=data.test_x[rows], groups=())
        mcmc = np.exp(mcmc_lp)
        calibration = _calibration(data, rows, {
            "exact": pred.log_proba, "plugin": None if mle_note else pred.plugin_log_proba},
            mcmc_lp)
        labelled = data.test_y >= 0
        acc = (lambda p: None if p is None or not labelled.any() else
               float(np.mean(p[labelled].argmax(axis=1) == data.test_y[labelled])))
        section["predictions"] = {
            "rows": list(data.test_rows), "true": [data.classes[c] if c >= 0 else None
                                                   for c in data.test_y],
            "exact": exact, "plugin": plugin, "mcmc": mcmc,
            "accuracy_exact": acc(exact), "accuracy_plugin": acc(plugin),
            "max_abs_exact_minus_plugin": (None if plugin is None else
                                           float(np.max(np.abs(exact - plugin)))),
            "answers_differ": (None if plugin is None else
                               int(np.sum(exact.argmax(1) != plugin.argmax(1)))),
            "max_abs_mcmc_minus_exact": float(np.max(np.abs(mcmc - exact[rows]))),
        }
        p = section["predictions"]
        versus = ("" if plugin is None else
                  f" vs plug-in MLE (GaussianNB) max |dP| {p['max_abs_exact_minus_plugin']:.2e}, "
                  f"{p['answers_differ']} answers differ")
        accuracy = ("" if p["accuracy_exact"] is None else
                    f"; held-out accuracy {p['accuracy_exact']:.3f}"
                    + ("" if plugin is None else f" (plug-in {p['accuracy_plugin']:.3f})"))
        lines.append(f"predictive on {len(data.test_y)} held-out/query rows: exact (Student-t)"
                     f"{versus}{accuracy}; MCMC predictive vs exact max |dP| "
                     f"{p['max_abs_mcmc_minus_exact']:.2e}")
        if calibration is not None:
            section["calibration"] = calibration  # moved to the top level below
    return _nb_extra(section, lines)


# --- bayes-optimal: preparation -------------------------------------------------------
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


_POSITIVE = {"1", "yes", "y", "true", "+", "positive"}
_NEGATIVE = {"0", "no", "n", "false", "-", "negative"}


def _bo_key(hyper) -> tuple:
    prior = hyper.get("prior")
    return (float(hyper["noise"]), None if prior is None else tuple(np.atleast_1d(prior)),
            int(hyper["top"]), float(hyper["min_mass"]))


def bo_prepare(data, hyper: dict[str, Any]) -> tuple[BOData, dict[str, Any]]:
    """The hypothesis space (conjunctions for tables), then the exact solution."""
    try:
        if isinstance(data, ExplicitProblem):
            problem, space = data.problem, "explicit"
        else:
            rows = _as_rows(data)
            problem, space = _concept_problem(rows), "conjunctions"
        solution = bo.solve_problem(problem=problem, noise=hyper["noise"],
                                    prior=hyper.get("prior"), top=hyper["top"],
                                    min_mass=hyper["min_mass"])
    except ValueError as err:
        raise InputError(str(err)) from None
    return BOData(problem=problem, solution=solution, key=_bo_key(hyper), space=space), hyper


def binary_labels(labels: Any, *, source: str, target: str, what: str) -> np.ndarray:
    """Two-class labels as 0/1: the shared rule of logistic regression and concept learning.

    Labels that read as yes/no (``1``/``0``, ``yes``/``no``, ``true``/``false``,
    ``positive``/``negative``, any case) keep that meaning; any other two
    word labels are coded in natural order, the second one as 1 (``cat``/``dog``:
    1 for ``dog``).  A number other than 0/1, one word class only or more than
    two classes is bad input (``what`` starts the message: "logistic
    regression needs").
    """
    texts = [_label_text(v) for v in labels]
    lowered = {v.lower() for v in texts}
    if lowered <= _POSITIVE | _NEGATIVE:
        return np.array([1 if v.lower() in _POSITIVE else 0 for v in texts], dtype=np.int64)
    for i, v in enumerate(texts):
        if v.lower() not in _POSITIVE | _NEGATIVE and _is_number(v):
            # Numbers are codes: only 0 and 1 mean something.
            raise InputError(f"{source}, row {i + 1}, column {target!r}: {v!r} is not a 0/1 "
                             f"(or yes/no) label; {what} two classes")
    classes = natural_sort(set(texts))
    if len(classes) != 2:
        shown = ", ".join(repr(c) for c in classes[:5]) + (", ..." if len(classes) > 5 else "")
        fix = ("add rows of the other class, or code the labels yes/no" if len(classes) < 2
               else "keep the rows of two classes (or code them yes/no)")
        raise InputError(f"{source}, column {target!r}: {what} two classes, got {len(classes)} "
                         f"({shown}); {fix}")
    return np.array([int(v == classes[1]) for v in texts], dtype=np.int64)


def _concept_problem(rows: LabelledRows) -> bo.FiniteProblem:
    y = list(binary_labels(rows.labels, source=rows.source, target=rows.target,
                           what="concept learning needs positive and negative examples,"))
    if not rows.detected and any(k != "category" for k in rows.kinds):
        # A CSV read with detect=True marks columns of words "text": for concept
        # learning every attribute value is a category label, words included.
        raise InputError("concept learning reads categorical attributes, not text")
    domains = rows.domains
    cols = [np.array([_label_text(v) for v in c], dtype=object) for c in rows.columns]
    if domains is None:
        domains = tuple(tuple(natural_sort(set(c))) for c in cols)
    codes = np.empty((rows.n, len(cols)), dtype=np.int64)
    for j, (col, dom) in enumerate(zip(cols, domains)):
        index = {v: k for k, v in enumerate(dom)}
        for i, v in enumerate(col):
            if v not in index:
                raise InputError(f"{rows.source}, row {i + 1}, attribute {rows.features[j]!r}: "
                                 f"{v!r} is not one of its values ({', '.join(dom)})")
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
    return m_bo.model_data(prob=x.problem.prob, y=x.problem.y,
                           prior=np.exp(bo.prior_vector(prior, m)), noise=noise,
                           bucket_of=x.solution.buckets.of_hypothesis)


def bo_structure(x: BOData, hyper) -> dict[str, Any]:
    return {"factors": tuple(x.problem.factors), "has_empty": bool(x.problem.has_empty),
            "n_hypotheses": len(x.problem.hypotheses), "n_obs": len(x.problem),
            "n_buckets": len(x.solution.buckets.names)}


def bo_simulate(rng: np.random.Generator, n: int, hyper: dict[str, Any]):
    """Conjunctions over two binary attributes, instances in a fixed cycle (see analytic)."""
    from compare.core.data import table_from_arrays
    from compare.core.registry import Simulation

    theta, x, y = bo.simulate(rng, n=n, noise=float(hyper["noise"]))
    return Simulation(theta=theta, data=table_from_arrays(
        x.astype(float), y.astype(float), features=("a0", "a1"), target="label"))


def bo_extras(ctx: ExtraContext) -> Extra:
    """Classifiers on new instances, the Gibbs bound, version space and support checks."""
    data: BOData = ctx.x
    sol = data.solution
    problem = data.problem
    post = sol.posterior_probs
    h = np.asarray(ctx.tree.posterior["hypothesis"].transpose("chain", "draw").values,
                   dtype=np.int64)
    outside = int(np.sum(post[h] == 0))
    checks = [Check("support", float(outside), 0.0, outside == 0,
                    "draws of hypotheses with posterior probability 0 must be absent")]
    cls = sol.classification
    h_map = cls.map_hypothesis
    section: dict[str, Any] = {
        "hypotheses": len(problem.hypotheses), "space": data.space,
        "map_hypothesis": problem.hypotheses[h_map], "map_probability": float(post[h_map]),
        "draws_outside_support": outside,
        "buckets": list(sol.buckets.names),
    }
    lines = [f"hypothesis space: {len(problem.hypotheses)} hypotheses ({data.space}); MAP "
             f"hypothesis {problem.hypotheses[h_map]} with P(h|D) = {post[h_map]:.4g}"]
    vs = bo.version_space(problem=problem)
    noise_free = float(ctx.hyper["noise"]) == 0.0 and ctx.hyper.get("prior") is None
    if noise_free and vs.size:
        section["version_space"] = {"size": int(vs.size),
                                    "max_abs_posterior_minus_1_over_VS": float(
                                        np.max(np.abs(post[vs] - 1.0 / vs.size)))}
        lines.append(f"noise-free data, uniform prior: version space |VS| = {vs.size}, "
                     f"P(h|D) = 1/|VS| = {1 / vs.size:.4g} on it, 0 elsewhere")
    m = len(problem.new_names)
    if m:
        errors = cls.mean_errors
        bound = cls.gibbs_bound_holds
        checks.append(Check("gibbs_bound", errors["gibbs"], 2.0 * errors["bayes_optimal"], bound,
                            "E[error_Gibbs] <= 2 E[error_BayesOptimal] over the new instances"))
        # MCMC's estimate of P(+ | x, D): the new instances' answers averaged over the draws.
        shown = slice(0, PREDICT_ROWS)
        series = problem.new_prob[h.ravel()][:, shown].T.reshape(-1, *h.shape)
        p_mcmc = series.mean(axis=(1, 2))
        ess = np.asarray(array_stats.ess(series, method="mean"), dtype=float)
        sd = np.sqrt(cls.p_positive[shown] * (1 - cls.p_positive[shown]))
        with np.errstate(divide="ignore", invalid="ignore"):
            z = np.where(sd > 0, (p_mcmc - cls.p_positive[shown]) / (sd / np.sqrt(ess)), 0.0)
        disagree = int(np.sum((cls.map_label != cls.bayes_optimal) & ~cls.tie))
        section["new_instances"] = {
            "names": list(problem.new_names), "p_positive": cls.p_positive,
            "p_positive_mcmc": p_mcmc, "z_mcmc": z,
            "bayes_optimal": cls.bayes_optimal, "map": cls.map_label, "tie": cls.tie,
            "error_bayes_optimal": cls.error_bayes_optimal, "error_map": cls.error_map,
            "error_gibbs": cls.error_gibbs, "mean_errors": errors,
            "gibbs_bound_holds": bound, "map_differs_from_bayes_optimal": disagree,
        }
        lines.append(f"{m} new instances: expected error Bayes-optimal "
                     f"{errors['bayes_optimal']:.4f}, MAP {errors['map']:.4f}, Gibbs "
                     f"{errors['gibbs']:.4f} <= 2 x {errors['bayes_optimal']:.4f} "
                     f"({'holds' if bound else 'FAILS'}); MAP and "
                     f"Bayes-optimal answer differently on {disagree}; MCMC P(+|x,D) max |z| "
                     f"{np.max(np.abs(z)):.2f}")
        if m <= 4:
            for i, name in enumerate(problem.new_names):
                sign = lambda v: "+" if v else "-"  # noqa: E731
                bo_answer = "tie" if cls.tie[i] else sign(cls.bayes_optimal[i])
                lines.append(f"  {name}: P(+|x,D) = {cls.p_positive[i]:.4g} (MCMC "
                             f"{p_mcmc[i]:.4g}); Bayes-optimal {bo_answer}, MAP "
                             f"{sign(cls.map_label[i])}")
    return Extra(checks=tuple(checks), sections={"bayes_optimal": section}, lines=tuple(lines))


# --- builtin data -----------------------------------------------------------------------
def _dataset_path(name: str):
    from importlib import resources

    return resources.files("compare") / "datasets" / name


def _read_csv(name: str) -> list[list[str]]:
    import csv
    from importlib import resources

    with resources.as_file(_dataset_path(name)) as p, open(p, newline="",
                                                           encoding="utf-8") as fh:
        return [r for r in csv.reader(fh) if r and not r[0].startswith("#")]


def load_spam() -> LabelledRows:
    """builtin:spam: short messages labelled spam/ham, written for this project."""
    rows = _read_csv("spam_ham.csv")
    header, body = rows[0], rows[1:]
    return LabelledRows(features=("message",),
                        columns=(np.array([r[1] for r in body], dtype=object),),
                        kinds=("text",), labels=np.array([r[0] for r in body], dtype=object),
                        target=header[0], source="builtin:spam")


def _categorical_csv(name: str, source: str, query: tuple[tuple[str, ...], ...] = (),
                     domains=None) -> LabelledRows:
    rows = _read_csv(name)
    header, body = rows[0], rows[1:]
    feats = tuple(header[:-1])
    cols = tuple(np.array([r[j] for r in body], dtype=object) for j in range(len(feats)))
    q = tuple(np.array([row[j] for row in query], dtype=object) for j in range(len(feats))) \
        if query else ()
    return LabelledRows(features=feats, columns=cols, kinds=("category",) * len(feats),
                        labels=np.array([r[-1] for r in body], dtype=object), target=header[-1],
                        source=source, query=q, domains=domains)


def load_iris() -> LabelledRows:
    """builtin:iris for the Gaussian variant: scikit-learn's bundled iris (no download),
    each of the 4 measurements standardised to mean 0, sd 1 over the 150 plants (so the
    prior mean mu0 = 0 and prior variance scale beta0 = 1 fit every column)."""
    from sklearn.datasets import load_iris as sk

    data = sk()
    x = np.asarray(data.data, dtype=float)
    x = (x - x.mean(axis=0)) / x.std(axis=0)
    names = tuple(f.replace(" (cm)", "").replace(" ", "_") for f in data.feature_names)
    return LabelledRows(features=names, columns=tuple(np.array(list(x[:, j]), dtype=object)
                                                      for j in range(x.shape[1])),
                        kinds=("category",) * len(names),
                        labels=np.array([str(data.target_names[t]) for t in data.target],
                                        dtype=object),
                        target="species", source="builtin:iris")


def load_titanic() -> LabelledRows:
    """builtin:titanic: class, sex, age and survival of the 2201 people aboard."""
    return _categorical_csv("titanic.csv", "builtin:titanic")


#: Mitchell (1997), sec. 6.9: the new instance to classify.
PLAY_TENNIS_QUERY = (("Sunny", "Cool", "High", "Strong"),)


def load_play_tennis() -> LabelledRows:
    """builtin:play-tennis: Mitchell's Table 3.2 and the query of sec. 6.9."""
    return _categorical_csv("play_tennis.csv", "builtin:play-tennis", query=PLAY_TENNIS_QUERY)


#: Mitchell (1997), Table 2.1's attributes and their values (sec. 2.2).
ENJOY_SPORT_DOMAINS = (("Sunny", "Cloudy", "Rainy"), ("Warm", "Cold"), ("Normal", "High"),
                       ("Strong", "Weak"), ("Warm", "Cool"), ("Same", "Change"))


def load_enjoy_sport() -> LabelledRows:
    """builtin:enjoy-sport: Mitchell's four training examples (Table 2.1)."""
    return _categorical_csv("enjoy_sport.csv", "builtin:enjoy-sport",
                            domains=ENJOY_SPORT_DOMAINS)


def load_three_hypotheses() -> ExplicitProblem:
    """Mitchell (1997), sec. 6.7: P(h1|D) = .4, P(h2|D) = .3, P(h3|D) = .3.

    Mitchell gives only the posteriors; here they come from a uniform prior
    and one observation whose likelihoods under h1, h2, h3 are in the ratio
    .4 : .3 : .3.  On the new instance h1 says + and h2, h3 say -.
    """
    problem = bo.explicit(hypotheses=("h1", "h2", "h3"), prob=[[0.4], [0.3], [0.3]], y=[1],
                          new_prob=[[1.0], [0.0], [0.0]], new_names=("x",),
                          features=("D",))
    return ExplicitProblem(problem, "builtin:three-hypotheses")


def load_medical_test() -> ExplicitProblem:
    """Mitchell (1997), sec. 6.2.1: cancer or not, given one positive lab test.

    P(cancer) = 0.008 (the prior, a hyperparameter of the data set), P(+ |
    cancer) = 0.98, P(+ | no cancer) = 0.03; the new instance is the patient,
    on whom ``cancer`` says + and ``no-cancer`` says -.
    """
    problem = bo.explicit(hypotheses=("cancer", "no-cancer"), prob=[[0.98], [0.03]], y=[1],
                          new_prob=[[1.0], [0.0]], new_names=("patient",),
                          features=("test",))
    return ExplicitProblem(problem, "builtin:medical-test")


def text_table(path, *, target: str, features: tuple[str, ...]):
    """A classifier topic's ``Topic.text_table``: the labelled data of a CSV with
    words or labels in its cells (a bag of words for text columns), or None when
    every cell is a number."""
    if not has_text(path, target=target, features=features):
        return None
    return read_labelled(path, target=target, features=features, detect=True)
