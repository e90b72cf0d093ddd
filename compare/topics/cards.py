"""What ``list`` and ``describe`` show of a topic (its card), without importing it.

A topic's module imports its closed form, its model's module and its glue:
NumPy and about a hundred of the project's modules, 0.2-0.4 s of a new
process on a 2-core machine, for two commands that print text. A
:class:`TopicCard` is that text. The builtin topics' cards are built from the
topics once and kept in the cache folder (``cards/`` under
:func:`compare.accel.cache_root.cache_root`), filed under a key of the
package's files (the path, size and modification time of each file of
``analytic``, ``pymc_models`` and ``compare``: about 2 ms to read, against 8-12
ms to hash their contents): a changed or added file gives another key, and the
cards are built again from the topics. ``list`` and ``describe`` then import
typer, rich and a few light modules of ours.

The cards come from the topics themselves, never from the cache, when this
process has loaded a topic already (its registry is not empty), when the
caches are off (``BAYES_COMPARE_CACHE_DIR=off``), or when any user topic can
exist: a ``--topic-file`` (loaded before, so the registry is not empty),
``BAYES_COMPARE_TOPIC_FILES``, or an installed package's entry point in
:data:`compare.topics.catalogue.ENTRY_POINT_GROUP`. A damaged or unreadable
cards file is built again; a cache folder that cannot be written is not an
error (the cards are then built in every process).
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from compare.accel.cache_root import cache_root, make_folder
from compare.core.files import atomic_write
from compare.core.registry import DATA_KINDS, REGISTRY, InputError
from compare.topics.catalogue import CATALOGUE, ENTRY_POINT_GROUP, TOPIC_FILES_ENV

if TYPE_CHECKING:
    from compare.core.registry import Topic

#: Bumped when a card's fields change, so an older file is never read as a card.
FORMAT = 1
#: The packages whose files key the builtin topics' cards.
_PACKAGES = ("analytic", "pymc_models", "compare")


@dataclass(frozen=True)
class HyperparameterCard:
    """One row of ``describe``'s hyperparameter table, as text."""

    name: str
    default: str
    doc: str


@dataclass(frozen=True)
class DataCard:
    """One builtin data set, as ``describe`` shows it."""

    name: str
    description: str
    source: str
    hyper: str  # the suggested hyperparameters, "a=1, b=2"


@dataclass(frozen=True)
class TopicCard:
    """Everything ``list`` and ``describe`` show of a topic, as text.

    ``parameters`` are the flat parameter names on the first builtin data set:
    its declared ones, or, for a user topic that declares none, the names its
    ``solve`` gives on that data set (None when the card was made without
    solving, as ``list`` makes them).
    """

    name: str
    title: str
    model: str
    data_kind: str
    hyperparameters: tuple[HyperparameterCard, ...]
    builtin: tuple[DataCard, ...]
    parameters: tuple[str, ...] | None

    @property
    def data_text(self) -> str:
        """What the topic's data column holds (:data:`compare.core.registry.DATA_KINDS`)."""
        return DATA_KINDS[self.data_kind]

    @classmethod
    def of(cls, t: Topic, *, solve: bool = True) -> TopicCard:
        """The card of a registered topic; ``solve=False`` leaves undeclared
        parameter names out rather than solve the first builtin data set."""
        ds = t.builtin[0]
        names = t.parameter_names or ds.parameters
        if names is None and solve:  # the names depend on the data: solve the first set
            x, hyper = t.prepare(ds.load(), t.hyper(dataset=ds))
            names = tuple(t.solve(x=x, **hyper).parameters)
        return cls(
            name=t.name,
            title=t.title,
            model=t.model,
            data_kind=t.data_kind,
            hyperparameters=tuple(
                HyperparameterCard(h.name, _default_text(h.default), h.doc)
                for h in t.hyperparameters
            ),
            builtin=tuple(
                DataCard(
                    d.name,
                    d.description,
                    d.source,
                    ", ".join(f"{k}={_value_text(v)}" for k, v in d.hyper.items() if v is not None),
                )
                for d in t.builtin
            ),
            parameters=None if names is None else tuple(str(n) for n in names),
        )

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> TopicCard:
        """The card :func:`dataclasses.asdict` wrote (a KeyError or TypeError if not)."""
        return cls(
            name=doc["name"],
            title=doc["title"],
            model=doc["model"],
            data_kind=doc["data_kind"],
            hyperparameters=tuple(HyperparameterCard(**h) for h in doc["hyperparameters"]),
            builtin=tuple(DataCard(**d) for d in doc["builtin"]),
            parameters=None if doc["parameters"] is None else tuple(doc["parameters"]),
        )


