"""The landing folder's convention, both ways: a half-written file is not read and a
whole one is; hidden and `.tmp` names never; a link out of the folder never; a file
changed after it was read is said, never read again; the reports' changes; when a day
closes; `--on-finding` run without a shell, its failure never stopping the watch."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from datetime import UTC, datetime, time
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from auditor.live.batch import changes
from auditor.live.close import due
from auditor.live.landing import Settler, footer_reads, look
from auditor.live.notify import Notifier
from auditor.live.watch import Watch, WatchError, WatchOptions, check_folders
from tests.support.cli import AUDITOR
from tests.support.paths import SAMPLE

DAY_FOLDER = "gaming_date=2026-11-24"


def landing_with_sample(root: Path) -> Path:
    """The sample's tables as a landing folder: standing files and a day's files."""
    landing = root / "landing"
    for name in ("tables", "royal9_seats"):
        (landing / name).mkdir(parents=True)
        shutil.copy(SAMPLE / f"{name}.parquet", landing / name / "0.parquet")
    for name in ("shoes", "rounds", "wagers", "commission_collections"):
        (landing / name / DAY_FOLDER).mkdir(parents=True)
        shutil.copy(SAMPLE / f"{name}.parquet", landing / name / DAY_FOLDER / "0.parquet")
    return landing


def make_watch(root: Path, landing: Path, said: list[str]) -> Watch:
    options = WatchOptions(landing, root / "archive", settle=0.0)
    return Watch(options, said.append)


def test_a_half_written_file_is_not_read_until_whole(tmp_path):
    landing = landing_with_sample(tmp_path)
    whole = (landing / "rounds" / DAY_FOLDER / "0.parquet").read_bytes()
    late = landing / "rounds" / DAY_FOLDER / "1.parquet"
    late.write_bytes(whole[: len(whole) // 2])
    assert not footer_reads(late)
    said: list[str] = []
    watch = make_watch(tmp_path, landing, said)
    days = watch.take_new_files()  # settled at once (settle 0)
    assert set(days) == {"2026-11-24", "standing"}
    assert f"rounds/{DAY_FOLDER}/1.parquet" not in watch.read
    late.write_bytes(whole)
    watch.take_new_files()
    watch.take_new_files()
    assert watch.read[f"rounds/{DAY_FOLDER}/1.parquet"]["status"] == "read"


def test_a_file_still_changing_waits_for_the_settle_time(tmp_path):
    landing = landing_with_sample(tmp_path)
    seen, _ = look(landing)
    settler = Settler(5.0)
    assert settler.complete(seen, now=100.0) == []
    assert settler.complete(seen, now=104.0) == []
    assert len(settler.complete(seen, now=105.0)) == len(seen)
    grown = [
        f if "rounds" not in f.path else type(f)(f.path, f.table, f.size + 1, f.mtime_ns)
        for f in seen
    ]
    assert len(settler.complete(grown, now=106.0)) == len(seen) - 1


def test_hidden_and_tmp_names_are_never_read_and_others_are(tmp_path):
    landing = landing_with_sample(tmp_path)
    folder = landing / "rounds" / DAY_FOLDER
    shutil.copy(folder / "0.parquet", folder / ".1.parquet")
    shutil.copy(folder / "0.parquet", folder / "2.parquet.tmp")
    shutil.copy(folder / "0.parquet", folder / "_3.parquet")
    seen, refused = look(landing)
    paths = {f.path for f in seen}
    assert f"rounds/{DAY_FOLDER}/0.parquet" in paths
    assert not any(name in p for p in paths for name in (".1.", "2.parquet", "_3"))
    assert refused == []


def test_a_link_out_of_the_landing_folder_is_not_followed(tmp_path):
    landing = landing_with_sample(tmp_path)
    outside = tmp_path / "elsewhere.parquet"
    shutil.copy(SAMPLE / "rounds.parquet", outside)
    os.symlink(outside, landing / "rounds" / DAY_FOLDER / "9.parquet")
    os.symlink(landing / "rounds" / DAY_FOLDER / "0.parquet", landing / "rounds" / "in.parquet")
    seen, refused = look(landing)
    assert [r.path for r in refused] == [f"rounds/{DAY_FOLDER}/9.parquet"]
    assert "out of the landing folder" in refused[0].reason
    assert "rounds/in.parquet" in {f.path for f in seen}  # a link within it is followed


def test_a_stray_file_is_named_not_read(tmp_path):
    landing = landing_with_sample(tmp_path)
    (landing / "notes.txt").write_text("hello")
    os.mkfifo(landing / "rounds" / DAY_FOLDER / "fifo.parquet")
    _, refused = look(landing)
    assert {r.path for r in refused} == {"notes.txt", f"rounds/{DAY_FOLDER}/fifo.parquet"}


def test_a_file_changed_after_it_was_read_is_said_and_not_read_again(tmp_path):
    landing = landing_with_sample(tmp_path)
    said: list[str] = []
    watch = make_watch(tmp_path, landing, said)
    watch.take_new_files()
    watch.take_new_files()
    path = landing / "shoes" / DAY_FOLDER / "0.parquet"
    path.write_bytes(path.read_bytes() + b"")
    os.utime(path, ns=(1, 1))
    assert watch.take_new_files() == {}
    assert any("changed after it was read" in line for line in said)
    assert watch.read[f"shoes/{DAY_FOLDER}/0.parquet"]["status"] == "changed"
    count = len(said)
    watch.take_new_files()
    assert len(said) == count  # said once
    # And a watcher started again knows it too.
    again = make_watch(tmp_path, landing, [])
    assert again.read[f"shoes/{DAY_FOLDER}/0.parquet"]["status"] == "changed"


def audited_files(archive: Path) -> set[str]:
    """The files the watch's batches have audited, as batches.jsonl records them."""
    batches = archive / "live" / "batches.jsonl"
    lines = batches.read_text().splitlines() if batches.exists() else []
    return {path for line in lines if line for path in json.loads(line)["files"]}


