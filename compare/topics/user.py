"""User-defined topics: from a Python file or an installed package.

A topic file is a Python file that defines, with the same protocol as the
built-in topics (:class:`compare.core.registry.Topic`):

* ``TOPIC = Topic(...)`` (or a dict of ``Topic``'s fields), or
* ``TOPICS = [Topic(...), ...]``, or
* calls ``compare.core.registry.register(Topic(...))`` itself.

``bayes-compare run --topic-file my_topic.py NAME`` (and ``report``,
``export``) load it first.  An installed package registers topics under the
entry point group ``bayes_compare.topics``; the entry point names a
``Topic``, a sequence of them, a module with ``TOPIC``/``TOPICS`` or a
function returning one of these.  Those are loaded the first time the
registry is asked for a topic.

Every topic is checked against the protocol when it is loaded, and a missing
or wrong part is named: missing ``Topic`` fields, callables that are not
callable, and, on the first builtin data set, a ``solve`` whose posterior
lacks ``analytic.ExactPosterior`` attributes, PyMC ``variables`` the model
does not have, or a parameter count that differs between the two sides.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
import os
import sys
import traceback
import warnings
from collections.abc import Iterable, Mapping
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import numpy as np

from compare.core.data import check_array
from compare.core.registry import (
    REGISTRY,
    BuiltinData,
    Hyperparameter,
    InputError,
    Topic,
    register,
)
from compare.core.variables import flat_names
from compare.topics.catalogue import ENTRY_POINT_GROUP, TOPIC_FILES_ENV, load_builtin

#: What ``solve(...).posterior`` must have (``analytic.ExactPosterior``).
POSTERIOR_ATTRIBUTES = (
    "parameters",
    "mean",
    "cov",
    "mode",
    "mode_interior",
    "free",
    "is_gaussian",
    "moments_below",
    "marginal",
    "logpdf",
    "sample",
)

_REQUIRED = tuple(
    f.name
    for f in dataclasses.fields(Topic)
    if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
)
_KNOWN = tuple(f.name for f in dataclasses.fields(Topic))
_CALLABLES = ("solve", "build_model", "model_data", "simulate", "prepare", "structure")

#: Where each registered user topic came from (a file path or an entry point).
ORIGINS: dict[str, str] = {}
#: The topic files loaded in this process, in order (:func:`export_topic_files`).
LOADED_FILES: list[str] = []
_INSTALLED_LOADED = False


def topic_from_mapping(fields: Mapping[str, Any], *, where: str) -> Topic:
    """A :class:`Topic` from a dict of its fields; names what is missing or unknown."""
    missing = [f for f in _REQUIRED if f not in fields]
    if missing:
        raise InputError(
            f"{where} is missing {', '.join(repr(m) for m in missing)} "
            f"(a topic needs: {', '.join(_REQUIRED)}; see compare.core.registry.Topic "
            "and README 'Adding a topic')"
        )
    unknown = [f for f in fields if f not in _KNOWN]
    if unknown:
        raise InputError(
            f"{where} has unknown field(s) {', '.join(repr(u) for u in unknown)}; "
            f"a Topic's fields are: {', '.join(_KNOWN)}"
        )
    values = dict(fields)
    for name in ("hyperparameters", "builtin", "variables"):
        if isinstance(values.get(name), list):
            values[name] = tuple(values[name])
    try:
        return Topic(**values)
    except (TypeError, ValueError) as err:
        raise InputError(f"{where}: {err}") from None


def check_protocol(topic: Topic, *, where: str, smoke: bool = True) -> Topic:
    """Check a topic against the protocol; raise InputError naming what is wrong.

    Parameters
    ----------
    topic : Topic
    where : str
        Where it came from, for the message (a file path or an entry point).
    smoke : bool
        Also solve the first builtin data set and build the PyMC model (no
        sampling, no compiling), to check that the two sides line up.
    """
    if not isinstance(topic, Topic):
        raise InputError(
            f"{where}: expected a compare.core.registry.Topic, got "
            f"{type(topic).__name__}; build it with Topic(...) or give a dict "
            "of its fields"
        )
    not_callable = [n for n in _CALLABLES if not callable(getattr(topic, n))]
    if topic.extras is not None and not callable(topic.extras):
        not_callable.append("extras")
    if not_callable:
        raise InputError(
            f"{where}: topic {topic.name!r}: {', '.join(not_callable)} must be function(s)"
        )
    bad_hyper = [h for h in topic.hyperparameters if not isinstance(h, Hyperparameter)]
    if bad_hyper:
        raise InputError(
            f"{where}: topic {topic.name!r}: hyperparameters must be "
            f"compare.core.registry.Hyperparameter objects, got {bad_hyper[0]!r}"
        )
    bad_data = [b for b in topic.builtin if not isinstance(b, BuiltinData)]
    if bad_data:
        raise InputError(
            f"{where}: topic {topic.name!r}: builtin must hold "
            f"compare.core.registry.BuiltinData objects, got {bad_data[0]!r}"
        )
    if not topic.variables or not all(isinstance(v, str) for v in topic.variables):
        raise InputError(
            f"{where}: topic {topic.name!r}: variables must name the PyMC "
            f"variables that line up with the exact parameters, got "
            f"{topic.variables!r}"
        )
    if smoke:
        _smoke(topic, where)
    return topic


def _smoke(topic: Topic, where: str) -> None:
    """Solve the first builtin data set and build the model; compare the two sides."""
    ds = topic.builtin[0]
    label = f"{where}: topic {topic.name!r} on builtin:{ds.name}"
    try:
        raw = ds.load()
        hyper = topic.hyper(dataset=ds)
        column = (
            raw
            if topic.data_kind in ("table", "points")
            else check_array(np.asarray(raw), topic.data_kind, f"builtin:{ds.name}")
        )
        x, hyper = topic.prepare(column, hyper)
        answer = topic.solve(x=x, **hyper)
    except InputError:
        raise
    except Exception as err:  # a user's code: say where it failed (re-raised)
        raise InputError(f"{label}: solve failed: {type(err).__name__}: {err}") from err
    post = getattr(answer, "posterior", None)
    if post is None:
        raise InputError(
            f"{label}: solve must return an analytic.ExactAnswer (posterior, mle, "
            f"log_evidence, predictive), got {type(answer).__name__}"
        )
    missing = [a for a in POSTERIOR_ATTRIBUTES if not hasattr(post, a)]
    if missing:
        raise InputError(
            f"{label}: the exact posterior ({type(post).__name__}) is missing "
            f"{', '.join(missing)} (see analytic.ExactPosterior)"
        )
    d = len(post.parameters)
    if np.shape(post.mean) != (d,) or np.shape(post.cov) != (d, d):
        raise InputError(
            f"{label}: the exact posterior has {d} parameters but mean shape "
            f"{np.shape(post.mean)} and cov shape {np.shape(post.cov)}"
        )
    try:
        model = topic.build_model(**topic.structure(x, hyper))
        data = topic.model_data(x=x, **hyper)
    except Exception as err:
        raise InputError(
            f"{label}: build_model/model_data failed: {type(err).__name__}: {err}"
        ) from err
    unknown = [k for k in data if k not in model.named_vars]
    if unknown:
        raise InputError(
            f"{label}: model_data returned {unknown}, which the PyMC model has no "
            "pm.Data for; name them as in build_model"
        )
    try:
        names, sizes = flat_names(model, topic.variables, what="variables")
    except InputError as err:
        raise InputError(f"{label}: {err}") from None
    if len(names) != d:
        parts = ", ".join(f"{v}: {s}" for v, s in zip(topic.variables, sizes))
        raise InputError(
            f"{label}: the PyMC variables give {len(names)} values per draw "
            f"({parts}) but the exact posterior has {d} parameters "
            f"{list(post.parameters)}; the two sides must line up"
        )


def _topics_of(obj: Any, where: str) -> list[Topic]:
    """Topics from what a file or entry point defines."""
    if isinstance(obj, Topic):
        return [obj]
    if isinstance(obj, Mapping):
        return [topic_from_mapping(obj, where=where)]
    if isinstance(obj, Iterable) and not isinstance(obj, (str, bytes)):
        out = []
        for i, item in enumerate(obj):
            out += _topics_of(item, f"{where}[{i}]")
        return out
    raise InputError(
        f"{where}: expected a compare.core.registry.Topic (or a dict of its fields, or "
        f"a list of them), got {type(obj).__name__}"
    )


def _register(topics: list[Topic], origin: str) -> list[Topic]:
    for topic in topics:
        known = REGISTRY.get(topic.name)
        if known is not None and known is not topic:
            if ORIGINS.get(topic.name) != origin:
                where = ORIGINS.get(topic.name, "the builtin topics")
                raise InputError(
                    f"{origin}: a topic named {topic.name!r} is already registered "
                    f"(from {where}); give yours another name"
                )
            REGISTRY.pop(topic.name)  # the same file loaded again: the new version wins
        if topic.name not in REGISTRY:
            register(topic)
        ORIGINS[topic.name] = origin
    return topics


def load_topic_file(path: str | Path, *, smoke: bool = True) -> tuple[Topic, ...]:
    """Load a topic file, check its topics against the protocol and register them.

    Parameters
    ----------
    path : str or Path
        A Python file defining ``TOPIC``, ``TOPICS``, or calling ``register``.
    smoke : bool
        Also solve the first builtin data set and build the PyMC model to
        check that the two sides line up (fast: nothing is compiled).

    Returns
    -------
    tuple of Topic
        The topics the file registered.
    """
    load_builtin()  # builtins first, so name clashes are caught

    path = Path(path)
    if not path.is_file():
        raise InputError(
            f"--topic-file {str(path)!r} does not exist; give the path of a Python "
            "file that defines TOPIC = Topic(...)"
        )
    if path.suffix != ".py":
        raise InputError(f"--topic-file {str(path)!r} must be a Python file ending in .py")
    origin = str(path.resolve())
    name = "bayes_compare_topic_" + hashlib.sha1(origin.encode()).hexdigest()[:12]
    before = set(REGISTRY)
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise InputError(
            f"--topic-file {str(path)!r}: Python cannot load it as a module; give a .py file"
        )
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as err:  # a user's file: say where it failed (re-raised)
        sys.modules.pop(name, None)
        frames = [
            f
            for f in traceback.extract_tb(err.__traceback__)
            if Path(f.filename).resolve() == path.resolve()
        ]
        line = (
            f", line {frames[-1].lineno}"
            if frames
            else (f", line {err.lineno}" if isinstance(err, SyntaxError) and err.lineno else "")
        )
        raise InputError(
            f"{path}{line}: loading the topic file failed: {type(err).__name__}: {err}"
        ) from err
    registered = [REGISTRY[n] for n in REGISTRY if n not in before]
    for n in registered:
        ORIGINS.setdefault(n.name, origin)
    defined = getattr(module, "TOPICS", None)
    if defined is None:
        defined = getattr(module, "TOPIC", None)
    label = f"{path}: {'TOPICS' if hasattr(module, 'TOPICS') else 'TOPIC'}"
    topics = _topics_of(defined, label) if defined is not None else []
    topics += [t for t in registered if t not in topics]
    if not topics:
        raise InputError(
            f"{path} defines no topic: define TOPIC = compare.core.registry.Topic(...) "
            "(or a dict of its fields), TOPICS = [...], or call "
            "compare.core.registry.register(Topic(...))"
        )
    for topic in topics:
        check_protocol(topic, where=str(path), smoke=smoke)
    registered_now = tuple(_register(topics, origin))
    if origin not in LOADED_FILES:
        LOADED_FILES.append(origin)
    return registered_now


def export_topic_files() -> None:
    """Name every topic file loaded in this process in ``BAYES_COMPARE_TOPIC_FILES``, so
    that the processes it starts (the workers of ``run --all``, the report's, a local
    Dask cluster's) load them too (:func:`load_installed`).

    The command line calls it (its process is ours); :func:`load_topic_file` itself
    leaves the environment of a user's process alone.
    """
    known = [p for p in os.environ.get(TOPIC_FILES_ENV, "").split(os.pathsep) if p]
    missing = [p for p in LOADED_FILES if p not in known]
    if missing:
        os.environ[TOPIC_FILES_ENV] = os.pathsep.join([*known, *missing])


def load_installed(*, smoke: bool = False) -> tuple[Topic, ...]:
    """Register the topics of installed packages (entry point group ``bayes_compare.topics``)
    and of the topic files named in the environment variable ``BAYES_COMPARE_TOPIC_FILES``
    (set by the command line's :func:`export_topic_files`, so worker processes see
    the parent's topics).

    Runs once per process.  A broken entry point becomes a warning naming it
    and what is wrong, never a failure of every command.
    """
    global _INSTALLED_LOADED
    if _INSTALLED_LOADED:
        return ()
    _INSTALLED_LOADED = True
    loaded: list[Topic] = []
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        where = f"entry point {ep.name!r} ({ep.value}) in group {ENTRY_POINT_GROUP}"
        try:
            obj = ep.load()
            if isinstance(obj, type(sys)):
                obj = getattr(obj, "TOPICS", None) or getattr(obj, "TOPIC", None)
                if obj is None:
                    raise InputError(f"{where}: the module defines no TOPIC or TOPICS")
            elif callable(obj) and not isinstance(obj, Topic):
                obj = obj()
            topics = _topics_of(obj, where)
            for topic in topics:
                check_protocol(topic, where=where, smoke=smoke)
            loaded += _register(topics, where)
        except Exception as err:  # noqa: BLE001 - one bad package must not break the CLI
            warnings.warn(f"skipped {where}: {err}", stacklevel=2)
    for path in os.environ.get(TOPIC_FILES_ENV, "").split(os.pathsep):
        if path and path not in ORIGINS.values():
            try:
                loaded += load_topic_file(path, smoke=smoke)
            except Exception as err:  # noqa: BLE001 - nor one bad file named in the environment
                warnings.warn(
                    f"skipped topic file {path} (from {TOPIC_FILES_ENV}): {err}", stacklevel=2
                )
    return tuple(loaded)
