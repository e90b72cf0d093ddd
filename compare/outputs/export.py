"""Export a topic's exact posterior as a posteriordb reference posterior.

posteriordb (https://github.com/stan-dev/posteriordb) pairs a data set with
a model and, for some posteriors, keeps reference draws: 10 chains of 1000
draws, so far all from long Stan runs.  Here the reference draws are exact:
iid draws from the closed-form posterior (``ExactPosterior.sample``), and the
info file says so (``inference.method = "analytical"``).  The layout:

    DIR/posteriors/<data>-<model>.json
    DIR/data/data/<data>.json.zip                     (the model's pm.Data values)
    DIR/data/info/<data>.info.json
    DIR/models/info/<model>.info.json
    DIR/models/pymc/<model>.py                        (the PyMC model's source and
                                                       make_model(data, prior_only=False))
    DIR/reference_posteriors/draws/draws/<posterior>.json.zip
    DIR/reference_posteriors/draws/info/<posterior>.info.json
    DIR/exact/<posterior>.exact.json                  (exact moments; not posteriordb's)

Every file is checked against the schemas in ``compare/schemas/posteriordb``
(posteriordb documents its format but ships no JSON schema; see SOURCE.md
there) before it is written.  The hyperparameters are ``pm.Data`` values in
the data file, so the model file is the topic's model for every prior; it
holds posteriordb's PyMC convention ``make_model(data, prior_only=False)``,
and the posterior file's ``build_model_arguments`` include the data's sizes
(``n_obs``), so ``build_model(**build_model_arguments)`` then
``pm.set_data(data)`` works too (both are tried before anything is written).
A model whose structure is fixed by more than the data's size (categories,
features) is named with it (``dirichlet_categorical_n_categories_3``).

Topics without a closed-form posterior of their model are refused with the
reason they give (``Topic.not_closed_form``: a numerical reference, or a
complete-data posterior given EM's labels), since their draws would not be
exact reference draws.
"""

from __future__ import annotations

import datetime
import hashlib
import inspect
import io
import json
import re
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from compare.core.agreement import agreement_test
from compare.core.data import check_array, topic_data
from compare.core.defaults import DEFAULT
from compare.core.files import atomic_write, versions
from compare.core.registry import InputError, Topic
from compare.core.variables import flat_names
from compare.outputs.document import _clean, describe_marginal
from compare.topics import get_topic

#: posteriordb's reference posteriors: 10 chains x 1000 draws (10,000 per parameter;
#: doc/REFERENCE_POSTERIOR_DEFINITION.md and the existing draws/info files).
POSTERIORDB_CHAINS = 10
POSTERIORDB_DRAWS = 1000

SCHEMAS = {
    "posterior": "posterior.schema.json",
    "data": "data.schema.json",
    "data_info": "data_info.schema.json",
    "model_info": "model_info.schema.json",
    "reference_posterior_info": "reference_posterior_info.schema.json",
    "reference_posterior_draws": "reference_posterior_draws.schema.json",
}

ADDED_BY = "bayes-compare export"


@dataclass(frozen=True)
class ExportResult:
    """What :func:`export_posteriordb` wrote.

    Attributes
    ----------
    directory : Path
    posterior_name : str
        ``<data_name>-<model_name>``.
    files : dict of str to Path
        Each written file by kind (``posterior``, ``data``, ``data_info``,
        ``model_info``, ``model_code``, ``reference_posterior_draws``,
        ``reference_posterior_info``, ``exact``).
    parameters : tuple of str
    draws : array of shape (chains, draws, d)
        The exact reference draws as written.
    """

    directory: Path
    posterior_name: str
    files: dict[str, Path]
    parameters: tuple[str, ...]
    draws: np.ndarray


def _slug(text: str) -> str:
    """posteriordb names: letters, digits and underscores (a '-' joins data and model)."""
    return re.sub(r"[^A-Za-z0-9_]+", "_", text).strip("_") or "data"


def load_schema(kind: str) -> dict[str, Any]:
    """One of the posteriordb schemas kept in ``compare/schemas/posteriordb``."""
    path = resources.files("compare") / "schemas" / "posteriordb" / SCHEMAS[kind]
    return json.loads(path.read_text())


