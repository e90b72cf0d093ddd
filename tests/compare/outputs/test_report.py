"""The HTML report: built from real runs of every topic, checked in headless Chromium.

Browser tests need Debian's ``chromium`` and ``chromium-driver`` (``.ci/run``
installs them).  Without them the browser tests skip, unless
``BAYES_COMPARE_REQUIRE_BROWSER=1`` (set by CI), where they fail.
Screenshots of every page are kept in ``build/test-artifacts/report/``
(or ``$BAYES_COMPARE_ARTIFACTS``).
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

from compare.outputs.report import fmt, formula_html
from tests.browser import load, start_chromium

ARTIFACTS = Path(os.environ.get("BAYES_COMPARE_ARTIFACTS", "build/test-artifacts/report"))


# --- pure helpers ------------------------------------------------------------------
def test_formula_html_sub_and_superscripts():
    out = formula_html("S_N^-1 = I/prior_sd^2 + Phi^T Phi/noise_sd^2")
    assert "S<sub>N</sub><sup>-1</sup>" in out
    assert "<code>prior_sd</code><sup>2</sup>" in out  # --set names keep their underscore
    assert "&Phi;<sup>T</sup>" in out


def test_formula_html_escapes_markup():
    assert "&lt;script&gt;" in formula_html("<script>alert(1)</script>")


def test_formula_html_braced_and_greek():
    out = formula_html("t_{2 a_N}(m, s)  theta ~ Beta(alpha0, beta0)")
    assert "t<sub>2 a_N</sub>" in out or "t<sub>2 a<sub>N</sub></sub>" in out
    assert "&theta;" in out


def test_fmt_cells():
    assert fmt(None) == "n/a" and fmt(float("nan")) == "n/a" and fmt(True) == "yes"
    assert fmt(1.23456, ".2f") == "1.23"
    assert fmt(list(range(10))).endswith("(10 values)]")


# --- a site over every registered topic --------------------------------------------------
# `builtin_runs` (tests/conftest.py) is `make report`'s `run --all`, run once in this
# process for this module, test_figures.py and the default-data verdicts below.
@pytest.fixture(scope="session")
def site(builtin_runs):
    """The site built from every registered topic's run on its default data.

    Drawn in this process (``workers=1``): the other pytest worker keeps the
    second core busy, and two spawned drawing processes would each pay the
    imports again (about 3 CPU-s). ``report``'s drawing in new processes is
    test_cli.py's ``test_report_runs_missing_topics_in_new_processes``."""
    from compare.outputs.report import build_site
    from compare.topics import all_topics

    runs = builtin_runs.runs
    topics = [t.name for t in all_topics()]
    result = build_site([runs / name for name in topics], runs.parent, workers=1)
    return result, topics


def _default_data():
    from compare.topics import all_topics

    return [t.name for t in all_topics()]


@pytest.mark.mcmc
@pytest.mark.verdict
@pytest.mark.parametrize("name", _default_data())
def test_every_topic_agrees_on_its_default_data(name, builtin_runs, record_property):
    """What `make report` shows: every topic agrees on its default builtin data set
    (the other builtin data sets: tests/compare/topics/test_topics.py).

    One verdict test per topic, each at its share of the suite's false-alarm budget
    (`run --all --alpha`).  The smallest ESS over the builtins measured 1040 to 3038
    at 4 x 1000 draws, far above the gate's 400; a run (or the marginalised mixture)
    short of effective draws is extended by the runner, not failed, and the
    extensions are recorded (`--junitxml` shows them).  The seed is
    `BAYES_COMPARE_TEST_SEED` (tests/conftest.py), so any seed can be checked.
    """
    doc = builtin_runs.doc(name)
    ext = doc["extension"]
    record_property("seed", doc["settings"]["seed"])
    record_property("extensions", ext["extensions"])
    record_property(
        "samplings", [(s["model"], s["draws"], s["min_ess"], s["state"]) for s in ext["samplings"]]
    )
    checks = {c["name"]: c for c in doc["checks"]}
    assert doc["verdict"] == "agree", [
        (c["name"], c["statistic"], c["threshold"], c["note"]) for c in doc["checks"]
    ]
    assert checks["map"]["passed"] in (True, None)


