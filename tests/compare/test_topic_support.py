"""Every registered topic either supports each capability or says why not.

A topic is one unit (issue 16): the studies, the export and the report ask
the topic what it supports (``compare/core/registry.py``: its declarations,
or ``Unsupported(reason)``), and no other module names it.  Two tests:

* for every topic x every capability, the topic supports it or declares it
  unsupported with a non-empty reason a user can read; a failure names the
  topic and the capability;
* no builtin topic's name is a string constant (docstrings aside) of any
  module of ``compare/`` but the topic's own module and the catalogue.

What "supports" means, capability by capability, is what the code that
uses it asks (see ``CAPABILITIES``).  No sampling: the whole file takes
seconds.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path

import pytest

from compare.core.registry import DATA_KINDS, Calibration, PlantedBug, Topic, Unsupported
from compare.topics import all_topics
from compare.topics.catalogue import CATALOGUE

ROOT = Path(__file__).resolve().parents[2]

#: A capability's state for one topic: None when supported, else the reason it is not.
#: A check raises AssertionError (naming what is wrong) when the topic neither
#: supports the capability nor declares why not.
State = str | None


def _declared(value: object, kind: type, what: str) -> State:
    """``value`` is a ``kind`` (supported) or ``Unsupported`` with a reason."""
    if isinstance(value, Unsupported):
        assert value.reason.strip(), f"{what}: Unsupported with an empty reason"
        return value.reason
    assert isinstance(value, kind), (
        f"{what}: expected a {kind.__name__} or Unsupported(reason), got {value!r}"
    )
    return None


def _run(t: Topic) -> State:
    for name in ("solve", "build_model", "model_data", "simulate", "prepare", "structure"):
        assert callable(getattr(t, name)), f"{name} is not callable"
    assert t.variables, "no PyMC variables to compare"
    assert t.builtin and all(callable(d.load) for d in t.builtin), "no loadable builtin data"
    assert t.data_kind in DATA_KINDS
    return None


def _describe(t: Topic) -> State:
    assert t.title.strip() and t.model.strip(), "an empty title or model"
    for h in t.hyperparameters:
        assert h.doc.strip(), f"hyperparameter {h.name} has no doc line"
    for d in t.builtin:
        assert d.description.strip() and d.source.strip(), f"data set {d.name}: no description"
        if t.parameter_names is not None:  # declared names are the solved ones, on every set
            x, hyper = t.prepare(d.load(), t.hyper(dataset=d))
            solved = tuple(t.solve(x=x, **hyper).parameters)
            assert tuple(t.parameter_names) == solved, (
                f"Topic.parameter_names {t.parameter_names} but solve names {solved} on {d.name}"
            )
    return None


def _calibration(t: Topic) -> State:
    state = _declared(t.calibration, Calibration, "Topic.calibration")
    if state is None:
        t.hyper(t.calibration.hyper)  # its hyperparameters are the topic's, and valid
    return state


def _planted(t: Topic) -> State:
    if isinstance(t.planted, Unsupported):
        return _declared(t.planted, tuple, "Topic.planted")
    assert isinstance(t.planted, tuple) and t.planted, (
        "Topic.planted: expected a non-empty tuple of PlantedBug or Unsupported(reason), got "
        f"{t.planted!r} (an empty tuple declares nothing)"
    )
    assert all(isinstance(b, PlantedBug) for b in t.planted), t.planted
    names = [b.name for b in t.planted]
    assert len(set(names)) == len(names), f"planted bugs named twice: {names}"
    return None


def _sensitivity(t: Topic) -> State:
    if isinstance(t.sensitivity, Unsupported):
        return _declared(t.sensitivity, object, "Topic.sensitivity")
    assert t.sensitivity is not None, (
        "Topic.sensitivity: expected a declaration or Unsupported(reason), got None"
    )
    return None


def _closed_form(t: Topic) -> State:
    """SBC's exact side and the posteriordb export need exact draws of a closed form."""
    if t.not_closed_form is None:
        return None
    assert isinstance(t.not_closed_form, str) and t.not_closed_form.strip(), (
        f"Topic.not_closed_form: expected None or a reason, got {t.not_closed_form!r}"
    )
    return t.not_closed_form


def _mcmc_sbc(t: Topic) -> State:
    """MCMC SBC needs only a simulator and the PyMC model (compare/studies/sbc.py)."""
    assert callable(t.simulate) and callable(t.build_model)
    return None


def _text_tables(t: Topic) -> State:
    """A table topic reads words or labels in its cells with ``text_table``; the other
    kinds read one column (labels as text, by ``prepare``) or numeric rows."""
    if t.data_kind != "table":
        return None
    if isinstance(t.text_table, Unsupported):
        return _declared(t.text_table, object, "Topic.text_table")
    assert callable(t.text_table), (
        "Topic.text_table: a table topic gives a reader of text "
        f"cells or Unsupported(reason), got {t.text_table!r}"
    )
    return None


