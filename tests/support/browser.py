"""The reports and the desk in a real browser: Debian's headless Chromium, driven by
playwright. A page is opened with what it logs, requests, asks and throws recorded (a
report must do none of it), screenshotted, and held to the printed page's width."""

from __future__ import annotations

import io
import os
import shutil
from pathlib import Path

import pytest

WINDOW = {"width": 1280, "height": 900}
NIGHTLY_HEIGHT = 5 * WINDOW["height"] + 500  # px: a few screens (4,499 px in 2026-11)
HOSTILE_PATRON = "<script>alert(1)</script>"
# The printed line in CSS px: 8.5 inches at 96 px an inch, less two half-inch margins.
PRINTED_LINE = 816 - 2 * 48

# Every element's right edge, and the document's scroll width, in CSS px.
RIGHT_EDGES = """() => {
  let widest = 0, what = '';
  for (const e of document.querySelectorAll('body *')) {
    const box = e.getBoundingClientRect();
    if (box.width > 0 && box.right > widest) {
      widest = box.right;
      what = e.tagName + '.' + e.className;
    }
  }
  return [document.documentElement.scrollWidth, widest, what];
}"""


def chromium_executable() -> str:
    """Debian's Chromium: the browser tests must run in CI, and may skip elsewhere."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("CI must run the browser tests: install Debian's chromium (.ci/run)")
        pytest.skip("no chromium on PATH (apt-get install chromium)")
    return found


def watched_page(browser, url: str, width: int = 1280, height: int = 900):
    """A page opened at `url` with what it logs, requests, asks and throws recorded in
    `seen` (console, requests, dialogs, errors): a report must do none of it."""
    page = browser.new_page(viewport={"width": width, "height": height})
    seen: dict = {"console": [], "requests": [], "dialogs": [], "errors": []}
    page.on("console", lambda m: seen["console"].append((m.type, m.text)))
    page.on("request", lambda r: seen["requests"].append(r.url))
    page.on("dialog", lambda d: (seen["dialogs"].append(d.message), d.dismiss()))
    page.on("pageerror", lambda e: seen["errors"].append(str(e)))
    page.goto(url, wait_until="load")
    return page, seen


def screenshot(page, tries: int = 3) -> bytes:
    """The page as a PNG. Headless Chromium on a machine whose cores are all busy now and
    then answers "Unable to capture screenshot" for a page it has drawn; a second try gets
    it, and a page that really cannot be drawn still fails every try."""
    from playwright.sync_api import Error

    for attempt in range(tries):
        try:
            return page.screenshot(full_page=False)
        except Error:
            if attempt == tries - 1:
                raise
            page.wait_for_timeout(500)
    raise AssertionError("unreachable")


def opened(browser, page_file: Path) -> dict:
    """`page_file` opened and closed again: what `watched_page` saw, its screenshot, its
    findings table's rows and how often the hostile patron id shows as text."""
    url = page_file.as_uri()
    page, seen = watched_page(browser, url)
    seen["screenshot"] = screenshot(page)
    seen["findings_rows"] = page.locator("table.findings tbody tr").count()
    seen["hostile_text"] = page.get_by_text(HOSTILE_PATRON, exact=True).count()
    seen["url"] = url
    page.close()
    return seen


def not_blank(png: bytes) -> bool:
    """Something is drawn: many colours, and not almost all of it white."""
    from PIL import Image  # matplotlib's own dependency

    image = Image.open(io.BytesIO(png)).convert("RGB").resize((160, 112))
    colours = image.getcolors(maxcolors=160 * 112) or []
    white = sum(n for n, c in colours if min(c) > 245)
    return len(colours) > 20 and white < 0.97 * 160 * 112


def assert_fits_the_paper(browser, page_file: Path) -> None:
    """The page laid out for print at the printed line's width: nothing runs past it."""
    page = browser.new_page(viewport={"width": PRINTED_LINE, "height": 1000})
    try:
        page.emulate_media(media="print")
        page.goto(page_file.as_uri(), wait_until="load")
        scroll_width, widest, what = page.evaluate(RIGHT_EDGES)
    finally:
        page.close()
    assert scroll_width <= PRINTED_LINE, (scroll_width, what)
    assert widest <= PRINTED_LINE + 0.5, (widest, what)
