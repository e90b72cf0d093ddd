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
def _run_all_cli(runs, alpha):
    """`bayes-compare run --all --json -` in this process with short chains: (code, docs)."""
    import contextlib
    import io

    from compare.interfaces.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(
            [
                "run",
                "--all",
                "--alpha",
                f"{alpha}",
                "--out",
                str(runs),
                "--draws",
                "200",
                "--chains",
                "2",
                "--tune",
                "300",
                "--json",
                "-",
            ]
        )
    return code, [json.loads(line) for line in out.getvalue().splitlines() if line.strip()]


@pytest.fixture(scope="session")
def run_all(tmp_path_factory, test_alpha):
    """`bayes-compare run --all` in this process, as `make report` runs it, with short
    chains: (exit code, one JSON document per topic, the runs folder).  The site and
    the CLI contract tests share it, so every topic is run once for both."""
    runs = tmp_path_factory.mktemp("report") / "runs"
    code, docs = _run_all_cli(runs, test_alpha)
    return code, docs, runs


@pytest.fixture(scope="session")
def site(run_all):
    """Every registered topic, run briefly on its default data, then the site built."""
    from compare.outputs.report import build_site
    from compare.topics import all_topics

    _, _, runs = run_all
    topics = [t.name for t in all_topics()]
    result = build_site([runs / name for name in topics], runs.parent, workers=2)
    return result, topics


@pytest.mark.mcmc
def test_run_all_writes_every_topic_then_summary(run_all, tmp_path, capsys):
    """The CLI path of `make report`: one JSON line and one run directory per topic, the
    exit code from the verdicts, one summary row per topic.  Short chains keep it cheap;
    that every builtin data set agrees at the default settings is test_topics.py's job."""
    from compare.interfaces.cli import main
    from compare.topics import all_topics

    code, docs, runs = run_all
    verdicts = [d["verdict"] for d in docs]
    assert code == (1 if "disagree" in verdicts else 2 if "inconclusive" in verdicts else 0)
    n_topics = len(all_topics())
    assert len(docs) == n_topics and "disagree" not in verdicts
    assert {p.name for p in runs.iterdir()} == {d["topic"] for d in docs}
    assert main(["summary", "--runs", str(runs), "--out", str(tmp_path / "s.md")]) == 0
    capsys.readouterr()
    table = (tmp_path / "s.md").read_text()
    rows = [line for line in table.splitlines() if line.startswith("| ") and "**" in line]
    assert len(rows) == n_topics
    assert all(f"**{d['verdict']}**" in row for d, row in zip(docs, rows))


@pytest.mark.mcmc
def test_run_all_again_reuses_every_saved_run(run_all, test_alpha, capsys):
    """The second `make report`: nothing changed, so nothing is sampled and the same
    documents and exit code come back (compare/outputs/run_cache.py)."""
    code, docs, runs = run_all
    stamps = {p.name: (p / "result.json").stat().st_mtime_ns for p in runs.iterdir()}
    capsys.readouterr()
    again_code, again_docs = _run_all_cli(runs, test_alpha)
    assert again_code == code and again_docs == docs
    assert capsys.readouterr().err.count("reused the saved run") == len(docs)
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