def _report_sbc(t: Topic) -> State:
    """The run page's SBC section: the MCMC side always, the exact side when closed form."""
    return _mcmc_sbc(t)


#: Capability -> check.  Report sections: the verdict, parameter and check
#: tables come with every run; the sensitivity and SBC sections with the
#: studies; the exact-SBC part of the SBC section with a closed form.
CAPABILITIES: dict[str, Callable[[Topic], State]] = {
    "run": _run,
    "describe": _describe,
    "null calibration": _calibration,
    "planted bugs": _planted,
    "sensitivity": _sensitivity,
    "exact-only SBC": _closed_form,
    "MCMC SBC": _mcmc_sbc,
    "posteriordb export": _closed_form,
    "text tables": _text_tables,
    "report: verdict, parameters, checks": _run,
    "report: sensitivity section": _sensitivity,
    "report: SBC section": _report_sbc,
    "report: exact SBC part": _closed_form,
}

TOPICS = {t.name: t for t in all_topics()}


@pytest.mark.parametrize("capability", CAPABILITIES)
@pytest.mark.parametrize("name", TOPICS)
def test_topic_supports_the_capability_or_says_why_not(name, capability):
    _check(TOPICS[name], capability)


def _check(topic: Topic, capability: str) -> State:
    try:
        return CAPABILITIES[capability](topic)
    except AssertionError as error:
        pytest.fail(
            f"topic {topic.name!r}, capability {capability!r}: neither supported nor "
            f"declared Unsupported with a reason: {error}"
        )


def test_a_missing_declaration_fails_naming_the_topic_and_the_capability():
    import dataclasses

    topic = next(iter(TOPICS.values()))
    for capability, blank in (
        ("planted bugs", {"planted": ()}),
        ("null calibration", {"calibration": None}),
        ("posteriordb export", {"not_closed_form": " "}),
    ):
        with pytest.raises(
            pytest.fail.Exception, match=f"topic '{topic.name}', capability '{capability}'"
        ):
            _check(dataclasses.replace(topic, **blank), capability)
    reason = _check(dataclasses.replace(topic, planted=Unsupported("no variance")), "planted bugs")
    assert reason == "no variance"


def test_every_topic_is_calibrated_and_some_carry_planted_bugs():
    """The README's figures need a null fixture for every builtin topic and the power
    study needs bugs on the Normal topics."""
    builtin = [t for t in TOPICS.values() if t.name.replace("-", "_") in CATALOGUE]
    assert all(isinstance(t.calibration, Calibration) for t in builtin)
    assert sum(isinstance(t.planted, tuple) and bool(t.planted) for t in builtin) >= 3


# --- no module names a topic -------------------------------------------------------------
def _string_constants(path: Path) -> list[tuple[int, str]]:
    """(line, value) of every string constant of ``path`` but its docstrings."""
    tree = ast.parse(path.read_text(), filename=str(path))
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                docstrings.add(id(first.value))
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
    ]


BUILTIN = tuple(t.name for t in all_topics() if t.name.replace("-", "_") in CATALOGUE)
MODULES = sorted((ROOT / "compare").rglob("*.py"))


def _named(path: Path, relative: str | None = None) -> list[str]:
    """Where ``path`` (at ``relative`` in the repository) names a builtin topic it is
    not the module of."""
    relative = relative or path.relative_to(ROOT).as_posix()
    return [
        f"{relative}:{line}: {value!r}"
        for line, value in _string_constants(path)
        if value in BUILTIN
        and relative
        not in (f"compare/topics/{value.replace('-', '_')}.py", "compare/topics/catalogue.py")
    ]


@pytest.mark.parametrize(
    "path", [pytest.param(p, id=p.relative_to(ROOT).as_posix()) for p in MODULES]
)
def test_no_module_names_a_topic(path):
    """A topic's name as a string constant outside its module means a study or an
    output decides by name (``topic.name == ...``, a dict keyed by names) instead
    of asking the topic."""
    named = _named(path)
    assert not named, "topic names outside their topic's module:\n" + "\n".join(named)


def test_the_name_check_sees_a_planted_name(tmp_path):
    """The check is not vacuous: a module comparing ``topic.name`` with a name is caught,
    a docstring mentioning one is not, and a topic's own module may name itself."""
    first, last = BUILTIN[0], BUILTIN[-1]
    fake = tmp_path / "probe.py"
    fake.write_text(
        f'"""Mentions {first} in a docstring."""\n'
        f'def skip(topic):\n    """{first} again."""\n'
        f'    return topic.name == "{last}"\n'
    )
    assert len(_named(fake, "compare/studies/probe.py")) == 1
    assert _named(fake, f"compare/topics/{last.replace('-', '_')}.py") == []
