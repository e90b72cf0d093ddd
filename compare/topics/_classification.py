"""What the classifier topics share: labelled CSV rows, a tokenizer, held-out
rows, class labels and the builtin-data readers.

Data.  A classifier reads a table: a target column and feature columns.  From
a CSV (``--target``, ``--features``) of numbers the cells are read by
:func:`compare.core.data.read_table`.  A CSV with a cell that is not a number
(labels such as ``spam``, messages) is read by :func:`read_labelled` with
``detect=True`` through the topic's ``text_table`` (:func:`text_table`): a
feature column with any non-numeric cell is text (tokenised, see
:func:`tokenize`), or category labels for a topic that reads them.  Builtin
data (and the Python API) use :class:`LabelledRows`, whose columns may be text
or category labels.

Held-out rows.  With ``holdout = k >= 2`` every k-th row (rows k, 2k, ...
counting from 1) is kept out of the fit and classified afterwards
(:func:`holdout_split`); the classes come from the training rows only, so a
held-out row with a class never seen in training is bad input (exit 3).
"""

from __future__ import annotations

import csv
import re
from collections import Counter
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

import analytic.naive_bayes as nb
from compare.core.data import MISSING, StreamedTable, Table, natural_sort
from compare.core.registry import InputError

#: Rows whose MCMC predictive is compared with the exact one (the first ones).
PREDICT_ROWS = 200


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
            raise InputError(
                f"{self.source}: {len(self.features)} features but "
                f"{len(self.columns)} columns and {len(self.kinds)} kinds"
            )
        for name, col, kind in zip(self.features, self.columns, self.kinds):
            if len(col) != n:
                raise InputError(
                    f"{self.source}: column {name!r} has {len(col)} rows, the "
                    f"labels {n}; give one row per observation"
                )
            if kind not in ("text", "category"):
                raise InputError(
                    f"{self.source}: column {name!r} has kind {kind!r}; use text or category"
                )
        for i, label in enumerate(self.labels):
            if label is None or str(label).strip() == "":
                raise InputError(
                    f"{self.source}, row {i + 1}, column {self.target!r}: missing "
                    "label; fill it in or remove that row"
                )

    @property
    def n(self) -> int:
        return len(self.labels)


def read_labelled(
    path,
    *,
    target: str,
    features: tuple[str, ...] | None = None,
    text: tuple[str, ...] = (),
    detect: bool = False,
) -> LabelledRows:
    """Read a CSV whose feature cells are text (columns in ``text``) or categories.

    With ``detect=True`` (what the command line does for a CSV with
    non-numeric cells, see :func:`has_text`) every feature column holding a
    cell that is not a number is a text column, the others categories (read
    as numbers by the count and Gaussian variants).
    """

    path = Path(path)
    if not path.is_file():
        raise InputError(f"data file {str(path)!r} does not exist")
    with path.open(newline="", encoding="utf-8-sig") as fh:
        rows = [r for r in csv.reader(fh) if any(c.strip() for c in r)]
    if len(rows) < 2:
        raise InputError(f"{path} needs a header line and at least one data line")
    header = [h.strip() for h in rows[0]]
    if target not in header:
        raise InputError(
            f"{path} has no target column {target!r}; its columns are: {', '.join(header)}"
        )
    features = tuple(h for h in header if h != target) if features is None else features
    missing = [f for f in features if f not in header]
    if missing:
        raise InputError(f"{path} has no column(s) {', '.join(map(repr, missing))}")
    cols = {
        h: np.array([r[j].strip() if j < len(r) else "" for r in rows[1:]], dtype=object)
        for j, h in enumerate(header)
    }
    if detect:
        text = tuple(f for f in features if not all(_is_number(c) for c in cols[f]))
    return LabelledRows(
        features=tuple(features),
        columns=tuple(cols[f] for f in features),
        kinds=tuple("text" if f in text else "category" for f in features),
        labels=cols[target],
        target=target,
        source=str(path),
        detected=detect,
    )


def _is_number(cell: str) -> bool:
    try:
        float(cell)
    except (TypeError, ValueError):
        return False
    return True


