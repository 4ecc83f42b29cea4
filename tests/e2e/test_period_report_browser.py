"""The period report in headless Chromium: the page of the period's archive opens running
and fetching nothing, draws its charts within a bounded height, and prints to a PDF. The
archive is the one tests/integration/test_period_report.py checks the figures of
(`period_archive`, tests/support/archives.py), built once for both."""

from __future__ import annotations

from auditor.report.period import write_period_report
from tests.support.archives import FIRST, LAST
from tests.support.browser import chromium_executable, not_blank, watched_page

PAGE_HEIGHT_BOUND = 12_000  # pixels, at 1280 wide: the page of five nights is about 9,000


def test_the_page_opens_offline_with_no_error(period_archive, browser, tmp_path):
    target = write_period_report(period_archive["folder"], FIRST, LAST, None, tmp_path / "p.html")
    page, seen = watched_page(browser, target.as_uri())
    screenshot = page.screenshot(full_page=False)
    (tmp_path / "period.png").write_bytes(screenshot)
    height = page.evaluate("document.documentElement.scrollHeight")
    charts = page.locator(".chart svg").count()
    page.close()
    assert [m for m in seen["console"] if m[0] in ("error", "warning")] == []
    assert seen["errors"] == [] and seen["dialogs"] == []
    assert seen["requests"] == [target.as_uri()]
    assert not_blank(screenshot)
    assert charts == 6
    assert height < PAGE_HEIGHT_BOUND


def test_pdf(period_archive, tmp_path):
    chromium_executable()
    target = write_period_report(
        period_archive["folder"], FIRST, LAST, None, tmp_path / "p.pdf", True
    )
    assert target.read_bytes()[:5] == b"%PDF-"
