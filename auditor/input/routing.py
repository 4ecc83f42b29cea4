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
from contextlib import contextmanager
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq

from auditor.contract import TABLES, empty_frame
from auditor.input.load import FILE_COLUMN, ROW_COLUMN, Dataset
from auditor.input.partition import TABLE_KEYED, Partition

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
    ranges = []
    for index in range(meta.num_row_groups):
        stats = meta.row_group(index).column(column).statistics
        if stats is None or not stats.has_min_max:
            ranges.append((None, None))
        else:
            ranges.append((stats.min, stats.max))
    return ranges


def route(audited: Mapping[str, pl.LazyFrame], groups: Sequence[Partition], folder: Path) -> None:
    """Write each partition's audited rows of every table into `folder/TABLE/_part=N/`:
    the tables keyed by `table_id` by their table, the wagers by their round's table."""
    parts = pl.DataFrame(
        {
            "table_id": [t for group in groups for t in group.tables],
            ROUTE_KEY: [i for i, group in enumerate(groups) for _ in group.tables],
        },
        schema={"table_id": pl.String(), ROUTE_KEY: pl.Int32()},
    ).lazy()
    for name in TABLE_KEYED:
        _sink(audited[name].join(parts, on="table_id", how="inner"), folder / name)
    round_parts = audited["rounds"].select("round_id", "table_id").join(parts, on="table_id")
    wagers = audited["wagers"].join(round_parts.select("round_id", ROUTE_KEY), on="round_id")
    _sink(wagers, folder / "wagers")


def _sink(frame: pl.LazyFrame, target: Path) -> None:
    columns = [c for c in frame.collect_schema().names() if c not in (FILE_COLUMN, ROW_COLUMN)]
    frame.select(columns).sink_parquet(
        pl.PartitionBy(target, key=ROUTE_KEY, include_key=False), mkdir=True
    )


def routed(folder: Path, index: int) -> dict[str, pl.LazyFrame]:
    """Partition `index`'s rows of every table, as `route` wrote them (a table the
    partition has no row of is an empty frame with the contract's columns)."""
    frames = {}
    for name in (*TABLE_KEYED, "wagers"):
        files = sorted((folder / name / f"{ROUTE_KEY}={index}").glob("*.parquet"))
        if files:
            frames[name] = pl.scan_parquet(files, hive_partitioning=False)
        else:
            frames[name] = empty_frame(name).lazy()
        frames[name] = frames[name].select(list(TABLES[name]))
    return frames


PartitionSource = Callable[[int], tuple[Mapping[str, pl.LazyFrame], bool]]


@contextmanager
def partition_sources(
    dataset: Dataset,
    audited: Mapping[str, pl.LazyFrame],
    groups: Sequence[Partition],
    folder: Path | None = None,
) -> Iterator[PartitionSource]:
    """For partition `i`, the frames to read it from and whether they hold nothing else
    (`whole`): the audited scans themselves, or, where the layout calls for it, the files
    `route` wrote for it (in `folder`, else a temporary folder removed afterwards)."""
    if not needs_routing(dataset, groups):
        yield lambda index: (audited, len(groups) == 1)
        return
    with tempfile.TemporaryDirectory(prefix="auditor-route-") as temporary:
        target = Path(folder) if folder is not None else Path(temporary)
        route(audited, groups, target)
        yield lambda index: (routed(target, index), True)
