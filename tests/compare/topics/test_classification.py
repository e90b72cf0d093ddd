"""The classification topics through the compare layer: data preparation, the
tokenizer, bad input on the command line, PyMC's discrete sampler, and real
runs that must agree (or, with PyMC's biased step, disagree)."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import numpy as np
import pytest
from sklearn.naive_bayes import BernoulliNB

from analytic import bayes_optimal as bo
from compare.core.data import table_from_arrays
from compare.core.registry import InputError
from compare.core.runner import run
from compare.core.sampling import ModelCache, compile_model
from compare.interfaces.cli import main
from compare.topics import _classification as clf
from compare.topics import bayes_optimal as bot
from compare.topics import get_topic
from compare.topics import naive_bayes as nbt


def _main(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


# --- tokenizer and data --------------------------------------------------------------
def test_tokenize_drops_case_punctuation_and_stop_words():
    assert clf.tokenize("Call NOW to claim your FREE prize!") == [
        "call",
        "now",
        "claim",
        "free",
        "prize",
    ]
    assert clf.tokenize("I'm home, don't wait: 2 x 10") == ["i'm", "home", "don't", "wait", "10"]


def test_vocabulary_counts_documents_not_tokens():
    docs = [["free", "free", "free"], ["call", "now"], ["call", "home"], ["now", "home"]]
    # free is in 1 document (3 tokens); call, home and now in 2 each; ties alphabetical.
    assert clf.vocabulary(docs, size=3) == ("call", "home", "now")
    np.testing.assert_array_equal(
        clf.bag_of_words(docs, ("free", "call")), [[3, 0], [0, 1], [0, 1], [0, 0]]
    )


def test_builtin_data_as_documented():
    spam = nbt.load_spam()
    assert spam.n == 86 and sorted(set(spam.labels)) == ["ham", "spam"]
    titanic = nbt.load_titanic()
    assert titanic.n == 2201 and int(np.sum(titanic.labels == "Yes")) == 711
    tennis = nbt.load_play_tennis()
    assert tennis.n == 14 and int(np.sum(tennis.labels == "Yes")) == 9
    assert bot.load_enjoy_sport().n == 4


def test_every_kth_row_is_held_out():
    topic = get_topic("naive-bayes")
    data, _ = nbt.nb_prepare(nbt.load_spam(), topic.hyper(overrides={"holdout": 4}))
    assert len(data) == 86 - 21 and data.test_rows[:2] == ("row 4", "row 8")
    # The vocabulary comes from the training rows only.
    rows = nbt.load_spam()
    train_docs = [set(clf.tokenize(m)) for i, m in enumerate(rows.columns[0]) if (i + 1) % 4]
    df = {t: sum(t in d for d in train_docs) for d in train_docs for t in d}
    ranked = sorted(df, key=lambda t: (-df[t], t))[:20]
    assert data.notes["vocabulary"] == tuple(ranked)


def test_text_needs_a_bag_of_words():
    topic = get_topic("naive-bayes")
    with pytest.raises(InputError, match="variant=multinomial or bernoulli"):
        nbt.nb_prepare(nbt.load_spam(), topic.hyper(overrides={"variant": "categorical"}))


def test_play_tennis_query_is_classified_no():
    """Mitchell sec. 6.9.1: <sunny, cool, high, strong> -> no (with alpha = 1 too)."""
    topic = get_topic("naive-bayes")
    ds = topic.builtin_data("play-tennis")
    data, hyper = topic.prepare(ds.load(), topic.hyper(dataset=ds))
    ans = topic.solve(x=data, **hyper)
    assert data.test_rows == ("query 1",) and data.test_y[0] == -1
    lp = ans.predictive.log_proba(data.test_x)
    assert data.classes[int(lp[0].argmax())] == "No"


def test_mcmc_predictive_with_constant_draws_is_the_plug_in(rng):
    """Draws all at the posterior mean: the Monte Carlo predictive is the plug-in exactly."""
    topic = get_topic("naive-bayes")
    for name, over in (("spam", {}), ("spam", {"variant": "bernoulli"}), ("titanic", {})):
        ds = topic.builtin_data(name)
        data, hyper = topic.prepare(ds.load(), topic.hyper(overrides=over, dataset=ds))
        post = topic.solve(x=data, **hyper).posterior
        s = 3
        pi = np.tile(post.class_mean, (s, 1))
        theta = np.tile(post.feature_mean, (s, 1, 1))
        got = nbt.mcmc_log_proba(
            variant=data.variant, pi=pi, theta=theta, x=data.test_x[:20], groups=post.groups
        )
        ref = topic.solve(x=data, **hyper).predictive.plugin_log_proba(data.test_x[:20])
        np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-12)


# --- bad input through the command line -----------------------------------------------
BAD = [
    ("naive-bayes", "a,b,y\n1,0,1\n0,1,1\n", [], ["one class only", "--set classes"]),
    ("naive-bayes", "a,y\n1,0\ninf,1\n", [], ["line 3", "'inf'", "not a finite number"]),
    (
        "naive-bayes",
        "a,y\n1,0\n2,1\n2,1\n3,1\n1,1\n",
        ["--set", "variant=categorical", "--set", "holdout=2"],
        ["row 4", "feature 'a'", "category '3'", "unseen at training time"],
    ),
    ("naive-bayes", "a,y\n1,0\n-2,1\n", [], ["row 2", "'-2'", "not a count"]),
    ("naive-bayes", "a,y\n1,0\n2,1\n", ["--set", "variant=bernoulli"], ["'2'", "not 0 or 1"]),
    (
        "naive-bayes",
        "a,y\n1,0\n2,1\n",
        ["--set", "variant=poisson"],
        ["variant must be one of", "multinomial"],
    ),
    (
        "naive-bayes",
        "a,y\n1,0\n2,1\n1,0\n3,2\n",
        ["--set", "holdout=4"],
        ["held-out row 4", "class '2'", "unseen at training time"],
    ),
    # Text CSVs (read by read_labelled through the command line) and the gaussian variant.
    (
        "naive-bayes",
        "message,y\nwin cash now,spam\nfree prize today,spam\n",
        [],
        ["one class only", "'spam'", "--set classes"],
    ),
    (
        "naive-bayes",
        "outlook,y\nsunny,no\nrain,yes\nsunny,yes\novercast,no\n",
        ["--set", "variant=categorical", "--set", "holdout=4"],
        ["row 4", "feature 'outlook'", "category 'overcast'", "unseen at training time"],
    ),
    (
        "naive-bayes",
        "a,y\n1.5,cat\nnan,dog\n",
        ["--set", "variant=gaussian"],
        ["row 2", "column 'a'", "'nan'", "not a finite number"],
    ),
    (
        "naive-bayes",
        "a,y\n1.5,cat\n-inf,dog\n",
        ["--set", "variant=gaussian"],
        ["row 2", "'-inf'", "not a finite number"],
    ),
    (
        "naive-bayes",
        "a,y\nabc,0\n1,1\n",
        ["--set", "variant=gaussian"],
        ["row 1", "'abc' is not a number", "gaussian variant needs numeric features"],
    ),
    (
        "naive-bayes",
        "a,y\n1,0\n2,1\n",
        ["--set", "variant=gaussian", "--set", "kappa0=0"],
        ["kappa0 must be > 0", "got 0"],
    ),
    ("bayes-optimal", "a,y\n1,2\n", [], ["row 1", "'2'", "not a 0/1"]),
    ("bayes-optimal", "a,y\n1,1\n2,0\n", ["--set", "noise=0.7"], ["noise must be in [0, 0.5)"]),
    ("bayes-optimal", "a,y\n1,1\n1,0\n", [], ["no hypothesis is consistent", "noise"]),
    ("bayes-optimal", "a,y\n1,1\n2,0\n", ["--set", "prior=1,2"], ["prior has 2 weight"]),
]


@pytest.mark.parametrize("topic, text, extra, words", BAD)
def test_bad_input_is_one_clear_line_and_writes_nothing(
    tmp_path, capsys, topic, text, extra, words
):
    path = tmp_path / "data.csv"
    path.write_text(text)
    out_dir, json_path = tmp_path / "out", tmp_path / "result.json"
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        code, out, err = _main(
            capsys,
            "run",
            topic,
            "--data",
            str(path),
            "--target",
            "y",
            *extra,
            "--out",
            str(out_dir),
            "--json",
            str(json_path),
        )
    finally:
        os.chdir(cwd)
    assert code == 3, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    for word in words:
        assert word in lines[0], lines[0]
    assert "Traceback" not in err and out == ""
    assert not out_dir.exists() and not json_path.exists()
    assert not (tmp_path / "reports").exists()


# --- PyMC's side of the discrete topic ------------------------------------------------
@pytest.mark.parametrize("dataset", ["three-hypotheses", "medical-test"])
def test_pymc_map_by_enumeration_is_the_exact_mode(dataset):
    topic = get_topic("bayes-optimal")
    ds = topic.builtin_data(dataset)
    x, hyper = topic.prepare(ds.load(), topic.hyper(dataset=ds))
    exact = topic.solve(x=x, **hyper)
    model = compile_model(
        topic.build_model(**topic.structure(x, hyper)), topic.variables, step=topic.step
    )
    np.testing.assert_array_equal(
        model.map_point(topic.model_data(x=x, **hyper)), exact.posterior.mode
    )


@pytest.mark.mcmc
def test_proportional_gibbs_step_is_caught(test_settings):
    """Power on a real bug: PyMC 6.4's CategoricalGibbsMetropolis(proposal="proportional")
    accepts with the renormalised proposal probability and settles on P(h1) = 0.363, not
    0.4 (its stationary law, computed by hand in pymc_models/bayes_optimal.py).  With
    8000 draws the z of P(h1) is ~ -0.037 / (0.49 / sqrt(ESS ~ 8000)) ~ -6.7, well past
    the threshold (4.3 at alpha 1e-4), so the verdict says disagree."""
    import pymc as pm

    topic = get_topic("bayes-optimal")
    biased = dataclasses.replace(
        topic,
        step=lambda model: pm.CategoricalGibbsMetropolis(
            model.free_RVs, proposal="proportional", model=model
        ),
    )
    ds = topic.builtin_data("three-hypotheses")
    result = run(
        biased,
        data=ds.load(),
        hyper=topic.hyper(dataset=ds),
        cache=ModelCache(),
        settings=dataclasses.replace(test_settings, extras=False),
    )
    assert result.verdict == "disagree" and result.decided_by == "agreement"
    assert result.mcmc.mean[0] == pytest.approx(0.3636, abs=0.02)


@pytest.mark.mcmc
def test_the_trusted_input_step_draws_what_the_checked_step_draws(test_settings, monkeypatch):
    """``step_methods`` compiles the step's log density with ``trust_input=True`` (no
    input check per call); on EnjoySport (7 coordinates, 973 hypotheses) it must draw,
    for one seed, exactly what PyMC's step with every input checked draws.  A step
    handed inputs of another dtype or shape would read them wrongly and draw otherwise.
    (Both call their compiled log density, as for a space too large to enumerate:
    an enumerable one is read from a table, ``compare.core.sampling.tabulate``.)"""
    import pymc as pm

    from compare.core.sampling import UNTABULATED_ENV
    from pymc_models import bayes_optimal as m_bo

    monkeypatch.setenv(UNTABULATED_ENV, "1")

    topic = get_topic("bayes-optimal")
    ds = topic.builtin_data("enjoy-sport")
    settings = dataclasses.replace(test_settings, extras=False, draws=300, tune=100)

    def draws(step):
        result = run(
            dataclasses.replace(topic, step=step),
            data=ds.load(),
            hyper=topic.hyper(dataset=ds),
            cache=ModelCache(),
            settings=settings,
        )
        return result.draws["posterior"]["hypothesis"].values

    trusted = draws(m_bo.step_methods)
    checked = draws(
        lambda model: pm.CategoricalGibbsMetropolis(model.free_RVs, proposal="uniform", model=model)
    )
    assert np.unique(trusted).size > 1  # the chains moved: equal draws say something
    np.testing.assert_array_equal(trusted, checked)


# --- real runs that must agree --------------------------------------------------------
@pytest.mark.mcmc
@pytest.mark.verdict
def test_naive_bayes_csv_run_agrees_with_sklearn_estimates(tmp_path, capsys, rng, test_alpha):
    """A user CSV of 0/1 features; the exact means are BernoulliNB's smoothed estimates."""
    n = 60
    y = rng.integers(0, 2, size=n)
    x = rng.random((n, 3)) < np.where(y[:, None] == 1, [0.8, 0.3, 0.6], [0.2, 0.5, 0.4])
    path = tmp_path / "flags.csv"
    path.write_text(
        "a,b,c,spam\n" + "".join(f"{int(r[0])},{int(r[1])},{int(r[2])},{t}\n" for r, t in zip(x, y))
    )
    code, out, err = _main(
        capsys,
        "run",
        "naive-bayes",
        "--data",
        str(path),
        "--target",
        "spam",
        "--set",
        "variant=bernoulli",
        "--set",
        "alpha=0.5",
        "--set",
        "holdout=0",
        "--alpha",
        f"{test_alpha}",
        "--json",
        "-",
        "--out",
        str(tmp_path / "run"),
    )
    doc = json.loads(out)
    assert code == 0 and doc["verdict"] == "agree", err
    # BernoulliNB(alpha=0.5): exp(feature_log_prob_) = (N_cj + 0.5) / (n_c + 1), the Beta means.
    sk = BernoulliNB(alpha=0.5, binarize=None).fit(x.astype(float), y)
    np.testing.assert_allclose(
        doc["exact"]["mean"][2:], np.exp(sk.feature_log_prob_).ravel(), rtol=1e-8
    )
    assert doc["parameters"][:3] == ["pi[0]", "pi[1]", "theta[0,a]"]


