"""Each `auditor surveil` of a period is a run of its own, kept with its false-discovery
rate; the catalog says which run and rate each test belongs to, and the period report
shows one run (the latest at the default rate), counting its tests alone. An archive
written with the earlier layout (one surveillance per period, in `periods/FROM_TO/`;
the catalog's views of then) still verifies and reports.

Built on the three planted nights surveilled once at 0.5 (`surveilled_archive`, shared
with `test_archive_record.py`)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from auditor.archive.catalog_earlier import earlier_view_statements
from auditor.archive.record import entry_hash, read_entries, write_record
from auditor.cli import main
from auditor.output.catalog_packs import STORAGE_VERSION
from auditor.output.macros import sql_literal
from tests.support.cli import cli
from tests.support.planted import (
    LENIENT_FDR,
    PERIOD,
    PERIOD_END,
    PERIOD_START,
    period_report,
    verify_output,
)

OVERLAPPING = ("--from", PERIOD_START, "--to", PERIOD_START.replace(day=PERIOD_START.day + 1))


@pytest.fixture
def archive(surveilled_archive: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(surveilled_archive, tmp_path / "archive"))


def surveil(archive: Path, *args: object) -> None:
    done = cli("surveil", archive, "--from", PERIOD_START, "--to", PERIOD_END, *args)
    assert done.exit_code == 0, done.output


def rows(archive: Path, sql: str) -> list[tuple]:
    with duckdb.connect(str(archive / "archive.duckdb"), read_only=True) as con:
        return con.execute(sql).fetchall()


def _surveillance_section(html: str) -> str:
    start = html.index('<h2 id="surveillance">')
    return html[start : html.index("<h2 ", start + 1)]


def test_every_surveil_run_of_a_period_is_kept_with_its_rate(archive: Path, tmp_path) -> None:
    surveil(archive)  # at the default rate: run 2
    surveil(archive, "--alert-fdr", LENIENT_FDR)  # run 3
    assert sorted(p.name for p in (archive / "periods" / PERIOD).iterdir()) == ["1", "2", "3"]
    code, output = verify_output(archive)
    assert code == 0, output
    runs = rows(
        archive,
        "SELECT surveil_run, alert_fdr, tests, reported FROM period_runs ORDER BY surveil_run",
    )
    assert [(r[0], r[1], r[3]) for r in runs] == [(1, 0.5, False), (2, 0.01, True), (3, 0.5, False)]
    by_run = dict(rows(archive, "SELECT surveil_run, count(*) FROM period_surveillance GROUP BY 1"))
    assert by_run == {r[0]: r[2] for r in runs}
    entries = [e for e in read_entries(archive) if e["kind"] == "period"]
    assert [(e["name"], e["surveil_run"], e["alert_fdr"]) for e in entries] == [
        (f"{PERIOD}/1", 1, 0.5),
        (f"{PERIOD}/2", 2, 0.01),
        (f"{PERIOD}/3", 3, 0.5),
    ]
    written = period_report(archive, tmp_path / "period.html")
    assert written.exit_code == 0, written.output
    html = (tmp_path / "period.html").read_text(encoding="utf-8")
    assert "Surveillance: surveil run 2 of these nights, false-discovery rate 0.01" in html


def test_the_reports_count_only_the_tests_of_the_run_they_show(archive: Path, tmp_path) -> None:
    # Run 1 at 0.5 has alerts; run 2 at the default rate has none; an overlapping period.
    surveil(archive)
    done = cli("surveil", archive, *OVERLAPPING)
    assert done.exit_code == 0, done.output
    ((shown,),) = rows(
        archive,
        f"SELECT tests FROM period_runs WHERE reported AND period_from = DATE '{PERIOD_START}' "
        f"AND period_to = DATE '{PERIOD_END}'",
    )
    ((every,),) = rows(archive, "SELECT count(*) FROM period_surveillance")
    assert every > shown
    written = period_report(archive, tmp_path / "period.html")
    assert written.exit_code == 0, written.output
    section = _surveillance_section((tmp_path / "period.html").read_text(encoding="utf-8"))
    assert f"No alert: none of the {shown:,} tests of surveil run 2 passed" in section
    assert "period-alerts" not in section  # run 1's alerts are not this report's
    counts = [int(n.replace(",", "")) for n in re.findall(r"none of the ([\d,]+) tests", section)]
    assert counts == [shown]
    assert f"{PERIOD_START} to {OVERLAPPING[3]}" in section  # named, not counted in


def _as_earlier_layout(archive: Path) -> None:
    """The archive as the earlier auditor wrote it: the period's files in its folder, its
    record entry named FROM_TO without run or rate, the catalog's views of then."""
    period = archive / "periods" / PERIOD
    for path in (period / "1").iterdir():
        path.rename(period / path.name)
    (period / "1").rmdir()
    entries = read_entries(archive)
    for number, entry in enumerate(entries):
        if number and entries[number - 1] is not None:
            entry["prev"] = entries[number - 1]["hash"]
        if entry["kind"] == "period":
            entry["name"] = PERIOD
            del entry["surveil_run"], entry["alert_fdr"]
        entry["hash"] = entry_hash(entry)
    write_record(
        archive, "".join(json.dumps(e, sort_keys=True, ensure_ascii=False) + "\n" for e in entries)
    )
    catalog = archive / "archive.duckdb"
    catalog.unlink()
    con = duckdb.connect(":memory:")
    try:
        con.execute(
            f"ATTACH {sql_literal(str(catalog))} AS archive (STORAGE_VERSION '{STORAGE_VERSION}')"
        )
        con.execute("USE archive")
        for statement in earlier_view_statements(archive):
            con.execute(statement)
        con.execute("CREATE TABLE built_for AS SELECT $f AS folder", {"f": str(archive)})
        con.execute("USE memory")
        con.execute("DETACH archive")
    finally:
        con.close()


