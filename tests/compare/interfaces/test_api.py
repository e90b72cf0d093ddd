"""The public API: compare.check on a user's PyMC model, compare.check_draws, compare.run.

Statistical assertions: an "agrees" run is a `verdict` test (alpha from the
suite's budget, tests/conftest.py); every "disagrees" run plants a bug whose
z-score is tens of null sds (measured: the prior-sd-as-variance bug gives
max |z| ~ 40 on 4 x 1000 draws, the shift of 0.5 sd gives z ~ 30), so its
power is 1 to many decimals.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import xarray as xr
from scipy import stats

import compare
from compare.core.registry import InputError

ROOT = Path(__file__).resolve().parents[3]
Y = np.array([0.8, 1.9, 1.2, 0.4, 1.5, 0.9])
PRIOR_MEAN, PRIOR_SD, NOISE_SD = 0.5, 0.5, 1.0


def _exact_normal_mean(y: np.ndarray) -> compare.Exact:
    """Normal prior on a normal mean with known noise sd (Bishop 2006, eq. 2.141-2.142)."""
    precision = 1 / PRIOR_SD**2 + y.size / NOISE_SD**2
    mean = (PRIOR_MEAN / PRIOR_SD**2 + y.sum() / NOISE_SD**2) / precision
    return compare.Exact(mean=[mean], cov=[[1 / precision]], gaussian=True)


@pytest.fixture(scope="module")
def user_model():
    import pymc as pm

    with pm.Model() as model:
        prior_sd = pm.Data("prior_sd", PRIOR_SD)
        mu = pm.Normal("mu", PRIOR_MEAN, sigma=prior_sd)
        pm.Normal("y", mu, NOISE_SD, observed=Y)
    return model


@pytest.fixture(scope="module")
def agreeing(user_model, test_alpha):
    return compare.check(
        user_model, _exact_normal_mean(Y), var_names=["mu"], draws=1000, alpha=test_alpha
    )


@pytest.fixture(scope="module")
def planted_bug(user_model, agreeing):
    """The prior variance passed where PyMC wants the sd (0.25 for 0.5): same compiled model."""
    import pymc as pm

    pm.set_data({"prior_sd": PRIOR_SD**2}, model=user_model)
    try:
        return compare.check(user_model, _exact_normal_mean(Y), var_names=["mu"], draws=1000)
    finally:
        pm.set_data({"prior_sd": PRIOR_SD}, model=user_model)


@pytest.mark.mcmc
@pytest.mark.verdict
def test_user_model_agrees_with_its_closed_form(agreeing):
    assert agreeing.verdict == "agree", agreeing
    assert agreeing.exit_code == 0 and agreeing.decided_by == "agreement"
    assert agreeing.also_failed == ()
    checks = {c.name: c for c in agreeing.checks}
    assert checks["map"].passed  # gaussian=True: the exact mode is the mean
    # From PyMC's initial point (the prior's mean) and two exact posterior draws.
    assert re.search(
        r"initial point \(.* sd away\) and 2 exact posterior draws", checks["map"].note
    )
    assert [r["parameter"] for r in agreeing.table] == ["mu"]
    assert agreeing.diagnostics["divergences"] == 0


@pytest.mark.mcmc
def test_a_map_search_that_starts_at_the_mode_is_tested_from_exact_draws(test_alpha):
    """PyMC's MAP search starts at the prior's mean; data centred on it put the exact
    mode there too, so from there alone the check could not have failed. The searches
    from two exact posterior draws make it a test; an Exact without a sampler has only
    PyMC's start, and the check reads not informative (passed None), never ok."""
    import pymc as pm

    y = PRIOR_MEAN + np.array([-0.6, 0.6, -0.3, 0.3, 0.1, -0.1])
    with pm.Model() as model:
        mu = pm.Normal("mu", PRIOR_MEAN, sigma=PRIOR_SD)
        pm.Normal("y", mu, NOISE_SD, observed=y)
    exact = _exact_normal_mean(y)
    result = compare.check(model, exact, var_names=["mu"], draws=500, alpha=test_alpha)
    check = {c.name: c for c in result.checks}["map"]
    assert check.passed is True and "2 exact posterior draws" in check.note, check
    post = stats.norm(exact.mean[0], np.sqrt(exact.cov[0, 0]))
    no_sampler = compare.Exact(mean=exact.mean, cov=exact.cov, mode=exact.mean, marginals=[post])
    blind = compare.check(model, no_sampler, var_names=["mu"], draws=500, alpha=test_alpha)
    check = {c.name: c for c in blind.checks}["map"]
    assert check.passed is None and check.note.startswith("not informative"), check
    assert blind.decided_by == "agreement"
    assert "not informative" in str(blind)