@pytest.mark.mcmc
def test_run_all_writes_every_topic_then_summary(builtin_runs, tmp_path, capsys):
    """The CLI path of `make report`: one JSON line and one run directory per topic, the
    exit code from the verdicts, one summary row per topic."""
    from compare.interfaces.cli import main
    from compare.topics import all_topics

    code, docs, runs = builtin_runs.code, builtin_runs.docs, builtin_runs.runs
    verdicts = [d["verdict"] for d in docs]
    assert code == (1 if "disagree" in verdicts else 2 if "inconclusive" in verdicts else 0)
    assert [d["topic"] for d in docs] == [t.name for t in all_topics()]
    assert {p.name for p in runs.iterdir()} == {d["topic"] for d in docs}
    assert main(["summary", "--runs", str(runs), "--out", str(tmp_path / "s.md")]) == 0
    capsys.readouterr()
    table = (tmp_path / "s.md").read_text()
    rows = [line for line in table.splitlines() if line.startswith("| ") and "**" in line]
    assert len(rows) == len(docs)
    assert all(f"**{d['verdict']}**" in row for d, row in zip(docs, rows))


@pytest.mark.mcmc
def test_run_all_again_reuses_every_saved_run(builtin_runs, capsys):
    """The second `make report`: nothing changed, so nothing is sampled and the same
    documents and exit code come back (compare/outputs/run_cache.py)."""
    runs = builtin_runs.runs
    stamps = {p.name: (p / "result.json").stat().st_mtime_ns for p in runs.iterdir()}
    capsys.readouterr()
    again_code, again_docs = builtin_runs.again()
    assert again_code == builtin_runs.code and again_docs == builtin_runs.docs
    assert capsys.readouterr().err.count("reused the saved run") == len(builtin_runs.docs)
    assert stamps == {p.name: (p / "result.json").stat().st_mtime_ns for p in runs.iterdir()}


@pytest.mark.mcmc
def test_site_covers_every_topic_and_draws_every_figure(site):
    result, topics = site
    assert set(result.pages) == set(topics)
    assert result.index.is_file()
    assert result.failed_figures == []
    for topic in topics:
        statuses = {f.kind: f.status for f in result.figures[topic]}
        for kind in ("marginals", "trace", "rank", "ess_evolution", "mcse", "zscores"):
            assert statuses[kind] == "ok", (topic, kind)
    # The classifiers' own figures (compare/classifier_report.py sections).
    for topic, kinds in {
        "logistic-regression": ("decision_boundary", "calibration", "laplace_overlay"),
        "gaussian-classifier": ("decision_boundary", "calibration"),
        "naive-bayes": ("calibration",),
    }.items():
        statuses = {f.kind: f.status for f in result.figures[topic]}
        assert all(statuses[k] == "ok" for k in kinds), (topic, statuses)


#: Runs covering the figure kinds' cases: one parameter (no pair plot),
#: labelled data with a singular covariance, a regression (predictive), a
#: Gaussian process (its function and kernel figures) and two parameters (the
#: narrowest pair plot; a MAP path that differs from the mean on one panel only).
FIGURE_TOPICS = (
    "beta-binomial",
    "dirichlet-categorical",
    "linear-regression",
    "gaussian-process",
    "normal-inverse-gamma",
)
NOT_APPLICABLE = {
    ("beta-binomial", "pair"),
    ("beta-binomial", "predictive"),
    ("dirichlet-categorical", "predictive"),
    ("normal-inverse-gamma", "predictive"),
    *((t, k) for t in (*FIGURE_TOPICS[:3], FIGURE_TOPICS[4]) for k in ("gp_function", "gp_kernel")),
    # The classifiers' figures (test_site_covers_every_topic_and_draws_every_figure).
    *(
        (t, k)
        for t in FIGURE_TOPICS
        for k in ("decision_boundary", "calibration", "laplace_overlay")
    ),
}


