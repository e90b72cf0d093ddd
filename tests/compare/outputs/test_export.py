"""posteriordb export: layout, schema validation, exact draws that pass our own test.

The schemas are written from posteriordb's documented format
(compare/schemas/posteriordb/SOURCE.md); the first test checks that files
shaped like posteriordb's own (field names and types as in its
posterior_database/ files; values made up here) validate, so the schemas are
not stricter than the database they describe.
"""

from __future__ import annotations

import json
import zipfile

import numpy as np
import pytest

from compare.core.agreement import agreement_test
from compare.core.registry import InputError
from compare.interfaces.cli import main
from compare.outputs.export import (
    POSTERIORDB_CHAINS,
    POSTERIORDB_DRAWS,
    _validate,
    export_posteriordb,
    read_zipped_json,
    validate_export,
)
from compare.topics import get_topic
from tests.evaluation import EVAL_MODE


def test_schemas_accept_posteriordb_shaped_files():
    _validate(
        {
            "name": "eight_schools-eight_schools_noncentered",
            "keywords": ["stan_benchmark"],
            "model_name": "eight_schools_noncentered",
            "data_name": "eight_schools",
            "reference_posterior_name": None,
            "dimensions": {"mu": 1, "theta": 8},
            "added_by": "A Person",
            "added_date": "2019-08-12",
        },
        "posterior",
        "posterior",
    )
    _validate(
        {
            "name": "m",
            "title": "t",
            "keywords": "hierarchical",
            "urls": "http://x",
            "prior": {"keywords": []},
            "model_implementations": {
                "stan": {"model_code": "models/stan/m.stan", "stan_version": ">=2.26.0"}
            },
            "added_by": "A",
            "added_date": "2019-08-12",
        },
        "model_info",
        "model_info",
    )
    _validate(
        {
            "name": "d-m",
            "inference": {
                "method": "stan_sampling",
                "method_arguments": {"chains": 10, "iter": 20000, "warmup": 10000, "thin": 10},
            },
            "diagnostics": {"ndraws": 10000, "nchains": 10, "r_hat": [1.0002]},
            "checks_made": {"ndraws_is_10k": True},
            "comments": None,
            "added_by": "A",
            "added_date": "2020-05-22",
            "versions": {"rstan_version": "rstan 2.19.2"},
        },
        "reference_posterior_info",
        "info",
    )
    _validate({"J": 8, "y": [28, 8, -3], "X": [[1, 2], [3, 4]]}, "data", "data")


@pytest.fixture(scope="module")
def exports(tmp_path_factory):
    out = tmp_path_factory.mktemp("pdb")
    return out, {
        name: export_posteriordb(name, out=out)
        for name in ("beta-binomial", "normal-inverse-gamma", "dirichlet-categorical")
    }


@pytest.mark.verdict
@pytest.mark.parametrize(
    "topic", ["beta-binomial", "normal-inverse-gamma", "dirichlet-categorical"]
)
def test_export_validates_and_its_draws_pass_our_agreement_test(exports, topic, test_alpha):
    out, results = exports
    result = results[topic]
    docs = validate_export(out, result.posterior_name)
    info = docs["reference_posterior_info"]
    assert info["inference"]["method"] == "analytical"
    assert info["checks_made"]["exact_iid_draws"] and info["checks_made"]["ndraws_is_10k"]
    assert "Exact" in info["comments"]
    draws_doc = docs["reference_posterior_draws"]
    assert len(draws_doc) == POSTERIORDB_CHAINS
    assert list(draws_doc[0]) == list(result.parameters)
    draws = np.stack(
        [np.column_stack([chain[p] for p in result.parameters]) for chain in draws_doc]
    )
    assert draws.shape == (POSTERIORDB_CHAINS, POSTERIORDB_DRAWS, len(result.parameters))
    np.testing.assert_array_equal(draws, result.draws)
    # The written draws, read back, pass the agreement test against the exact posterior.
    t = get_topic(topic)
    ds = t.builtin[0]
    x, hyper = t.prepare(ds.load(), t.hyper(dataset=ds))
    posterior = t.solve(x=x, **hyper).posterior
    assert agreement_test(draws, posterior, alpha=test_alpha).passed
    exact = json.loads(result.files["exact"].read_text())
    np.testing.assert_allclose(exact["mean"], posterior.mean, rtol=1e-12)
    # The data file holds the model's pm.Data values; the model file is its PyMC source.
    assert set(docs["data"]) == set(t.model_data(x=x, **hyper))
    code = result.files["model_code"].read_text()
    namespace: dict = {}
    exec(compile(code, str(result.files["model_code"]), "exec"), namespace)
    model = namespace["build_model"](**docs["posterior"]["build_model_arguments"])
    assert set(t.variables) <= set(model.named_vars)