@pytest.mark.mcmc
@pytest.mark.verdict
def test_bayes_optimal_noisy_csv_run_agrees(tmp_path, capsys, test_alpha):
    """Concept learning from a CSV with label noise: 37 conjunctions, the top ones compared."""
    rows = [
        (0, 0, 1, 1),
        (0, 1, 1, 1),
        (1, 0, 0, 0),
        (2, 1, 0, 0),
        (0, 1, 0, 1),
        (1, 1, 1, 0),
        (2, 0, 1, 0),
        (0, 0, 0, 0),
    ]  # the last label is noise against a = 0
    path = tmp_path / "concept.csv"
    path.write_text("a,b,c,y\n" + "".join(",".join(map(str, r)) + "\n" for r in rows))
    code, out, err = _main(
        capsys,
        "run",
        "bayes-optimal",
        "--data",
        str(path),
        "--target",
        "y",
        "--set",
        "noise=0.1",
        "--alpha",
        f"{test_alpha}",
        "--json",
        "-",
        "--out",
        str(tmp_path / "run"),
    )
    doc = json.loads(out)
    assert code == 0 and doc["verdict"] == "agree", err
    section = doc["bayes_optimal"]
    assert section["hypotheses"] == 4 * 3 * 3 + 1 and section["draws_outside_support"] == 0
    errors = section["new_instances"]["mean_errors"]
    assert errors["gibbs"] <= 2 * errors["bayes_optimal"]
    # The exact bucket probabilities are Bayes' rule over all 37 hypotheses.
    codes = np.array([r[:3] for r in rows])
    space = bo.conjunctions(
        attributes=("a", "b", "c"), domains=[("0", "1", "2"), ("0", "1"), ("0", "1")]
    )
    says = space.predict(codes)
    y = np.array([r[3] for r in rows])
    lik = np.prod(np.where(says == y, 0.9, 0.1), axis=1)
    post = lik / lik.sum()
    names = space.names
    for name, mean in zip(doc["parameters"], doc["exact"]["mean"]):
        label = name[len("P(h=") : -1]
        if label in names:
            assert mean == pytest.approx(post[names.index(label)], rel=1e-10)


