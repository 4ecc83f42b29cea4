"""Every report kind ends: on an archive of five busy simulated nights, each page is a few
screens tall in Chromium and each PDF a few pages, whatever the number of rounds and
wagers of its subject.

The subjects are the busiest there are: a table and a dealer of some 300 rounds and
1,500 wagers a night, a patron back at the tables every night. Their rounds and wagers
without a finding are in the CSVs beside the report, not on the page: the page counts
them and names the file. (The sample night's reports are bounded in
`test_report_browser.py`; this module builds its own archive, and pytest-xdist runs a
file whole on one worker, so the two run side by side.)
"""

from __future__ import annotations

import functools
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import duckdb
import polars as pl
import pytest

from auditor.archive.store import add_run
from auditor.pipeline import run_audit
from tests.support.browser import NIGHTLY_HEIGHT, WINDOW, assert_fits_the_paper, chromium_executable
from tests.support.cli import cli
from tests.support.nights import bring_a_patron_back

NIGHTS, ROUNDS = 5, 2000
FIRST, LAST = date(2026, 11, 1), date(2026, 11, 5)
# px. An investigation is findings and figures, not its subject's every round: a few
# screens. With every round and wager on the page these nights gave 16,430 px (a
# dealer's night) to 125,854 px (a table across the nights), 7,999 px for a patron's.
INVESTIGATION_HEIGHT = 6 * WINDOW["height"] + 500
# The period report's lists are cut at their first rows already; its charts alone take
# three screens (about 12,500 px on these nights).
PERIOD_HEIGHT = 15 * WINDOW["height"]
# Printed pages; with every row printed, 22 (a dealer's night) to 155 (a table across
# the nights).
PDF_PAGES = 12
PERIOD_PDF_PAGES = 16


@dataclass(frozen=True)
class Busy:
    root: Path
    archive: Path
    night: Path  # the middle night's output set
    last: Path  # the last night's output set
    patron: str
    dealer: str
    table: str
    round_id: str  # a round of the middle night with a money finding


def _one(con: duckdb.DuckDBPyConnection, sql: str) -> str:
    return con.execute(sql).fetchone()[0]


