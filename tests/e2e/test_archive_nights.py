"""A month in the archive: thirty simulated nights audited and archived one run a night,
three of them audited again from corrected logs, reviews recorded before and after.

The re-audits supersede the first runs of their nights (`findings_current`), the reviews
outlive them (`finding_status`), `auditor verify ARCHIVE` sees every tampering with the
review ledger it can (an edited, deleted or swapped record), two `archive add` at once
both land, and an add killed at any of its moments leaves an archive that verifies, and
that the next add completes.

The month (`archive_month`, tests/support/months.py) is built once a test session and
shared with the questions of docs/queries.md (`test_archive_queries.py`), which read it;
the tests that tamper with an archive or kill an add use small archives of the month's
first nights. Each night is small (200 rounds, faults in one round in ten) and audited
in this process without its HTML report: the month is under a minute of CPU to build.
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import polars as pl
import pytest

from auditor.archive.store import add_run, archived_runs
from tests.support.cli import cli
from tests.support.months import NIGHTS, REAUDITS, Month, day_name, review_file, run_id_of


def catalog(archive: Path) -> duckdb.DuckDBPyConnection:
    return duckdb.connect(str(archive / "archive.duckdb"), read_only=True)


# -- the month ---------------------------------------------------------------------------


def test_every_night_is_one_run_and_the_reaudits_three_more(archive_month: Month) -> None:
    runs = archived_runs(archive_month.archive)
    assert len(runs) == NIGHTS + len(REAUDITS)
    days = sorted(day for run in runs for day in run.record["gaming_days"])
    expected = sorted([*map(day_name, range(NIGHTS)), *(r.day for r in archive_month.reaudits)])
    assert days == expected
    assert all(len(run.record["tables"]) == 12 for run in runs)
    with catalog(archive_month.archive) as con:
        covered = con.execute(
            "SELECT count(DISTINCT gaming_day), count(*) FROM coverage_current"
        ).fetchone()
    assert covered == (NIGHTS, NIGHTS * 12)  # every table, every night, one run in force


def test_two_adds_at_once_both_land(archive_month: Month) -> None:
    assert [code for code, _ in archive_month.concurrent] == [0, 0], archive_month.concurrent
    in_archive = {run.run_id for run in archived_runs(archive_month.archive)}
    for night in (NIGHTS - 2, NIGHTS - 1):
        assert run_id_of(archive_month.outs[day_name(night)]) in in_archive


def test_the_month_verifies(archive_month: Month) -> None:
    result = cli("verify", archive_month.archive)
    assert result.exit_code == 0, result.output


# -- re-audits ---------------------------------------------------------------------------


def test_findings_current_holds_the_reaudits_findings_not_the_first_runs(
    archive_month: Month,
) -> None:
    with catalog(archive_month.archive) as con:
        for reaudit in archive_month.reaudits:
            current = con.execute(
                "SELECT DISTINCT run_id FROM findings_current WHERE gaming_day = $day",
                {"day": reaudit.day},
            ).fetchall()
            assert current == [(reaudit.run_id,)], reaudit.day
            first = pl.read_parquet(archive_month.outs[reaudit.day] / "findings.parquet")
            again = con.execute(
                "SELECT finding_id FROM findings_current WHERE gaming_day = $day",
                {"day": reaudit.day},
            ).fetchall()
            # Exactly the removed fault's findings are gone; nothing else changed.
            assert {f for (f,) in again} == set(first["finding_id"]) - set(reaudit.fixed)
            kept = con.execute(
                "SELECT count(*) FROM findings_every_run WHERE run_id = $run",
                {"run": reaudit.first_run},
            ).fetchone()
            assert kept == (first.height,), "every run's findings stay in `findings_every_run`"
        superseded = dict(
            con.execute(
                "SELECT run_id, days_superseded = days_covered FROM superseded_runs "
                "WHERE days_superseded > 0"
            ).fetchall()
        )
        nights = con.execute("SELECT count(DISTINCT run_id) FROM findings_current").fetchone()
    assert superseded == {r.first_run: True for r in archive_month.reaudits}
    assert nights == (NIGHTS,)
    listed = cli("archive", "list", archive_month.archive)
    assert listed.exit_code == 0, listed.output
    rows = listed.output.splitlines()[1:]  # after the header
    states = {line.split()[0]: line.rsplit("  ", 1)[-1] for line in rows}
    assert {run for run, state in states.items() if state == "superseded"} == {
        r.first_run for r in archive_month.reaudits
    }


def test_reviews_recorded_before_a_reaudit_survive_it(archive_month: Month) -> None:
    with catalog(archive_month.archive) as con:
        rows = con.execute(
            "SELECT finding_id, status, reviewed_by, in_force, not_found_since, last_run_id "
            "FROM finding_status"
        ).fetchall()
    status = {row[0]: row[1:] for row in rows}
    for reaudit in archive_month.reaudits:
        for fixed in reaudit.fixed:
            # Corrected, and confirmed: not found since the re-audit.
            confirmed = ("corrected", "M. Ortiz", False, reaudit.run_id, reaudit.first_run)
            assert status[fixed] == confirmed
        assert status[reaudit.kept] == ("explained", "J. Doe", True, None, reaudit.run_id)
    not_found = {f for f, (_, _, in_force, *_) in status.items() if not in_force}
    assert not_found == {f for r in archive_month.reaudits for f in r.fixed}


def test_the_latest_review_of_a_finding_stands(archive_month: Month) -> None:
    with catalog(archive_month.archive) as con:
        twice = con.execute(
            "SELECT r.finding_id, list(r.status ORDER BY r.seq), any_value(s.status) "
            "FROM reviews r JOIN finding_status s USING (finding_id) "
            "GROUP BY 1 HAVING count(*) > 1"
        ).fetchall()
    assert len(twice) == 2
    for _, history, now in twice:
        assert (history, now) == (["escalated", "corrected"], "corrected")


# -- the review ledger, a killed add, a moved archive -------------------------------------

# `auditor verify ARCHIVE` hashes every run's set and compares each run's catalog with its
# Parquet files (about half a second a run on two busy cores): the tests that verify an
# archive many times use an archive of the month's first three nights, made where it is
# used (an archive's catalog names its own folder: see the moved archive below).
SMALL = 3


def spare(archive_month: Month) -> Path:
    """A night's output set in no small archive."""
    return archive_month.outs[day_name(SMALL)]


