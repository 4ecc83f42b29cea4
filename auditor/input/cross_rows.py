"""Validation's cross-row checks: unique ids, foreign keys, a round's table and its
shoe's, the options row in force when a shoe opened."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import polars as pl

from auditor.contract import REQUIRED_TABLES
from auditor.input.load import FILE_COLUMN, ROW_COLUMN, Dataset
from auditor.input.quarantine import (
    ROW_KEY,
    concat_quarantine,
    empty_quarantine,
    quarantine_rows,
    row_key_expr,
)
from auditor.input.scan import scan_table

# Cross-row checks compare ids across whole tables (32 million wager ids at 10 million
# rounds). Comparing strings that many times is what costs, so the checks compare u64
# hashes first and strings only where hashes agree: equal ids always hash equal, so no
# finding is missed, and every finding is confirmed on the ids themselves, so a hash
# collision can never make or hide one. Queries run on the streaming engine, which holds
# a batch of a large table at a time rather than all of it.
#
# Held in memory, a table's ids and hashes grow with the dataset (30 million rounds' ids
# and 98 million wagers' hashes are about 3 GB). Beyond the budget the caller allows, the
# checks run in buckets: one pass per bucket takes only the ids whose hash falls in it.
# Equal ids hash equal, so a duplicate or a child and its parent always meet in the same
# bucket, and each id is looked at in exactly one.
HASH = "_hash"
PARENT = "_parent"
FIRST = "_first"  # a batch's row whose id differs from the row before
RUN = "_run"  # the rows from one `FIRST` to the next
# What the checks hold per row, measured on whole buckets (30 million rounds in three
# buckets peaked 1.7 GB each): a parent's id with its hash and its place in the join's
# hash table, a child's hash with its sorted copy.
BYTES_PER_PARENT_ID = 80
BYTES_PER_HASH = 32

# Where the id checks' buckets run. Started with the dataset and the number of buckets,
# it gives what waits for their quarantine rows: one frame per bucket, in bucket order.
# In this process by default (`in_this_process`, which checks when waited for); the Dask
# engine sends each bucket to a worker, which re-opens the dataset and runs
# `id_checks_in_bucket` there (`engines/ids.py`), while this process checks the rows.
IdBuckets = Callable[[Dataset, int], Callable[[], list[pl.DataFrame]]]


# child table, its column, parent table, parent column: each child's id must be a parent's.
# Every parent table comes before its children in the tables' order (`Dataset.tables`).
FOREIGN_KEYS = (
    ("shoes", "table_id", "tables", "table_id"),
    ("rounds", "shoe_id", "shoes", "shoe_id"),
    ("rounds", "table_id", "tables", "table_id"),
    ("wagers", "round_id", "rounds", "round_id"),
    ("commission_collections", "shoe_id", "shoes", "shoe_id"),
    ("royal9_seats", "table_id", "tables", "table_id"),
)


def key_columns(dataset: Dataset, table: str, *columns: str) -> pl.LazyFrame:
    unique_columns = list(dict.fromkeys(columns))  # a row key may include the joined column
    return scan_table(dataset, table).select(FILE_COLUMN, ROW_COLUMN, *unique_columns)


def collect_streaming(query: pl.LazyFrame) -> pl.DataFrame:
    return query.collect(engine="streaming")


def _key_hash(columns: Sequence[str]) -> pl.Expr:
    # A null hashes like any other value, so rows that share a null key share a hash too.
    if len(columns) == 1:
        return pl.col(columns[0]).hash()
    return pl.struct(columns).hash()


def _repeated(hashes: pl.Series) -> pl.Series:
    """The hashes that occur more than once (sorting is far faster than `is_duplicated`,
    and numpy's sort of integers a quarter of polars' CPU time). Hashes are never null."""
    ordered = np.sort(hashes.to_numpy())
    again = ordered[1:][ordered[1:] == ordered[:-1]]
    return pl.Series(hashes.name, np.unique(again), dtype=hashes.dtype)


def in_bucket(hashes: pl.Expr, buckets: int, index: int) -> pl.Expr:
    """Whether each hash falls in bucket `index` of `buckets` (every hash, for one)."""
    if buckets == 1:
        return pl.lit(True)
    return (hashes % buckets) == index


def buckets_for(dataset: Dataset, budget_bytes: int | None) -> int:
    """How many buckets keep what the checks hold within `budget_bytes` (one if None)."""
    if budget_bytes is None:
        return 1
    rows = {t: sum(s.rows for s in dataset.files.get(t, ())) for t in dataset.files}
    parents = sum(rows.get(t, 0) for t in ("tables", "shoes", "rounds"))
    largest = max(rows.values(), default=0)
    held = parents * BYTES_PER_PARENT_ID + largest * BYTES_PER_HASH
    return max(1, -(-held // max(1, budget_bytes)))


class _HashedIds:
    """Id columns with their hashes, each read once per bucket."""

    def __init__(self, dataset: Dataset, bucket: int = 0, buckets: int = 1) -> None:
        self.dataset = dataset
        self.bucket, self.buckets = bucket, buckets
        self._ids: dict[tuple[str, str], pl.DataFrame] = {}
        self._repeated: dict[tuple[str, ...], pl.Series] = {}
        self._indexes: dict[tuple[str, str], pl.DataFrame | None] = {}

    def ids(self, table: str, column: str) -> pl.DataFrame:
        """`HASH` and the value as `PARENT`, for every row of the table."""
        if (table, column) not in self._ids:
            query = scan_table(self.dataset, table).select(
                _key_hash([column]).alias(HASH), pl.col(column).alias(PARENT)
            )
            self._ids[table, column] = collect_streaming(query.filter(self.mine(pl.col(HASH))))
        return self._ids[table, column]

    def repeated(self, table: str, key: Sequence[str]) -> pl.Series:
        """The hashes of the key that more than one row of the table has."""
        if (table, *key) not in self._repeated:
            if len(key) == 1 and (table, key[0]) in self._ids:
                hashes = self._ids[table, key[0]].get_column(HASH)
            else:  # only the hashes: a large table's ids as strings would not be small
                hashed = scan_table(self.dataset, table).select(_key_hash(key).alias(HASH))
                hashes = collect_streaming(hashed.filter(self.mine(pl.col(HASH)))).to_series()
            self._repeated[table, *key] = _repeated(hashes)
        return self._repeated[table, *key]

    def mine(self, hashes: pl.Expr) -> pl.Expr:
        """Whether a hash falls in this bucket."""
        return in_bucket(hashes, self.buckets, self.bucket)

    def index(self, table: str, column: str) -> pl.DataFrame | None:
        """`ids` with one row per hash, or None if two different values share a hash."""
        if (table, column) not in self._indexes:
            self._indexes[table, column] = self._index(table, column)
        return self._indexes[table, column]

    def _index(self, table: str, column: str) -> pl.DataFrame | None:
        ids = self.ids(table, column)
        repeated = self.repeated(table, [column])
        if repeated.is_empty():
            return ids
        is_repeated = pl.col(HASH).is_in(repeated.implode())
        # One row per distinct id is one per distinct (hash, id), since equal ids hash
        # equal; `unique` over both columns would copy each id, once per row holding it.
        shared = ids.filter(is_repeated).filter(pl.col(PARENT).is_first_distinct())
        if shared.get_column(HASH).n_unique() < shared.height:
            return None
        return pl.concat([ids.filter(~is_repeated), shared])


def cross_row_checks(
    dataset: Dataset,
    row_level: pl.DataFrame,
    budget_bytes: int | None = None,
    id_checks: Callable[[], list[pl.DataFrame]] | None = None,
    batch_ids: BatchIds | None = None,
) -> pl.DataFrame:
    """The cross-row checks' quarantine rows, holding about `budget_bytes` of ids at a time
    (all at once if None). `id_checks`: the id checks as `start_id_checks` started them
    (started here, in this process, if None); `batch_ids`: instead, the id checks and
    rounds' tables as the row checks' batches fed them, every batch added."""
    found = [_shoe_before_options(dataset, row_level)]
    if batch_ids is not None:
        return concat_quarantine([*found, *batch_ids.finish()])
    found.append(_round_table_mismatch(dataset))
    waiting = id_checks or start_id_checks(dataset, budget_bytes)
    found += waiting()
    return concat_quarantine(found)


class BatchIds:
    """The id checks of one bucket holding every id, and rounds' tables against their
    shoes', fed by the row checks' batches rather than by reading the id columns again:
    the same quarantine rows as `id_checks_in_bucket(dataset, 0, 1)` and
    `_round_table_mismatch(dataset)`. Batches come in the tables' order, so a parent's
    ids are all held before its children's first batch meets them."""

    def __init__(self, dataset: Dataset) -> None:
        self.ids = _HashedIds(dataset)
        self._parent_ids: dict[tuple[str, str], list[pl.DataFrame]] = {}
        self._key_hashes: dict[str, list[pl.Series]] = {}
        self._shoes: list[pl.DataFrame] = []
        self._shoe_tables: pl.DataFrame | None = None
        self._found: list[pl.DataFrame] = []

    def add(self, table: str, batch: pl.DataFrame) -> None:
        """Check a batch of the table's rows, in contract types with provenance."""
        parent_columns = _parent_columns(table)
        for column in parent_columns:
            assert (table, column) not in self.ids._ids, "a parent's batch after its child's"
            hashed = batch.select(_key_hash([column]).alias(HASH), pl.col(column).alias(PARENT))
            self._parent_ids.setdefault((table, column), []).append(hashed)
        key = list(ROW_KEY[table])
        if not (len(key) == 1 and key[0] in parent_columns):  # else its ids' hashes serve
            hashes = batch.select(_key_hash(key).alias(HASH)).to_series()
            self._key_hashes.setdefault(table, []).append(hashes)
        for child, column, parent, parent_column in FOREIGN_KEYS:
            if child == table:
                self._hold_all(parent, parent_column)
                self._found.append(
                    _missing_parent(self.ids, table, column, parent, parent_column, batch)
                )
        if table == "shoes":
            self._shoes.append(batch.select("shoe_id", "table_id"))
        elif table == "rounds":
            if self._shoe_tables is None:  # every shoe's batch is in by now
                held = [s.lazy() for s in self._shoes] or [scan_table(self.ids.dataset, "shoes")]
                self._shoe_tables = _shoe_tables(pl.concat(held))
            self._found.append(_round_table_mismatch(self.ids.dataset, batch, self._shoe_tables))

    def finish(self) -> list[pl.DataFrame]:
        """The quarantine rows, the duplicate ids' among them, once every batch is added."""
        for table, column in list(self._parent_ids):
            self._hold_all(table, column)
        for table, parts in self._key_hashes.items():
            self.ids._repeated[table, *ROW_KEY[table]] = _repeated(pl.concat(parts))
        return [*self._found, *(_duplicates(self.ids, t) for t in self.ids.dataset.tables())]

    def _hold_all(self, table: str, column: str) -> None:
        # A table without rows has no batch: its (empty) ids are read from its files.
        if (table, column) not in self.ids._ids and (table, column) in self._parent_ids:
            self.ids._ids[table, column] = pl.concat(self._parent_ids.pop((table, column)))