@pytest.fixture(scope="module")
def busy(tmp_path_factory) -> Busy:
    root = tmp_path_factory.mktemp("busy")
    sim, archive = root / "sim", root / "archive"
    dealt = cli("simulate", "--out", sim, "--start", FIRST, "--nights", NIGHTS,
                "--rounds", ROUNDS, "--seed", 11, "--faults", 0.01)  # fmt: skip
    assert dealt.exit_code == 0, dealt.output
    nights = sorted(p for p in sim.iterdir() if p.is_dir())
    first = pl.read_parquet(nights[0] / "wagers.parquet").drop_nulls("patron_id")
    patron = first["patron_id"].value_counts(sort=True)[0, 0]
    bring_a_patron_back(nights[1:], patron)
    outs = [root / "out" / night.name for night in nights]
    for night, out in zip(nights, outs, strict=True):
        run_audit(night, out, archive=archive)
        add_run(archive, out)
    middle = outs[len(outs) // 2]
    with duckdb.connect(str(middle / "audit.duckdb"), read_only=True) as con:
        table = _one(con, "SELECT table_id FROM rounds GROUP BY 1 ORDER BY count(*) DESC, 1")
        dealer = _one(con, "SELECT dealer_id FROM rounds GROUP BY 1 ORDER BY count(*) DESC, 1")
        round_id = _one(
            con, "SELECT round_id FROM findings WHERE impact <> 0 ORDER BY abs(impact) DESC"
        )
    return Busy(root, archive, middle, outs[-1], patron, dealer, table, round_id)


def _reports(busy: Busy) -> dict[str, list[str]]:
    """Each kind of `auditor report` and its arguments."""
    night, archive = str(busy.night), str(busy.archive)
    return {
        "round": [night, "--round", busy.round_id],
        "patron": [night, "--patron", busy.patron],
        "dealer": [night, "--dealer", busy.dealer],
        "table": [night, "--table", busy.table],
        "patron across nights": [archive, "--patron", busy.patron],
        "dealer across nights": [archive, "--dealer", busy.dealer],
        "table across nights": [
            archive,
            "--table",
            busy.table,
            "--from",
            str(FIRST),
            "--to",
            str(LAST),
        ],
        "period": [archive, "--period", f"{FIRST}..{LAST}"],
    }


KINDS = ["round", "patron", "dealer", "table", "patron across nights",
         "dealer across nights", "table across nights", "period"]  # fmt: skip


@functools.cache
def _report(busy: Busy, kind: str, pdf: bool = False) -> Path:
    target = busy.root / "reports" / f"{kind.replace(' ', '-')}.{'pdf' if pdf else 'html'}"
    target.parent.mkdir(exist_ok=True)
    arguments = ["report", *_reports(busy)[kind], "--out", str(target)]
    if not pdf:  # the command run in this process: no second start-up of its imports
        written = cli(*arguments)
        assert written.exit_code == 0, written.output
        return target
    # In a thread of its own: printing drives Chromium through playwright's synchronous
    # API, which this thread already runs for the `browser` fixture, and each thread has
    # its own event loop for it.
    with ThreadPoolExecutor(max_workers=1) as printer:
        written = printer.submit(cli, *arguments, "--pdf").result(timeout=600)
    assert written.exit_code == 0, written.output
    return target


def _height(browser, page_file: Path) -> int:
    page = browser.new_page(viewport=WINDOW)
    try:
        page.goto(page_file.as_uri(), wait_until="load")
        return page.evaluate("() => document.documentElement.scrollHeight")
    finally:
        page.close()


def test_the_nightly_report_of_a_busy_archived_night_fits_a_few_screens(browser, busy):
    height = _height(browser, busy.last / "report.html")
    assert height <= NIGHTLY_HEIGHT + 2 * WINDOW["height"], height


@pytest.mark.parametrize("kind", KINDS)
def test_every_report_kind_fits_a_few_screens(browser, busy, kind):
    page_file = _report(busy, kind)
    height = _height(browser, page_file)
    bound = PERIOD_HEIGHT if kind == "period" else INVESTIGATION_HEIGHT
    assert height <= bound, (kind, height)


@pytest.mark.parametrize("kind", KINDS)
def test_every_pdf_is_a_few_pages(busy, kind):
    from pypdf import PdfReader

    chromium_executable()
    pages = len(PdfReader(_report(busy, kind, pdf=True)).pages)
    assert pages <= (PERIOD_PDF_PAGES if kind == "period" else PDF_PAGES), (kind, pages)


@pytest.mark.parametrize("kind", ["dealer", "table across nights"])
def test_the_rows_left_off_are_in_the_csv_the_page_names(busy, kind):
    page_file = _report(busy, kind)
    page = page_file.read_text("utf-8")
    for what, noun in (("rounds", "round"), ("wagers", "wager")):
        beside = page_file.with_name(f"{page_file.stem}.{what}.csv")
        rows = pl.read_csv(beside, infer_schema_length=0)
        flagged = rows.filter(pl.col("findings").is_not_null())
        assert rows.height > 10 * max(1, flagged.height), (what, rows.height)
        assert f"{rows.height:,} {noun}s in all" in page
        assert f'<a class="file" href="{beside.name}">{beside.name}</a>' in page
        # Money as its digits, exact, as the hand histories hold it.
        if what == "wagers":
            assert rows["amount"].str.contains(r"^\d+\.\d\d$").all()


@pytest.mark.parametrize("kind", ["patron across nights", "table across nights", "period"])
def test_no_printed_archive_page_is_wider_than_the_paper(browser, busy, kind):
    from auditor.report.across import render_archive_investigation
    from auditor.report.investigate import subject_of
    from auditor.report.period import render_period_report
    from auditor.report.writing import Beside

    if kind == "period":
        html = render_period_report(busy.archive, FIRST, LAST)
    else:
        who = kind.split()[0]
        subject = subject_of(**{who: getattr(busy, who)})
        html = render_archive_investigation(busy.archive, subject, Beside("x", printed=True))
    page_file = busy.root / f"printed-{kind.replace(' ', '-')}.html"
    page_file.write_text(html, "utf-8")
    assert_fits_the_paper(browser, page_file)