def _value_text(v: Any) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


def _default_text(v: Any) -> str:
    return "from the data" if v is None else _value_text(v)


def all_cards() -> list[TopicCard]:
    """The card of every registered topic: the catalogue's, then the users'."""
    if _from_topics():
        from compare.topics import all_topics  # light (the topics it loads are not)

        return [TopicCard.of(t, solve=False) for t in all_topics()]
    return list(_builtin_cards())


def topic_card(name: str) -> TopicCard:
    """The card of the topic called ``name`` (an :class:`InputError` naming the
    topics if there is none)."""
    if _from_topics():
        from compare.topics import get_topic  # light (the topic it loads is not)

        return TopicCard.of(get_topic(name))
    cards = _builtin_cards()
    for card in cards:
        if card.name == name:
            return card
    raise InputError(
        f"unknown topic {name!r}; run `bayes-compare list` to see "
        f"the topics: {', '.join(c.name for c in cards)}"
    )


def _from_topics() -> bool:
    """True when the cards must come from the loaded topics (see the module's doc)."""
    if REGISTRY or cache_root() is None or os.environ.get(TOPIC_FILES_ENV):
        return True
    from importlib.metadata import entry_points  # light: ~15 ms, read only here

    return bool(entry_points(group=ENTRY_POINT_GROUP))


def sources_key() -> str:
    """The key of the package's files (:func:`files_key` of the three packages)."""
    roots = []
    for package in _PACKAGES:
        spec = importlib.util.find_spec(package)  # finds, without importing it
        roots += [(package, root) for root in (spec and spec.submodule_search_locations) or ()]
    return files_key(roots)


def files_key(roots: list[tuple[str, str]]) -> str:
    """A key of every file under each ``(name, folder)`` (``__pycache__`` folders
    aside): its path, size and modification time, with the card format and
    Python's version."""
    hasher = hashlib.sha256(f"cards {FORMAT} {sys.version_info[:2]}\n".encode())
    for package, root in roots:
        for folder, dirs, files in os.walk(root):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(files):
                path = os.path.join(folder, name)
                try:
                    st = os.stat(path)
                except OSError:  # removed while we walked, or a broken link: not a source
                    continue
                rel = os.path.relpath(path, root)
                hasher.update(f"{package}/{rel} {st.st_size} {st.st_mtime_ns}\n".encode())
    return hasher.hexdigest()[:32]


def _builtin_cards() -> tuple[TopicCard, ...]:
    """The catalogue's cards: from the cache when its key matches, else built and kept."""
    root = cache_root()
    path = None if root is None else root / "cards" / f"{sources_key()}.json"
    if path is not None:
        try:
            return tuple(TopicCard.from_json(c) for c in json.loads(path.read_text()))
        except (OSError, ValueError, KeyError, TypeError):
            pass  # no file yet, or a damaged one: build the cards again
    from compare.topics.catalogue import load_builtin  # light (the topics it loads are not)

    load_builtin()
    cards = tuple(TopicCard.of(REGISTRY[entry.replace("_", "-")]) for entry in CATALOGUE)
    if path is not None:
        _keep(path, cards)
    return cards


def _keep(path: Path, cards: tuple[TopicCard, ...]) -> None:
    """Write the cards, and remove the cards of older keys; a folder that cannot
    be written is no error."""
    try:
        make_folder(path.parent)  # this user's only, as the cache folder must be
        atomic_write(path, json.dumps([dataclasses.asdict(c) for c in cards]))
        for old in path.parent.glob("*.json"):
            if old != path:
                old.unlink(missing_ok=True)
    except OSError:
        pass
