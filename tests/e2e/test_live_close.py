"""Closing a live day, both ways: a close cut off between adding its run to the archive
and marking the day closed ends with that run, never a second (and a run of other files
of the day is no close); a watcher given `--close-at` in a zone closes the day by itself
at that time in that zone, not before, with its run in the archive."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import polars as pl

from auditor.archive.integrity import verify_archive
from auditor.archive.live_runs import closed_live_day, closing_run
from auditor.archive.store import add_run, archived_runs
from auditor.live.watch import Watch, WatchOptions
from auditor.pipeline import run_audit
from tests.support.cli import AUDITOR
from tests.support.paths import SAMPLE

DAY = "2026-11-24"


def landing_of(root: Path, day: str = DAY) -> Path:
    """The sample's tables as a landing folder, its play filed under `day`."""
    landing = root / "landing"
    for name in ("tables", "royal9_seats"):
        (landing / name).mkdir(parents=True)
        shutil.copy(SAMPLE / f"{name}.parquet", landing / name / "0.parquet")
    for name in ("shoes", "rounds", "wagers", "commission_collections"):
        (landing / name / f"gaming_date={day}").mkdir(parents=True)
        shutil.copy(SAMPLE / f"{name}.parquet", landing / name / f"gaming_date={day}" / "0.parquet")
    return landing


def watch_of(root: Path, landing: Path, said: list[str]) -> Watch:
    return Watch(WatchOptions(landing, root / "archive", settle=0.0), said.append)


def live_lines(archive: Path, day: str = DAY) -> list[dict]:
    path = archive / "live" / day / "findings.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_close_cut_off_after_its_run_was_added_ends_with_that_run(tmp_path):
    landing, archive = landing_of(tmp_path), tmp_path / "archive"
    said: list[str] = []
    first = watch_of(tmp_path, landing, said)
    first.tick(close_due=False)
    # The close's first step, then the process gone before the day is marked closed.
    run_id = first.add_closing_run(DAY)
    assert first.store.closed(DAY) is None
    assert closing_run(archive, DAY) == run_id
    # Started again: the close is finished with the run already there, never a second.
    again = watch_of(tmp_path, landing, said)
    assert again.close(DAY) == run_id
    assert [run.run_id for run in archived_runs(archive)] == [run_id]
    assert again.store.closed(DAY)["run_id"] == run_id
    assert any(line["final"] == "the day closed" for line in live_lines(archive))
    assert any("finishing the close cut off" in line for line in said)
    assert verify_archive(archive) == []


def test_a_watch_started_again_finishes_a_cut_off_close_before_anything_else(tmp_path):
    landing, archive = landing_of(tmp_path), tmp_path / "archive"
    said: list[str] = []
    first = watch_of(tmp_path, landing, said)
    first.tick(close_due=False)
    run_id = first.add_closing_run(DAY)
    again = watch_of(tmp_path, landing, said)
    again.stopping.set()  # one start, no look at the landing folder
    again.run()
    assert again.store.closed(DAY)["run_id"] == run_id
    assert len(archived_runs(archive)) == 1


def test_a_run_of_the_days_files_from_elsewhere_is_not_its_close(tmp_path):
    landing, archive = landing_of(tmp_path), tmp_path / "archive"
    said: list[str] = []
    watch = watch_of(tmp_path, landing, said)
    watch.tick(close_due=False)
    run_audit(landing, tmp_path / "batch", archive=archive)
    other, _ = add_run(archive, tmp_path / "batch", notify=said.append)
    assert closing_run(archive, DAY) is None
    closed = watch.close(DAY)
    assert closed != other.run_id and closing_run(archive, DAY) == closed
    assert len(archived_runs(archive)) == 2


def test_only_a_live_days_own_dataset_names_its_close():
    assert closed_live_day(f"/audits/archive/live/{DAY}/dataset") == DAY
    assert closed_live_day(f"/moved/elsewhere/live/{DAY}/dataset") == DAY
    assert closed_live_day("/landing") is None
    assert closed_live_day(f"/data/live/{DAY}/rounds") is None
    assert closed_live_day(None) is None