def test_simulated_table_round_trips_through_prepare(rng):
    """What the null studies feed the topics: numeric tables with declared classes."""
    topic = get_topic("naive-bayes")
    hyper = topic.hyper(overrides={"variant": "bernoulli", "classes": ("0", "1"), "holdout": 0})
    sim = topic.simulate(rng, 5, hyper)
    data, _ = topic.prepare(sim.data, hyper)
    assert data.classes == ("0", "1") and data.x.shape == (5, 4)
    table = table_from_arrays(np.array([[0.0], [1.0]]), np.array([1.0, 1.0]))
    with pytest.raises(InputError, match="one class only"):
        topic.prepare(table, topic.hyper(overrides={"variant": "bernoulli"}))


def test_describe_both_topics(capsys):
    # Parameter names keep their brackets: rich markup would read "[ham,now]" as a tag.
    for name, words in (
        (
            "naive-bayes",
            [
                "Dirichlet",
                "builtin:spam",
                "pi[ham], pi[spam], theta[ham,now]",
                "builtin:iris",
                "gaussian",
            ],
        ),
        ("bayes-optimal", ["Bayes-optimal", "builtin:enjoy-sport", "P(h="]),
    ):
        code, out, _ = _main(capsys, "describe", name)
        assert code == 0
        for word in words:
            assert word in out, (name, word)