def test_draws_from_a_wrong_posterior_fail_our_test(exports):
    """Power: the exported beta-binomial draws shifted by 0.1 sd fail (z ~ 0.1 sqrt(1e4) = 10)."""
    _, results = exports
    result = results["beta-binomial"]
    t = get_topic("beta-binomial")
    ds = t.builtin[0]
    posterior = t.solve(x=ds.load(), **t.hyper(dataset=ds)).posterior
    shifted = result.draws + 0.1 * np.sqrt(posterior.cov[0, 0])
    assert not agreement_test(shifted, posterior, alpha=1e-4).passed


def test_a_broken_file_is_named(exports, tmp_path):
    out, results = exports
    result = results["beta-binomial"]
    info_file = result.files["reference_posterior_info"]
    info = json.loads(info_file.read_text())
    info["inference"]["method"] = "mcmc"
    info_file.write_text(json.dumps(info))
    try:
        with pytest.raises(
            ValueError,
            match=r"reference_posterior_info format at "
            r"inference/method: 'mcmc' is not one of",
        ):
            validate_export(out, result.posterior_name)
    finally:
        info["inference"]["method"] = "analytical"
        info_file.write_text(json.dumps(info))
    with zipfile.ZipFile(result.files["reference_posterior_draws"]) as zf:
        assert zf.namelist() == [f"{result.posterior_name}.json"]
    assert read_zipped_json(result.files["data"])["hp_a"] == 2.0


def test_cli_export_and_bad_input(tmp_path, capsys):
    out = tmp_path / "pdb"
    assert (
        main(
            [
                "export",
                "gamma-poisson",
                "--format",
                "posteriordb",
                "--out",
                str(out),
                "--set",
                "shape=3",
            ]
        )
        == 0
    )
    printed = capsys.readouterr().out
    name = printed.split("wrote ")[1].split(":")[0]
    assert name.startswith("gamma_poisson_discoveries_") and name.endswith("-gamma_poisson")
    validate_export(out, name)
    for argv, words in [
        (
            ["export", "gamma-poisson", "--format", "stan", "--out", str(tmp_path / "a")],
            ["--format 'stan' is not supported"],
        ),
        (
            ["export", "logistic-regression", "--out", str(tmp_path / "a")],
            ["numerical", "not closed form"],
        ),
        (
            ["export", "beta-binomial", "--out", str(tmp_path / "a"), "--set", "a=-1"],
            ["a must be > 0, got -1"],
        ),
        (["export", "beta-binomial"], ["--out DIR"]),
    ]:
        assert main(argv) == 3, argv
        err = capsys.readouterr().err
        assert all(w in err for w in words), (argv, err)
        assert err.count("\n") == 1
    assert not (tmp_path / "a").exists()  # nothing written on bad input
    with pytest.raises(InputError, match="chains must be an integer >= 1"):
        export_posteriordb("beta-binomial", out=tmp_path / "b", chains=0)


# --- the model file, read as posteriordb's own client reads it (issue 15) -------------------
BUILTIN = (
    "beta-binomial",
    "gamma-poisson",
    "normal-known-variance",
    "normal-inverse-gamma",
    "pareto-uniform",
    "dirichlet-categorical",
    "linear-regression",
    "linear-regression-nig",
    "gaussian-process",
    "naive-bayes",
    "bayes-optimal",
    "gaussian-classifier",
    "gaussian-mixture",
    "logistic-regression",
)
EXPORTABLE = tuple(t for t in BUILTIN if get_topic(t).not_closed_form is None)