@pytest.mark.mcmc
@pytest.mark.verdict
def test_a_user_model_too_short_is_extended_as_a_topic_is(user_model, test_alpha):
    """4 x 30 draws (ESS < 400 whatever the sampler): compare.check draws more, as
    compare.core.runner.run does for a built-in topic, and says so in its document."""
    result = compare.check(
        user_model, _exact_normal_mean(Y), var_names=["mu"], draws=30, alpha=test_alpha
    )
    doc = result.to_dict()
    ext = doc["extension"]
    assert ext["extensions"] >= 1 and ext["draws_final"] > 30, ext
    assert result.verdict == "agree", result
    assert doc["settings"]["draws"] == ext["draws_final"]


@pytest.mark.mcmc
def test_planted_bug_is_caught_as_the_cli_would(planted_bug):
    assert planted_bug.verdict == "disagree" and planted_bug.exit_code == 1
    assert planted_bug.decided_by == "agreement"
    flagged = {q.name for q in planted_bug.run.agreement.flagged}
    assert flagged & {"mean:mu", "scale:mu", "skew:mu", "kurt:mu"}
    assert "FAIL agreement" in repr(planted_bug)


#: The run document's top-level keys (README, "The command line": a public contract).
DOCUMENT_KEYS = {
    "topic",
    "verdict",
    "decided_by",
    "also_failed",  # every other failed check, the strongest gate first (issue 60)
    "parameters",
    "exact",
    "mcmc",
    "checks",
    "quantities",
    "settings",
    "data",
    "hyperparameters",
    "timings",
    "versions",
    "extension",  # how the run was extended (issue 15); every sampled run has it
    "power",  # what the agreement test could have caught (issue 60)
}


@pytest.mark.mcmc
def test_same_document_and_exact_side_as_the_builtin_topic(agreeing):
    """The user model is normal-known-variance: the same keys, and the same exact answer."""
    from compare.topics import get_topic

    doc = json.loads(agreeing.to_json())
    assert set(doc) == DOCUMENT_KEYS
    assert {"mean", "cov", "sd", "map", "mle", "marginals", "log_evidence", "quantiles"} <= set(
        doc["exact"]
    )
    assert [c["name"] for c in doc["checks"]] == [
        "rhat",
        "ess_bulk",
        "ess_tail",
        "divergences",
        "agreement",
        "map",
    ]
    topic = get_topic("normal-known-variance")
    post = topic.solve(x=Y, prior_mean=PRIOR_MEAN, prior_sd=PRIOR_SD, noise_sd=NOISE_SD).posterior
    np.testing.assert_allclose(doc["exact"]["mean"], post.mean, rtol=1e-12)
    np.testing.assert_allclose(doc["exact"]["cov"], post.cov, rtol=1e-12)
    assert doc["exact"]["marginals"][0]["family"] == "norm"


@pytest.mark.mcmc
def test_to_html_is_the_report_run_page(agreeing, tmp_path):
    page = agreeing.to_html(tmp_path)
    assert page == tmp_path / "runs" / "user-model" / "index.html"
    text = page.read_text()
    doc = json.loads((page.parent / "result.json").read_text())
    assert f'id="verdict">{doc["verdict"]}<' in text
    for kind in ("marginals", "trace", "rank", "zscores"):
        assert (page.parent / "figures" / f"{kind}.png").is_file(), kind
    assert 'class="error"' not in text
    assert (tmp_path / "index.html").is_file()
    html = agreeing._repr_html_()
    assert "AGREE" in html and "<table>" in html


# --- draws from anywhere ------------------------------------------------------------
def _dirichlet_exact() -> compare.Exact:
    """Dirichlet(3, 4, 5): singular covariance, so the first two coordinates are free."""
    alpha = np.array([3.0, 4.0, 5.0])
    dist = stats.dirichlet(alpha)
    a0 = alpha.sum()
    return compare.Exact(
        mean=dist.mean(),
        cov=dist.cov(),
        free=[0, 1],
        parameters=["p[a]", "p[b]", "p[c]"],
        marginals=[stats.beta(a, a0 - a) for a in alpha],
        sample=lambda rng, size: rng.dirichlet(alpha, size=size),
    )