def landed_files(landing: Path) -> set[str]:
    return {p.relative_to(landing).as_posix() for p in landing.rglob("*.parquet")}


def test_files_a_batch_could_not_audit_go_with_the_days_next_batch(tmp_path):
    """A shoe landed before any round of its day: the day cannot be audited yet, and the
    shoe's file is audited and recorded with the batch its rounds bring."""
    landing = landing_with_sample(tmp_path)
    held: dict[Path, bytes] = {}
    for name in ("rounds", "wagers", "commission_collections"):
        path = landing / name / DAY_FOLDER / "0.parquet"
        held[path] = path.read_bytes()
        path.unlink()
    said: list[str] = []
    watch = make_watch(tmp_path, landing, said)
    watch.tick(close_due=False)
    assert any("not audited this time" in line for line in said)
    assert f"shoes/{DAY_FOLDER}/0.parquet" not in audited_files(tmp_path / "archive")
    for path, data in held.items():
        path.write_bytes(data)
    watch.tick(close_due=False)
    assert audited_files(tmp_path / "archive") == landed_files(landing)
    assert "not audited this time" not in said[-1] and "new files audited" in said[-1]


def test_files_read_by_a_watch_stopped_before_its_batch_go_with_the_next(tmp_path):
    """A watch that read files and stopped before auditing them: the next watch's first
    batch audits the day and records them."""
    landing = landing_with_sample(tmp_path)
    stopped = make_watch(tmp_path, landing, [])
    assert set(stopped.take_new_files()) == {"2026-11-24", "standing"}
    assert audited_files(tmp_path / "archive") == set()
    again = make_watch(tmp_path, landing, [])
    again.catch_up()
    assert audited_files(tmp_path / "archive") == landed_files(landing)


@pytest.mark.e2e
def test_the_landing_folder_and_the_archive_must_be_apart(tmp_path):
    (tmp_path / "landing").mkdir()
    with pytest.raises(WatchError):
        check_folders(tmp_path / "landing", tmp_path / "landing" / "archive")
    with pytest.raises(WatchError):
        check_folders(tmp_path / "landing", tmp_path)
    assert check_folders(tmp_path / "landing", tmp_path / "archive")
    done = subprocess.run(
        [AUDITOR, "watch", str(tmp_path / "landing"), "--archive", str(tmp_path / "landing" / "a")],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 2 and "apart" in done.stderr


FINDING = {"finding_id": "a", "rule": "PAY001", "severity": "high", "citation": "c",
           "expected": "$10.00", "logged": "$5.00", "impact": "-5.00", "message": "m",
           "final": "at once"}  # fmt: skip


def test_changes_new_changed_withdrawn_and_again():
    assert changes([FINDING], {}) == [{**FINDING, "change": "new"}]
    reported = {"a": {**FINDING, "change": "new", "found_at": "t"}}
    assert changes([FINDING], reported) == []
    moved = {**FINDING, "logged": "$6.00", "impact": "-4.00"}
    [changed] = changes([moved], reported)
    assert changed["change"] == "changed"
    assert changed["was"] == {"logged": "$5.00", "impact": "-5.00"}
    [gone] = changes([], reported)
    assert gone["change"] == "withdrawn" and "found_at" not in gone
    withdrawn = {"a": {**FINDING, "change": "withdrawn"}}
    assert changes([], withdrawn) == []
    assert changes([FINDING], withdrawn)[0]["change"] == "again"


def test_a_day_closes_at_the_first_close_time_after_it_ends():
    zone = ZoneInfo("America/New_York")
    # Gaming day 2026-11-24 ends at noon UTC on the 25th, 07:00 in New York.
    before = datetime(2026, 11, 25, 12, 20, tzinfo=UTC)  # 07:20 local
    after = datetime(2026, 11, 25, 12, 31, tzinfo=UTC)  # 07:31 local
    assert due(["2026-11-24"], time(7, 30), zone, before) == []
    assert due(["2026-11-24", "2026-11-25"], time(7, 30), zone, after) == ["2026-11-24"]
    # A close time before the day's end closes it the next day.
    early = datetime(2026, 11, 25, 11, 30, tzinfo=UTC)
    assert due(["2026-11-24"], time(6, 0), zone, early) == []


@pytest.mark.e2e
def test_on_finding_runs_without_a_shell_and_its_failure_never_stops(tmp_path, capsys):
    said: list[str] = []
    target = tmp_path / "got.json"
    program = f"import sys; open({str(target)!r}, 'w').write(sys.stdin.read())"
    Notifier(f"{sys.executable} -c {json.dumps(program)}", said.append).hand_over([FINDING])
    assert json.loads(target.read_text())["finding_id"] == "a"
    # A shell would run the second command: without one it is an argument.
    marker = tmp_path / "planted"
    Notifier(f"true; touch {marker}", said.append).hand_over([FINDING])
    assert not marker.exists()
    Notifier("false", said.append).hand_over([FINDING])
    Notifier("/no/such/program", said.append).hand_over([FINDING])
    Notifier("sleep 5", said.append, timeout=0.2).hand_over([FINDING])
    assert len(said) == 4, said
    assert "exit status 1" in said[1] and "could not run" in said[2] and "no answer" in said[3]
