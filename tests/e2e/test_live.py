"""`auditor watch` driven by `auditor simulate --live`: every fault of the key reported
while the day is dealt, none twice, across a watcher killed and started again; the
closed day equal, row for row, to `auditor audit` over the same files."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from auditor.check_docs import check_docs
from auditor.findings.frames import WHEN_SHOE_CLOSES
from tests.support.cli import AUDITOR

DAY = "2026-11-24"
KEY = "_fault_key.parquet"


def watcher(landing: Path, archive: Path, out: Path, *more: str) -> subprocess.Popen:
    return subprocess.Popen(
        [AUDITOR, "watch", str(landing), "--archive", str(archive), "--settle", "0.2",
         "--poll", "0.1", *more],
        stdout=out.open("w"),
        stderr=out.with_suffix(".err").open("w"),
    )  # fmt: skip


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def wait_for(condition, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "waited in vain"
        time.sleep(0.2)


def caught_up(archive: Path, landing: Path) -> bool:
    """Every landed file read and audited by a batch."""
    batches = archive / "live" / "batches.jsonl"
    if not batches.exists():
        return False
    done = {path for record in lines(batches) for path in record["files"]}
    landed = {
        p.relative_to(landing).as_posix()
        for p in landing.rglob("*.parquet")
        if not p.name.startswith((".", "_")) and "gaming_date" in p.as_posix()
    }
    return landed <= done


@pytest.fixture(scope="module")
def live_day(tmp_path_factory) -> Iterator[dict]:
    """A day written at pace while one watcher runs, is killed, and another resumes; then
    the day closed, and the batch audit of the same files. A watcher or simulation left
    running by a failed step is killed: a failure must not leave a process behind."""
    started: list[subprocess.Popen] = []
    try:
        yield _deal_and_close(tmp_path_factory.mktemp("live"), started)
    finally:
        for process in started:
            if process.poll() is None:
                process.kill()
                process.wait()


def _deal_and_close(root: Path, started: list[subprocess.Popen]) -> dict:
    landing, archive = root / "landing", root / "archive"
    landing.mkdir()
    first = watcher(landing, archive, root / "first.jsonl")
    started.append(first)
    simulate = subprocess.Popen(
        [AUDITOR, "simulate", "--live", str(landing), "--pace", "800", "--rounds", "700",
         "--faults", "0.08", "--shoe-faults", "0.4", "--seed", "11"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    started.append(simulate)
    # Killed while the day is dealt, once it has reported something.
    # The bounds only keep a hung watcher from hanging the suite: a loaded CI machine
    # re-auditing the day at every batch can be minutes behind the simulated pace.
    wait_for(lambda: (root / "first.jsonl").stat().st_size > 0, 600)
    first.send_signal(signal.SIGKILL)
    first.wait()
    second = watcher(landing, archive, root / "second.jsonl")
    started.append(second)
    assert simulate.wait(120) == 0
    wait_for(lambda: caught_up(archive, landing), 900)
    second.send_signal(signal.SIGTERM)
    assert second.wait(60) == 0, (root / "second.err").read_text()
    closing = subprocess.run(
        [AUDITOR, "watch", str(landing), "--archive", str(archive), "--settle", "0.2",
         "--close", DAY],
        capture_output=True, text=True,
    )  # fmt: skip
    assert closing.returncode == 0, closing.stderr
    batch = subprocess.run(
        [AUDITOR, "audit", str(landing), "--out", str(root / "batch"), "--exit-zero", "--quiet"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert batch.returncode == 0, batch.stderr
    return {
        "root": root,
        "landing": landing,
        "archive": archive,
        "live": lines(root / "first.jsonl") + lines(root / "second.jsonl"),
        "closing": [json.loads(line) for line in closing.stdout.splitlines()],
        "batch": root / "batch",
    }


def test_every_fault_of_the_key_is_reported_while_the_day_is_dealt(live_day):
    """Live, or at the close for a check that reads its shoe whole on the day's last shoe
    of its table, which nothing logged before the close can close."""
    key = pl.read_parquet(live_day["landing"] / KEY)
    assert key.height > 20
    entities = key.select(pl.coalesce("wager_id", "round_id", "shoe_id", "table_id"))

    def named(records: list[dict]) -> set[str]:
        columns = ("table_id", "shoe_id", "round_id", "wager_id")
        return {r[c] for r in records for c in columns if r[c] is not None}

    live, closing = named(live_day["live"]), named(live_day["closing"])
    missed = [e for e in entities.to_series() if e not in live | closing]
    assert missed == []
    waited = {doc.code for doc in check_docs() if doc.final == WHEN_SHOE_CLOSES}
    assert {r["rule"] for r in live_day["closing"]} <= waited
    assert {r["final"] for r in live_day["closing"]} == {"the day closed"}
    assert len([e for e in entities.to_series() if e in live]) > key.height // 2
    # Some waited for their shoe and were reported live once the table's next shoe opened.
    assert any(r["final"] == "its shoe closed" for r in live_day["live"])


def test_no_finding_is_reported_twice_across_a_kill(live_day):
    reported = [r["finding_id"] for r in live_day["live"] + live_day["closing"]]
    new = [r["finding_id"] for r in live_day["live"] + live_day["closing"] if r["change"] == "new"]
    assert len(new) == len(set(new)) and new
    # Neither did the restart lose one: every finding of the day was reported, live or at
    # the close (those that waited for the day's last shoes).
    final = pl.read_parquet(live_day["batch"] / "findings.parquet")
    assert set(final["finding_id"]) <= set(reported)


def test_the_killed_watcher_left_its_work_and_the_second_resumed(live_day):
    first, second = (lines(live_day["root"] / f"{n}.jsonl") for n in ("first", "second"))
    assert first and second
    assert not {r["finding_id"] for r in first} & {
        r["finding_id"] for r in second if r["change"] == "new"
    }


def test_the_closed_day_equals_the_batch_audit_row_for_row(live_day):
    runs = list((live_day["archive"] / "runs").iterdir())
    assert len(runs) == 1
    closed = json.loads((live_day["archive"] / "live" / DAY / "closed.json").read_text())
    assert closed["run_id"] == runs[0].name
    for name in ("findings", "quarantine", "row_counts", "surveillance", "alerts"):
        live = pl.read_parquet(runs[0] / "set" / f"{name}.parquet")
        batch = pl.read_parquet(live_day["batch"] / f"{name}.parquet")
        assert_frame_equal(live, batch, check_row_order=True)
    assert pl.read_parquet(live_day["batch"] / "findings.parquet").height > 20


def test_the_live_run_in_the_archive_holds_what_was_reported(live_day):
    held = [
        json.loads(line)
        for line in (live_day["archive"] / "live" / DAY / "findings.jsonl").read_text().splitlines()
    ]
    assert [r["finding_id"] for r in held] == [
        r["finding_id"] for r in live_day["live"] + live_day["closing"]
    ]
    assert all(r["found_at"] and r["gaming_day"] == DAY for r in held)


def test_a_closed_day_is_not_closed_again(live_day):
    again = subprocess.run(
        [AUDITOR, "watch", str(live_day["landing"]), "--archive", str(live_day["archive"]),
         "--settle", "0", "--close", DAY],
        capture_output=True, text=True,
    )  # fmt: skip
    assert again.returncode == 2 and "already closed" in again.stderr


def test_a_later_batch_audit_supersedes_the_closed_day(live_day, tmp_path):
    archive = live_day["archive"]
    done = subprocess.run(
        [AUDITOR, "archive", "add", str(archive), str(live_day["batch"])],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    listed = subprocess.run(
        [AUDITOR, "archive", "list", str(archive), "--format", "json"],
        capture_output=True, text=True,
    )  # fmt: skip
    rows = json.loads(listed.stdout)
    assert len(rows) == 2 and "superseded" in json.dumps(rows[0])


def test_a_second_watcher_on_one_archive_is_refused(live_day):
    holder = watcher(live_day["landing"], live_day["archive"], live_day["root"] / "hold.jsonl")
    try:
        wait_for(lambda: (live_day["archive"] / ".live.lock").exists(), 30)
        second = subprocess.run(
            [AUDITOR, "watch", str(live_day["landing"]), "--archive", str(live_day["archive"])],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert second.returncode == 2 and "watch" in second.stderr
    finally:
        holder.send_signal(signal.SIGINT)
        assert holder.wait(60) == 130
    assert os.path.exists(live_day["archive"] / "live")


def test_a_live_day_of_no_rounds_is_refused_before_anything_lands(tmp_path):
    # No round, no moment: the day's gaming date cannot be told, so nothing is written.
    from auditor.simulator.live import deal_live

    landing = tmp_path / "landing"
    with pytest.raises(ValueError, match="rounds must be >= 1"):
        deal_live(landing, 0, 1, 1000.0)
    assert not landing.exists()
