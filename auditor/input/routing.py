"""Routing: one pass that writes each partition's rows to files of its own, for inputs
whose files are not laid out table by table.

A partition reads its tables by a `table_id` range (`partition.restrict`), which skips
every row group outside the range: cheap when the files are clustered by table, but a
nightly export by gaming date mixes every table in every file, and then each partition
reads every file again, so the cost grows with partitions times files. Where the files'
statistics show that layout (`needs_routing`), one streaming pass (`route`) writes each
partition's rows of every table into a folder of its own (`_part=N/`), wagers following
their rounds; each partition then reads only its own files, and every input byte is read
a bounded number of times whatever the layout.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Literal

import numpy as np
import polars as pl
import pyarrow.parquet as pq

from auditor.contract import TABLES, empty_frame
from auditor.input.load import FILE_COLUMN, ROW_COLUMN, Dataset, normalize_exprs
from auditor.input.partition import (
    DEFAULT_PARTITION_ROUNDS,
    TABLE_KEYED,
    Partition,
    partition_bytes,
)
from auditor.input.scan import batch_rows_within, memory_bytes, run_batches, table_runs

ROUTE_KEY = "_part"
# Routing pays when the partitions would read the input this many times over.
READS_WORTH_ROUTING = 2.0


def needs_routing(dataset: Dataset, groups: Sequence[Partition]) -> bool:
    """Whether the partitions would read the rounds' row groups more than
    `READS_WORTH_ROUTING` times over, judged from each row group's `table_id` statistics
    (the reader skips a row group whose range lies outside a partition's; one without
    statistics counts as holding every table)."""
    if len(groups) < 2:
        return False
    ranges = [r for source in dataset.files.get("rounds", ()) for r in _table_ranges(source.path)]
    if not ranges:
        return False
    reads = sum(
        1
        for group in groups
        if group.tables
        for low, high in ranges
        if low is None or high is None or not (high < group.tables[0] or low > group.tables[-1])
    )
    return reads > READS_WORTH_ROUTING * len(ranges)


def _table_ranges(path: Path) -> list[tuple[str | None, str | None]]:
    """Each row group's smallest and largest `table_id`, from the file's footer."""
    meta = pq.read_metadata(path)
    names = meta.schema.names
    if "table_id" not in names:
        return [(None, None)] * max(1, meta.num_row_groups)
    column = names.index("table_id")
    ranges: list[tuple[str | None, str | None]] = []
    for index in range(meta.num_row_groups):
        stats = meta.row_group(index).column(column).statistics
        if stats is None or not stats.has_min_max:
            ranges.append((None, None))
        else:
            ranges.append((stats.min, stats.max))
    return ranges


def route(
    dataset: Dataset,
    audited: Mapping[str, pl.LazyFrame],
    groups: Sequence[Partition],
    folder: Path,
    progress: Callable[[str, int], None] | None = None,
    budget_bytes: int | None = None,
) -> None:
    """Write each partition's rows of every table into `folder/TABLE/_part=N/`, with their
    provenance: the tables keyed by `table_id` by their table, the wagers by their audited
    round's table. Quarantined rows are left out where they are read (`routed`).

    Batch by batch (`scan.run_batches`), so that memory holds one batch and the map of
    rounds to partitions, never a table: a streaming join and partitioned sink over the
    whole wagers table was measured holding gigabytes. The map holds each
    round's id hash (about `BYTES_PER_MAPPED_ROUND`); where the whole map would exceed
    `budget_bytes`, the wagers are routed in passes, each over the rounds of some
    partitions, and each pass reads the wagers' files again."""
    parts = partition_keys(groups)
    batch_bytes = batch_budget(budget_bytes)
    for name in TABLE_KEYED:
        _route_table(dataset, name, folder, batch_bytes, progress, by_table(parts))
    route_wagers(dataset, audited["rounds"], groups, folder, progress, budget_bytes)


def route_wagers(
    dataset: Dataset,
    rounds: pl.LazyFrame,
    groups: Sequence[Partition],
    folder: Path,
    progress: Callable[[str, int], None] | None = None,
    budget_bytes: int | None = None,
) -> None:
    """The wagers' part of `route`, each to the partition of its round among `rounds`, in
    as many passes over the wagers as keep the map of rounds within `budget_bytes`."""
    parts = partition_keys(groups)
    for chosen in passes(groups, budget_bytes):
        round_parts = RoundMap.of(rounds, parts.filter(pl.col(ROUTE_KEY).is_in(chosen)))
        _route_table(dataset, "wagers", folder, batch_budget(budget_bytes), progress, round_parts)