def test_datasets_are_listed_in_sources():
    text = (Path(clf.__file__).parents[1] / "datasets" / "SOURCES.md").read_text()
    for file in (
        "spam_ham.csv",
        "titanic.csv",
        "play_tennis.csv",
        "enjoy_sport.csv",
        "naive-bayes `builtin:iris`",
    ):
        assert file in text


# --- text CSVs and the gaussian variant -------------------------------------------------
def _write_csv(path, header, rows):
    import csv

    with path.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(header)
        writer.writerows(rows)


def test_csv_kinds_are_detected(tmp_path):
    """A column with a cell that is not a number is text; the others stay categories;
    with variant=categorical the words are category labels: a CSV of Mitchell's table
    gives the builtin's statistics."""
    path = tmp_path / "mixed.csv"
    _write_csv(path, ["n", "words", "label"], [["1", "free cash", "spam"], ["2", "at home", "ham"]])
    assert clf.has_text(path, target="label", features=("n", "words"))
    assert not clf.has_text(path, target="n", features=())
    rows = clf.read_labelled(path, target="label", detect=True)
    assert rows.kinds == ("category", "text") and rows.detected
    topic = get_topic("naive-bayes")
    tennis = nbt.load_play_tennis()
    path = tmp_path / "tennis.csv"
    _write_csv(
        path,
        [*tennis.features, tennis.target],
        [[*(c[i] for c in tennis.columns), tennis.labels[i]] for i in range(tennis.n)],
    )
    hyper = topic.hyper(overrides={"variant": "categorical", "holdout": 0})
    got, _ = topic.prepare(clf.read_labelled(path, target=tennis.target, detect=True), hyper)
    ref, _ = topic.prepare(dataclasses.replace(tennis, query=()), hyper)
    assert got.feature_names == ref.feature_names and got.classes == ref.classes
    np.testing.assert_array_equal(got.stats.feature_counts, ref.stats.feature_counts)


