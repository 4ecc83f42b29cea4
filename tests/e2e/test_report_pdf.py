"""Printed reports, as a regulator files them: `auditor report ... --pdf` prints every
column and every word the page holds, on US Letter.

Read back from the PDF itself (pypdf): a round's findings table keeps its impact column
and its evidence the regulation's words, which used to run past the right margin and be
cut; a patron's evidence is printed unfolded, with the cards, the drawing rules step by
step and the regulation's words, where it used to print as a line "Evidence: ..." with
nothing under it. And in Chromium with print media emulated at the printed line's width,
no page of any kind is wider than the paper.
"""

from __future__ import annotations

import html
import re
import subprocess
import unicodedata
from pathlib import Path

import pytest

from auditor.money import usd_text
from auditor.pipeline import run_audit
from auditor.report.investigate import Subject, render_investigation
from tests.support.browser import assert_fits_the_paper, chromium_executable
from tests.support.cli import AUDITOR, cli
from tests.support.paths import SAMPLE

ROUND = "R0000155"  # a Player wager underpaid by $180 (PAY002)
PATRON = "PT032323"  # six findings on one night, each with its round's evidence
SUBJECTS = {"round": ROUND, "patron": PATRON, "dealer": "D0102", "table": "T-MA-BAC-01"}
LETTER = (612, 792)  # PDF points: 8.5 by 11 inches


@pytest.fixture(scope="module")
def night(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("night") / "out"
    run_audit(SAMPLE, out)
    return out


def print_report(folder: Path, kind: str, subject: str, target: Path) -> str:
    """Print through the console script, as a user does; the PDF's text, whitespace
    squeezed to single spaces and ligatures ("ﬁ") spelled out."""
    chromium_executable()  # skips, or fails in CI, without Chromium
    flag = "--round" if kind == "round" else f"--{kind}"
    done = subprocess.run(
        [AUDITOR, "report", str(folder), flag, subject, "--pdf", "--out", str(target)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return pdf_text(target)


def pdf_text(target: Path) -> str:
    from pypdf import PdfReader

    reader = PdfReader(target)
    for page in reader.pages:
        assert (round(page.mediabox.width), round(page.mediabox.height)) == LETTER
    text = unicodedata.normalize("NFKC", "\n".join(p.extract_text() for p in reader.pages))
    return " ".join(text.split())


def squeezed(text: str) -> str:
    """Without any whitespace: where a PDF's lines break is the printer's choice."""
    return "".join(text.split())


def regulation_words(page: str) -> list[str]:
    """Each line of the regulation's words the page quotes, as text."""
    quoted = re.findall(r'<blockquote class="regulation">(.*?)</blockquote>', page, re.S)
    lines = [
        re.sub(r"<[^>]+>", " ", p) for q in quoted for p in re.findall(r"<p[^>]*>(.*?)</p>", q)
    ]
    return [" ".join(html.unescape(line).split()) for line in lines if line.strip()]


def test_a_rounds_pdf_keeps_the_impact_column_and_the_regulations_words(night, tmp_path):
    text = print_report(night, "round", ROUND, tmp_path / "round.pdf")
    # The findings table's last column, heading and amount.
    assert "what happened impact" in text
    underpaid = usd_text(-180, True)
    assert f"(underpaid $180.00) {underpaid}" in text, text[:2000]
    # The evidence's wagers table to its last columns.
    assert "patron's net logged / correct findings" in text
    page = render_investigation(night, Subject("round", ROUND))
    words = regulation_words(page)
    assert words
    flat = squeezed(text)
    assert [w for w in words if squeezed(w) not in flat] == []


def test_a_patrons_pdf_prints_every_evidence_unfolded(night, tmp_path):
    text = print_report(night, "patron", PATRON, tmp_path / "patron.pdf")
    page = render_investigation(night, Subject("patron", PATRON))
    evidence = page.count('<details class="evidence"')
    assert evidence == 6
    # The cards as dealt, the drawing rules step by step, for every finding's round.
    assert text.count("1 · Player") >= evidence
    assert text.count("Player's first two cards") >= evidence
    assert text.count("Final counts: Player") >= evidence
    words = regulation_words(page)
    assert words
    flat = squeezed(text)
    assert [w for w in words if squeezed(w) not in flat] == []
    # Printed, nothing says to open what paper cannot open.
    assert "folded under it" not in text


@pytest.mark.parametrize("kind", SUBJECTS)
def test_no_printed_page_is_wider_than_the_paper(browser, night, tmp_path, kind):
    from auditor.report.writing import Beside

    page_file = tmp_path / f"{kind}.html"
    printed = Beside(kind, printed=True)
    page_file.write_text(
        render_investigation(night, Subject(kind, SUBJECTS[kind]), beside=printed), "utf-8"
    )
    assert_fits_the_paper(browser, page_file)


def test_pdf_prints_through_chromium(night, tmp_path):
    """`auditor report --pdf` in process: a PDF of a round's case, of some size."""
    chromium_executable()  # skips, or fails in CI, without Chromium
    target = tmp_path / "case.pdf"
    result = cli("report", night, "--round", "R0000008", "--pdf", "--out", target)
    assert result.exit_code == 0, result.output
    assert target.read_bytes().startswith(b"%PDF") and target.stat().st_size > 10_000