def numeric_inputs(rows: LabelledRows, *, topic: str) -> np.ndarray:
    """The feature columns of ``rows`` as a float array of shape (n, F).

    For the topics whose inputs are real numbers (the Gaussian
    classifier, logistic regression): a cell that is not a finite number is bad input,
    named by row, column and value.
    """

    x = np.empty((rows.n, len(rows.features)))
    for j, (name, col) in enumerate(zip(rows.features, rows.columns)):
        for i, cell in enumerate(col):
            text = str(cell).strip()
            if text.lower() in MISSING:
                raise InputError(
                    f"{rows.source}, row {i + 1}, column {name!r}: missing value; "
                    "fill it in or leave the row out"
                )
            try:
                value = float(text)
            except ValueError:
                raise InputError(
                    f"{rows.source}, row {i + 1}, column {name!r}: {text!r} is not a number; "
                    f"{topic} needs numeric inputs (only the class column may hold words): "
                    f"code column {name!r} as numbers or leave it out with --features"
                ) from None
            if not np.isfinite(value):
                raise InputError(
                    f"{rows.source}, row {i + 1}, column {name!r}: {text!r} is not "
                    "a finite number; fix it or leave the row out"
                )
            x[i, j] = value
    return x


def has_text(path, *, target: str, features: tuple[str, ...]) -> bool:
    """Whether the target or a feature column of the CSV has a cell that is not a number
    (a missing cell counts as a number here: the numeric reader reports it)."""

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


#: Common English function words, dropped before counting.
STOP_WORDS = frozenset(
    [
        "a",
        "about",
        "after",
        "all",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "been",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "for",
        "from",
        "had",
        "has",
        "have",
        "he",
        "her",
        "here",
        "him",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "just",
        "me",
        "my",
        "no",
        "not",
        "of",
        "on",
        "or",
        "our",
        "out",
        "she",
        "so",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "to",
        "up",
        "us",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
    ]
)


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


def label_text(v: Any) -> str:
    if isinstance(v, (float, np.floating)) and float(v).is_integer():
        return str(int(v))
    return str(v).strip()


def as_rows(data) -> LabelledRows:
    """A numeric Table as LabelledRows of category cells (numbers as text)."""
    if isinstance(data, LabelledRows):
        return data
    if isinstance(data, StreamedTable):
        raise InputError(
            f"{data.path}: the classification topics read the whole file; "
            "--stream is for the regression topics (use a smaller CSV)"
        )
    if isinstance(data, Table):
        cols = tuple(
            np.array([label_text(v) for v in data.x[:, j]], dtype=object)
            for j in range(data.x.shape[1])
        )
        return LabelledRows(
            features=data.features,
            columns=cols,
            kinds=("category",) * len(cols),
            labels=np.array([label_text(v) for v in data.y], dtype=object),
            target=data.target,
            source=data.source,
        )
    raise InputError(
        "the classification topics take a table: build it with "
        "compare.core.data.table_from_arrays(x, y) or compare.topics._classification.LabelledRows"
    )


def holdout_split(n: int, holdout: int | None) -> tuple[np.ndarray, np.ndarray]:
    if holdout in (None, 0):
        return np.arange(n), np.arange(0)
    if holdout == 1:
        raise InputError(
            "holdout=1 would hold out every row; use 0 (none) or k >= 2 (every "
            "k-th row), e.g. --set holdout=5"
        )
    test = (np.arange(n) + 1) % holdout == 0
    return np.flatnonzero(~test), np.flatnonzero(test)


def held_cells(rows: LabelledRows, j: int, test: np.ndarray) -> list[tuple[str, Any]]:
    """(where, cell) of feature j in the held-out rows, then in the query rows."""
    held = [(f"row {r + 1}", rows.columns[j][r]) for r in test]
    if rows.query:
        held += [(f"query row {q + 1}", v) for q, v in enumerate(rows.query[j])]
    return held