@pytest.mark.verdict
@pytest.mark.parametrize("kind", ["gaussian", "dirichlet"])
def test_iid_exact_draws_agree(kind, rng, test_alpha):
    if kind == "gaussian":
        exact = compare.Exact(mean=[1.0, -2.0], cov=[[1.0, 0.6], [0.6, 2.0]], gaussian=True)
        draws = (
            stats.multivariate_normal(exact.mean, exact.cov)
            .rvs(size=4000, random_state=rng)
            .reshape(4, 1000, 2)
        )
    else:
        exact = _dirichlet_exact()
        draws = rng.dirichlet([3.0, 4.0, 5.0], size=4000).reshape(4, 1000, 3)
    result = compare.check_draws(draws, exact, alpha=test_alpha)
    assert result.verdict == "agree", result
    names = {q.name for q in result.quantities}
    if kind == "dirichlet":  # PITs of the marginals, dependence from the sampler
        assert {"loc:p[a]", "kurt:p[b]", "dep:p[a],p[b]"} <= names
    assert {c.name: c.passed for c in result.checks}["map"] is None


def test_shifted_draws_disagree(rng):
    exact = _dirichlet_exact()
    draws = rng.dirichlet([3.0, 4.0, 5.0], size=4000).reshape(4, 1000, 3)
    shift = 0.5 * np.sqrt(np.diag(exact.cov))
    result = compare.check_draws(draws + shift, exact)
    assert result.verdict == "disagree" and result.decided_by == "agreement"


def test_datatree_draws_and_a_sampler_only_exact(rng, test_alpha):
    """An ArviZ DataTree, one variable with a vector dim; exact given by a sampler alone."""
    draws = rng.gamma(5.0, 0.5, size=(4, 1000, 1))
    tree = xr.DataTree.from_dict(
        {"/posterior": xr.Dataset({"rate": (("chain", "draw", "k"), draws)})}
    )
    exact = compare.Exact(
        mean=[2.5], cov=[[1.25]], sample=lambda g, size: g.gamma(5.0, 0.5, size=(size, 1))
    )
    result = compare.check_draws(tree, exact, alpha=test_alpha)
    assert result.parameters == ("rate[0]",)
    # One coordinate, no marginal: its rank among the sampler's exact draws.
    assert {q.name for q in result.quantities} == {
        "loc:rate[0]",
        "scale:rate[0]",
        "skew:rate[0]",
        "kurt:rate[0]",
    }
    shifted = compare.check_draws(draws * 1.1, exact)
    assert shifted.verdict == "disagree"


def test_mean_and_cov_alone_test_means_only():
    """Without a marginal, a sampler or Gaussianity only the whitened means (null sd
    exactly 1) can be tested."""
    exact = compare.Exact(mean=[0.0], cov=[[1.0]])
    draws = np.random.default_rng(3).standard_normal((4, 1000))
    names = {q.name for q in compare.check_draws(draws, exact).quantities}
    assert names == {"mean:x[0]"}


# --- bad input: one clear message naming the parameter, the value and the fix ----------
@pytest.mark.parametrize(
    "kwargs, words",
    [
        (
            {"mean": [0, 0], "cov": [[1, 0.5], [0.2, 1]]},
            ["not symmetric", "cov[0, 1] = 0.5", "(cov + cov.T) / 2"],
        ),
        (
            {"mean": [0, 0], "cov": [[1, 2], [2, 1]]},
            ["not positive definite", "eigenvalue -1", "correlations in (-1, 1)"],
        ),
        ({"mean": [0, 0], "cov": [[1.0]]}, ["exact.cov has shape (1, 1)", "(2, 2)"]),
        ({"mean": [0, np.nan], "cov": np.eye(2)}, ["exact.mean[1] is nan", "finite"]),
        ({"mean": [0], "cov": [[1]], "parameters": ["a", "b"]}, ["2 names", "1 entries"]),
        (
            {"mean": [0], "cov": [[1]], "marginals": ["beta"]},
            ["exact.marginals[0]", "scipy.stats.beta(12, 8)"],
        ),
    ],
)
def test_bad_exact(kwargs, words):
    with pytest.raises(InputError) as err:
        compare.Exact(**kwargs)
    for word in words:
        assert word in str(err.value), (word, str(err.value))
    assert "\n" not in str(err.value)