def test_gaussian_mcmc_predictive_with_constant_draws_is_the_mle_plug_in():
    """Draws all at the MLE (class shares, means, variances): the Monte Carlo predictive
    is the plug-in classifier (GaussianNB) exactly."""
    topic = get_topic("naive-bayes")
    ds = topic.builtin_data("iris")
    data, hyper = topic.prepare(ds.load(), topic.hyper(dataset=ds))
    ans = topic.solve(x=data, **hyper)
    c = len(data.classes)
    pi = np.tile(ans.mle[:c], (3, 1))
    theta = np.tile(ans.mle[c:].reshape(c, -1, 2), (3, 1, 1, 1))
    got = nbt.mcmc_log_proba(variant="gaussian", pi=pi, theta=theta, x=data.test_x, groups=())
    np.testing.assert_allclose(
        got, ans.predictive.plugin_log_proba(data.test_x), rtol=1e-10, atol=1e-12
    )
    assert len(data) == 120 and data.test_x.shape == (30, 4)


@pytest.mark.mcmc
def test_planted_variance_bug_in_the_gaussian_model_is_caught(test_settings):
    """Power: the likelihood's variance x 1.1^2 in PyMC (compare/planted.py, noise_sd).
    On builtin:iris (40 rows per class, alpha_n = 22) each sigma2 moves to ~1/1.21 of
    its value, ~0.8 posterior sd, so with ESS ~8000 (4 x 2000 draws) the z of the
    sigma2 means is ~0.8 sqrt(8000) ~ 70, far past the threshold (~5.5 at the suite's
    alpha): caught in every run, whatever the seed."""
    from compare.studies.planted import planted

    topic = get_topic("naive-bayes")
    ds = topic.builtin_data("iris")
    settings = dataclasses.replace(test_settings, extras=False)
    result = run(
        planted("naive-bayes", "noise_sd", 1.1),
        data=ds.load(),
        hyper=topic.hyper(dataset=ds),
        settings=settings,
    )
    assert result.verdict == "disagree" and result.decided_by == "agreement", [
        (c.name, c.statistic, c.threshold) for c in result.checks
    ]
    worst = max(result.agreement.quantities, key=lambda q: abs(q.z))
    assert "sigma2" in worst.name and abs(worst.z) > 10


