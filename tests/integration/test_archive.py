"""The archive of runs: adding is verified, atomic and safe under concurrency; a re-audit
supersedes the earlier run for what it covers; the catalog answers across runs in the
same sandbox as a run's; `auditor verify ARCHIVE` sees a changed run."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import time
from pathlib import Path

import duckdb
import polars as pl
import pytest

from auditor.archive.store import RUN_FILE, archived_runs
from tests.support.cli import AUDITOR, cli
from tests.support.paths import SAMPLE


@pytest.fixture(scope="module")
def nights(tmp_path_factory) -> dict[str, Path]:
    """The sample audited, then audited again from corrected logs: the wager whose payout
    was wrong (a PAY002 finding) taken out, so the re-audit's findings differ."""
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
    return {"first": first, "second": second, "wrong": wrong}


def test_an_output_set_knows_where_and_when_its_findings_happened(nights):
    located = pl.read_parquet(nights["first"] / "located.parquet")
    findings = pl.read_parquet(nights["first"] / "findings.parquet")
    assert sorted(located["finding_id"]) == sorted(findings["finding_id"])
    assert located["gaming_day"].null_count() == 0
    rounds = pl.read_parquet(SAMPLE / "rounds.parquet")
    # Noon to noon UTC: a round at 11:59 belongs to the day before.
    days = rounds.select(
        (pl.col("dealt_at").dt.convert_time_zone("UTC") - pl.duration(hours=12)).dt.date().unique()
    )
    assert set(located["gaming_day"]) <= set(days.to_series())
    coverage = pl.read_parquet(nights["first"] / "coverage.parquet")
    assert coverage["rounds"].sum() == rounds.height


@pytest.mark.parametrize(
    ("moment", "day"),
    [
        ("2026-11-24 11:59:59.999999+00", "2026-11-23"),
        ("2026-11-24 12:00:00+00", "2026-11-24"),
        ("2026-11-24 06:59:59+00", "2026-11-23"),
        ("2026-11-24 07:30:00-05", "2026-11-24"),  # 12:30 UTC
        ("1969-12-31 23:00:00+00", "1969-12-31"),  # before the epoch
    ],
)
def test_a_gaming_day_runs_noon_to_noon_utc(moment: str, day: str) -> None:
    from auditor.output.located import GAMING_DAY_SQL

    with duckdb.connect() as con:
        con.execute("SET TimeZone = 'America/New_York'")  # the session's zone plays no part
        sql = GAMING_DAY_SQL.format(ts=f"TIMESTAMPTZ '{moment}'")
        assert str(con.execute(f"SELECT {sql}").fetchone()[0]) == day


def test_a_reaudit_supersedes_the_earlier_run_and_both_stay_queryable(nights, tmp_path):
    archive = tmp_path / "archive"
    assert cli("archive", "add", archive, nights["first"]).exit_code == 0
    assert cli("archive", "add", archive, nights["second"]).exit_code == 0
    listed = cli("archive", "list", archive)
    assert listed.exit_code == 0
    header, *lines = listed.output.strip().splitlines()
    assert header.split()[0] == "run" and header.endswith("state")
    assert len(lines) == 2 and lines[0].endswith("superseded") and lines[1].endswith("in force")
    with duckdb.connect(str(archive / "archive.duckdb"), read_only=True) as con:
        every = "SELECT run_id, count(*) FROM findings_every_run GROUP BY 1"
        by_run = dict(con.execute(every).fetchall())
        current = con.execute("SELECT DISTINCT run_id FROM findings_current").fetchall()
        days = con.execute("SELECT DISTINCT gaming_day FROM findings_every_run").fetchall()
    first, second = (r.run_id for r in archived_runs(archive))
    assert set(by_run) == {first, second}
    assert by_run[first] == by_run[second] + 1  # the corrected wager's finding is gone
    assert current == [(second,)]
    assert days and None not in {d for (d,) in days}


def test_adding_is_idempotent_and_refuses_a_changed_set(nights, tmp_path):
    archive = tmp_path / "archive"
    assert cli("archive", "add", archive, nights["first"]).exit_code == 0
    again = cli("archive", "add", archive, nights["first"])
    assert again.exit_code == 0 and "already in" in again.output
    changed = tmp_path / "changed"
    shutil.copytree(nights["second"], changed)
    (changed / "summary.txt").write_text("nothing to see")
    refused = cli("archive", "add", archive, changed)
    assert refused.exit_code == 2 and "not as the audit wrote it" in refused.output
    assert len(archived_runs(archive)) == 1


def test_a_set_replaced_while_it_is_copied_is_refused(nights, tmp_path, monkeypatch):
    """The run's id is read before the set is copied: a set replaced whole meanwhile (its
    manifest and catalog with it) is refused, and the archive holds no run of it."""
    from auditor.archive import store

    copy = shutil.copytree

    def swapped(source: Path, *rest: object, **how: object) -> object:
        return copy(nights["second"] if source == nights["first"] else source, *rest, **how)

    monkeypatch.setattr(store.shutil, "copytree", swapped)
    archive = tmp_path / "archive"
    with pytest.raises(store.ArchiveError, match="changed while it was copied"):
        store.add_run(archive, nights["first"])
    assert archived_runs(archive) == []


def test_a_folder_of_other_files_is_not_made_an_archive(nights, tmp_path):
    (tmp_path / "mine.txt").write_text("keep")
    refused = cli("archive", "add", tmp_path, nights["first"])
    assert refused.exit_code == 2 and "not an archive" in refused.output
    assert [p.name for p in tmp_path.iterdir()] == ["mine.txt"]


