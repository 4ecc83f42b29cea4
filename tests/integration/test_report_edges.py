"""Reports and diffs at their edges: ids that carry terminal escapes or bidirectional
overrides, a report or a diff written into a folder that is not there, a catalog that lacks
a column or a view, and a findings file that is not one. Each is one clear message and
exit status 2, or a page that shows the id as it is, never a traceback or a forged line."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import unicodedata
from decimal import Decimal
from pathlib import Path

import duckdb
import polars as pl
import pytest
from click.testing import CliRunner

from auditor.cli import main
from auditor.errors import AuditorError
from auditor.output.diff import ChangesNotWritten, diff_runs, write_changes
from auditor.output.sandboxed_query import QueryError
from auditor.pipeline import run_audit
from auditor.report.investigate import Subject, render_investigation
from auditor.report.nightly import render_nightly
from auditor.report.render import visible
from tests.support.datasets import base_rows, contract_frame

TERMINAL_ESCAPE = "\x1b]0;pwn\x07\x1b[2J"  # set the window title, clear the screen
OVERRIDE = "evil\u202eexe.txt"  # shows as "eviltxt.exe"
SPELLED = (r"\x1b]0;pwn\x07\x1b[2J", r"evil\u202eexe.txt")
PATRON = f"P-{TERMINAL_ESCAPE}-{OVERRIDE}"
DEALER = f"D-{TERMINAL_ESCAPE}-{OVERRIDE}"
TABLE = f"T-{TERMINAL_ESCAPE}-{OVERRIDE}"
MANIFEST = "manifest.json"


def _hidden(text: str) -> set[str]:
    """The characters of `text` that a page must not hold raw."""
    return {
        c for c in text if unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp") and c not in "\n"
    }


def _reseal(out: Path, name: str) -> None:
    """Record `name`'s new bytes in the set's manifest, as a writer that wrote them would:
    the reader then reaches the file itself rather than refusing a changed set."""
    path = out / MANIFEST
    if not path.is_file():
        return
    manifest = json.loads(path.read_text())
    data = (out / name).read_bytes()
    manifest["files"][name] = {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    path.write_text(json.dumps(manifest))


def _clear_failure(result, *needles: str) -> None:
    """Exit status 2 with one `error:` message holding every needle, and no traceback."""
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit), result.exception
    assert result.output.startswith("error: ") and "Traceback" not in result.output
    for needle in needles:
        assert needle in result.output, (needle, result.output)


@pytest.fixture(scope="module")
def hostile_out(tmp_path_factory) -> Path:
    """An audit of one table, dealer and patron whose ids carry an ANSI escape and a
    right-to-left override, with a wager overpaid by $1,000 so that findings name them."""
    root = tmp_path_factory.mktemp("hostile-controls")
    rows = base_rows()
    for table in ("tables", "shoes", "rounds"):
        for row in rows[table]:
            row["table_id"] = TABLE
    for row in rows["rounds"]:
        row["dealer_id"] = DEALER
    for row in rows["wagers"]:
        row["patron_id"] = PATRON
    won = next(w for w in rows["wagers"] if w["result"] == "win")
    won["payout"] += Decimal("1000.00")
    data = root / "data"
    data.mkdir()
    for table, table_rows in rows.items():
        contract_frame(table, table_rows).write_parquet(data / f"{table}.parquet")
    out = root / "out"
    results = run_audit(data, out)
    assert results.findings.height > 0
    return out


# ---- control characters and bidirectional overrides ---------------------------------------


@pytest.mark.parametrize(
    "character",
    [
        *(chr(c) for c in range(0x20) if chr(c) not in "\n\t"),
        "\x7f",
        *(chr(c) for c in range(0x80, 0xA0)),
        *(chr(c) for c in range(0x202A, 0x202F)),
        *(chr(c) for c in range(0x2066, 0x206A)),
        "\u200e",
        "\u200f",
        "\u061c",
        "\u2028",
        "\U000e0041",  # a tag character: invisible text
    ],
)
def test_every_hidden_character_is_spelled_out(character):
    shown = visible(f"a{character}b")
    assert shown.isascii() and shown.isprintable() and shown.startswith("a\\")
    # Spelled as Python writes it: the escape reads back as the character.
    assert shown.encode("ascii").decode("unicode_escape") == f"a{character}b"


def test_newlines_tabs_and_every_script_stay_as_they_are():
    text = "line one\n\tline two: café, 中文, עברית, العربية, −$12.00 …"
    assert visible(text) == text


def test_no_page_of_the_night_holds_a_raw_control_or_override(hostile_out):
    pages = sorted(hostile_out.rglob("*.html"))
    assert {p.relative_to(hostile_out).as_posix() for p in pages} >= {
        "report.html",
        "report/table-001.html",
    }
    for page in pages:
        data = page.read_bytes()
        assert b"\x1b" not in data and "\u202e".encode() not in data, page
        text = data.decode("utf-8")
        assert _hidden(text) == set(), (page, _hidden(text))
        for spelled in SPELLED:
            assert spelled in text, (page, spelled)
    nightly = (hostile_out / "report.html").read_text(encoding="utf-8")
    for subject in (PATRON, DEALER, TABLE):
        assert visible(subject) in nightly


@pytest.mark.parametrize(("option", "subject"), [("--patron", PATRON), ("--table", TABLE)])
def test_an_investigation_shows_the_hostile_id_spelled_out(hostile_out, tmp_path, option, subject):
    target = tmp_path / "case.html"
    result = CliRunner().invoke(
        main, ["report", str(hostile_out), option, subject, "--out", str(target)]
    )
    assert result.exit_code == 0, result.output
    data = target.read_bytes()
    assert b"\x1b" not in data and "\u202e".encode() not in data
    page = data.decode("utf-8")
    assert _hidden(page) == set()
    assert visible(subject) in page and "+$1,000.00" in page
    for spelled in SPELLED:
        assert spelled in page


def test_the_page_title_is_spelled_out_too(hostile_out):
    page = render_investigation(hostile_out, Subject("dealer", DEALER))
    title = re.search(r"<title>(.*?)</title>", page, flags=re.S)
    assert title is not None and visible(DEALER) in title.group(1)


# ---- a report written where it cannot be --------------------------------------------------


def test_a_report_into_a_missing_folder_is_one_clear_message(hostile_out, tmp_path):
    target = tmp_path / "missing" / "folder" / "x.html"
    result = CliRunner().invoke(
        main, ["report", str(hostile_out), "--patron", PATRON, "--out", str(target)]
    )
    _clear_failure(result, str(target), "no folder")
    assert not target.parent.exists()


# ---- a catalog that lacks what the reports read -------------------------------------------


@pytest.fixture
def altered(hostile_out, tmp_path):
    """A copy of the set whose catalog is altered by `statement`, its manifest resealed."""

    def alter(statement: str) -> Path:
        out = tmp_path / "altered"
        shutil.copytree(hostile_out, out)
        con = duckdb.connect(str(out / "audit.duckdb"))
        try:
            con.execute(statement)
        finally:
            con.close()
        _reseal(out, "audit.duckdb")
        return out

    return alter


@pytest.mark.parametrize(
    ("statement", "lacking"),
    [
        ("ALTER TABLE findings DROP COLUMN message", "findings.message"),
        ("ALTER TABLE checks DROP COLUMN title", "checks.title"),
        ("ALTER TABLE runs DROP COLUMN inputs", "runs.inputs"),
        ("DROP VIEW wagers", "wagers (a table or view)"),
        ("DROP TABLE quarantine", "quarantine (a table or view)"),
    ],
)
def test_a_catalog_lacking_a_part_is_named_not_a_traceback(altered, tmp_path, statement, lacking):
    out = altered(statement)
    target = tmp_path / "case.html"
    result = CliRunner().invoke(
        main, ["report", str(out), "--patron", PATRON, "--out", str(target)]
    )
    _clear_failure(result, str(out / "audit.duckdb"), f"the catalog lacks {lacking}")
    assert not target.exists()


def test_the_nightly_report_names_a_missing_column_too(altered):
    out = altered("ALTER TABLE findings DROP COLUMN message")
    with pytest.raises(QueryError, match=r"audit\.duckdb: the catalog lacks findings\.message"):
        render_nightly(out)


# ---- auditor diff on a findings file that is not one --------------------------------------


@pytest.fixture
def before(hostile_out, tmp_path) -> Path:
    out = tmp_path / "before"
    shutil.copytree(hostile_out, out)
    return out


def _garbage(path: Path) -> None:
    path.write_bytes(bytes(range(256)) * 16)


def _other_columns(path: Path) -> None:
    pl.DataFrame({"patron_id": ["P1"], "amount": [1.5]}).write_parquet(path)


def _some_columns(path: Path) -> None:
    pl.read_parquet(path).drop("severity", "message").write_parquet(path)


def _wrong_type(path: Path) -> None:
    found = pl.read_parquet(path)
    found.with_columns(pl.lit("a lot").alias("impact")).write_parquet(path)


@pytest.mark.parametrize(
    ("spoil", "says"),
    [
        (_garbage, "not a readable Parquet file"),
        (_other_columns, "no finding_id column"),
        (_some_columns, "no column severity, message"),
        (_wrong_type, "a column of another type"),
    ],
)
def test_diff_of_a_spoilt_findings_file_names_it(before, hostile_out, spoil, says):
    findings = before / "findings.parquet"
    spoil(findings)
    _reseal(before, "findings.parquet")
    with pytest.raises(AuditorError, match=re.escape(str(findings))):
        diff_runs(before, hostile_out)
    result = CliRunner().invoke(main, ["diff", str(before), str(hostile_out)])
    _clear_failure(result, str(findings), says)


def test_writing_the_differences_into_a_missing_folder_is_an_auditor_error(tmp_path):
    target = tmp_path / "missing" / "folder" / "d.parquet"
    with pytest.raises(ChangesNotWritten, match="no folder") as raised:
        write_changes(pl.DataFrame({"change": ["new"]}), target)
    assert raised.value.exit_code == 2 and str(target) in str(raised.value)


def test_diff_output_into_a_missing_folder_is_one_clear_message(hostile_out, tmp_path):
    target = tmp_path / "missing" / "folder" / "d.parquet"
    result = CliRunner().invoke(
        main, ["diff", str(hostile_out), str(hostile_out), "--out", str(target)]
    )
    _clear_failure(result, str(target), "no folder")


def test_a_listing_csv_never_hands_a_spreadsheet_a_formula() -> None:
    """Ids are the casino's text: one that opens like a formula is kept as text behind an
    apostrophe; money, negative amounts included, keeps its digits."""
    from decimal import Decimal

    import polars as pl

    from auditor.report.writing import csv_bytes

    rows = pl.DataFrame(
        {
            "patron_id": ['=HYPERLINK("http://x","y")', "+1", "@SUM(A1)", "-2", "P-1187", None],
            "net": [Decimal("-12.50")] * 6,
        }
    )
    lines = csv_bytes(rows).decode().splitlines()
    assert lines[1:] == [
        '"\'=HYPERLINK(""http://x"",""y"")",-12.50',
        "'+1,-12.50",
        "'@SUM(A1),-12.50",
        "'-2,-12.50",
        "P-1187,-12.50",
        ",-12.50",
    ]