def _validate(doc: Any, kind: str, where: str) -> None:
    import jsonschema  # heavy: jsonschema only when an export is validated

    validator = jsonschema.Draft202012Validator(load_schema(kind))
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.path))
    if errors:
        first = errors[0]
        at = "/".join(str(p) for p in first.path) or "(top level)"
        raise ValueError(
            f"{where} does not follow posteriordb's {kind} format at {at}: "
            f"{first.message} ({len(errors)} error(s))"
        )


def _zip_json(doc: Any, member: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(member, json.dumps(doc, allow_nan=False))
    return buffer.getvalue()


def read_zipped_json(path: str | Path) -> Any:
    """The JSON document inside a posteriordb ``.json.zip`` file (one member)."""
    with zipfile.ZipFile(path) as zf:
        names = zf.namelist()
        if len(names) != 1:
            raise ValueError(f"{path} must hold one JSON file, holds {names}")
        return json.loads(zf.read(names[0]))


def model_source(topic: Topic) -> str:
    """The PyMC model's source: the module defining ``build_model``, self-contained.

    Imports of the project's small helpers (``pymc_models._common``, on one line or
    in parentheses as ruff wraps a long one) are replaced by their source, so the
    file runs with PyMC alone.
    """
    module = inspect.getmodule(topic.build_model)
    source = (
        inspect.getsource(module) if module is not None else inspect.getsource(topic.build_model)
    )

    def inline(match: re.Match) -> str:
        import pymc_models._common as common  # heavy: PyMC only when a model is built

        names = [n.strip() for n in (match.group(1) or "").split(",") if n.strip()]
        names += [n.strip() for n in (match.group(2) or "").split(",") if n.strip()]
        helpers = {
            name: inspect.getsource(value).rstrip()
            for name, value in vars(common).items()
            if inspect.isfunction(value) and value.__module__ == common.__name__
        }
        # The helpers the imported ones call, before them (as the module defines them).
        wanted, queue = set(names), list(names)
        while queue:
            called = re.findall(r"\b(\w+)\(", helpers[queue.pop()])
            for name in called:
                if name in helpers and name not in wanted:
                    wanted.add(name)
                    queue.append(name)
        return "\n\n".join(text for name, text in helpers.items() if name in wanted) + "\n"

    source = re.sub(
        r"^from pymc_models\._common import (?:([\w, ]+)|\(([\w,\s]+)\))\n",
        inline,
        source,
        flags=re.MULTILINE,
    )
    return _hoist_imports(source)


#: An import of PyMC or PyTensor inside a function, with the blank line after the
#: last one (``pymc_models`` import them there, so that registering topics does not
#: load PyMC).
_LOCAL_IMPORT = re.compile(
    r"^[ \t]+((?:import|from)[ \t]+(?:pymc|pytensor)\b[^#\n]*?)[ \t]*(?:#[^\n]*)?\n(?:[ \t]*\n)?",
    re.MULTILINE,
)


def _hoist_imports(source: str) -> str:
    """The module source with its PyMC/PyTensor imports at the top, as a user writes it.

    ``pymc_models`` import PyMC inside each function (and under ``TYPE_CHECKING``
    for annotations), so that light commands never load it; the exported file is
    a plain script, whose ``make_model`` also needs ``pm`` at module level.
    """
    source = re.sub(
        r"^if TYPE_CHECKING:[^\n]*\n(?:[ \t]+[^\n]*\n)+\n*", "", source, flags=re.MULTILINE
    )
    hoisted = list(dict.fromkeys(m.group(1) for m in _LOCAL_IMPORT.finditer(source)))
    source = _LOCAL_IMPORT.sub("", source)
    source = re.sub(r"^from typing import TYPE_CHECKING\n\n?", "", source, flags=re.MULTILINE)
    if "import pymc as pm" not in hoisted:
        hoisted.insert(0, "import pymc as pm")
    hoisted.sort(key=lambda line: (line.startswith("from"), line))  # as isort orders them
    # After the module's last top-level import (numpy at least).
    anchor = list(re.finditer(r"^(?:import|from) [^\n]+\n", source, flags=re.MULTILINE))
    at = anchor[-1].end() if anchor else 0
    rest = source[at:]
    return (
        source[:at]
        + "".join(line + "\n" for line in hoisted)
        + ("" if rest.startswith("\n") else "\n")
        + rest
    )


def _prepared(
    topic: Topic,
    data: Any,
    column: str | None,
    target: str | None,
    features: Sequence[str] | None,
    hyper: Mapping[str, Any] | None,
    sets: Mapping[str, str] | None,
):
    """(prepared data, hyperparameters after and before ``prepare``, ExactAnswer,
    builtin data set or None, source)."""

    values, dataset, source = topic_data(topic, data, column, target, features)
    if hyper and sets:
        raise InputError("give hyperparameters as values (hyper=) or as --set text, not both")
    merged = (
        topic.hyper(sets, dataset=dataset, parsed=False)
        if sets
        else topic.hyper(hyper or {}, dataset=dataset)
    )
    structured = topic.data_kind in ("table", "points")
    if structured and not hasattr(values, "features"):
        raise InputError(f"{topic.name}: streamed tables cannot be exported; read a smaller CSV")
    column_values = (
        values if structured else check_array(np.asarray(values), topic.data_kind, source)
    )
    chosen = dict(merged)
    x, merged = topic.prepare(column_values, merged)
    try:
        answer = topic.solve(x=x, **merged)
    except ValueError as err:
        raise InputError(str(err)) from err
    return x, merged, chosen, answer, dataset, source


def _listify(value: Any) -> Any:
    return _clean(np.asarray(value).tolist() if isinstance(value, np.ndarray) else value)


def export_posteriordb(
    topic: str | Topic,
    *,
    out: str | Path,
    data: Any = None,
    column: str | None = None,
    target: str | None = None,
    features: Sequence[str] | None = None,
    hyper: Mapping[str, Any] | None = None,
    sets: Mapping[str, str] | None = None,
    seed: int | None = None,
    chains: int = POSTERIORDB_CHAINS,
    draws: int = POSTERIORDB_DRAWS,
    added_by: str = ADDED_BY,
) -> ExportResult:
    """Write a topic's exact posterior on one data set as a posteriordb reference posterior.

    Parameters
    ----------
    topic : str or Topic
    out : path
        The posteriordb root to write under (created if needed).
    data, column, target, features
        The data, as for :func:`compare.interfaces.api.run` (default: the first builtin).
    hyper, sets : mapping, optional
        Hyperparameters as values, or as ``--set`` text; default the data
        set's suggestions, then the topic's defaults.
    seed : int, optional
        Seeds the exact draws (default :mod:`compare.core.defaults`).
    chains, draws : int
        posteriordb's 10 chains x 1000 draws by default.
    added_by : str

    Returns
    -------
    ExportResult

    Raises
    ------
    InputError
        Bad data or hyperparameters, or a topic whose reference is not
        closed form; nothing is written.
    """

    t = topic if isinstance(topic, Topic) else get_topic(topic)
    if t.not_closed_form is not None:
        raise InputError(
            f"{t.name} cannot be exported as exact reference draws: {t.not_closed_form}"
        )
    for name, value in (("chains", chains), ("draws", draws)):
        if not isinstance(value, int) or value < 1:
            raise InputError(f"{name} must be an integer >= 1, got {value!r}")
    seed = DEFAULT.seed if seed is None else int(seed)
    x, merged, chosen, answer, dataset, source = _prepared(
        t, data, column, target, features, hyper, sets
    )
    post = answer.posterior
    parameters = tuple(str(p) for p in post.parameters)
    d = len(parameters)
    structure = t.structure(x, merged)
    # JSON has no shape for an empty matrix ([] reads back as shape (0,)): an entry with
    # no values (the classifier's unlabelled rows) is left out, and the model's own
    # value of it, empty too, applies.
    model_data = {
        k: _listify(v)
        for k, v in t.model_data(x=x, **merged).items()
        if np.size(v) > 0 or np.ndim(v) < 2
    }
    sizes = _sizes_from_data(t, structure, model_data)
    fixed = {k: _listify(v) for k, v in structure.items()}
    build_arguments = {**fixed, **{arg: _length(model_data[entry]) for arg, entry in sizes.items()}}
    model_name = _model_name(t, fixed)
    default_hyper = t.hyper(dataset=dataset)
    data_name = _slug(f"{t.name}_{dataset.name}" if dataset is not None else f"{t.name}_data")
    if dataset is None or chosen != default_hyper:  # another prior: another data name
        digest = hashlib.sha1(json.dumps(model_data, sort_keys=True).encode()).hexdigest()[:8]
        data_name = f"{data_name}_{digest}"
    name = f"{data_name}-{model_name}"
    today = datetime.date.today().isoformat()

    rng = np.random.default_rng(seed)
    flat = np.asarray(post.sample(rng, chains * draws), dtype=float)
    if flat.shape != (chains * draws, d) or not np.all(np.isfinite(flat)):
        raise ValueError(
            f"{t.name}: the exact sampler returned shape {flat.shape} or non-finite values"
        )
    ref = flat.reshape(chains, draws, d)
    draws_doc = [
        {p: ref[c, :, i].tolist() for i, p in enumerate(parameters)} for c in range(chains)
    ]

    from arviz_stats.base import (
        array_stats,  # heavy: ArviZ (and xarray) only when draws are summarised
    )

    by_param = np.moveaxis(ref, -1, 0)
    rhat = np.asarray(array_stats.rhat(by_param, method="rank"), dtype=float)
    ess_bulk = np.asarray(array_stats.ess(by_param, method="bulk"), dtype=float)
    ess_tail = np.asarray(array_stats.ess(by_param, method="tail", prob=(0.05, 0.95)), dtype=float)
    agreement = agreement_test(
        ref, post, alpha=DEFAULT.alpha, seed=seed + 1, n_reference=DEFAULT.n_reference
    )
    dimensions = _dimensions(t, structure, d)

    posterior_doc = {
        "name": name,
        "model_name": model_name,
        "data_name": data_name,
        "reference_posterior_name": name,
        "dimensions": dimensions,
        "keywords": ["bayes_compare", "analytical_reference_posterior"],
        "references": [],
        "urls": [],
        "added_by": added_by,
        "added_date": today,
        "build_model_arguments": _listify(build_arguments),
    }
    data_info = {
        "name": data_name,
        "data_file": f"data/data/{data_name}.json",
        "title": f"{t.name} on {source}",
        "description": (
            f"Data for the bayes-compare topic {t.name} ({source}, n={len(x)}): the "
            "values of the PyMC model's pm.Data, including the prior's "
            "hyperparameters as hp_<name>."
            + (f" {dataset.description}; source: {dataset.source}." if dataset is not None else "")
        ),
        "keywords": ["bayes_compare"],
        "references": [],
        "urls": [],
        "added_by": added_by,
        "added_date": today,
    }
    model_info = {
        "name": model_name,
        "title": t.title,
        "description": t.model + "\nHyperparameters are pm.Data (hp_<name>) in the data file. "
        "Build the model with make_model(data) (posteriordb's PyMC "
        "convention; prior_only=True drops the likelihood), or with "
        "build_model(**build_model_arguments) from the posterior file, "
        "then pm.set_data(data).",
        "keywords": ["bayes_compare"],
        "references": [],
        "urls": [],
        "model_implementations": {"pymc": {"model_code": f"models/pymc/{model_name}.py"}},
        "added_by": added_by,
        "added_date": today,
    }
    passed = bool(agreement.passed)
    ref_info = {
        "name": name,
        "inference": {
            "method": "analytical",
            "method_arguments": {
                "sampler": "exact iid draws from the closed-form posterior "
                f"({type(post).__module__}.{type(post).__name__}.sample)",
                "chains": chains,
                "draws_per_chain": draws,
                "seed": seed,
                "generator": "numpy.random.default_rng (PCG64)",
                "topic": t.name,
                "data_source": source,
                "hyperparameters": _listify(merged),
            },
        },
        "diagnostics": {
            "diagnostic_information": {"names": list(parameters)},
            "ndraws": chains * draws,
            "nchains": chains,
            "effective_sample_size_bulk": _listify(ess_bulk),
            "effective_sample_size_tail": _listify(ess_tail),
            "r_hat": _listify(rhat),
        },
        "checks_made": {
            "ndraws_is_10k": chains * draws == 10_000,
            "nchains_is_gte_4": chains >= 4,
            "exact_iid_draws": True,
            "r_hat_below_1_01": bool(np.all(rhat < 1.01)),
            "bayes_compare_agreement_test_passed": passed,
        },
        "comments": (
            f"Exact: the draws are independent draws from the closed-form posterior "
            f"computed by bayes-compare's analytic code for {t.name}, not MCMC. "
            f"Exact moments (mean, covariance, marginal quantiles) are in "
            f"exact/{name}.exact.json. bayes-compare's agreement test on these draws: "
            f"max |z| {agreement.max_abs_z:.2f} against {agreement.threshold:.2f} "
            f"over {len(agreement.quantities)} quantities (alpha {DEFAULT.alpha:g})."
        ),
        "added_by": added_by,
        "added_date": today,
        "versions": {},
    }
    exact_doc = _listify(
        {
            "name": name,
            "parameters": list(parameters),
            "exact": True,
            "mean": post.mean,
            "cov": post.cov,
            "sd": np.sqrt(np.diag(post.cov)),
            "mode": post.mode,
            "mle": answer.mle,
            "log_evidence": answer.log_evidence,
            "marginals": [describe_marginal(post.marginal(i)) for i in range(d)],
            "quantiles": {
                f"q{round(p * 100):02d}": [
                    None if post.marginal(i) is None else float(post.marginal(i).ppf(p))
                    for i in range(d)
                ]
                for p in (0.05, 0.5, 0.95)
            },
            "agreement_test_of_the_draws": {
                "max_abs_z": agreement.max_abs_z,
                "threshold": agreement.threshold,
                "passed": passed,
                "quantities": len(agreement.quantities),
            },
            "versions": versions(),
        }
    )

    docs = {
        "posterior": posterior_doc,
        "data": model_data,
        "data_info": data_info,
        "model_info": model_info,
        "reference_posterior_info": ref_info,
        "reference_posterior_draws": draws_doc,
    }
    for kind, doc in docs.items():  # every file is checked before anything is written
        _validate(doc, kind, f"{kind} of {name}")

    out = Path(out)
    files = {
        "posterior": out / "posteriors" / f"{name}.json",
        "data": out / "data" / "data" / f"{data_name}.json.zip",
        "data_info": out / "data" / "info" / f"{data_name}.info.json",
        "model_info": out / "models" / "info" / f"{model_name}.info.json",
        "model_code": out / "models" / "pymc" / f"{model_name}.py",
        "reference_posterior_draws": out
        / "reference_posteriors"
        / "draws"
        / "draws"
        / f"{name}.json.zip",
        "reference_posterior_info": out
        / "reference_posteriors"
        / "draws"
        / "info"
        / f"{name}.info.json",
        "exact": out / "exact" / f"{name}.exact.json",
    }
    code = model_file(t, fixed, sizes, name=name, data_name=data_name)
    _check_recipes(code, build_arguments, model_data, where=f"{t.name} ({name})")
    atomic_write(files["data"], _zip_json(model_data, f"{data_name}.json"))
    atomic_write(files["reference_posterior_draws"], _zip_json(draws_doc, f"{name}.json"))
    atomic_write(files["model_code"], code)
    for kind in ("posterior", "data_info", "model_info", "reference_posterior_info"):
        atomic_write(files[kind], json.dumps(docs[kind], indent=2, allow_nan=False) + "\n")
    atomic_write(files["exact"], json.dumps(exact_doc, indent=2, allow_nan=False) + "\n")
    return ExportResult(
        directory=out, posterior_name=name, files=files, parameters=parameters, draws=ref
    )


#: ``build_model`` arguments that are sizes of the data (the ``obs`` dimension):
#: stored in the posterior file's ``build_model_arguments`` and read from the
#: data by ``make_model``.
SIZES_FROM_DATA = {"n_obs": "x"}

MAKE_MODEL = '''

# --- posteriordb's PyMC convention ---------------------------------------------------
# Written by bayes-compare export.  build_model's arguments that fix this model's
# structure; the sizes of the data (SIZES_FROM_DATA: argument -> data entry) are read
# from the data, so the same file serves every data set of this structure.
BUILD_MODEL_ARGUMENTS = {fixed!r}
SIZES_FROM_DATA = {sizes!r}
VARIABLES_IN_ORDER = {variables!r}


def make_model(data: dict, prior_only: bool = False) -> pm.Model:
    """The model with ``data`` (the posteriordb data file's dict) set.

    posteriordb's PyMC convention.  With ``prior_only=True`` the likelihood is
    removed (the observed variables, and the Potentials named ``loglik`` or
    ``*_loglik`` that write it from sufficient statistics), so the model's
    posterior is its prior (initial values set in build_model are dropped:
    PyMC's defaults apply).
    Equivalent recipe: ``build_model(**build_model_arguments)`` with the
    arguments in the posterior file, then ``pm.set_data(data, model=model)``.
    """
    import numpy as _np

    arguments = dict(BUILD_MODEL_ARGUMENTS)
    for argument, entry in SIZES_FROM_DATA.items():  # rows of that data entry
        shape = _np.shape(data[entry])
        arguments[argument] = int(shape[0]) if shape else 1
    model = build_model(**{{k: tuple(v) if isinstance(v, list) else v
                           for k, v in arguments.items()}})
    pm.set_data({{k: _np.asarray(v) for k, v in data.items()}}, model=model)
    if prior_only:
        from pymc.model.fgraph import (
            ModelObservedRV, ModelPotential, fgraph_from_model, model_from_fgraph,
        )

        for rv in list(model.rvs_to_initial_values):
            model.rvs_to_initial_values[rv] = None  # fgraph_from_model refuses them
        fgraph, _ = fgraph_from_model(model)
        for i in reversed(range(len(fgraph.outputs))):
            op = fgraph.outputs[i].owner.op
            if isinstance(op, ModelObservedRV) or (
                isinstance(op, ModelPotential)
                and (op.name == "loglik" or op.name.endswith("_loglik"))
            ):
                fgraph.remove_output(i)
        model = model_from_fgraph(fgraph, mutate_fgraph=True)
    return model


# posteriordb: make_model(<data/data/{data_name}.json>), or build_model(**build_model_arguments)
# with the arguments in posteriors/{name}.json, then pm.set_data(data, model=model).
# Parameters, flattened in C order: {joined}.
'''


def _sizes_from_data(
    topic: Topic, structure: Mapping[str, Any], model_data: Mapping[str, Any]
) -> dict[str, str]:
    """The ``build_model`` arguments (``n_obs``) that are sizes of a data entry, by entry.

    They go into the posterior file's ``build_model_arguments``, so that
    ``build_model(**arguments)`` then ``pm.set_data(data)`` works, and
    ``make_model`` reads them from the data.
    """
    accepted = inspect.signature(topic.build_model).parameters
    return {
        arg: entry
        for arg, entry in SIZES_FROM_DATA.items()
        if arg in accepted and arg not in structure and entry in model_data
    }


def _length(value: Any) -> int:
    """Rows of a data entry (observations)."""
    shape = np.shape(value)
    return int(shape[0]) if shape else 1


def _model_name(topic: Topic, fixed: Mapping[str, Any]) -> str:
    """The topic's name, plus the structure when there is one: a posteriordb model is
    one fixed model, and ``make_model`` builds this structure only."""
    base = _slug(topic.name)
    if not fixed:
        return base
    text = _slug("_".join(f"{k}_{v}" for k, v in sorted(fixed.items())))
    if len(text) > 40:
        text = hashlib.sha1(json.dumps(fixed, sort_keys=True).encode()).hexdigest()[:8]
    return f"{base}_{text}"


def model_file(
    topic: Topic, fixed: Mapping[str, Any], sizes: Mapping[str, str], *, name: str, data_name: str
) -> str:
    """The model file: the topic's PyMC source, then posteriordb's ``make_model``."""
    return model_source(topic) + MAKE_MODEL.format(
        fixed=dict(fixed),
        sizes=sizes,
        variables=tuple(topic.variables),
        name=name,
        data_name=data_name,
        joined=", ".join(topic.variables),
    )


def _check_recipes(
    code: str, arguments: Mapping[str, Any], data: Mapping[str, Any], *, where: str
) -> None:
    """Both recipes of the model file build the model with the data set (no compile)."""
    import pymc as pm  # heavy: PyMC only when a model is built or sampled

    namespace: dict[str, Any] = {}
    exec(compile(code, "<model file>", "exec"), namespace)  # noqa: S102 - the file we wrote
    try:
        model = namespace["build_model"](
            **{k: tuple(v) if isinstance(v, list) else v for k, v in arguments.items()}
        )
        pm.set_data({k: np.asarray(v) for k, v in data.items()}, model=model)
        namespace["make_model"](dict(data))
    except Exception as err:  # an export bug, named with its cause
        raise ValueError(
            f"{where}: the exported model file does not build with its data "
            f"({type(err).__name__}: {err})"
        ) from err


def _dimensions(topic: Topic, structure: Mapping[str, Any], d: int) -> dict[str, int]:
    """Values per PyMC variable (posteriordb's ``dimensions``)."""
    try:
        model = topic.build_model(**structure)
        _, sizes = flat_names(model, topic.variables)
        return dict(zip(topic.variables, sizes))
    except Exception:  # noqa: BLE001 - dimensions are informative; fall back to the total
        return {topic.variables[0]: d} if len(topic.variables) == 1 else {"parameters": d}


def validate_export(directory: str | Path, posterior_name: str) -> dict[str, Any]:
    """Check an exported posterior's files against posteriordb's format.

    Returns the loaded documents by kind; raises ValueError naming the file,
    the place and the problem.
    """
    root = Path(directory)
    posterior_file = root / "posteriors" / f"{posterior_name}.json"
    posterior = json.loads(posterior_file.read_text())
    _validate(posterior, "posterior", str(posterior_file))
    data_name, model_name = posterior["data_name"], posterior["model_name"]
    data_info_file = root / "data" / "info" / f"{data_name}.info.json"
    data_info = json.loads(data_info_file.read_text())
    _validate(data_info, "data_info", str(data_info_file))
    data_file = root / (data_info["data_file"] + ".zip")
    data = read_zipped_json(data_file)
    _validate(data, "data", str(data_file))
    model_info_file = root / "models" / "info" / f"{model_name}.info.json"
    model_info = json.loads(model_info_file.read_text())
    _validate(model_info, "model_info", str(model_info_file))
    for framework, impl in model_info["model_implementations"].items():
        if not (root / impl["model_code"]).is_file():
            raise ValueError(
                f"{model_info_file}: the {framework} model code {impl['model_code']} is missing"
            )
    ref_name = posterior["reference_posterior_name"]
    info_file = root / "reference_posteriors" / "draws" / "info" / f"{ref_name}.info.json"
    info = json.loads(info_file.read_text())
    _validate(info, "reference_posterior_info", str(info_file))
    draws_file = root / "reference_posteriors" / "draws" / "draws" / f"{ref_name}.json.zip"
    draws = read_zipped_json(draws_file)
    _validate(draws, "reference_posterior_draws", str(draws_file))
    names = [list(chain) for chain in draws]
    lengths = {len(v) for chain in draws for v in chain.values()}
    if any(n != names[0] for n in names) or len(lengths) != 1:
        raise ValueError(f"{draws_file}: every chain must have the same parameters and length")
    if info["diagnostics"]["ndraws"] != len(draws) * lengths.pop():
        raise ValueError(f"{info_file}: ndraws does not match the draws file")
    return {
        "posterior": posterior,
        "data": data,
        "data_info": data_info,
        "model_info": model_info,
        "reference_posterior_info": info,
        "reference_posterior_draws": draws,
    }