def test_an_archive_of_the_earlier_layout_verifies_reports_and_takes_a_new_run(
    archive: Path, tmp_path: Path
) -> None:
    archive = archive.resolve()
    _as_earlier_layout(archive)
    code, output = verify_output(archive)
    assert code == 0 and "intact" in output, output
    written = period_report(archive, tmp_path / "period.html")
    assert written.exit_code == 0, written.output
    html = (tmp_path / "period.html").read_text(encoding="utf-8")
    assert "Surveillance: surveil run 1 of these nights, false-discovery rate 0.5" in html
    assert '<table class="tests period-alerts">' in html
    surveil(archive)  # the period's run 2, beside the earlier files
    assert (archive / "periods" / PERIOD / "2" / "tests.parquet").is_file()
    code, output = verify_output(archive)
    assert code == 0, output
    assert rows(archive, "SELECT surveil_run, reported FROM period_runs ORDER BY 1") == [
        (1, False),
        (2, True),
    ]
    # An earlier period file changed is still named, under its recorded name.
    alerts = archive / "periods" / PERIOD / "alerts.parquet"
    alerts.write_bytes(alerts.read_bytes()[:-1] + b"\0")
    code, output = verify_output(archive)
    assert code == 1 and f"periods/{PERIOD}: alerts.parquet: not as recorded" in output


def test_a_catalog_view_redefined_in_an_earlier_catalog_is_still_named(archive: Path) -> None:
    archive = archive.resolve()
    _as_earlier_layout(archive)
    with duckdb.connect(str(archive / "archive.duckdb")) as con:
        con.execute("CREATE OR REPLACE VIEW findings_current AS SELECT * FROM findings LIMIT 0")
    code, output = verify_output(archive)
    assert code == 1 and "view findings_current" in output, output


def test_the_catalog_lists_only_its_public_views_each_saying_what_it_holds(
    archive: Path,
) -> None:
    assert cli("query", archive, "SELECT 1").exit_code == 0  # the catalog as readers write it
    with duckdb.connect(str(archive / "archive.duckdb"), read_only=True) as con:
        shown = {name for (name,) in con.execute("SHOW TABLES").fetchall()}
        listed = con.execute(
            "SELECT table_schema, table_name FROM information_schema.tables "
            "WHERE table_schema <> 'internal'"
        ).fetchall()
        comments = dict(
            con.execute(
                "SELECT view_name, comment FROM duckdb_views() "
                "WHERE NOT internal AND schema_name = 'main'"
            ).fetchall()
        )
        main_tables = con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main'"
        ).fetchall()
    assert not any(name.startswith("_") for name in shown), shown
    assert {name for _, name in listed} == shown == set(comments)
    assert main_tables == []
    assert "findings" not in shown  # a night's name: the archive says which findings
    assert {"findings_every_run", "findings_current", "period_runs"} <= shown
    assert all(text and "\n" not in text for text in comments.values()), comments
    prompt = CliRunner().invoke(main, ["query", str(archive)], input=".tables\n")
    assert "findings_every_run" in prompt.output and "internal" not in prompt.output
    assert "record" not in re.findall(r"^\s*(\w+)", prompt.output, re.M)