SPAM_WORDS = (
    "win free cash now",
    "free prize call now",
    "call now to win",
    "claim free prize",
    "free cash offer",
    "win a prize now",
)
HAM_WORDS = (
    "see you at home",
    "dinner at home tonight",
    "call me later",
    "home by six",
    "meeting moved to monday",
    "later at home then",
)


@pytest.mark.mcmc
@pytest.mark.verdict
def test_text_csv_runs_from_the_command_line(tmp_path, capsys, test_alpha):
    """A CSV of labelled messages: the CLI tokenises it (read_labelled), the vocabulary is
    in the JSON, the run agrees, and the printed table keeps the bracketed names."""
    rows = [[m, "spam"] for m in SPAM_WORDS * 3] + [[m, "ham"] for m in HAM_WORDS * 3]
    path = tmp_path / "messages.csv"
    _write_csv(path, ["text", "kind"], rows)
    # Bernoulli over 3 words and 2 classes: the same model as the flags CSV test above
    # (one compile for both).
    code, out, err = _main(
        capsys,
        "run",
        "naive-bayes",
        "--data",
        str(path),
        "--target",
        "kind",
        "--set",
        "variant=bernoulli",
        "--set",
        "vocabulary=3",
        "--set",
        "holdout=0",
        "--alpha",
        f"{test_alpha}",
        "--json",
        "-",
        "--out",
        str(tmp_path / "run"),
    )
    assert code == 0, err
    doc = json.loads(out)
    assert doc["verdict"] == "agree"
    docs = [clf.tokenize(m) for m, _ in rows]
    assert doc["naive_bayes"]["vocabulary"] == list(clf.vocabulary(docs, size=3))
    assert "free" in doc["naive_bayes"]["vocabulary"]
    first_word = doc["naive_bayes"]["vocabulary"][0]
    assert doc["parameters"][:3] == ["pi[ham]", "pi[spam]", f"theta[ham,{first_word}]"]
    assert "theta[ham," in err and "theta[spam," in err  # the results table (on stderr)


# --- words in a CSV for every classification topic (issue 15) -------------------------------
#: Mitchell (1997), Fig. 2.3: the version space of Table 2.1 (enjoy_sport.csv), 6 hypotheses.
MITCHELL_VERSION_SPACE = {
    "<Sunny,Warm,?,Strong,?,?>",
    "<Sunny,?,?,Strong,?,?>",
    "<Sunny,Warm,?,?,?,?>",
    "<?,Warm,?,Strong,?,?>",
    "<Sunny,?,?,?,?,?>",
    "<?,Warm,?,?,?,?>",
}


@pytest.mark.mcmc
@pytest.mark.verdict
def test_enjoy_sport_csv_runs_from_the_command_line(tmp_path, capsys, test_alpha):
    """The project's own CSV of words (attributes and yes/no labels).  Before: refused
    with "'Sunny' is not a number; fix or remove that line"."""
    path = Path(clf.__file__).parents[1] / "datasets" / "enjoy_sport.csv"
    code, out, err = _main(
        capsys,
        "run",
        "bayes-optimal",
        "--data",
        str(path),
        "--target",
        "enjoy_sport",
        "--alpha",
        f"{test_alpha}",
        "--json",
        "-",
        "--out",
        str(tmp_path / "run"),
    )
    assert code == 0, err
    doc = json.loads(out)
    assert doc["verdict"] == "agree"
    # Noise-free data, uniform prior: P(h|D) = 1/|VS| on the version space.
    shown = {
        name[len("P(h=") : -1]: mean for name, mean in zip(doc["parameters"], doc["exact"]["mean"])
    }
    assert set(shown) == MITCHELL_VERSION_SPACE
    np.testing.assert_allclose(list(shown.values()), 1 / 6, rtol=1e-12)


