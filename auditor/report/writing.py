"""Writing a report: the page (HTML, or a PDF printed by headless Chromium) and the files
beside it, the rows the page leaves off as CSV.

A report of a busy subject has tens of thousands of rounds and wagers: on the page they
made a document no one reads to the end (126,000 px, a 155-page PDF). The page shows the
rows with a finding and the totals; every row goes into a CSV named after the report
(`investigation-table-T1.html` beside `investigation-table-T1.rounds.csv`), which the page
names and counts. Every file is written whole or not at all: to a temporary name in the
same folder, then renamed over the target, the CSVs before the page that names them.
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from auditor.errors import AuditorError

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
# What the page leaves off and writes beside it, each as `STEM.WHAT.csv`.
LISTINGS = ("rounds", "wagers")


class ReportError(AuditorError):
    """No such subject in the run, or no way to print; exit status 2."""


@dataclass
class Beside:
    """The files written beside a report, named after it: the page asks for one with
    `keep` and links to the name it gets; `printed` is a page made for paper (its
    evidence unfolded, no link that would lead nowhere)."""

    stem: str  # the report's file name without its suffix
    printed: bool = False
    files: dict[str, pl.DataFrame] = field(default_factory=dict)

    def keep(self, what: str, rows: pl.DataFrame) -> str:
        """Write `rows` beside the report as `STEM.WHAT.csv`; the file's name."""
        if what not in LISTINGS:
            raise ValueError(f"no listing {what!r}: {LISTINGS}")
        name = listing_name(self.stem, what)
        self.files[name] = rows
        return name


# The columns of each CSV, those the frame has, in this order.
ROUND_LISTING = (
    "gaming_day", "run_id", "dealt_at", "table_id", "shoe_id", "round_no", "round_id",
    "dealer_id", "kind", "player_cards", "banker_cards", "player_total", "banker_total",
    "outcome", "ez_event", "quarantined", "findings",
)  # fmt: skip
WAGER_LISTING = (
    "gaming_day", "run_id", "dealt_at", "table_id", "round_id", "wager_id", "seat",
    "patron_id", "bet", "call", "amount", "rollover", "result", "payout", "commission",
    "award", "net", "quarantined", "findings",
)  # fmt: skip


@dataclass(frozen=True)
class Listing:
    """Rows of a report: those on the page (a finding names them), and how many of them
    all are in the CSV `file` beside it (None: every row is on the page)."""

    shown: pl.DataFrame
    rows: int
    file: str | None = None


def listing(beside: Beside, what: str, rows: pl.DataFrame, columns: tuple[str, ...]) -> Listing:
    """`rows` (with a `findings` column, the rules that name each, null for none): those
    with a finding for the page, and every one in `STEM.WHAT.csv`."""
    kept = rows.select(c for c in columns if c in rows.columns)
    name = beside.keep(what, kept)
    return Listing(rows.filter(pl.col("findings").is_not_null()), rows.height, name)


def listing_name(stem: str, what: str) -> str:
    return f"{stem}.{what}.csv"


def beside_paths(target: Path) -> list[Path]:
    """Every file a report written to `target` may write beside it, to check before
    anything is built as the report's own file is checked."""
    target = Path(target)
    return [target.with_name(listing_name(target.stem, what)) for what in LISTINGS]


def csv_bytes(rows: pl.DataFrame) -> bytes:
    """Rows as CSV: money as its exact digits, times in ISO 8601 with their zone, a list
    (a hand's cards) as its items separated by spaces."""
    lists = [name for name, kind in rows.schema.items() if isinstance(kind, pl.List)]
    flat = rows.with_columns(pl.col(name).list.join(" ") for name in lists)
    texts = [name for name, kind in flat.schema.items() if kind == pl.String]
    return (
        flat.with_columns(_inert(name) for name in texts)
        .write_csv(datetime_format="%Y-%m-%dT%H:%M:%S%.f%:z")
        .encode("utf-8")
    )