def small_archive(archive_month: Month, archive: Path, reviews: int = 12) -> Path:
    """An archive of the month's first nights, with `reviews` review records."""
    for night in range(SMALL):
        add_run(archive, archive_month.outs[day_name(night)])
    located = pl.concat(
        pl.read_parquet(archive_month.outs[day_name(n)] / "located.parquet") for n in range(SMALL)
    ).sort("gaming_day", "finding_id")
    statuses = ("explained", "escalated", "dismissed", "corrected")
    rows = [
        (finding, statuses[n % len(statuses)], f"note {n}", "J. Doe")
        for n, finding in enumerate(located["finding_id"].head(reviews))
    ]
    result = cli("review", archive, "--from-file", review_file(archive.parent, "r.csv", rows))
    assert result.exit_code == 0, result.output
    return archive


def encoded_line(record: dict) -> str:
    from auditor.archive.ledger_format import LINE_ORDER

    ordered = {k: record[k] for k in LINE_ORDER if k in record}
    return json.dumps(ordered, separators=(",", ":"), ensure_ascii=False)


def _edited(lines: list[str]) -> list[str]:
    record = json.loads(lines[3])
    record["note"] = "nothing to see"
    return [*lines[:3], encoded_line(record), *lines[4:]]


def _edited_and_rehashed(lines: list[str]) -> list[str]:
    from auditor.archive.ledger_format import record_hash

    record = json.loads(lines[3])
    record["status"] = "dismissed"
    record["hash"] = record_hash(record)
    return [*lines[:3], encoded_line(record), *lines[4:]]