def partition_keys(groups: Sequence[Partition]) -> pl.DataFrame:
    """Each table of the partitions with its partition's number (`ROUTE_KEY`)."""
    return pl.DataFrame(
        {
            "table_id": [t for group in groups for t in group.tables],
            ROUTE_KEY: [i for i, group in enumerate(groups) for _ in group.tables],
        },
        schema={"table_id": pl.String(), ROUTE_KEY: pl.Int32()},
    )


def batch_budget(budget_bytes: int | None) -> int:
    """What a batch being routed may hold, of the partitions' budget."""
    return (budget_bytes or DEFAULT_BUDGET_BYTES) // 4


def held_budget(batch_bytes: int) -> int:
    """What the rows routed but not yet written may hold (`Held`), of a batch's budget."""
    return batch_bytes // 4


# Routing holds a round's key per round of a pass (8 bytes, sorted in place; 18 at the
# peak while the map is read, measured at 30 million rounds) and a batch of rows with its
# copies: four times a row's size in memory, and at least 1,000 bytes (a wager's batch
# with its copies, measured).
BYTES_PER_MAPPED_ROUND = 18
BATCH_COPIES = 4
BYTES_PER_BATCH_ROW = 1_000
# Without a budget (a library caller's), the default --memory-limit's partitions'.
DEFAULT_BUDGET_BYTES = partition_bytes(DEFAULT_PARTITION_ROUNDS)
HASH = "_round_hash"