def test_dimension_mismatch_names_the_variables(user_model):
    exact = compare.Exact(mean=[0.0, 1.0], cov=np.eye(2))
    with pytest.raises(
        InputError,
        match=r"var_names \['mu'\] give 1 values per draw "
        r"\(mu: 1\) but exact.mean has 2",
    ):
        compare.check(user_model, exact, var_names=["mu"])
    with pytest.raises(
        InputError,
        match=r"no variable\(s\) \['sigma'\]; its free variables "
        r"are \['mu'\]",
    ):
        compare.check(user_model, _exact_normal_mean(Y), var_names=["sigma"])


def test_discrete_model_is_refused():
    import pymc as pm

    with pm.Model() as model:
        pm.Poisson("k", 3.0)
    with pytest.raises(InputError, match=r"free variable\(s\) \['k'\] are discrete.*check_draws"):
        compare.check(model, compare.Exact(mean=[3.0], cov=[[3.0]]))


def test_bad_sampler_and_settings(user_model):
    exact = compare.Exact(mean=[0.0], cov=[[1.0]], sample=lambda rng, size: rng.normal(size=size))
    with pytest.raises(InputError, match=r"exact.sample\(rng, (\d+)\) returned shape \(\1,\)"):
        compare.check(user_model, exact, var_names=["mu"])
    with pytest.raises(InputError, match="draws must be an integer >= 1, got 0"):
        compare.check(user_model, _exact_normal_mean(Y), draws=0)
    with pytest.raises(
        InputError,
        match=r"draws must have shape \(chain, draw, d\) = "
        r"\(chain, draw, 1\), got shape \(10,\)",
    ):
        compare.check_draws(np.zeros(10), _exact_normal_mean(Y))
    with pytest.raises(InputError, match=r"draws have 2 values per draw but exact.mean has 1"):
        compare.check_draws(np.zeros((2, 10, 2)), _exact_normal_mean(Y))
    with pytest.raises(InputError, match=r"unknown setting\(s\) \['drawz'\]"):
        compare.run("beta-binomial", settings={"drawz": 10})


# --- the examples a user copies --------------------------------------------------------
def _run_example(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, cwd=ROOT, timeout=600
    )


