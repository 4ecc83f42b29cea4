"""The archive's record of what it holds: `auditor verify` checks every run, period and the
catalog's views against it, the run in force is decided from it, a folder put under
`runs/` by hand is never read, and links or FIFOs where the archive's files belong are
refused, never followed or opened."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import duckdb
import polars as pl
import pytest

from tests.support.cli import AUDITOR, cli
from tests.support.paths import SAMPLE
from tests.support.planted import (
    PATRON,
    PERIOD,
    PERIOD_RUN,
    PERIOD_START,
    period_report,
    verify_output,
)

HANG_GUARD = 120  # seconds: a FIFO that hung a command would fail the test, not block it


@pytest.fixture(scope="module")
def nights(tmp_path_factory) -> dict[str, Path]:
    """The sample audited, then re-audited from logs with one wrong payout corrected."""
    root = tmp_path_factory.mktemp("nights")
    first = root / "first"
    assert cli("audit", SAMPLE, "--out", first, "--exit-zero").exit_code == 0
    findings = pl.read_parquet(first / "findings.parquet")
    wrong = findings.filter(pl.col("rule") == "PAY002")["wager_id"][0]
    fixed = root / "fixed"
    shutil.copytree(SAMPLE, fixed)
    wagers = pl.read_parquet(fixed / "wagers.parquet")
    wagers.filter(pl.col("wager_id") != wrong).write_parquet(fixed / "wagers.parquet")
    second = root / "second"
    assert cli("audit", fixed, "--out", second, "--exit-zero").exit_code == 0
    return {"first": first, "second": second}


@pytest.fixture
def archive(nights, tmp_path) -> Path:
    folder = tmp_path / "archive"
    assert cli("archive", "add", folder, nights["first"]).exit_code == 0
    assert cli("archive", "add", folder, nights["second"]).exit_code == 0
    return folder


def run_ids(archive: Path) -> list[str]:
    lines = (archive / "record.jsonl").read_text().splitlines()
    return [json.loads(line)["name"] for line in lines]


def count(archive: Path, sql: str) -> int:
    result = cli("query", archive, sql, "--format", "csv")
    assert result.exit_code == 0, result.output
    return int(result.output.strip().splitlines()[-1])


def test_an_archive_as_the_tool_wrote_it_verifies_intact(archive: Path) -> None:
    code, output = verify_output(archive)
    assert code == 0, output
    assert len(run_ids(archive)) == 2


def test_a_redefined_findings_view_is_named_and_never_read(archive: Path) -> None:
    every = count(archive, "SELECT count(*) FROM findings_current")
    with duckdb.connect(str(archive / "archive.duckdb")) as con:
        sql = con.execute(
            "SELECT sql FROM duckdb_views() WHERE view_name = 'findings_current'"
        ).fetchone()[0]
        con.execute("DROP VIEW findings_current")
        con.execute(sql.replace(";", "") + " WHERE severity <> 'high'")
    code, output = verify_output(archive)
    assert code == 1 and "view findings_current is not as the auditor defines it" in output
    # A reader writes the catalog anew from the code's own views before it reads it.
    assert count(archive, "SELECT count(*) FROM findings_current") == every
    assert verify_output(archive)[0] == 0


def test_a_superseded_run_dated_2099_in_its_run_json_stays_superseded(archive: Path) -> None:
    first, _ = run_ids(archive)
    run_json = archive / "runs" / first / "run.json"
    data = json.loads(run_json.read_text())
    run_json.write_text(json.dumps(data | {"started_at": "2099-01-01T00:00:00+00:00"}))
    code, output = verify_output(archive)
    assert code == 1 and f"run {first}: run.json: not as recorded" in output
    listed = cli("archive", "list", archive).output.splitlines()[1:]  # after the header
    assert listed[0].startswith(first) and listed[0].endswith("superseded")
    in_force = f"SELECT count(*) FROM findings_current WHERE run_id = '{first}'"
    assert count(archive, in_force) == 0


def test_a_deleted_run_folder_is_named(archive: Path) -> None:
    first, _ = run_ids(archive)
    shutil.rmtree(archive / "runs" / first)
    code, output = verify_output(archive)
    assert code == 1 and f"run {first}: missing: the archive's record holds it" in output


def test_a_folder_planted_under_runs_is_named_and_never_read(archive: Path) -> None:
    _, second = run_ids(archive)
    planted = archive / "runs" / ".adding-zz"
    shutil.copytree(archive / "runs" / second, planted)
    findings = pl.read_parquet(planted / "set" / "findings.parquet")
    findings.with_columns(message=pl.lit("forged")).write_parquet(
        planted / "set" / "findings.parquet"
    )
    code, output = verify_output(archive)
    assert code == 1 and "run .adding-zz: not in the archive's record" in output
    assert count(archive, "SELECT count(*) FROM findings_every_run WHERE message = 'forged'") == 0


def test_an_edited_record_entry_is_named(archive: Path) -> None:
    lines = (archive / "record.jsonl").read_text().splitlines()
    entry = json.loads(lines[0]) | {"started_at": "2099-01-01T00:00:00+00:00"}
    (archive / "record.jsonl").write_text("\n".join([json.dumps(entry), lines[1]]) + "\n")
    code, output = verify_output(archive)
    assert code == 1 and "record entry 1" in output and "does not match its hash" in output


def test_links_where_runs_or_run_json_belong_are_refused(archive: Path, tmp_path: Path) -> None:
    first, _ = run_ids(archive)
    run_json = archive / "runs" / first / "run.json"
    kept = tmp_path / "run.json"
    shutil.move(run_json, kept)
    run_json.symlink_to(kept)
    code, output = verify_output(archive)
    assert code == 1 and "run.json: a link, not a regular file" in output
    elsewhere = tmp_path / "runs-elsewhere"
    shutil.move(archive / "runs", elsewhere)
    (archive / "runs").symlink_to(elsewhere)
    code, output = verify_output(archive)
    assert code == 1 and "runs: a link or file" in output


@pytest.mark.e2e
@pytest.mark.parametrize("name", ["archive.duckdb", "reviews.jsonl"])
def test_a_fifo_in_the_archive_is_refused_not_opened(archive: Path, name: str) -> None:
    (archive / name).unlink()
    os.mkfifo(archive / name)
    for args in (
        ["verify", archive],
        ["query", archive, "SELECT count(*) FROM findings_every_run", "--timeout", "5"],
        ["archive", "list", archive],
        *([["review", archive, "--verify"]] if name == "reviews.jsonl" else []),
    ):
        done = subprocess.run(
            [AUDITOR, *map(str, args)], capture_output=True, text=True, timeout=HANG_GUARD
        )
        assert done.returncode in (1, 2), (args, done.stderr)
        assert "FIFO" in done.stdout + done.stderr, (args, done.stdout, done.stderr)


def test_a_ledger_linked_to_dev_zero_is_refused(archive: Path) -> None:
    (archive / "reviews.jsonl").unlink()
    (archive / "reviews.jsonl").symlink_to("/dev/zero")
    code, output = verify_output(archive)
    assert code == 1 and "reviews.jsonl: a link" in output
    refused = cli("query", archive, "SELECT count(*) FROM reviews")
    assert refused.exit_code == 2 and "a link" in refused.output


def test_an_archive_without_its_record_is_said_then_sealed(archive: Path, nights) -> None:
    (archive / "record.jsonl").unlink()
    code, output = verify_output(archive)
    assert code == 1 and "record.jsonl: missing" in output
    refused = cli("archive", "add", archive, nights["first"])
    assert refused.exit_code == 2 and "archive seal" in refused.output
    sealed = cli("archive", "seal", archive)
    assert sealed.exit_code == 0 and "2 runs recorded" in sealed.output
    assert verify_output(archive)[0] == 0


def test_sealing_refuses_a_changed_run(archive: Path) -> None:
    (archive / "record.jsonl").unlink()
    first, *_ = sorted(p.name for p in (archive / "runs").iterdir())
    (archive / "runs" / first / "set" / "summary.txt").write_text("changed")
    refused = cli("archive", "seal", archive)
    assert refused.exit_code == 2 and "not sealed" in refused.output
    assert not (archive / "record.jsonl").exists()


# ---- the periods `auditor surveil` wrote -----------------------------------------------------


@pytest.fixture
def surveilled(surveilled_archive: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(surveilled_archive, tmp_path / "archive"))


def patron_report(archive: Path, target: Path) -> object:
    return cli("report", archive, "--patron", PATRON, "-o", target)


def test_a_surveilled_archive_verifies_intact_and_its_alerts_are_reported(
    surveilled: Path, tmp_path: Path
) -> None:
    code, output = verify_output(surveilled)
    assert code == 0 and "intact" in output, output
    written = period_report(surveilled, tmp_path / "period.html")
    assert written.exit_code == 0, written.output
    assert '<table class="tests period-alerts">' in (tmp_path / "period.html").read_text()
    assert patron_report(surveilled, tmp_path / "patron.html").exit_code == 0


def test_alerts_rewritten_without_a_row_are_named_and_never_reported(
    surveilled: Path, tmp_path: Path
) -> None:
    alerts = surveilled / "periods" / PERIOD_RUN / "alerts.parquet"
    pl.read_parquet(alerts).slice(1).write_parquet(alerts)
    code, output = verify_output(surveilled)
    assert code == 1 and f"periods/{PERIOD_RUN}: alerts.parquet: not as recorded" in output
    for report in (period_report, patron_report):
        refused = report(surveilled, tmp_path / "report.html")
        assert refused.exit_code == 2, refused.output
        assert f"periods/{PERIOD_RUN}: alerts.parquet: not as recorded" in refused.output
        assert not (tmp_path / "report.html").exists()


def test_a_file_added_to_a_period_is_named_as_extra(surveilled: Path, tmp_path: Path) -> None:
    (surveilled / "periods" / PERIOD_RUN / "notes.txt").write_text("added by hand")
    (surveilled / "periods" / PERIOD / "beside.txt").write_text("added by hand")
    code, output = verify_output(surveilled)
    assert code == 1 and f"periods/{PERIOD_RUN}: extra: notes.txt" in output
    assert f"periods/{PERIOD}: extra: beside.txt" in output
    refused = period_report(surveilled, tmp_path / "period.html")
    assert refused.exit_code == 2 and "extra: notes.txt" in refused.output


def test_a_period_planted_by_hand_is_named_as_not_in_the_record(
    surveilled: Path, tmp_path: Path
) -> None:
    planted = f"{PERIOD_START}_{PERIOD_START}"
    shutil.copytree(surveilled / "periods" / PERIOD, surveilled / "periods" / planted)
    code, output = verify_output(surveilled)
    assert code == 1 and f"periods/{planted}/1: not in the archive's record" in output
    refused = period_report(surveilled, tmp_path / "period.html")
    assert refused.exit_code == 2 and f"periods/{planted}/1: not in the" in refused.output


def test_a_deleted_period_is_named_as_missing(surveilled: Path) -> None:
    shutil.rmtree(surveilled / "periods" / PERIOD)
    code, output = verify_output(surveilled)
    assert code == 1 and f"periods/{PERIOD_RUN}: missing: the archive's record holds it" in output
