"""The reports in a real browser: Debian's headless Chromium, driven by playwright.

Each page opens with no console error and no network request at all (everything is
inline), draws something (the screenshot is not blank), shows its findings table, and a
patron id `<script>alert(1)</script>` shows as text: no dialog ever opens.

As a person sees them: the sample's nightly report fits a few screens, every chart's
text is at least as large as the page's small text, money paid wrong is one colour (never
green) and money at zero none, and no page shows "$-", a time without its zone or a
check text's markdown.

Outside CI the tests skip where Chromium or playwright is missing; in CI (`CI` set, as
`.ci/run` does) they must run, so a missing browser fails them.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner

from auditor.cli import main
from auditor.pipeline import run_audit
from auditor.report.investigate import Subject, render_investigation
from tests.support.browser import (
    HOSTILE_PATRON,
    NIGHTLY_HEIGHT,
    WINDOW,
    not_blank,
    opened,
)
from tests.support.paths import SAMPLE

SMALL_TEXT = 12  # px: the pages' smallest text (ids, labels, footer)


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


@pytest.mark.parametrize("which", ["nightly", "table", "patron"])
def test_a_report_opens_offline_with_no_error(browser, pages, which):
    seen = opened(browser, pages[which])
    assert [m for m in seen["console"] if m[0] in ("error", "warning")] == []
    assert seen["errors"] == [] and seen["dialogs"] == []
    # The page itself, and not one request more: no font, script, image or favicon.
    assert seen["requests"] == [seen["url"]]
    assert not_blank(seen["screenshot"])
    assert seen["findings_rows"] > 0


@pytest.mark.parametrize("which", ["nightly", "patron"])
def test_a_hostile_patron_id_shows_as_text(browser, pages, which):
    seen = opened(browser, pages[which])
    assert seen["dialogs"] == []
    assert seen["hostile_text"] >= 1


# ---- as a person sees them --------------------------------------------------------------------


@pytest.fixture(scope="module")
def sample_pages(tmp_path_factory) -> dict[str, Path]:
    """The sample's nightly report, a table page, and an investigation of each kind."""
    root = tmp_path_factory.mktemp("sample")
    out = root / "out"
    run_audit(SAMPLE, out)
    pages = {"nightly": out / "report.html", "table page": out / "report" / "table-001.html"}
    subjects = {"patron": "PT032323", "dealer": "D0102", "table": "T-MA-BAC-01",
                "round": "R0000020"}  # fmt: skip
    for kind, subject in subjects.items():
        pages[kind] = root / f"{kind}.html"
        pages[kind].write_text(render_investigation(out, Subject(kind, subject)), "utf-8")
    return pages


# Each chart's smallest text as drawn, in CSS pixels: its font size in the SVG's units
# times the scale the page draws the SVG at.
SMALLEST_CHART_TEXT = """() => [...document.querySelectorAll('svg')].map(svg => {
  const sizes = [...svg.querySelectorAll('text')].map(t => {
    const m = t.getScreenCTM();
    return parseFloat(getComputedStyle(t).fontSize) * Math.hypot(m.a, m.b);
  });
  return Math.min(...sizes);
})"""

# Each amount of money in a table cell or a tile: its text, its colour, and the colour
# of what holds it (the same colour: not marked).
MONEY_COLOURS = r"""() => [...document.querySelectorAll('td.num, .tile .detail span, dd span')]
  .filter(e => /\$/.test(e.textContent) && e.children.length === 0)
  .map(e => [e.textContent.trim(), getComputedStyle(e).color,
             getComputedStyle(e.parentElement).color])"""


def _look(browser, page_file: Path) -> dict:
    page = browser.new_page(viewport=WINDOW)
    page.goto(page_file.as_uri(), wait_until="load")
    seen = {
        "height": page.evaluate("() => document.documentElement.scrollHeight"),
        "chart_text": page.evaluate(SMALLEST_CHART_TEXT),
        "money": page.evaluate(MONEY_COLOURS),
        # What a reader sees, folded evidence and checks opened first.
        "text": page.evaluate(
            "() => { document.querySelectorAll('details').forEach(d => d.open = true);"
            " return document.body.innerText; }"
        ),
    }
    page.close()
    return seen


def _green(colour: str) -> bool:
    red, green, blue = (int(v) for v in re.findall(r"\d+", colour)[:3])
    return green > red + 30 and green > blue


def test_the_sample_nightly_report_fits_a_few_screens(browser, sample_pages):
    seen = _look(browser, sample_pages["nightly"])
    assert seen["height"] <= NIGHTLY_HEIGHT, seen["height"]
    assert len(seen["chart_text"]) == 4


@pytest.mark.parametrize("which", ["nightly", "patron", "dealer", "table"])
def test_chart_text_is_as_large_as_the_small_text(browser, sample_pages, which):
    seen = _look(browser, sample_pages[which])
    assert seen["chart_text"], which
    assert min(seen["chart_text"]) >= SMALL_TEXT, seen["chart_text"]


@pytest.mark.parametrize("which", ["nightly", "table page", "patron", "dealer", "table", "round"])
def test_money_is_one_colour_when_wrong_and_none_at_zero(browser, sample_pages, which):
    money = _look(browser, sample_pages[which])["money"]
    assert money, which
    marked = {colour for _, colour, around in money if colour != around}
    assert not any(_green(c) for c in marked), marked
    assert len(marked) <= 2, marked  # overpaid's colour and underpaid's (test_report_look)
    zeros = [m for m in money if re.fullmatch(r"(overpaid |underpaid )?[+-]?\$0\.00", m[0])]
    assert all(colour == around for _, colour, around in zeros), zeros


@pytest.mark.parametrize("which", ["nightly", "table page", "patron", "dealer", "table", "round"])
def test_pages_show_one_money_and_one_time_format(browser, sample_pages, which):
    text = _look(browser, sample_pages[which])["text"]
    assert "$-" not in text
    assert not re.search(r"\$\d{4,}\.\d\d", text)  # thousands grouped
    naive = re.findall(r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d(?::\d\d)?(?:\.\d+)?(?![\d:.]| ?UTC)", text)
    assert naive == [], naive[:3]
    assert "`" not in text
    assert "_win_rate" not in text and "money_won" not in text