def passes(groups: Sequence[Partition], budget_bytes: int | None) -> list[list[int]]:
    """The partitions' numbers in passes whose rounds' map fits half of `budget_bytes`."""
    room = None if budget_bytes is None else max(1, budget_bytes // 2 // BYTES_PER_MAPPED_ROUND)
    passes: list[list[int]] = [[]]
    held = 0
    for index, group in enumerate(groups):
        if room is not None and passes[-1] and held + group.rounds > room:
            passes.append([])
            held = 0
        passes[-1].append(index)
        held += group.rounds
    return passes


# A batch with each row's partition (`ROUTE_KEY`, null for a row of none routed here).
Keyed = Callable[[pl.DataFrame], pl.DataFrame]


def by_table(parts: pl.DataFrame) -> Keyed:
    """Each row's partition looked up by its table (null for a table of no partition): a
    join would copy every column of the batch once more before `partition_by` does."""
    tables, numbers = parts["table_id"], parts[ROUTE_KEY]
    key = pl.col("table_id").replace_strict(tables, numbers, default=None, return_dtype=pl.Int32)
    return lambda batch: batch.with_columns(key.alias(ROUTE_KEY))


def _round_hash() -> pl.Expr:
    return pl.col("round_id").hash(seed=0).alias(HASH)


def partition_bits(parts: pl.DataFrame) -> int:
    """The low bits of a round's key that hold its partition (`RoundMap`)."""
    largest = parts[ROUTE_KEY].max()  # None when there are no partitions
    return max(1, largest.bit_length() if isinstance(largest, int) else 0)


def round_keys(rounds: pl.LazyFrame, parts: pl.DataFrame, bits: int) -> np.ndarray:
    """The `RoundMap` keys of `rounds` (their `round_id` and `table_id`) whose table is
    one of `parts`' (unsorted): the hash's high bits and the partition in one integer,
    made as the rounds are read, so that the map is one column from the start."""
    unit = 1 << bits
    key = pl.col(HASH) // unit * unit + pl.col(ROUTE_KEY).cast(pl.UInt64)
    return (
        rounds.select(_round_hash(), "table_id")
        .join(parts.lazy(), on="table_id")
        .select(key.alias(HASH))
        .collect()[HASH]
        .to_numpy(writable=True)
    )


class RoundMap:
    """Each round of some partitions as one sorted 64-bit key: the high bits of its id's
    hash, the low bits (`bits`) its partition (`round_keys`). A batch of wagers finds its
    rounds by binary search (no hash table of every round built for every batch), and the
    map holds 8 bytes a round, sorted in place, whatever the ids' length.

    Two rounds of different partitions may share a key's hash bits: their wagers go to
    each, and each partition keeps only the wagers of its own rounds
    (`partition.wagers_of` joins them on the ids themselves)."""

    def __init__(self, keys: np.ndarray, bits: int) -> None:
        self.bits = bits
        self.mask = np.uint64((1 << self.bits) - 1)
        keys.sort()
        if len(keys) > 1 and (keys[1:] == keys[:-1]).any():
            keys = np.unique(keys)  # two rounds of one partition sharing their hash bits
        self.keys = keys
        # Neighbours differing in the partition bits only: hash bits shared across partitions.
        self.shared = len(keys) > 1 and bool(((keys[1:] ^ keys[:-1]) <= self.mask).any())

    @classmethod
    def of(cls, rounds: pl.LazyFrame, parts: pl.DataFrame) -> RoundMap:
        """The map of `rounds` whose table is one of `parts`'."""
        bits = partition_bits(parts)
        return cls(round_keys(rounds, parts, bits), bits)

    def __call__(self, batch: pl.DataFrame) -> pl.DataFrame:
        if len(self.keys) == 0:
            return batch.clear().with_columns(pl.lit(None, dtype=pl.Int32).alias(ROUTE_KEY))
        bits, keys = self.bits, self.keys
        wanted = batch.select(_round_hash()).to_series().to_numpy()
        wanted = wanted >> np.uint64(bits) << np.uint64(bits)
        low = _search(keys, wanted, "left")
        if not self.shared:
            at = np.minimum(low, len(keys) - 1)
            found = keys[at] >> np.uint64(bits) == wanted >> np.uint64(bits)
            parts = pl.Series(ROUTE_KEY, (keys[at] & self.mask).astype(np.int32))
            # Null where the round is of no partition of the pass: a filter would copy
            # the whole batch once more before `partition_by` does.
            return batch.with_columns(parts.scatter(np.flatnonzero(~found), None))
        # Shared hash bits: a row per candidate partition.
        high = _search(keys, wanted | self.mask, "right")
        spread = (
            batch.with_columns(pl.int_ranges(pl.Series(low), pl.Series(high)).alias("_at"))
            .explode("_at")
            .drop_nulls("_at")
        )
        parts = (keys[spread["_at"].to_numpy()] & self.mask).astype(np.int32)
        return spread.with_columns(pl.Series(ROUTE_KEY, parts)).drop("_at")


def _search(keys: np.ndarray, wanted: np.ndarray, side: Literal["left", "right"]) -> np.ndarray:
    """`np.searchsorted`, the needles taken in order: each search starts where the last
    ended, so a batch walks the map once instead of jumping about it (measured 10 times
    faster on a map of 10 million rounds, which does not fit the caches). A run of equal
    needles (a round's wagers, which exports keep together) is searched once."""
    if len(wanted) == 0:
        return np.empty(0, dtype=np.intp)
    starts = np.flatnonzero(np.concatenate(([True], wanted[1:] != wanted[:-1])))
    distinct = wanted[starts]
    order = np.argsort(distinct)
    found = np.empty(len(distinct), dtype=np.intp)
    found[order] = np.searchsorted(keys, distinct[order], side=side)
    return np.repeat(found, np.diff(starts, append=len(wanted)))


def _route_table(
    dataset: Dataset,
    name: str,
    folder: Path,
    batch_bytes: int,
    progress: Callable[[str, int], None] | None,
    keyed: Keyed,
) -> None:
    with Held(folder / name, held_budget(batch_bytes)) as held:
        # Small files of one schema are read together, a batch's worth at a time: a batch
        # per file would cost ten thousand small files ten thousand queries and samples.
        for run in table_runs(dataset, name):
            normalize = [FILE_COLUMN, ROW_COLUMN, *normalize_exprs(run.first)]
            rows = batch_rows_within(run.first, batch_bytes, BATCH_COPIES, BYTES_PER_BATCH_ROW)
            for raw in run_batches(run, rows):
                held.route(name, raw.select(normalize), keyed)
                if progress:
                    progress("routing", 0)


class Held:
    """Each partition's routed rows, held until they are worth a file of their own: a
    file per partition and batch cost about 4 ms each, thousands of them at 10 million
    rounds. Past `limit_bytes` in all, the largest partition's rows are written; each
    partition's files are numbered in the order its rows came.

    A file is written by a thread of its own while the next batches are read and split
    (the writer spends its time encoding and compressing, outside the interpreter's lock), one
    file at a time: memory holds at most one file's rows besides `limit_bytes`. Leaving
    the `with` block writes what is held (unless it is left by an error) and waits for
    the last file."""

    def __init__(self, folder: Path, limit_bytes: int) -> None:
        self.folder, self.limit = folder, limit_bytes
        self.rows: dict[int, list[pl.DataFrame]] = {}
        self.bytes: dict[int, int] = {}
        self.written: dict[int, int] = {}
        self.writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="auditor-route")
        self.writing: Future[None] | None = None

    def __enter__(self) -> Held:
        return self

    def __exit__(self, error: type[BaseException] | None, *_: object) -> None:
        try:
            if error is None:
                for index in sorted(self.rows):
                    self._write(index)
                self._wait()
        finally:
            self.writer.shutdown(wait=True)  # after an error, its own error is the one told

    def route(self, name: str, batch: pl.DataFrame, keyed: Keyed) -> None:
        """A batch of table `name`'s rows in contract types with provenance, each to the
        partition `keyed` finds for it (none: left out)."""
        rows = keyed(batch)
        order = [FILE_COLUMN, ROW_COLUMN, *TABLES[name], ROUTE_KEY]
        # Selected only if out of order: a select of columns chunked unlike the key
        # copies every column into one chunk first (a quarter of a second a million rows).
        if rows.columns != order:
            rows = rows.select(order)
        # Each part sized by its rows' share of the batch: measuring every part again
        # walks the shoes' card lists once more.
        row_bytes = memory_bytes(rows) / max(1, rows.height)
        for (index,), part in rows.partition_by(ROUTE_KEY, as_dict=True).items():
            if index is not None:  # a table of no partition
                self.add(index, part.drop(ROUTE_KEY), int(row_bytes * part.height))

    def add(self, index: int, rows: pl.DataFrame, size: int) -> None:
        """`rows` of partition `index`, `size` bytes in memory."""
        self.rows.setdefault(index, []).append(rows)
        self.bytes[index] = self.bytes.get(index, 0) + size
        while self.bytes and sum(self.bytes.values()) > self.limit:
            self._write(max(self.bytes, key=self.bytes.__getitem__))

    def _write(self, index: int) -> None:
        rows = pl.concat(self.rows.pop(index), how="vertical")
        del self.bytes[index]
        number = self.written.get(index, 0)
        self.written[index] = number + 1
        target = self.folder / f"{ROUTE_KEY}={index}"
        target.mkdir(parents=True, exist_ok=True)
        self._wait()
        # Read once and removed: the fastest codec, not the smallest files. (Arrow IPC
        # was measured writing faster but read back slower, its reader on one thread.)
        path = target / f"{number:06d}.parquet"
        # No statistics either: the partition reads each of its files whole.
        self.writing = self.writer.submit(
            rows.write_parquet, path, compression="lz4", statistics=False
        )

    def _wait(self) -> None:
        """Until the file being written is, raising what its writing raised."""
        if self.writing is not None:
            writing, self.writing = self.writing, None
            writing.result()