# A spreadsheet reads a cell that starts with one of these as a formula: a patron id
# logged as `=HYPERLINK(...)` would run when an investigator opens the file.
FORMULA_STARTS = "=+-@\t\r"


def _inert(column: str) -> pl.Expr:
    """Text a spreadsheet would take for a formula, behind an apostrophe, which the
    spreadsheet shows as text and hides (the OWASP advice on CSV injection); numbers and
    money are never text here, so no figure changes."""
    text = pl.col(column)
    starts = text.str.slice(0, 1).is_in(list(FORMULA_STARTS))
    return pl.when(starts).then(pl.lit("'") + text).otherwise(text).alias(column)


def write_report(
    build: Callable[[Beside], str],
    target: Path,
    pdf: bool = False,
    error: type[AuditorError] = ReportError,
) -> Path:
    """Write the page `build` returns (HTML, or PDF through Chromium) to `target`, with the
    files it keeps beside it; the browser and every target are checked first, for
    building the page can take a while on a busy subject."""
    browser = find_browser() if pdf else None
    if pdf and browser is None:
        raise error(
            "--pdf prints through headless Chromium, and none is installed (looked for "
            f"{', '.join(BROWSERS)} on PATH); install it (Debian: apt-get install chromium) "
            "or leave out --pdf for the HTML page"
        )
    target = Path(target)
    check_writable(target, error)
    for place in beside_paths(target):
        if place.is_dir():
            raise error(
                f"{place} is a folder; the report writes its rounds and wagers to that name "
                "beside it: move the folder, or give --out another name"
            )
    beside = Beside(target.stem, printed=pdf)
    html = build(beside)
    for name, rows in beside.files.items():
        with _replacing(target.with_name(name), error) as temporary:
            temporary.write_bytes(csv_bytes(rows))
    with _replacing(target, error) as temporary:
        if browser is None:
            temporary.write_text(html, encoding="utf-8")
        else:
            print_pdf(browser, html, temporary, error)
    return target


def check_writable(target: Path, error: type[AuditorError] = ReportError) -> None:
    folder = target.parent
    if not folder.is_dir():
        raise error(f"{target}: no folder {folder} to write the report into; create it")
    if target.is_dir():
        raise error(f"{target} is a folder; --out names the report's file")


@contextmanager
def _replacing(target: Path, error: type[AuditorError]) -> Iterator[Path]:
    """A temporary file beside `target`, renamed over it once written: a reader never
    finds half a report, and a failed write leaves the old file as it was."""
    # Made with open(), not mkstemp: the report gets the permissions any file would.
    temporary = target.with_name(f".{target.name}.{secrets.token_hex(6)}.part")
    try:
        temporary.open("xb").close()
        yield temporary
        os.replace(temporary, target)
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise error(f"{target}: cannot write the report ({reason})") from exc
    finally:
        temporary.unlink(missing_ok=True)


def find_browser() -> str | None:
    for name in BROWSERS:
        found = shutil.which(name)
        if found:
            return found
    return None


def print_pdf(
    browser: str, html: str, target: Path, error: type[AuditorError] = ReportError
) -> None:
    """Print the page to PDF with headless Chromium, offline and in a throwaway profile.
    The page's own `@page` rule sets the paper and its margins."""
    with tempfile.TemporaryDirectory(prefix="auditor-pdf-") as work:
        page = Path(work) / "report.html"
        page.write_text(html, encoding="utf-8")
        printed = Path(work) / "report.pdf"
        command = [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={Path(work) / 'profile'}",
            "--no-pdf-header-footer",
            f"--print-to-pdf={printed}",
            page.as_uri(),
        ]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=180)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise error(f"{browser} could not print the report: {exc}") from exc
        if done.returncode != 0 or not printed.is_file():
            tail = (done.stderr or "").strip().splitlines()[-3:]
            raise error(f"{browser} could not print the report: {' '.join(tail)}")
        shutil.copyfile(printed, target)