@pytest.mark.mcmc
def test_every_figure_is_drawn_where_it_applies(site):
    """On these topics every figure kind is drawn ("ok": its axes hold data, as
    compare.outputs.figures.render checks) exactly where it applies, and skipped
    elsewhere; no figure of any topic fails."""
    from compare.outputs.figures import FIGURES

    result, topics = site
    for topic in topics:
        assert {f.status for f in result.figures[topic]} <= {"ok", "skipped"}, topic
    for topic in FIGURE_TOPICS:
        statuses = {f.kind: f.status for f in result.figures[topic]}
        assert set(statuses) == {k.name for k in FIGURES}
        for kind, status in statuses.items():
            assert status == ("skipped" if (topic, kind) in NOT_APPLICABLE else "ok"), (
                topic,
                kind,
            )
        assert {p.stem for p in (result.pages[topic].parent / "figures").glob("*.png")} == {
            k for k, s in statuses.items() if s == "ok"
        }


@pytest.mark.mcmc
def test_pages_use_no_network(site):
    result, _ = site
    for page in [result.index, *result.pages.values()]:
        text = page.read_text()
        assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", text), page
        assert "<script" not in text and "@import" not in text


@pytest.mark.mcmc
def test_failed_figure_becomes_an_error_box(site, tmp_path):
    """A figure that raises leaves a visible error box; the page and other figures stay."""
    from compare.outputs.figures import FIGURE_KINDS, FigureKind
    from compare.outputs.report import build_site

    result, _ = site
    run_dir = tmp_path / "runs" / "beta-binomial"
    shutil.copytree(result.pages["beta-binomial"].parent, run_dir)

    def broken(run):
        raise RuntimeError("planted figure failure")

    kinds = (FIGURE_KINDS["marginals"], FigureKind("broken", "Broken figure", "", broken))
    out = build_site([run_dir], tmp_path, workers=1, kinds=kinds)
    page = out.pages["beta-binomial"].read_text()
    assert out.failed_figures == [("beta-binomial", "broken")]
    assert 'class="error"' in page and "planted figure failure" in page
    assert 'src="figures/marginals.png"' in page


@pytest.mark.mcmc
def test_unreadable_draws_give_error_boxes_not_a_crash(site, tmp_path):
    from compare.outputs.report import build_site

    result, _ = site
    run_dir = tmp_path / "runs" / "beta-binomial"
    shutil.copytree(result.pages["beta-binomial"].parent, run_dir)
    shutil.rmtree(run_dir / "figures")
    (run_dir / "draws.nc").write_bytes(b"not a netCDF file")
    # A run saved before result.json recorded the draws' checksum: its draws are not
    # verified, so the page is built and shows what it cannot draw.  (With the record,
    # the run is skipped instead: tests/compare/test_run_folder.py.)
    doc = json.loads((run_dir / "result.json").read_text())
    doc.pop("files")
    (run_dir / "result.json").write_text(json.dumps(doc))
    out = build_site([run_dir], tmp_path, workers=1)
    page = out.pages["beta-binomial"].read_text()
    failed = {kind for _, kind in out.failed_figures}
    assert {"marginals", "trace", "rank", "ess_evolution", "mcse"} <= failed
    assert page.count('class="error"') == len(failed) + 1  # + the data summary's box
    verdict = json.loads((run_dir / "result.json").read_text())["verdict"]
    assert f'id="verdict">{verdict}<' in page  # the tables still come from result.json
    assert "draws.nc could not be read" in page


# --- in a real browser -----------------------------------------------------------------
@pytest.fixture(scope="module")
def browser():
    driver = start_chromium(1100, 900)
    yield driver
    driver.quit()


def _open(driver, path: Path) -> list[dict]:
    """Load a page from file://; return its console errors."""
    driver.get_log("browser")  # drop what earlier pages logged
    load(driver, path)
    return [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]