@pytest.mark.mcmc
@pytest.mark.verdict
def test_example_conjugate_model(test_alpha):
    """A user's Gamma-Poisson model with exposures agrees (its report page: to_html above)."""
    out = _run_example(
        "examples/conjugate_model.py", "--draws", "1000", "--alpha", repr(test_alpha)
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "AGREE" in out.stdout and "ok   map" in out.stdout


@pytest.mark.verdict
def test_example_user_draws_and_its_planted_bug(test_alpha):
    """A user's own numpy Metropolis sampler: agrees; with the variance-as-sd bug, disagrees.

    Run through runpy in one interpreter, which also shows that checking
    draws never imports PyMC.
    """
    code = (
        "import runpy, sys\n"
        "codes = []\n"
        "for args in (['--alpha', sys.argv[1]], ['--bug']):\n"
        "    sys.argv = ['user_draws.py', *args]\n"
        "    try:\n"
        "        runpy.run_path('examples/user_draws.py', run_name='__main__')\n"
        "    except SystemExit as e:\n"
        "        codes.append(e.code)\n"
        "print('EXIT-CODES', *codes, 'PYMC-IMPORTED', 'pymc' in sys.modules)\n"
    )
    out = _run_example("-c", code, repr(test_alpha))
    assert out.returncode == 0, out.stdout + out.stderr
    assert "EXIT-CODES 0 1 PYMC-IMPORTED False" in out.stdout, out.stdout
    assert "AGREE" in out.stdout and "DISAGREE" in out.stdout


def test_run_reads_data_as_the_cli_does():
    """compare.run's data argument: builtin names, arrays, (x, y) tables; errors name the fix."""
    from compare.core.data import topic_data
    from compare.topics import get_topic

    table, _, source = topic_data(
        get_topic("linear-regression"),
        (np.arange(6.0)[:, None], np.arange(6.0) * 2),
        None,
        None,
        ["x"],
    )
    assert table.features == ("x",) and table.n == 6 and source == "array"
    values, dataset, source = topic_data(
        get_topic("beta-binomial"), "builtin:simulated", None, None, None
    )
    assert dataset.name == "simulated" and source == "builtin:simulated" and values.size == 40
    with pytest.raises(InputError, match=r"reads a table: pass data=\(x, y\)"):
        compare.run("linear-regression", data=np.zeros(3))
    with pytest.raises(InputError, match="no builtin data set 'nope'"):
        compare.run("beta-binomial", data="builtin:nope")
    with pytest.raises(InputError, match="unknown hyperparameter 'c'"):
        compare.run("beta-binomial", c=2.0)
    with pytest.raises(InputError, match=r"array, row 1: 2 is not 0 or 1"):
        compare.run("beta-binomial", data=np.array([0.0, 2.0]))


# --- settings given as text are read as --set reads them (issue 15) ----------------------
def test_text_hyperparameters_are_parsed_as_set_parses_them():
    """Before: categories="a,b,c" became the characters ('a', ',', 'b', ',', 'c')."""
    from compare.topics import get_topic

    topic = get_topic("dirichlet-categorical")
    given = {"categories": "a,b, c", "concentration": "1,2,3"}
    parsed = topic.hyper(given, parsed=False)  # what --set gives
    via_api = topic.hyper(given)  # what compare.run passes on
    assert via_api == parsed
    assert via_api["categories"] == ("a", "b", "c")
    assert via_api["concentration"] == (1.0, 2.0, 3.0)
    assert topic.hyper({"categories": ("x", "y")})["categories"] == ("x", "y")
    with pytest.raises(InputError, match=r"concentration.*'1,x'"):
        topic.hyper({"concentration": "1,x"})
    bool_topic = get_topic("logistic-regression")
    assert bool_topic.hyper({"intercept": "false"})["intercept"] is False


@pytest.mark.mcmc
@pytest.mark.verdict
def test_run_with_categories_as_text_agrees(test_alpha):
    """The API run of the issue: three categories from "a,b,c", one of them unseen."""
    result = compare.run(
        "dirichlet-categorical",
        data=np.array(["a", "b", "a", "a", "b"]),
        categories="a,b,c",
        settings={"alpha": test_alpha},
    )
    assert result.parameters == ("p[a]", "p[b]", "p[c]")
    assert result.verdict == "agree", result


# --- Exact.from_scipy: moments that exist, independent marginals (issue 15) ---------------
@pytest.mark.parametrize(
    "dist, bound",
    [
        (stats.t(4), 4.0),  # E|x|^r < inf iff r < df
        (stats.t(df=10, loc=2, scale=3), 10.0),  # loc/scale do not change the tail
        (stats.pareto(3.0, scale=2.0), 3.0),  # r < b
        (stats.invgamma(a=5.0), 5.0),  # r < a
        (stats.f(3, 12), 6.0),  # r < dfd / 2
        (stats.lomax(6.0), 6.0),  # r < c (scipy's moment(6) is finite by quad)
        (stats.gamma(3.0, scale=0.5), np.inf),
        (stats.beta(2.0, 3.0), np.inf),
        (stats.norm(1.0, 2.0), np.inf),
    ],
)
def test_from_scipy_infers_the_moments_that_exist(dist, bound):
    """Tail indices from the power-law tails of the densities (Johnson & Kotz)."""
    assert compare.Exact.from_scipy(dist).moments_below == bound
    assert compare.Exact.from_scipy(dist, moments_below=2.5).moments_below == min(bound, 2.5)


def test_student_t_4_gets_the_whole_battery(rng, test_alpha):
    """A t(4) has no finite fourth moment; its PIT is uniform all the same, so it is
    tested on location, scale, skewness and tail weight like any posterior (issue 60;
    before, quantile indicators alone). Power: draws 30% too wide move the PIT's
    scale component by ~0.3 per draw; at 8000 draws its z is ~25 >> the threshold."""
    exact = compare.Exact.from_scipy(stats.t(4))
    draws = stats.t(4).rvs(size=(4, 2000), random_state=rng)
    result = compare.check_draws(draws, exact, alpha=test_alpha)
    assert {q.name for q in result.quantities} == {
        "loc:x[0]",
        "scale:x[0]",
        "skew:x[0]",
        "kurt:x[0]",
    }
    assert result.verdict == "agree", result
    wide = compare.check_draws(draws * 1.3, exact, alpha=test_alpha)
    assert wide.verdict == "disagree"


def test_from_scipy_takes_independent_marginals(rng, test_alpha):
    """A list of scipy marginals: mean, diagonal covariance, joint log density (sum of the
    marginals'), sampler and quantiles; iid draws agree, a 10% wider gamma does not."""
    norm, gamma = stats.norm(1.0, 2.0), stats.gamma(3.0, scale=0.5)
    exact = compare.Exact.from_scipy([norm, gamma], parameters=["m", "r"])
    np.testing.assert_allclose(exact.mean, [1.0, 1.5], rtol=1e-15)
    np.testing.assert_allclose(exact.cov, np.diag([4.0, 0.75]), rtol=1e-15)
    x = np.array([[0.3, 1.2], [2.0, 0.4]])
    np.testing.assert_allclose(
        exact.logpdf(x), norm.logpdf(x[:, 0]) + gamma.logpdf(x[:, 1]), rtol=1e-13
    )
    assert exact.moments_below == np.inf and not exact.gaussian
    assert exact.sample(rng, 5).shape == (5, 2)
    draws = np.stack(
        [norm.rvs(size=(4, 1000), random_state=rng), gamma.rvs(size=(4, 1000), random_state=rng)],
        axis=-1,
    )
    result = compare.check_draws(draws, exact, alpha=test_alpha)
    assert result.verdict == "agree", result
    assert {"loc:m", "scale:r", "dep:m,r", "kurt:r"} <= {q.name for q in result.quantities}
    # Power: gamma scale x 1.1 shifts its mean by 0.15 = 0.17 sd: z ~ 0.17 sqrt(4000) ~ 11.
    wide = draws.copy()
    wide[..., 1] *= 1.1
    assert compare.check_draws(wide, exact, alpha=test_alpha).verdict == "disagree"
    with pytest.raises(InputError, match=r"entry 1 must be a frozen univariate scipy"):
        compare.Exact.from_scipy([norm, "gamma"])
    with pytest.raises(InputError, match="entry 0: cauchy"):
        compare.Exact.from_scipy([stats.cauchy(), gamma])


@pytest.mark.mcmc
def test_check_takes_the_settings_run_takes(user_model, test_alpha):
    """settings= reaches every Settings field (here: no extension, a smaller exact
    reference, a stricter gate), the keyword arguments win over the same keys, and
    an unknown key is refused naming it, before anything compiles (issue 61)."""
    result = compare.check(
        user_model,
        _exact_normal_mean(Y),
        var_names=["mu"],
        draws=600,
        alpha=test_alpha,
        settings={"draws": 5000, "max_extensions": 0, "n_reference": 20_000, "ess_min": 450},
    )
    used = result.run.settings
    assert used.draws == 600 and used.max_extensions == 0
    assert used.n_reference == 20_000 and used.ess_min == 450
    assert json.loads(result.to_json())["extension"]["max_extensions"] == 0
    gates = {c.name: c for c in result.checks}
    assert gates["ess_bulk"].threshold == 450
    with pytest.raises(compare.InputError, match=r"unknown setting\(s\) \['draw'\]"):
        compare.check(user_model, _exact_normal_mean(Y), var_names=["mu"], settings={"draw": 9})


@pytest.mark.mcmc
def test_a_model_that_cannot_start_is_one_clear_error():
    """Written the natural way, a Pareto prior with Uniform data above its initial
    point: nutpie's 'All initialization points failed' (a Rust backtrace) becomes
    one InputError naming the observed variable, the initial point and the fix;
    with initval= the same model samples (issue 61)."""
    import pymc as pm

    y = np.array([1.5, 2.7, 3.2, 0.4, 2.2])
    exact = compare.Exact.from_scipy(stats.pareto(2 + len(y), scale=y.max()))
    with pm.Model() as model:
        theta = pm.Pareto("theta", alpha=2, m=1)
        pm.Uniform("y", 0, theta, observed=y)
    with pytest.raises(compare.InputError) as err:
        compare.check(model, exact, var_names=["theta"], draws=300)
    text = str(err.value)
    assert "cannot start" in text and "observed y" in text and "theta = 1.414" in text
    assert "initval" in text and "Stack backtrace" not in text
    with pm.Model() as started:
        theta = pm.Pareto("theta", alpha=2, m=1, initval=4.0)
        pm.Uniform("y", 0, theta, observed=y)
    result = compare.check(started, exact, var_names=["theta"], draws=300, alpha=1e-3)
    assert result.verdict in ("agree", "inconclusive")  # the sharp edge may diverge


def test_from_scipy_integrates_no_moment():
    """With marginals no test needs a moment: from_scipy computes none beyond mean
    and variance (a von Mises spent 24 s integrating orders 1-9; issue 61), so a
    family outside the heavy-tail table is taken as having them all."""
    dist = stats.vonmises(2.0, loc=0.3)
    dist.moment = lambda *a, **k: pytest.fail("from_scipy integrated a moment")
    exact = compare.Exact.from_scipy(dist)
    assert exact.moments_below == np.inf
    assert compare.Exact.from_scipy(stats.t(4)).moments_below == 4.0  # the table still


def test_a_quantile_function_is_asked_once_per_level():
    """exact.quantile(p) returns every coordinate's quantile: it is called once per
    level, not once per level and coordinate, and a second check of the same Exact
    calls it no more (a 1.5 s quadrature quantile with 10 coordinates cost 45 s of
    a check; issue 61)."""
    d = 10
    calls = []

    def quantile(p):
        calls.append(p)
        return stats.gamma(3.0, scale=0.5).ppf(np.full(d, p))

    dist = stats.gamma(3.0, scale=0.5)
    exact = compare.Exact(
        mean=np.full(d, dist.mean()), cov=np.eye(d) * dist.var(), quantile=quantile
    )
    draws = dist.rvs(size=(4, 500, d), random_state=np.random.default_rng(1))
    compare.check_draws(draws, exact, alpha=1e-3)
    first = len(calls)
    assert first == len(set(calls)) <= 25, sorted(calls)
    compare.check_draws(draws, exact, alpha=1e-3)
    assert len(calls) == first


MULTIVARIATE_SCIPY = {
    "dirichlet": (stats.dirichlet([3.0, 5.0, 9.0]), stats.dirichlet([3.0, 5.0, 7.0])),
    "multivariate_t": (
        stats.multivariate_t([0.5, -1.0], [[1.0, 0.4], [0.4, 2.0]], df=7),
        stats.multivariate_t([0.5, -1.0], [[1.0, 0.4], [0.4, 2.0]], df=3.5),
    ),
    "wishart": (
        stats.wishart(7, [[1.0, 0.3], [0.3, 0.5]]),
        stats.wishart(7, [[1.0, 0.0], [0.0, 0.5]]),
    ),
    "invwishart": (
        stats.invwishart(9, [[1.0, 0.3], [0.3, 0.5]]),
        stats.invwishart(11, [[1.2, 0.36], [0.36, 0.6]]),
    ),
}


@pytest.mark.parametrize("kind", list(MULTIVARIATE_SCIPY))
def test_from_scipy_takes_the_multivariate_families(kind):
    """Dirichlet, multivariate t, Wishart and inverse Wishart from scipy: their
    exact iid draws agree (moments in closed form match the draws'), and draws of a
    near neighbour (a different concentration, df or scale) disagree (issue 61)."""
    right, wrong = MULTIVARIATE_SCIPY[kind]
    exact = compare.Exact.from_scipy(right)
    rng = np.random.default_rng(5)
    draws = np.asarray(right.rvs(size=4000, random_state=rng)).reshape(4, 1000, -1)
    np.testing.assert_allclose(draws.reshape(4000, -1).mean(0), exact.mean, atol=0.1)
    assert compare.check_draws(draws, exact, alpha=1e-3).verdict == "agree"
    other = np.asarray(wrong.rvs(size=4000, random_state=rng)).reshape(4, 1000, -1)
    assert compare.check_draws(other, exact, alpha=1e-3).verdict == "disagree"


@pytest.mark.parametrize(
    "quantile, message",
    [
        (lambda p: np.array([p, 1.0 - p]), r"not monotone: coordinate 1 \(b\)"),
        (lambda p: np.array([p]), r"returned 1 values; .* shape \(2,\)"),
        (lambda p: np.array([p, np.nan]), r"exact.quantile\(0\.\d+\)\[1\] is nan"),
    ],
)
def test_a_bad_quantile_function_is_refused_naming_the_level(quantile, message):
    """A quantile function of the wrong shape, with NaN or decreasing in the level
    is one InputError naming the level (and the coordinate), not a wrong verdict."""
    exact = compare.Exact(
        mean=[0.5, 0.5], cov=np.eye(2) / 12, parameters=["a", "b"], quantile=quantile
    )
    draws = np.random.default_rng(0).random((4, 200, 2))
    with pytest.raises(compare.InputError, match=message):
        compare.check_draws(draws, exact)


@pytest.mark.mcmc
def test_divergences_alone_are_retried_with_smaller_steps(test_alpha):
    """A funnel whose chains agree (R-hat passes) but which diverges at nutpie's default
    target_accept (0.8; measured 33-61 divergences in 4 x 2000 draws): the run is
    sampled once more, afresh, at target_accept 0.95 (measured 1-10), recorded in
    the run document and the output, and a divergence that remains names what would
    help; with retry_target_accept=0 there is no retry (issue 61)."""
    import pymc as pm

    with pm.Model() as model:
        v = pm.Normal("v", 0.0, 1.5)
        pm.Normal("x", 0.0, pm.math.exp(v / 2), shape=2)
    # Marginal only: the funnel's joint mode (v -> -inf) is not v's marginal mode.
    exact = compare.Exact(mean=[0.0], cov=[[2.25]], marginals=[stats.norm(0.0, 1.5)])
    result = compare.check(model, exact, var_names=["v"], alpha=test_alpha)
    extension = json.loads(result.to_json())["extension"]
    retry = extension["retry"]
    assert retry is not None and retry["target_accept"] == 0.95, str(extension["samplings"])
    assert retry["divergences_before"] > 0
    assert any("resampled at target_accept 0.95" in line for line in result.run.extra.lines)
    note = {c.name: c for c in result.checks}["divergences"].note
    if retry["divergences_after"]:
        assert result.decided_by == "divergences"
        assert "sampler_options={'target_accept': 0.99}" in note, note
    else:
        assert "none after resampling at target_accept 0.95" in note, note
    plain = compare.check(
        model, exact, var_names=["v"], alpha=test_alpha, settings={"retry_target_accept": 0}
    )
    assert json.loads(plain.to_json())["extension"]["retry"] is None
    assert plain.decided_by == "divergences"
    assert "sampler_options={'target_accept': 0.95}" in (
        {c.name: c for c in plain.checks}["divergences"].note
    )


def test_an_exact_whose_parts_disagree_is_refused_naming_which():
    """Marginals, a sampler or a quantile function describing another posterior than
    mean and cov: one InputError naming the part, before anything samples (issue 61);
    the consistent parts of every other test pass the same check."""
    dist = stats.gamma(3.0, scale=0.5)
    mean, cov = [dist.mean()], [[dist.var()]]
    draws = dist.rvs(size=(4, 500, 1), random_state=np.random.default_rng(2))
    wrong = {
        "marginals": ({"marginals": [stats.gamma(3.3, scale=0.5)]}, r"marginals\[0\].* mean"),
        "sample": (
            {"sample": lambda rng, n: stats.gamma(3.3, scale=0.5).rvs((n, 1), random_state=rng)},
            r"sample disagrees with mean",
        ),
        "quantile": (
            {
                "sample": lambda rng, n: dist.rvs((n, 1), random_state=rng),
                "quantile": lambda p: np.array([stats.gamma(3.0, scale=0.6).ppf(p)]),
            },
            r"quantile\(0.25\) disagrees with sample",
        ),
    }
    for parts, message in wrong.values():
        with pytest.raises(compare.InputError, match=message):
            compare.check_draws(draws, compare.Exact(mean=mean, cov=cov, **parts))
    right = compare.Exact(
        mean=mean,
        cov=cov,
        marginals=[dist],
        sample=lambda rng, n: dist.rvs((n, 1), random_state=rng),
        quantile=lambda p: np.array([dist.ppf(p)]),
    )
    assert compare.check_draws(draws, right, alpha=1e-3).verdict == "agree"


def test_an_exacts_consistency_is_checked_once():
    """A second check of the same Exact does not draw from its sampler again for
    the consistency check (only the test's own reference draws remain)."""
    dist = stats.gamma(3.0, scale=0.5)
    sizes = []

    def sample(rng, n):
        sizes.append(n)
        return dist.rvs((n, 1), random_state=rng)

    exact = compare.Exact(mean=[dist.mean()], cov=[[dist.var()]], sample=sample)
    draws = dist.rvs(size=(4, 500, 1), random_state=np.random.default_rng(3))
    compare.check_draws(draws, exact, alpha=1e-3)
    assert 4000 in sizes
    sizes.clear()
    compare.check_draws(draws, exact, alpha=1e-3)
    assert 4000 not in sizes, sizes
