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
from auditor.input.load import FILE_COLUMN, ROW_COLUMN, Dataset, iter_batches, normalize_exprs
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


def route(
    dataset: Dataset,
    audited: Mapping[str, pl.LazyFrame],
    quarantine: pl.DataFrame,
    groups: Sequence[Partition],
    folder: Path,
) -> None:
    """Write each partition's audited rows of every table into `folder/TABLE/_part=N/`:
    the tables keyed by `table_id` by their table, the wagers by their round's table.

    File by file and batch by batch (`load.iter_batches`), so that memory holds one batch
    and the map of rounds to partitions, never a table: a streaming join and partitioned
    sink over the whole wagers table was measured holding gigabytes."""
    parts = pl.DataFrame(
        {
            "table_id": [t for group in groups for t in group.tables],
            ROUTE_KEY: [i for i, group in enumerate(groups) for _ in group.tables],
        },
        schema={"table_id": pl.String(), ROUTE_KEY: pl.Int32()},
    )
    round_parts = (
        (audited["rounds"].select("round_id", "table_id").join(parts.lazy(), on="table_id"))
        .select("round_id", ROUTE_KEY)
        .collect()
    )
    for name in (*TABLE_KEYED, "wagers"):
        key, keys = ("round_id", round_parts) if name == "wagers" else ("table_id", parts)
        bad = quarantine.filter(pl.col("table") == name).select(
            pl.col("file").alias(FILE_COLUMN), pl.col("row").alias(ROW_COLUMN)
        )
        for number, source in enumerate(dataset.files.get(name, ())):
            normalize = [FILE_COLUMN, ROW_COLUMN, *normalize_exprs(source)]
            for batch_no, raw in enumerate(iter_batches(source)):
                batch = raw.select(normalize).join(bad, on=[FILE_COLUMN, ROW_COLUMN], how="anti")
                keyed = batch.join(keys, on=key, how="inner").select(*TABLES[name], ROUTE_KEY)
                for (index,), rows in keyed.partition_by(ROUTE_KEY, as_dict=True).items():
                    target = folder / name / f"{ROUTE_KEY}={index}"
                    target.mkdir(parents=True, exist_ok=True)
                    rows.drop(ROUTE_KEY).write_parquet(
                        target / f"{number:05d}-{batch_no:05d}.parquet"
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
    quarantine: pl.DataFrame,
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
        route(dataset, audited, quarantine, groups, target)
        yield lambda index: (routed(target, index), True)