def _screenshot(driver, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.set_window_size(1100, min(max(int(height), 600), 16000))
    driver.save_screenshot(str(ARTIFACTS / f"{name}.png"))
    driver.set_window_size(1100, 900)


def _check_images_and_links(driver, page: Path) -> None:
    broken = driver.execute_script(
        "return Array.from(document.images).filter(i => !(i.complete && i.naturalWidth > 0))"
        ".map(i => i.getAttribute('src'))"
    )
    assert broken == [], f"{page}: images that did not load: {broken}"
    hrefs = driver.execute_script(
        "return Array.from(document.querySelectorAll('a[href]')).map(a => a.href)"
    )
    for href in hrefs:
        url = urlparse(href)
        assert url.scheme == "file", f"{page}: link leaves the report: {href}"
        target = Path(unquote(url.path))
        assert target.exists(), f"{page}: broken link {href}"
        if url.fragment:
            assert driver.find_elements("id", url.fragment), f"{page}: no #{url.fragment}"


@pytest.mark.mcmc
def test_index_in_browser(site, browser):
    result, topics = site
    errors = _open(browser, result.index)
    assert errors == [], errors
    _check_images_and_links(browser, result.index)
    shown = browser.execute_script(
        "return Object.fromEntries(Array.from(document.querySelectorAll('tr[data-topic]'))"
        ".map(r => [r.dataset.topic, r.querySelector('.verdict').textContent.trim()]))"
    )
    saved = {
        t: json.loads((result.pages[t].parent / "result.json").read_text())["verdict"]
        for t in topics
    }
    assert shown == saved
    _screenshot(browser, "index")


@pytest.mark.mcmc
def test_every_topic_page_in_browser(site, browser):
    result, topics = site
    for topic in topics:
        page = result.pages[topic]
        errors = _open(browser, page)
        assert errors == [], (topic, errors)
        _check_images_and_links(browser, page)
        verdict = browser.find_element("id", "verdict").get_attribute("textContent").strip()
        assert verdict == json.loads((page.parent / "result.json").read_text())["verdict"]
        assert browser.find_elements("css selector", "figure img"), f"{topic}: no figures"
        _screenshot(browser, topic)


@pytest.mark.mcmc
def test_pages_fit_a_phone_screen(site, browser):
    """At a phone's width nothing but the tables' own scroll boxes is wider than the screen."""
    result, topics = site
    browser.set_window_size(390, 844)
    try:
        for page in [result.index, result.pages[topics[-1]]]:
            _open(browser, page)
            overflow = browser.execute_script(
                "return document.documentElement.scrollWidth - window.innerWidth"
            )
            assert overflow <= 1, f"{page}: {overflow}px wider than a 390px screen"
            size = browser.execute_script(
                "return parseFloat(getComputedStyle(document.body).fontSize)"
            )
            assert size >= 14
    finally:
        browser.set_window_size(1100, 900)


@pytest.mark.mcmc
def test_unchanged_figures_are_kept_and_a_changed_run_redraws_them(site, tmp_path):
    """The second `make report` of unchanged runs draws nothing (figures.json stamps them)."""
    from compare.outputs.figures import FIGURE_KINDS
    from compare.outputs.report import build_site

    result, _ = site
    run_dir = tmp_path / "runs" / "beta-binomial"
    shutil.copytree(result.pages["beta-binomial"].parent, run_dir)
    shutil.rmtree(run_dir / "figures")
    kinds = (FIGURE_KINDS["marginals"], FIGURE_KINDS["trace"])
    png = run_dir / "figures" / "marginals.png"

    def build(**kwargs):
        out = build_site([run_dir], tmp_path, workers=1, kinds=kinds, **kwargs)
        return out.figures["beta-binomial"], png.stat().st_mtime_ns

    drawn, first = build()
    assert all(f.status == "ok" and f.seconds > 0 for f in drawn)
    kept, again = build()
    assert again == first and all(f.status == "ok" and f.seconds == 0 for f in kept)
    _, forced = build(force=True)
    assert forced != first
    doc = json.loads((run_dir / "result.json").read_text())
    (run_dir / "result.json").write_text(json.dumps(doc, indent=1))  # another run's file
    redrawn, changed = build()
    assert changed != forced and all(f.seconds > 0 for f in redrawn)