def _parent_columns(table: str) -> list[str]:
    return list(dict.fromkeys(c for _, _, parent, c in FOREIGN_KEYS if parent == table))


def start_id_checks(
    dataset: Dataset, budget_bytes: int | None, id_buckets: IdBuckets | None = None
) -> Callable[[], list[pl.DataFrame]]:
    """The id checks (unique ids, foreign keys) in as many buckets as keep each within
    `budget_bytes`, started by `id_buckets` (`in_this_process` if None): what waits for
    their quarantine rows, one frame per bucket."""
    return (id_buckets or in_this_process)(dataset, buckets_for(dataset, budget_bytes))


def in_this_process(dataset: Dataset, buckets: int) -> Callable[[], list[pl.DataFrame]]:
    """`IdBuckets` in this process: each bucket checked, one after another, when waited for."""
    return lambda: [id_checks_in_bucket(dataset, bucket, buckets) for bucket in range(buckets)]


def id_checks_in_bucket(dataset: Dataset, bucket: int, buckets: int) -> pl.DataFrame:
    """The id checks' quarantine rows for the ids whose hash falls in bucket `bucket` of
    `buckets`: a pure function of the dataset's files, wherever it runs."""
    return concat_quarantine(_id_checks(_HashedIds(dataset, bucket, buckets)))


