"""Headless Chromium for the HTML tests (Debian's chromium and chromium-driver).

Without them a browser test skips, unless ``BAYES_COMPARE_REQUIRE_BROWSER=1``
(set by ``.ci/run``, which installs them), where it fails.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"


def start_chromium(width: int, height: int):
    """A headless Chromium WebDriver with a ``width`` x ``height`` window; quit it after use."""
    missing = [p for p in (CHROMIUM, CHROMEDRIVER) if not Path(p).exists()]
    if missing:
        message = (
            f"headless Chromium not installed ({', '.join(missing)} missing); "
            "install Debian's chromium and chromium-driver (.ci/run does)"
        )
        if os.environ.get("BAYES_COMPARE_REQUIRE_BROWSER") == "1":
            pytest.fail(message)
        pytest.skip(message)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--allow-file-access-from-files",
        f"--window-size={width},{height}",
    ):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(60)
    return driver


def load(driver, path: Path) -> None:
    """Open a file:// page and wait until it has finished loading.

    ``get()`` can return while a large page is still loading on a busy machine.
    """
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get(path.resolve().as_uri())
    WebDriverWait(driver, 60).until(
        lambda d: d.execute_script("return document.readyState") == "complete"
    )