@pytest.mark.parametrize("topic", EXPORTABLE)
def test_exported_model_builds_from_its_data_and_has_the_exact_density(tmp_path, topic):
    """Both recipes of the model file build the model from the exported files alone
    (posteriordb's ``build_model(**build_model_arguments)`` then ``pm.set_data(data)``,
    and upstream's ``make_model(data)``), and at the reference draws its log density
    minus the exact posterior's is the exported log evidence: constant over draws
    (so the model's posterior is the exact one) and equal to it, both to 1e-8 relative.
    (Before: gamma-poisson and normal-inverse-gamma failed the first recipe, "new coord
    values for the obs dimension are required"; there was no make_model.)"""
    import pymc as pm

    from compare.core.variables import variable_shapes
    from tests.pymc_models.points import value_point

    result = export_posteriordb(topic, out=tmp_path, chains=2, draws=10)
    posterior_doc = json.loads(result.files["posterior"].read_text())
    data = read_zipped_json(result.files["data"])
    exact = json.loads(result.files["exact"].read_text())
    namespace: dict = {}
    exec(compile(result.files["model_code"].read_text(), "model", "exec"), namespace)
    args = {
        k: tuple(v) if isinstance(v, list) else v
        for k, v in posterior_doc["build_model_arguments"].items()
    }
    by_recipe = namespace["build_model"](**args)
    pm.set_data({k: np.asarray(v) for k, v in data.items()}, model=by_recipe)
    model = namespace["make_model"](data)
    t = get_topic(topic)
    free = [rv.name for rv in model.free_RVs]
    assert [rv.name for rv in by_recipe.free_RVs] == free
    if any(str(rv.dtype).startswith("int") for rv in model.free_RVs):
        # bayes-optimal: the model's free variables are the hypothesis' digits (discrete),
        # the exported parameters are bucket indicators (a Deterministic of them).  Sum
        # the model's joint density over every digit configuration: the evidence.
        import itertools

        from scipy.special import logsumexp

        assert topic == "bayes-optimal", free
        # One evaluation of the density vectorised over the 1,944 configurations (a
        # call per configuration took 7 s with the Python linker).
        import pytensor
        import pytensor.tensor as pt
        from pytensor.graph.replace import vectorize_graph

        supports = [range(k) for k in args["factors"]] + [range(2)] * bool(args["has_empty"])
        configs = np.array(list(itertools.product(*supports))).T
        values = [model.rvs_to_values[rv] for rv in model.free_RVs]
        batched = [pt.vector(dtype=v.dtype) for v in values]
        logp = pytensor.function(
            batched,
            vectorize_graph(model.logp(), replace=dict(zip(values, batched))),
            mode=EVAL_MODE,
        )
        densities = logp(*(c.astype(v.dtype) for c, v in zip(configs, values, strict=True)))
        assert densities.shape == (configs.shape[1],)
        assert logsumexp(densities) == pytest.approx(exact["log_evidence"], rel=1e-8)
        return
    logp = model.compile_logp(jacobian=False, mode=EVAL_MODE)
    shapes = variable_shapes(model, t.variables)
    ds = t.builtin[0]
    x, hyper = t.prepare(ds.load(), t.hyper(dataset=ds))
    answer = t.solve(x=x, **hyper)
    diffs = []
    for theta in result.draws.reshape(-1, len(result.parameters)):
        point, start = {}, 0
        for v in t.variables:
            size = int(np.prod(shapes[v]))
            point[v] = theta[start : start + size].reshape(shapes[v])
            start += size
        # The variables' values as the value variables' (the Wishart precisions' Cholesky
        # factor solved for: tests/pymc_models/points.py).
        value = value_point(model, point)
        diffs.append(float(logp(value)) - float(answer.posterior.logpdf(theta)))
    # Every model is the density of the data rows themselves (the count models through
    # Potentials of their sufficient statistics), so its evidence is the exact one.
    expected = exact["log_evidence"]
    np.testing.assert_allclose(diffs, expected, rtol=1e-8)
    prior_only = namespace["make_model"](data, prior_only=True)
    assert not prior_only.observed_RVs and sorted(r.name for r in prior_only.free_RVs) == sorted(
        free
    )
    # The likelihood written as Potentials of sufficient statistics goes too, a prior's
    # Potential (the Normal-Wishart's mu_prior) stays.
    kept = [p.name for p in prior_only.potentials]
    assert not [n for n in kept if n == "loglik" or n.endswith("_loglik")], kept
    assert sorted(p.name for p in model.potentials if "loglik" not in p.name) == sorted(kept)


def test_gaussian_mixture_is_not_exported(tmp_path, capsys):
    """Its exact side is the complete-data posterior given MAP-EM labels, not the
    mixture's posterior: refused in one line, exit 3, nothing written."""
    with pytest.raises(InputError, match="no closed form"):
        export_posteriordb("gaussian-mixture", out=tmp_path / "a")
    assert main(["export", "gaussian-mixture", "--out", str(tmp_path / "b")]) == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "complete-data" in err and "MAP-EM" in err
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


@pytest.mark.parametrize("topic", ["gamma-poisson", "normal-inverse-gamma"])
def test_posteriordb_client_reads_the_export_and_both_recipes_build(tmp_path, topic):
    """posteriordb's own Python client (0.2.0) lists the posterior and loads its data,
    information and reference draws; the model code it returns builds with both recipes
    (before: build_model(**{}) then pm.set_data failed, the obs dimension had length 1)."""
    posteriordb = pytest.importorskip("posteriordb")
    import pymc as pm

    result = export_posteriordb(topic, out=tmp_path, chains=2, draws=10)
    db = posteriordb.PosteriorDatabase(str(tmp_path))
    assert result.posterior_name in db.posterior_names()
    posterior = db.posterior(result.posterior_name)
    data = posterior.data.values()
    draws = posterior.reference_draws()
    assert len(draws) == 2 and list(draws[0]) == list(result.parameters)
    assert posterior.reference_draws_info()["inference"]["method"] == "analytical"
    namespace: dict = {}
    exec(compile(posterior.model.code("pymc"), "model", "exec"), namespace)
    model = namespace["build_model"](**posterior.posterior_info["build_model_arguments"])
    pm.set_data(data, model=model)
    assert model.dim_lengths["obs"].eval(mode=EVAL_MODE) == len(data["x"]) > 1
    model = namespace["make_model"](data)
    assert np.isfinite(model.compile_logp(mode=EVAL_MODE)(model.initial_point()))