def routed(
    folder: Path, index: int, quarantine: pl.DataFrame | None = None
) -> dict[str, pl.LazyFrame]:
    """Partition `index`'s rows of every table, as `route` wrote them, less those in
    `quarantine` (a table the partition has no row of is an empty frame with the
    contract's columns)."""
    frames = {}
    for name in (*TABLE_KEYED, "wagers"):
        files = sorted((folder / name / f"{ROUTE_KEY}={index}").glob("*.parquet"))
        if files:
            frame = pl.scan_parquet(files, hive_partitioning=False, glob=False)
            if quarantine is not None:
                bad = quarantine.filter(pl.col("table") == name).select(
                    pl.col("file").alias(FILE_COLUMN), pl.col("row").alias(ROW_COLUMN)
                )
                if bad.height:
                    frame = frame.join(bad.lazy(), on=[FILE_COLUMN, ROW_COLUMN], how="anti")
            frames[name] = frame.select(list(TABLES[name]))
        else:
            frames[name] = empty_frame(name).lazy()
    return frames


PartitionSource = Callable[[int], tuple[Mapping[str, pl.LazyFrame], bool]]


@contextmanager
def partition_sources(
    dataset: Dataset,
    audited: Mapping[str, pl.LazyFrame],
    quarantine: pl.DataFrame,
    groups: Sequence[Partition],
    folder: Path | None = None,
    progress: Callable[[str, int], None] | None = None,
    budget_bytes: int | None = None,
    routed_in: Path | None = None,
) -> Iterator[PartitionSource]:
    """For partition `i`, the frames to read it from and whether they hold nothing else
    (`whole`): the files validation routed `groups` into (`routed_in`, `router`); else
    the audited scans themselves, or, where the layout calls for it, the files `route`
    writes for it (in `folder`, else a temporary folder removed afterwards)."""
    if routed_in is not None:
        yield lambda index: (routed(routed_in, index, quarantine), True)
        return
    if not needs_routing(dataset, groups):
        yield lambda index: (audited, len(groups) == 1)
        return
    with tempfile.TemporaryDirectory(prefix="auditor-route-") as temporary:
        target = Path(folder) if folder is not None else Path(temporary)
        route(dataset, audited, groups, target, progress, budget_bytes)
        yield lambda index: (routed(target, index, quarantine), True)