def _id_checks(ids: _HashedIds) -> list[pl.DataFrame]:
    dataset = ids.dataset
    # Parents first: their ids are read once and serve their own duplicate check too.
    found = [
        _missing_parent(ids, child, column, parent, parent_column)
        for child, column, parent, parent_column in FOREIGN_KEYS
        if child in dataset.files or child in REQUIRED_TABLES
    ]
    found += [_duplicates(ids, t) for t in dataset.tables()]
    return found


def _duplicates(ids: _HashedIds, table: str) -> pl.DataFrame:
    key = list(ROW_KEY[table])
    candidates = ids.repeated(table, key)
    if candidates.is_empty():
        return empty_quarantine()
    # Every row of a repeated id is a candidate, so counting among candidates is exact.
    rows = collect_streaming(
        key_columns(ids.dataset, table, *key)
        .filter(_key_hash(key).is_in(candidates.implode()))
        .filter(pl.len().over(key) > 1)
        .with_columns(pl.len().over(key).alias("copies"))
    )
    return quarantine_rows(
        table,
        rows,
        column="/".join(key),
        check="unique",
        value=row_key_expr(table),
        reason=pl.format("{} rows share this id; none can be trusted", pl.col("copies")),
    )


def _missing_parent(
    ids: _HashedIds,
    table: str,
    column: str,
    parent: str,
    parent_column: str,
    batch: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """The foreign-key check of the table's rows, or of `batch`'s (some of its rows in
    contract types with provenance) if given."""
    # Only the column and provenance go through the join (32 million wager ids would
    # double its memory); the few rows found are named afterwards.
    if batch is None:
        children = key_columns(ids.dataset, table, column)
        missing = _not_found(ids, children, column, parent, parent_column)
        rows = collect_streaming(missing.select(FILE_COLUMN, ROW_COLUMN, column))
    else:
        rows = _not_found_in_batch(ids, batch, column, parent, parent_column)
    if rows.height == 0:
        return empty_quarantine()
    if batch is not None:  # the batch holds the rows' keys already
        named = batch.join(rows.select(FILE_COLUMN, ROW_COLUMN), on=[FILE_COLUMN, ROW_COLUMN])
    else:
        named = _with_row_keys(ids.dataset, table, rows)
    return quarantine_rows(
        table,
        named,
        column=column,
        check="foreign_key",
        value=pl.col(column),
        reason=f"{column} not found in {parent}.{parent_column}",
    )


def _not_found(
    ids: _HashedIds, children: pl.LazyFrame, column: str, parent: str, parent_column: str
) -> pl.LazyFrame:
    """The children (of this bucket) whose `column` is no parent's id."""
    # Each child's id hashed once: for its bucket, and to meet its parent's.
    children = children.with_columns(_key_hash([column]).alias(HASH))
    children = children.filter(ids.mine(pl.col(HASH)))
    index = ids.index(parent, parent_column)
    if index is None:  # two parent ids share a hash: compare the ids themselves
        parents = scan_table(ids.dataset, parent).select(pl.col(parent_column).alias(column))
        parents = parents.filter(ids.mine(_key_hash([column])))
        return children.join(parents, on=column, how="anti")
    # A null id is missing, as in an anti-join: null equals nothing.
    found = pl.col(column).eq(pl.col(PARENT)).fill_null(False)
    return children.join(index.lazy(), on=HASH, how="left").filter(~found)


def _not_found_in_batch(
    ids: _HashedIds, batch: pl.DataFrame, column: str, parent: str, parent_column: str
) -> pl.DataFrame:
    """`_not_found` of a batch's rows (provenance and `column`). Whether an id is found
    depends on the id alone, so only the first row of each run of equal ids meets the
    parents, and its run follows it: a round's wagers come together, and the join that
    costs is three times smaller."""
    value = pl.col(column)
    first = (pl.int_range(pl.len()) == 0) | value.ne_missing(value.shift(1))
    runs = batch.select(FILE_COLUMN, ROW_COLUMN, column, first.alias(FIRST)).with_columns(
        pl.col(FIRST).cum_sum().alias(RUN)
    )
    heads = runs.lazy().filter(pl.col(FIRST)).select(column, RUN)
    missing = _not_found(ids, heads, column, parent, parent_column).select(RUN).collect()
    if missing.height == 0:
        return runs.clear().select(FILE_COLUMN, ROW_COLUMN, column)
    return runs.join(missing, on=RUN, how="semi").select(FILE_COLUMN, ROW_COLUMN, column)


def _with_row_keys(dataset: Dataset, table: str, rows: pl.DataFrame) -> pl.DataFrame:
    """The rows with the columns of their row key, read from the table again."""
    missing = [c for c in ROW_KEY[table] if c not in rows.columns]
    if not missing:
        return rows
    keys = key_columns(dataset, table, *missing)
    return collect_streaming(keys.join(rows.lazy(), on=[FILE_COLUMN, ROW_COLUMN], how="inner"))


def _shoe_tables(shoes: pl.LazyFrame) -> pl.DataFrame:
    """Each shoe id with a table it names (any one, for a repeated id: those rows are
    quarantined as duplicates, their rounds with them)."""
    shoes = shoes.select("shoe_id", pl.col("table_id").alias("shoe_table"))
    return shoes.unique(subset="shoe_id", keep="any").collect()


def _round_table_mismatch(
    dataset: Dataset, rounds: pl.DataFrame | None = None, shoe_tables: pl.DataFrame | None = None
) -> pl.DataFrame:
    """Rounds whose table is not their shoe's: the table's, or `rounds`' if given (some of
    its rows in contract types with provenance), against `shoe_tables` if given."""
    if shoe_tables is None:
        shoe_tables = _shoe_tables(scan_table(dataset, "shoes"))
    keys = ["round_id", "shoe_id", "table_id"]
    rows = collect_streaming(
        (
            key_columns(dataset, "rounds", *keys)
            if rounds is None
            else rounds.lazy().select(FILE_COLUMN, ROW_COLUMN, *keys)
        )
        .join(shoe_tables.lazy(), on="shoe_id", how="inner")
        .filter(pl.col("table_id") != pl.col("shoe_table"))
    )
    return quarantine_rows(
        "rounds",
        rows,
        column="table_id",
        check="same_table_as_shoe",
        value=pl.col("table_id"),
        reason=pl.format("its shoe belongs to table {}", pl.col("shoe_table")),
    )


def _shoe_before_options(dataset: Dataset, row_level: pl.DataFrame) -> pl.DataFrame:
    # A shoe opened before its table's first options row has no Rules Submission to audit
    # against. Rows already quarantined for a bad timestamp are left to their own reason.
    first = (
        scan_table(dataset, "tables")
        .group_by("table_id")
        .agg(pl.col("effective_from").min().alias("first_effective"))
    )
    rows = collect_streaming(
        key_columns(dataset, "shoes", "shoe_id", "table_id", "opened_at")
        .join(first, on="table_id", how="inner")
        .filter(pl.col("opened_at") < pl.col("first_effective"))
    )
    return quarantine_rows(
        "shoes",
        rows,
        column="opened_at",
        check="options_in_force",
        value=pl.col("opened_at"),
        reason=pl.format(
            "opened before the table's first options row ({})", pl.col("first_effective")
        ),
    )