# How the ledger is tampered with, and what `auditor verify` says of it.
TAMPERING = {
    "edited": (_edited, "reviews: line 4 (seq 4): edited: its content does not match its hash"),
    "edited and re-hashed": (
        _edited_and_rehashed,
        "reviews: line 4 (seq 4): changed and re-hashed: line 5 (seq 5) was chained to "
        "another version of it",
    ),
    "deleted": (
        lambda lines: lines[:3] + lines[4:],
        "reviews: line 4 (seq 5): seq 5 where 4 was expected (records missing or moved)",
    ),
    "first deleted": (
        lambda lines: lines[1:],
        "reviews: line 1 (seq 2): seq 2 where 1 was expected (records missing or moved)",
    ),
    "swapped": (
        lambda lines: [*lines[:3], lines[4], lines[3], *lines[5:]],
        "reviews: line 4 (seq 5): out of order, swapped with line 5 (seq 4)",
    ),
    "swapped apart": (
        lambda lines: [*lines[:2], lines[6], *lines[3:6], lines[2], *lines[7:]],
        "reviews: line 3 (seq 7): seq 7 where 3 was expected",
    ),
}


@pytest.fixture(scope="module")
def reviewed(archive_month: Month, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return small_archive(archive_month, tmp_path_factory.mktemp("reviewed") / "archive")


@pytest.mark.parametrize("how", TAMPERING)
def test_verify_sees_a_tampered_review_ledger(reviewed: Path, how: str) -> None:
    ledger = reviewed / "reviews.jsonl"
    original = ledger.read_bytes()
    change, named = TAMPERING[how]
    try:
        lines = original.decode("utf-8").splitlines()
        assert len(lines) >= 8
        ledger.write_text("\n".join(change(lines)) + "\n", encoding="utf-8")
        result = cli("verify", reviewed)
        assert result.exit_code == 1, result.output
        assert named in result.output, result.output
        assert "run " not in result.output, "the runs themselves are intact"
    finally:
        ledger.write_bytes(original)


def test_every_tampering_at_once_is_named(reviewed: Path, tmp_path: Path) -> None:
    """An edit, a swap and a deletion in one ledger: each one is named, first first."""
    archive = tmp_path / "archive"
    shutil.copytree(reviewed, archive)
    ledger = archive / "reviews.jsonl"
    lines = ledger.read_text(encoding="utf-8").splitlines()
    lines = _edited(lines)  # line 4
    lines = [*lines[:6], lines[7], lines[6], *lines[8:]]  # lines 7 and 8 swapped
    lines = lines[:10] + lines[11:]  # line 11 deleted
    ledger.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = cli("verify", archive)
    assert result.exit_code == 1, result.output
    named = [line for line in result.output.splitlines() if line.startswith("reviews: ")]
    assert [line.split(":")[1] for line in named] == [
        " line 4 (seq 4)",
        " line 7 (seq 8)",
        " line 11 (seq 12)",
    ], result.output


# Runs `auditor archive add ARCHIVE OUTDIR`, stopping (to be killed) at one moment of it.
STOPPED_ADD = r"""
import os, shutil, sys, time
from pathlib import Path

import auditor.archive.store as store
from auditor.cli import main

moment, ready, archive, outdir = sys.argv[1:5]


def stop():
    Path(ready).write_text(moment)
    time.sleep(600)


if moment == "copying":  # half of findings.parquet copied into the run's new folder
    copytree = shutil.copytree

    def torn(src, dst, *, follow_symlinks=True):
        if Path(src).name == "findings.parquet":
            data = Path(src).read_bytes()
            Path(dst).write_bytes(data[: len(data) // 2])
            stop()
        return shutil.copy2(src, dst, follow_symlinks=follow_symlinks)

    shutil.copytree = lambda src, dst, **kw: copytree(src, dst, copy_function=torn, **kw)
elif moment == "copied":  # the run's folder whole, with its run.json, not yet renamed
    rename = os.rename
    os.rename = lambda a, b: stop() if Path(a).name.startswith(".adding-") else rename(a, b)
elif moment == "renamed":  # the run in place, the catalog not yet checked
    store.ensure_catalog = lambda folder: stop()
elif moment == "cataloged":  # a catalog written anew (the old one lost), not switched in
    (Path(archive) / "archive.duckdb").unlink()
    replace = os.replace
    os.replace = lambda a, b: stop() if Path(b).name == "archive.duckdb" else replace(a, b)
main(["archive", "add", archive, outdir])
"""
MOMENTS = ("copying", "copied", "renamed", "cataloged")


COUNTED = "SELECT (SELECT count(*) FROM runs) AS runs, count(*) AS findings FROM findings_every_run"


def _catalog_reads(archive: Path) -> str:
    """What `auditor query ARCHIVE` makes of the archive: "as archived" when its runs and
    findings are those of the runs' folders, else what it gives."""
    runs = archived_runs(archive)
    expected = f"{len(runs)},{sum(r.record['findings'] for r in runs)}"
    result = cli("query", archive, COUNTED, "--format", "csv")
    if result.exit_code != 0:
        return f"exit {result.exit_code}: {result.output.strip().splitlines()[-1]}"
    got = result.output.strip().splitlines()[-1]
    return "as archived" if got == expected else f"runs,findings {got} where {expected} archived"


@pytest.fixture(scope="module")
def killed(archive_month: Month, tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    """For each moment, an add of a night to a small archive killed (SIGKILL) there,
    then what verify, the catalog and the next add make of the archive."""
    seen = {}
    for moment in MOMENTS:
        folder = tmp_path_factory.mktemp(f"killed-{moment}")
        archive = small_archive(archive_month, folder / "archive")
        ready = folder / "ready"
        add = subprocess.Popen(
            [sys.executable, "-c", STOPPED_ADD, moment, ready, archive, spare(archive_month)],
            cwd=folder,  # not the repository: `-c` imports from the working folder first
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            deadline = time.monotonic() + 120
            while not ready.exists() and add.poll() is None and time.monotonic() < deadline:
                time.sleep(0.02)
            stopped = ready.exists()
            add.send_signal(signal.SIGKILL)
            add.wait()
        finally:
            stderr = add.stderr.read()
            add.stderr.close()
        verified = cli("verify", archive)
        runs = len(archived_runs(archive))
        reads = _catalog_reads(archive)
        added = cli("archive", "add", archive, spare(archive_month))
        seen[moment] = {
            "stopped": stopped,
            "stderr": stderr,
            "verify": (verified.exit_code, verified.output),
            "runs": runs,
            "catalog": reads,
            "next add": (added.exit_code, added.output),
            "runs after": len(archived_runs(archive)),
            "partials after": sorted(p.name for p in (archive / "runs").glob(".*")),
            "verify after": cli("verify", archive).exit_code,
            "catalog after": _catalog_reads(archive),
        }
    return seen


@pytest.mark.parametrize("moment", MOMENTS)
def test_a_killed_add_leaves_the_archive_intact_and_the_next_add_lands(
    killed: dict[str, dict], moment: str
) -> None:
    seen = killed[moment]
    assert seen["stopped"], seen["stderr"]
    assert seen["verify"][0] == 0, seen["verify"][1]
    # Not in yet before the rename; wholly in after it.
    assert seen["runs"] == (SMALL + 1 if moment in ("renamed", "cataloged") else SMALL)
    assert seen["next add"][0] == 0, seen["next add"][1]
    assert seen["runs after"] == SMALL + 1
    assert seen["partials after"] == [], "the next add clears what the killed one left"
    assert seen["verify after"] == 0
    assert seen["catalog after"] == "as archived"


@pytest.mark.parametrize("moment", MOMENTS)
def test_the_catalog_reads_only_whole_runs_after_a_killed_add(
    killed: dict[str, dict], moment: str
) -> None:
    assert killed[moment]["catalog"] == "as archived"


def test_a_moved_archive_answers_where_it_is(archive_month: Month, tmp_path: Path) -> None:
    archive = small_archive(archive_month, tmp_path / "archive", reviews=1)
    moved = tmp_path / "moved"
    archive.rename(moved)
    assert cli("verify", moved).exit_code == 0
    assert _catalog_reads(moved) == "as archived"
    assert cli("archive", "list", moved).exit_code == 0