def resolve_classes(
    rows, train: np.ndarray, test: np.ndarray, classes: tuple[str, ...] | None, *, needs: str
) -> tuple[np.ndarray, tuple[str, ...], dict[str, int]]:
    """Labels as text, the classes (declared or seen in the training rows) and their codes.

    Refuses one class only, training labels outside declared classes and a
    held-out class unseen at training time, each in one line naming the fix;
    ``needs`` starts the two-class message ("naive Bayes needs").
    """
    labels = np.array([label_text(v) for v in rows.labels], dtype=object)
    seen = natural_sort(set(labels[train]))
    if classes is None:
        classes = tuple(seen)
        if len(classes) < 2:
            raise InputError(
                f"{rows.source}: the labels in column {rows.target!r} have one class "
                f"only ({classes[0]!r}); {needs} two or more: add rows of "
                "another class, or list the classes with --set classes=a,b"
            )
    else:
        unknown = [c for c in seen if c not in classes]
        if unknown:
            raise InputError(
                f"label(s) {unknown} are not in classes={','.join(classes)}; add "
                "them to --set classes or leave classes unset"
            )
        if len(classes) < 2:
            raise InputError(f"classes={','.join(classes)}: {needs} two or more")
    index = {c: i for i, c in enumerate(classes)}
    for r in test:
        if labels[r] not in index:
            raise InputError(
                f"{rows.source}, held-out row {r + 1}: class {labels[r]!r} was "
                f"unseen at training time (classes: {', '.join(classes)}); list it "
                "with --set classes=..., or use --set holdout=0"
            )
    return labels, tuple(classes), index


_POSITIVE = {"1", "yes", "y", "true", "+", "positive"}


_NEGATIVE = {"0", "no", "n", "false", "-", "negative"}


def binary_labels(labels: Any, *, source: str, target: str, what: str) -> np.ndarray:
    """Two-class labels as 0/1: the shared rule of logistic regression and concept learning.

    Labels that read as yes/no (``1``/``0``, ``yes``/``no``, ``true``/``false``,
    ``positive``/``negative``, any case) keep that meaning; any other two
    word labels are coded in natural order, the second one as 1 (``cat``/``dog``:
    1 for ``dog``).  A number other than 0/1, one word class only or more than
    two classes is bad input (``what`` starts the message: "logistic
    regression needs").
    """
    texts = [label_text(v) for v in labels]
    lowered = {v.lower() for v in texts}
    if lowered <= _POSITIVE | _NEGATIVE:
        return np.array([1 if v.lower() in _POSITIVE else 0 for v in texts], dtype=np.int64)
    for i, v in enumerate(texts):
        if v.lower() not in _POSITIVE | _NEGATIVE and _is_number(v):
            # Numbers are codes: only 0 and 1 mean something.
            raise InputError(
                f"{source}, row {i + 1}, column {target!r}: {v!r} is not a 0/1 "
                f"(or yes/no) label; {what} two classes"
            )
    classes = natural_sort(set(texts))
    if len(classes) != 2:
        shown = ", ".join(repr(c) for c in classes[:5]) + (", ..." if len(classes) > 5 else "")
        fix = (
            "add rows of the other class, or code the labels yes/no"
            if len(classes) < 2
            else "keep the rows of two classes (or code them yes/no)"
        )
        raise InputError(
            f"{source}, column {target!r}: {what} two classes, got {len(classes)} ({shown}); {fix}"
        )
    return np.array([int(v == classes[1]) for v in texts], dtype=np.int64)


def dataset_path(name: str):
    return resources.files("compare") / "datasets" / name


def read_csv_rows(name: str) -> list[list[str]]:
    with resources.as_file(dataset_path(name)) as p, open(p, newline="", encoding="utf-8") as fh:
        return [r for r in csv.reader(fh) if r and not r[0].startswith("#")]


def categorical_csv(
    name: str, source: str, query: tuple[tuple[str, ...], ...] = (), domains=None
) -> LabelledRows:
    rows = read_csv_rows(name)
    header, body = rows[0], rows[1:]
    feats = tuple(header[:-1])
    cols = tuple(np.array([r[j] for r in body], dtype=object) for j in range(len(feats)))
    q = (
        tuple(np.array([row[j] for row in query], dtype=object) for j in range(len(feats)))
        if query
        else ()
    )
    return LabelledRows(
        features=feats,
        columns=cols,
        kinds=("category",) * len(feats),
        labels=np.array([r[-1] for r in body], dtype=object),
        target=header[-1],
        source=source,
        query=q,
        domains=domains,
    )


def text_table(path, *, target: str, features: tuple[str, ...]):
    """A classifier topic's ``Topic.text_table``: the labelled data of a CSV with
    words or labels in its cells (a bag of words for text columns), or None when
    every cell is a number."""
    if not has_text(path, target=target, features=features):
        return None
    return read_labelled(path, target=target, features=features, detect=True)
