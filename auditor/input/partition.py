"""Partitions of the audited rows: groups of whole tables, audited one after another.

Every check of stages 3-5 looks at one table's rows only (a round and its wagers, a
shoe and its rounds, the rounds of a table in dealing order, a table's next shoe), so
a group of whole tables can be audited on its own and the findings of all groups
concatenated. That bounds memory by the size of a group, not of the dataset, and lets
each group's replay and wagers be read once and shared by the stages in memory.

Groups are filled with tables in `table_id` order up to `PARTITION_ROUNDS` rounds; a
table with more rounds than that is a group of its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import polars as pl

from auditor.defaults import DEFAULT_MEMORY_LIMIT, parse_size
from auditor.input.load import FILE_COLUMN, ROW_COLUMN

PARTITION_ROUNDS = 1_500_000
# Sizing partitions to a memory limit, from measured peaks of whole audits (bench/): what
# a run holds whatever its partitions (the interpreter, the libraries, validation's
# batches and id hashes), and what each round of a partition adds with its wagers.
BASELINE_BYTES = 700 * 2**20
BYTES_PER_ROUND = 2_600
MIN_PARTITION_ROUNDS = 20_000
# A replayed round's row in its partition: the integer wagers and rounds are joined on.
ROUND_ROW = "_round_row"

# The tables restricted to a group by their own `table_id`; wagers follow their rounds.
TABLE_KEYED = ("tables", "shoes", "rounds", "commission_collections", "royal9_seats")


def rounds_within(limit_bytes: int) -> int:
    """The partition size (rounds) whose audit stays within `limit_bytes`."""
    room = max(0, limit_bytes - BASELINE_BYTES)
    return max(MIN_PARTITION_ROUNDS, room // BYTES_PER_ROUND)


def partition_bytes(partition_rounds: int) -> int:
    """What a partition of `partition_rounds` rounds may hold in memory (the inverse of
    `rounds_within`): the budget the other stages that grow with the night keep to."""
    return partition_rounds * BYTES_PER_ROUND


# The partitions of an audit run without --memory-limit, and of `auditor validate`.
DEFAULT_PARTITION_ROUNDS = rounds_within(parse_size(DEFAULT_MEMORY_LIMIT))


@dataclass(frozen=True)
class Partition:
    tables: tuple[str, ...]
    rounds: int


def partitions(
    audited: Mapping[str, pl.LazyFrame], limit: int = PARTITION_ROUNDS
) -> list[Partition]:
    """Groups of whole tables with at most `limit` rounds each (or one larger table).

    Every audited table is in exactly one group, including tables without rounds, whose
    shoes are still checked.
    """
    per_table = (
        audited["tables"]
        .select("table_id")
        .unique()
        .join(audited["rounds"].group_by("table_id").len(), on="table_id", how="left")
        .with_columns(pl.col("len").fill_null(0))
        .sort("table_id")
        .collect()
    )
    groups: list[Partition] = []
    tables: list[str] = []
    size = 0
    # One step per table, not per round: a state's tables number in the thousands.
    for table_id, rounds in per_table.iter_rows():
        if tables and size + rounds > limit:
            groups.append(Partition(tuple(tables), size))
            tables, size = [], 0
        tables.append(table_id)
        size += rounds
    if tables or not groups:
        groups.append(Partition(tuple(tables), size))
    return groups


def restrict(
    audited: Mapping[str, pl.LazyFrame], partition: Partition, whole: bool = False
) -> dict[str, pl.LazyFrame]:
    """The audited tables keyed by `table_id`, restricted to the partition's tables
    (`whole`: the partition is the whole dataset, nothing to filter). Wagers are not
    among them: `wagers_of` finds them from the partition's rounds.

    A partition's tables are a run of consecutive `table_id`s, so a range says exactly
    which rows belong to it, and the Parquet reader skips every row group whose
    statistics lie outside it: files written table by table are read only where the
    partition's rows are.
    """
    frames = {name: _unmarked(audited[name]) for name in TABLE_KEYED}
    if whole:
        return frames
    keep = _between("table_id", partition.tables[0], partition.tables[-1])
    return {name: frame.filter(keep) for name, frame in frames.items()}


def wagers_of(wagers: pl.LazyFrame, rounds: pl.DataFrame, whole: bool = False) -> pl.LazyFrame:
    """The wagers on the given rounds, each with its round's `ROUND_ROW` (`rounds` holds
    `round_id` and `ROUND_ROW`).

    Wagers carry only their `round_id`. The range of the rounds' ids lets the reader
    skip the row groups of other rounds (exports keep a round's wagers together); the
    join on the ids themselves then keeps exactly the rounds' wagers.
    """
    wagers = _unmarked(wagers)
    keys = rounds.select("round_id", ROUND_ROW)
    if not whole and keys.height:
        ids = keys.get_column("round_id")
        wagers = wagers.filter(_between("round_id", ids.min(), ids.max()))
    return wagers.join(keys.lazy(), on="round_id", how="inner")


def _unmarked(frame: pl.LazyFrame) -> pl.LazyFrame:
    """Without the provenance columns: the stages name rows by their ids, and a file name
    on every row held in memory costs more than the row's cards."""
    return frame.drop(FILE_COLUMN, ROW_COLUMN, strict=False)


def _between(column: str, low: object, high: object) -> pl.Expr:
    # Literals: a bare string would be read as a column name.
    return pl.col(column).is_between(pl.lit(low, dtype=pl.String), pl.lit(high, dtype=pl.String))


def of_round(bound: int, rows: pl.Series, values: pl.Series) -> pl.Expr:
    """Each wager's value from its round: `values[i]` for the round numbered `rows[i]`
    (`ROUND_ROW`, below `bound`: `round_bound`), null for any other round. A
    gather from a table of the partition's rounds: several times cheaper than a join
    (measured)."""
    table = pl.repeat(None, bound, dtype=values.dtype, eager=True).scatter(rows, values)
    return pl.lit(table).gather(pl.col(ROUND_ROW))


def round_bound(rounds: pl.DataFrame) -> int:
    """One more than the largest round number (`ROUND_ROW`) among `rounds`, all
    the partition's: the size of `of_round`'s tables."""
    largest = rounds.get_column(ROUND_ROW).max()  # None when there are no rounds
    return (largest if isinstance(largest, int) else 0) + 1
