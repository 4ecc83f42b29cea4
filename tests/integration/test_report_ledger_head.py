"""The review ledger's head printed in the footer of every report read from an archive
(the nightly report of an archived night, the period report, the investigation across
nights): a page kept on paper is later held against the ledger with `auditor review
ARCHIVE --verify --head HASH`, which a record cut from the ledger's end fails."""

from __future__ import annotations

import shutil
from pathlib import Path

import polars as pl
import pytest

from tests.support.cli import cli
from tests.support.paths import SAMPLE

NIGHT = "2026-11-24"


def head_of(archive: Path) -> str:
    verified = cli("review", archive, "--verify")
    assert verified.exit_code == 0, verified.output
    return verified.output.split("head: seq ")[1].split()[1]


@pytest.fixture(scope="module")
def reviewed(tmp_path_factory) -> dict[str, Path]:
    """The sample audited into an archive, two of its findings reviewed, then the night
    audited again into it (its nightly report compares with the first) and each report
    read from the archive written."""
    root = tmp_path_factory.mktemp("ledger-head")
    archive = root / "archive"
    first = root / "first"
    assert cli("audit", SAMPLE, "--out", first, "--archive", archive, "--exit-zero").exit_code == 0
    findings = pl.read_parquet(first / "findings.parquet")
    for finding_id, status in zip(
        findings["finding_id"][:2], ("explained", "escalated"), strict=True
    ):
        written = cli("review", archive, finding_id, "--status", status, "--by", "J. Doe")
        assert written.exit_code == 0, written.output
    second = root / "second"
    assert cli("audit", SAMPLE, "--out", second, "--archive", archive, "--exit-zero").exit_code == 0
    table = findings.drop_nulls("table_id")["table_id"][0]
    pages = {"nightly": second / "report.html"}
    for name, args in (
        ("period", ("--period", f"{NIGHT}..{NIGHT}")),
        ("investigation", ("--table", table)),
    ):
        pages[name] = root / f"{name}.html"
        written = cli("report", archive, *args, "-o", pages[name])
        assert written.exit_code == 0, written.output
    return {"archive": archive, "first": first / "report.html", **pages}


@pytest.mark.parametrize("page", ["nightly", "period", "investigation"])
def test_each_report_from_the_archive_prints_the_ledgers_head(reviewed, page: str) -> None:
    html = reviewed[page].read_text()
    head = head_of(reviewed["archive"])
    assert f"Review ledger: 2 records, head <code>{head}</code> (seq 2)" in html
    assert f"--verify --head {head}" in html


def test_the_first_nights_report_says_the_ledger_held_no_record(reviewed) -> None:
    assert (
        "Review ledger: no record yet when this page was written." in reviewed["first"].read_text()
    )


def test_a_report_of_a_run_alone_prints_no_ledger(reviewed, tmp_path: Path) -> None:
    html_of_run = tmp_path / "table.html"
    first_set = reviewed["first"].parent
    table = pl.read_parquet(first_set / "findings.parquet").drop_nulls("table_id")["table_id"][0]
    assert cli("report", first_set, "--table", table, "-o", html_of_run).exit_code == 0
    assert "Review ledger" not in html_of_run.read_text()


def test_the_printed_head_holds_until_a_record_is_cut_from_the_ledger(
    reviewed, tmp_path: Path
) -> None:
    archive = Path(shutil.copytree(reviewed["archive"], tmp_path / "archive"))
    html = reviewed["period"].read_text()
    printed = html.split("--verify --head ")[1].split("<")[0]
    held = cli("review", archive, "--verify", "--head", printed)
    assert held.exit_code == 0, held.output
    ledger = archive / "reviews.jsonl"
    lines = ledger.read_text().splitlines(keepends=True)
    ledger.write_text("".join(lines[:-1]))
    cut = cli("review", archive, "--verify", "--head", printed)
    assert cut.exit_code == 1, cut.output
    assert f"head {printed}: no record of the ledger has this hash" in cut.output