def test_audit_with_archive_adds_the_finished_run(tmp_path):
    archive = tmp_path / "archive"
    result = cli("audit", SAMPLE, "--out", tmp_path / "out", "--archive", archive, "--exit-zero")
    assert result.exit_code == 0, result.output
    assert "added to" in result.output
    assert len(archived_runs(archive)) == 1


def _add_process(archive: Path, outdir: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [AUDITOR, "archive", "add", str(archive), str(outdir)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


@pytest.mark.e2e
def test_two_adds_at_once_both_land(nights, tmp_path):
    archive = tmp_path / "archive"
    adds = [_add_process(archive, nights[name]) for name in ("first", "second")]
    for add in adds:
        _, err = add.communicate(timeout=120)
        assert add.returncode == 0, err
    assert len(archived_runs(archive)) == 2
    assert cli("verify", archive).exit_code == 0


@pytest.mark.e2e
def test_a_killed_add_leaves_the_archive_as_it_was(nights, tmp_path):
    archive = tmp_path / "archive"
    assert cli("archive", "add", archive, nights["first"]).exit_code == 0
    for delay in (0.05, 0.2, 0.4, 0.6):
        add = _add_process(archive, nights["second"])
        time.sleep(delay)
        add.send_signal(signal.SIGKILL)
        add.wait()
        # Either not in yet or wholly in: the archive verifies either way.
        assert len(archived_runs(archive)) in (1, 2)
        assert cli("verify", archive).exit_code == 0
    assert cli("archive", "add", archive, nights["second"]).exit_code == 0
    assert not list((archive / "runs").glob(".adding-*")), "the next add clears them"
    assert len(archived_runs(archive)) == 2


def test_verify_names_a_changed_run(nights, tmp_path):
    archive = tmp_path / "archive"
    assert cli("archive", "add", archive, nights["first"]).exit_code == 0
    assert cli("verify", archive).exit_code == 0
    (run_folder,) = [r.folder for r in archived_runs(archive)]
    (run_folder / "set" / "summary.txt").write_text("edited")
    result = cli("verify", archive)
    assert result.exit_code == 1
    assert f"run {run_folder.name}: changed: summary.txt" in result.output
    record = json.loads((run_folder / RUN_FILE).read_text())
    assert record["findings"] > 0


def test_the_archive_answers_in_the_runs_sandbox(nights, tmp_path):
    archive = tmp_path / "archive"
    assert cli("archive", "add", archive, nights["first"]).exit_code == 0
    counted = cli(
        "query", archive, "SELECT count(*) AS n FROM findings_every_run", "--format", "csv"
    )
    assert counted.exit_code == 0, counted.output
    assert counted.output.strip().splitlines()[-1] != "0"
    refused = cli("query", archive, "SELECT * FROM read_text('/etc/passwd')")
    assert refused.exit_code == 2 and "root:" not in refused.output
    (archive / "runs" / archived_runs(archive)[0].run_id / "set" / "alerts.parquet").unlink()
    changed = cli("query", archive, "SELECT 1")
    assert changed.exit_code == 2 and "not as written" in changed.output


def test_reviews_are_recorded_and_survive_a_reaudit(nights, tmp_path):
    archive = tmp_path / "archive"
    assert cli("archive", "add", archive, nights["first"]).exit_code == 0
    findings = pl.read_parquet(nights["first"] / "findings.parquet")
    kept = findings.filter(pl.col("wager_id") != nights["wrong"])["finding_id"][0]
    gone = findings.filter(pl.col("wager_id") == nights["wrong"])["finding_id"][0]
    for finding, status in ((kept, "explained"), (gone, "escalated")):
        result = cli(
            "review", archive, finding, "--status", status, "--by", "A. Lee", "--note", "n"
        )
        assert result.exit_code == 0, result.output
    refused = cli("review", archive, kept, "--status", "explained", "--by", " ")
    assert refused.exit_code == 2
    unknown = cli("review", archive, "f" * 64, "--status", "explained", "--by", "A. Lee")
    assert unknown.exit_code == 2 and "no archived run" in unknown.output
    assert cli("archive", "add", archive, nights["second"]).exit_code == 0
    second = archived_runs(archive)[-1].run_id
    with duckdb.connect(str(archive / "archive.duckdb"), read_only=True) as con:
        status = {
            f: (s, in_force, since)
            for f, s, in_force, since in con.execute(
                "SELECT finding_id, status, in_force, not_found_since FROM finding_status"
            ).fetchall()
        }
        assert con.execute("SELECT count(*) FROM reviews").fetchone()[0] == 2
    assert status[kept] == ("explained", True, None)
    assert status[gone] == ("escalated", False, second)  # not found since the re-audit
    assert cli("review", archive, "--verify").exit_code == 0
    ledger = archive / "reviews.jsonl"
    ledger.write_text(ledger.read_text().replace("A. Lee", "B. Lee", 1))
    tampered = cli("verify", archive)
    assert tampered.exit_code == 1 and "reviews: line 1" in tampered.output


def test_archive_list_speaks_csv_and_json_too(nights, tmp_path):
    archive = tmp_path / "archive"
    assert cli("archive", "add", archive, nights["first"]).exit_code == 0
    assert cli("archive", "add", archive, nights["second"]).exit_code == 0
    (first, second) = (r.run_id for r in archived_runs(archive))
    as_csv = cli("archive", "list", archive, "--format", "csv")
    assert as_csv.exit_code == 0, as_csv.output
    header, *rows = as_csv.output.strip().splitlines()
    assert header == "run_id,gaming_days,properties,tables,findings,state"
    assert [r.split(",")[0] for r in rows] == [first, second]
    as_json = json.loads(cli("archive", "list", archive, "--format", "json").output)
    assert [(r["run_id"], r["state"]) for r in as_json] == [
        (first, "superseded"),
        (second, "in force"),
    ]
