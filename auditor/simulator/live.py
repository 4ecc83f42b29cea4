"""`auditor simulate --live LANDING --pace X`: a simulated day written into a landing
folder over time, as a logging system writes it while the tables deal.

The day is dealt first, as `simulate` deals it (its faults and their key included), then
laid out by table and by `CHUNK_MINUTES` of play: at the moment the chunk's last minute
would end, X times faster than the tables deal, each table's shoes opened, wagers
placed, commission collected and rounds dealt in it are written, each into a file of its
own under `NAME/gaming_date=YYYY-MM-DD/`, a round's wagers before the round, under a name
starting with `.` and renamed when whole. The tables' options and the Royal 9 chairs are
written first, the fault key into `_fault_key.parquet` (a name the watch never reads).
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from auditor.errors import AuditorError
from auditor.simulator.simulate import simulate

CHUNK_MINUTES = 5
KEY_FILE = "_fault_key.parquet"
# Within a chunk, the order a logging system would write: a shoe before its rounds, a
# round's wagers before the round, so that a round lands with what it settles.
DEALT_ORDER = (
    ("shoes", "opened_at"),
    ("wagers", None),
    ("commission_collections", "collected_at"),
    ("rounds", "dealt_at"),
)
STANDING = ("tables", "royal9_seats")


class LandingInUse(AuditorError):
    """The landing folder holds files already: the simulator writes into an empty one."""


@dataclass(frozen=True)
class LiveSummary:
    landing: Path
    gaming_day: date
    files: int
    rounds: int
    faults: int
    seconds: float

    def text(self) -> str:
        return (
            f"gaming day {self.gaming_day}: {self.rounds:,} rounds in {self.files:,} files "
            f"written into {self.landing} in {self.seconds:.1f} s, {self.faults:,} faults "
            f"(their key: {self.landing / KEY_FILE})"
        )


def write_whole(table: pa.Table, target: Path) -> None:
    """Written under a hidden name and renamed: a reader never sees it half written."""
    target.parent.mkdir(parents=True, exist_ok=True)
    staged = target.with_name(f".{target.name}.tmp")
    pq.write_table(table, staged)
    os.rename(staged, target)


def _day_of(moment_us: int) -> date:
    moment = datetime.fromtimestamp(moment_us / 1_000_000, UTC)
    return (moment - timedelta(hours=12)).date()


def chunks(day: Path, chunk_us: int) -> tuple[dict[str, pa.Table], pl.DataFrame]:
    """The day's tables of play, and each row's (table, chunk) as a frame per table."""
    tables = {name: pq.read_table(day / f"{name}.parquet") for name, _ in DEALT_ORDER}
    rounds = pl.DataFrame(tables["rounds"]).select(
        "round_id", "table_id", pl.col("dealt_at").dt.epoch("us").alias("at")
    )
    start = rounds["at"].min()
    placed = []
    for name, moment in DEALT_ORDER:
        frame = pl.DataFrame(tables[name]).with_row_index("row")
        if moment is None:  # wagers: their round's table and moment
            frame = frame.join(rounds.select("round_id", "table_id", "at"), on="round_id")
        else:
            frame = frame.with_columns(pl.col(moment).dt.epoch("us").alias("at"))
        placed.append(
            frame.select(
                pl.lit(name).alias("name"),
                "table_id",
                "row",
                ((pl.col("at") - start).clip(lower_bound=0) // chunk_us).alias("chunk"),
            )
        )
    return tables, pl.concat(placed)


def deal_live(
    landing: Path,
    rounds: int,
    seed: int,
    pace: float,
    fault_rate: float = 0.0,
    shoe_fault_rate: float | None = None,
    gaming_day: date | None = None,
    say: Callable[[str], None] | None = None,
) -> LiveSummary:
    """Deal the day, then write it into `landing` chunk by chunk at `pace`."""
    landing = Path(landing)
    if os.path.lexists(landing) and (not landing.is_dir() or any(landing.iterdir())):
        raise LandingInUse(
            f"{landing}: not an empty folder; the simulator writes a day into a missing or "
            "empty landing folder"
        )
    if not pace > 0:
        raise ValueError(f"pace must be > 0, got {pace}")
    if rounds < 1:  # a day without rounds has no moment, and so no gaming day, to land in
        raise ValueError(f"rounds must be >= 1, got {rounds}")
    landing.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="auditor-live-day-") as work:
        day_folder = Path(work) / "day"
        summary = simulate(
            day_folder, rounds, seed, fault_rate, None, shoe_fault_rate, gaming_day=gaming_day
        )
        day, files, seconds = write_day(day_folder, landing, pace, say)
    return LiveSummary(
        landing,
        day,
        files,
        sum(summary.rounds_per_table.values()),
        sum(summary.faults.values()),
        seconds,
    )


def write_day(
    day_folder: Path,
    landing: Path,
    pace: float,
    say: Callable[[str], None] | None = None,
    landed: Callable[[str, float], None] | None = None,
) -> tuple[date, int, float]:
    """Write a simulated day's dataset into `landing` chunk by chunk at `pace`; its gaming
    day, the files written and the seconds taken. `landed(path, when)` is told each file
    as it lands (its path in the landing folder, `time.time()`)."""
    chunk_us = CHUNK_MINUTES * 60_000_000
    tables, placed = chunks(day_folder, chunk_us)
    first = pl.DataFrame(tables["rounds"])["dealt_at"].dt.epoch("us").min()
    if not isinstance(first, int):
        raise ValueError(f"{day_folder}: no rounds dealt, so no gaming day to write")
    day = _day_of(first)
    started = time.monotonic()
    write_whole(pq.read_table(day_folder / "fault_key.parquet"), landing / KEY_FILE)
    files = 0
    for name in STANDING:
        write_whole(pq.read_table(day_folder / f"{name}.parquet"), landing / name / "0.parquet")
        files += 1
    hive = f"gaming_date={day.isoformat()}"
    for (chunk,), rows in placed.sort("chunk").group_by(["chunk"], maintain_order=True):
        due = started + (chunk + 1) * chunk_us / 1_000_000 / pace
        time.sleep(max(0.0, due - time.monotonic()))
        for name, _ in DEALT_ORDER:
            of_name = rows.filter(pl.col("name") == name)
            for (table_id,), part in of_name.group_by(["table_id"], maintain_order=True):
                chosen = tables[name].take(pa.array(part["row"].to_list(), pa.uint32()))
                relative = f"{name}/{hive}/{table_id}-{chunk:05d}.parquet"
                write_whole(chosen, landing / relative)
                if landed:
                    landed(relative, time.time())
                files += 1
        if say:
            say(f"chunk {chunk + 1}: {files:,} files written")
    return day, files, time.monotonic() - started
