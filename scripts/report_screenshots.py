#!/usr/bin/env python3
"""Screenshot every figure of a built report in headless Chromium, for review by eye.

    python scripts/report_screenshots.py --site reports --out /tmp/shots [--width 1400]

Writes ``OUT/<topic>-<figure>.png`` (each ``<figure>`` element: image and caption
as a reader sees them at that window width). Uses tests/browser.py's starter
(Debian's chromium and chromium-driver).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--site",
        type=Path,
        default=ROOT / "reports",
        help="the report's folder (index.html and runs/)",
    )
    parser.add_argument("--out", type=Path, required=True, help="where the PNGs go")
    parser.add_argument("--width", type=int, default=1400)
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from selenium.webdriver.common.by import By

    from tests.browser import load, start_chromium

    pages = sorted((args.site / "runs").glob("*/index.html"))
    if not pages:
        print(f"no run pages under {args.site / 'runs'}; build the report first", file=sys.stderr)
        return 3
    args.out.mkdir(parents=True, exist_ok=True)
    driver = start_chromium(args.width, 1000)
    try:
        for page in pages:
            load(driver, page)
            for i, figure in enumerate(driver.find_elements(By.CSS_SELECTOR, "figure")):
                images = figure.find_elements(By.TAG_NAME, "img")
                name = (
                    images[0].get_attribute("src").rsplit("/", 1)[-1].split(".")[0]
                    if images
                    else f"figure{i}"
                )
                driver.execute_script("arguments[0].scrollIntoView()", figure)
                figure.screenshot(str(args.out / f"{page.parent.name}-{name}.png"))
    finally:
        driver.quit()
    print(f"{len(list(args.out.glob('*.png')))} screenshots in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
