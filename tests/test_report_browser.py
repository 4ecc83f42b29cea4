"""The reports in a real browser: Debian's headless Chromium, driven by playwright.

Each page opens with no console error and no network request at all (everything is
inline), draws something (the screenshot is not blank), shows its findings table, and a
patron id `<script>alert(1)</script>` shows as text: no dialog ever opens.

Outside CI the tests skip where Chromium or playwright is missing; in CI (`CI` set, as
`.ci/run` does) they must run, so a missing browser fails them.
"""

from __future__ import annotations

import io
import os
import shutil
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner

from auditor.audit import run_audit
from auditor.cli import main

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "sample_data"
HOSTILE_PATRON = "<script>alert(1)</script>"


def _browser() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("CI must run the browser tests: install Debian's chromium (.ci/run)")
        pytest.skip("no chromium on PATH (apt-get install chromium)")
    return found


@pytest.fixture(scope="module")
def browser():
    executable = _browser()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        if os.environ.get("CI"):
            raise
        pytest.skip("playwright is not installed (pip install '.[test]')")
    with sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        yield launched
        launched.close()


@pytest.fixture(scope="module")
def pages(tmp_path_factory) -> dict[str, Path]:
    """The nightly report and an investigation report of a night whose overpaid wager is
    the hostile patron's."""
    root = tmp_path_factory.mktemp("browser")
    data = root / "data"
    shutil.copytree(SAMPLE, data)
    wagers = pl.read_parquet(data / "wagers.parquet")
    # The sample's last winning Player wager: overpaid by $1,000 and owned by the patron.
    won = wagers.filter((pl.col("bet") == "player") & (pl.col("result") == "win"))
    chosen = won[-1, "wager_id"]
    hit = pl.col("wager_id") == chosen
    wagers.with_columns(
        pl.when(hit).then(pl.lit(HOSTILE_PATRON)).otherwise("patron_id").alias("patron_id"),
        pl.when(hit).then(pl.col("payout") + 1000).otherwise("payout").alias("payout"),
    ).write_parquet(data / "wagers.parquet")
    out = root / "out"
    run_audit(data, out)
    patron = root / "patron.html"
    result = CliRunner().invoke(
        main, ["report", str(out), "--patron", HOSTILE_PATRON, "--out", str(patron)]
    )
    assert result.exit_code == 0, result.output
    table_page = sorted((out / "report").glob("*.html"))[0]
    return {"nightly": out / "report.html", "table": table_page, "patron": patron}


def _open(browser, page_file: Path) -> dict:
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    seen: dict = {"console": [], "requests": [], "dialogs": [], "errors": []}
    page.on("console", lambda m: seen["console"].append((m.type, m.text)))
    page.on("request", lambda r: seen["requests"].append(r.url))
    page.on("dialog", lambda d: (seen["dialogs"].append(d.message), d.dismiss()))
    page.on("pageerror", lambda e: seen["errors"].append(str(e)))
    url = page_file.as_uri()
    page.goto(url, wait_until="load")
    seen["screenshot"] = page.screenshot(full_page=False)
    seen["findings_rows"] = page.locator("table.findings tbody tr").count()
    seen["hostile_text"] = page.get_by_text(HOSTILE_PATRON, exact=True).count()
    seen["url"] = url
    page.close()
    return seen


def _not_blank(png: bytes) -> bool:
    from PIL import Image  # matplotlib's own dependency

    image = Image.open(io.BytesIO(png)).convert("RGB").resize((160, 112))
    colours = image.getcolors(maxcolors=160 * 112) or []
    white = sum(n for n, c in colours if min(c) > 245)
    return len(colours) > 20 and white < 0.97 * 160 * 112


@pytest.mark.parametrize("which", ["nightly", "table", "patron"])
def test_a_report_opens_offline_with_no_error(browser, pages, which):
    seen = _open(browser, pages[which])
    assert [m for m in seen["console"] if m[0] in ("error", "warning")] == []
    assert seen["errors"] == [] and seen["dialogs"] == []
    # The page itself, and not one request more: no font, script, image or favicon.
    assert seen["requests"] == [seen["url"]]
    assert _not_blank(seen["screenshot"])
    assert seen["findings_rows"] > 0


@pytest.mark.parametrize("which", ["nightly", "patron"])
def test_a_hostile_patron_id_shows_as_text(browser, pages, which):
    seen = _open(browser, pages[which])
    assert seen["dialogs"] == []
    assert seen["hostile_text"] >= 1