@pytest.mark.mcmc
@pytest.mark.verdict
def test_quantity_constant_under_the_null_does_not_decide_a_run(tmp_path, capsys, test_alpha):
    """Two hypotheses at 1/2 each: the square of the whitened indicator is 1 on every draw
    (null sd 0).  Before: z = 0/0 = NaN, "max |z| nan", verdict DISAGREE."""
    path = tmp_path / "vs2.csv"
    path.write_text("a,b,y\n1,0,1\n1,1,1\n")
    code, out, err = _main(
        capsys,
        "run",
        "bayes-optimal",
        "--data",
        str(path),
        "--target",
        "y",
        "--alpha",
        f"{test_alpha}",
        "--json",
        "-",
        "--out",
        str(tmp_path / "run"),
    )
    doc = json.loads(out)
    assert code == 0 and doc["verdict"] == "agree", err
    constant = [q for q in doc["quantities"] if q["null_sd"] == 0.0]
    assert constant and all(
        q["z"] == 0.0 and q["estimate"] == pytest.approx(q["expected"], abs=1e-12) for q in constant
    )
    statistic = {c["name"]: c for c in doc["checks"]}["agreement"]["statistic"]
    assert statistic is not None and np.isfinite(statistic)
    assert "nan" not in err


TEXT_ROWS = [
    ("1.0", "2.0", "red", "cat"),
    ("2.0", "1.0", "blue", "dog"),
    ("1.2", "2.1", "red", "cat"),
    ("2.2", "0.8", "blue", "dog"),
    ("0.9", "2.3", "red", "cat"),
    ("2.1", "1.2", "blue", "dog"),
]


@pytest.mark.parametrize(
    "topic", ["naive-bayes", "bayes-optimal", "gaussian-classifier", "logistic-regression"]
)
def test_every_classification_topic_reads_text_labels(tmp_path, topic):
    """Class labels in words become the classes (logistic regression: the second in
    natural order is y = 1), read as the command line reads the CSV."""
    from compare.core.data import load_data

    path = tmp_path / "pets.csv"
    _write_csv(path, ["x1", "x2", "colour", "kind"], TEXT_ROWS)
    t = get_topic(topic)
    features = "colour" if topic in ("naive-bayes", "bayes-optimal") else "x1,x2"
    values, _, _ = load_data(t, str(path), None, "kind", features)
    overrides = {
        "naive-bayes": {"variant": "categorical", "holdout": 0},
        "bayes-optimal": {"noise": 0.3},
    }.get(topic, {})
    data, _ = t.prepare(values, t.hyper(overrides))
    if topic == "logistic-regression":
        np.testing.assert_array_equal(data.y, [0, 1, 0, 1, 0, 1])  # cat < dog: dog is 1
        np.testing.assert_allclose(data.phi[:, 1:], [[float(r[0]), float(r[1])] for r in TEXT_ROWS])
    elif topic == "bayes-optimal":
        # Concept learning of "dog" (the second label): <blue> explains every row.
        np.testing.assert_array_equal(data.problem.y, [0, 1, 0, 1, 0, 1])
        mean = dict(
            zip(data.solution.answer.posterior.parameters, data.solution.answer.posterior.mean)
        )
        assert mean["P(h=<blue>)"] == max(mean.values())
    else:
        assert tuple(data.classes) == ("cat", "dog")


@pytest.mark.parametrize("topic", ["gaussian-classifier", "logistic-regression"])
def test_a_word_in_a_numeric_input_is_named(tmp_path, capsys, topic):
    path = tmp_path / "pets.csv"
    _write_csv(path, ["x1", "x2", "colour", "kind"], TEXT_ROWS)
    code, out, err = _main(
        capsys,
        "run",
        topic,
        "--data",
        str(path),
        "--target",
        "kind",
        "--out",
        str(tmp_path / "out"),
    )
    assert code == 3 and out == ""
    line = err.strip()
    assert "\n" not in line and "column 'colour'" in line and "'red' is not a number" in line
    assert "--features" in line and "remove that line" not in line
    assert not (tmp_path / "out").exists()