def test_a_watcher_closes_the_day_by_itself_at_close_at_in_its_zone(tmp_path):
    zone = ZoneInfo("Asia/Kathmandu")  # UTC+05:45: a close time read as UTC would miss
    now = datetime.now(zone)
    # A whole second of the zone's clock, far enough ahead for the watcher to start.
    close = (now + timedelta(seconds=12)).replace(microsecond=0)
    # The gaming day that ends last before that close (noon to noon UTC): closed at it,
    # never at the close time the day before, which came before the day ended.
    day = ((close.astimezone(UTC) - timedelta(hours=12)).date() - timedelta(days=1)).isoformat()
    landing, archive = landing_of(tmp_path, day), tmp_path / "archive"
    out = tmp_path / "watch.jsonl"
    watcher = subprocess.Popen(
        [AUDITOR, "watch", str(landing), "--archive", str(archive), "--settle", "0.2",
         "--poll", "0.2", "--close-at", close.strftime("%H:%M:%S"), "--zone", zone.key],
        stdout=out.open("w"), stderr=out.with_suffix(".err").open("w"),
    )  # fmt: skip
    marker = archive / "live" / day / "closed.json"
    try:
        # The deadline only keeps a hung watcher from hanging the suite.
        deadline = time.monotonic() + 600
        while not marker.exists():
            assert watcher.poll() is None, out.with_suffix(".err").read_text()
            assert time.monotonic() < deadline, "the day was never closed"
            time.sleep(0.5)
    finally:
        watcher.send_signal(signal.SIGTERM)
        assert watcher.wait(120) == 0, out.with_suffix(".err").read_text()
    closed = json.loads(marker.read_text())
    # Closed at the close time, not before it (the day had ended long before).
    assert datetime.fromisoformat(closed["closed_at"]) >= close
    runs = archived_runs(archive)
    assert [run.run_id for run in runs] == [closed["run_id"]]
    assert closed_live_day(runs[0].record["dataset"]) == day
    # Live findings were reported before the close, and the close's after them.
    reported = [json.loads(line) for line in out.read_text().splitlines()]
    assert reported and reported[0]["final"] != "the day closed"


def test_a_batch_audits_only_the_tables_its_files_touch(tmp_path):
    """A table's files landing late (its wagers before its rounds) are audited with that
    table alone; the other tables' findings stand; the close audits the whole day."""
    landing, archive = landing_of(tmp_path), tmp_path / "archive"
    late = "T-MA-BAC-02"
    folder = f"gaming_date={DAY}"
    held: dict[str, pl.DataFrame] = {}
    rounds = pl.read_parquet(landing / "rounds" / folder / "0.parquet")
    of_late = rounds.filter(pl.col("table_id") == late)["round_id"].implode()
    for name in ("shoes", "rounds", "wagers", "commission_collections"):
        path = landing / name / folder / "0.parquet"
        frame = pl.read_parquet(path)
        mine = pl.col("round_id").is_in(of_late) if name == "wagers" else pl.col("table_id") == late
        held[name] = frame.filter(mine)
        frame.filter(~mine).write_parquet(path)
    said: list[str] = []
    watch = watch_of(tmp_path, landing, said)
    watch.tick(close_due=False)  # the first batch: every table but the late one
    before = watch.store.reported(DAY)
    # Only the late table's options are read yet: of it, table findings alone.
    of_play = {r["located_table_id"] for r in before.values() if r["table_id"] is None}
    assert of_play and late not in of_play
    held["wagers"].write_parquet(landing / "wagers" / folder / "late.parquet")
    watch.tick(close_due=False)  # wagers whose rounds have not landed: nothing to audit
    assert watch.store.reported(DAY) == before
    for name in ("shoes", "rounds", "commission_collections"):
        held[name].write_parquet(landing / name / folder / "late.parquet")
    watch.tick(close_due=False)
    batch = {p.relative_to(archive / "live" / DAY / "batch").as_posix()
             for p in (archive / "live" / DAY / "batch").rglob("*.parquet")}  # fmt: skip
    assert batch == {
        "tables/0.parquet", "royal9_seats/0.parquet",
        *(f"{name}/{folder}/late.parquet"
          for name in ("shoes", "rounds", "wagers", "commission_collections")),
    }  # fmt: skip
    assert any("(1 tables)" in line for line in said)
    after = watch.store.reported(DAY)
    added = [r for k, r in after.items() if k not in before]
    assert added and {r["located_table_id"] for r in added} == {late}
    assert all(after[k] == r for k, r in before.items())  # nothing withdrawn elsewhere
    # Every finding of the day, reported live or at the close, is the nightly audit's.
    run_id = watch.close(DAY)
    final = pl.read_parquet(archive / "runs" / run_id / "set" / "findings.parquet")
    run_audit(landing, tmp_path / "nightly")
    nightly = pl.read_parquet(tmp_path / "nightly" / "findings.parquet")
    assert sorted(final["finding_id"]) == sorted(nightly["finding_id"])
    live = {k for k, r in watch.store.reported(DAY).items() if r["change"] != "withdrawn"}
    assert live == set(nightly["finding_id"])
