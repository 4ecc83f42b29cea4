"""Stage 2, validate: sort every input row into audited or quarantined.

Row checks run through the pandera models batch by batch, so memory stays bounded
by the batch, not the file. Cross-row checks (unique ids, foreign keys, the options
row in force when a shoe opened) are polars queries over the key columns only.
A quarantined row takes the rows that depend on it along (a shoe's rounds, a
round's wagers), each with the reason. Nothing is dropped silently: for every
table, rows in = rows audited + rows quarantined.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import pandera.polars as pa
import polars as pl

from auditor.contract import CARD_PATTERN, ROW_KEYS, RULESETS, TABLES
from auditor.errors import RulesetError
from auditor.input.load import (
    FILE_COLUMN,
    ROW_COLUMN,
    Dataset,
    SourceFile,
    iter_batches,
    normalize_exprs,
    scan_table,
    wider_integer_columns,
)
from auditor.schemas import MODELS

QUARANTINE_SCHEMA = {
    "table": pl.String(),
    "file": pl.String(),
    "row": pl.Int64(),
    "row_key": pl.String(),
    "column": pl.String(),
    "check": pl.String(),
    "value": pl.String(),
    "reason": pl.String(),
}
COUNTS_SCHEMA = {
    "table": pl.String(),
    "rows_in": pl.Int64(),
    "rows_audited": pl.Int64(),
    "rows_quarantined": pl.Int64(),
}

# Each row's name in the quarantine is the contract id, which is what a person searches for.
ROW_KEY = ROW_KEYS

CHECK_REASONS = {
    "card_format": "not a card: rank A23456789TJQK followed by suit SHDC",
    "two_or_three_cards": "a hand holds 2 or 3 cards, a void round's at most 3 "
    "(ma-baccarat §10(c): never more than one additional card per hand)",
    "not_nullable": "required value is missing",
    "str_matches": "does not match the contract's format",
    "isin": "not one of the contract's values",
    "greater_than_or_equal_to": "below the contract's minimum",
    "less_than_or_equal_to": "above the contract's maximum",
    "in_range": "outside the contract's range",
}

ProgressCallback = Callable[[str, int], None]


@dataclass(frozen=True)
class ValidatedDataset:
    """Audited rows per table (lazy), the quarantine and the row accounting."""

    dataset: Dataset
    audited: dict[str, pl.LazyFrame]
    quarantine: pl.DataFrame
    counts: pl.DataFrame


def validate(dataset: Dataset, progress: ProgressCallback | None = None) -> ValidatedDataset:
    _reject_unknown_rulesets(dataset)
    row_level = _row_checks(dataset, progress)
    cross = _cross_row_checks(dataset, row_level)
    quarantine = _dependents(dataset, _concat([row_level, cross]))
    quarantine = _sort_quarantine(quarantine)
    audited = {t: _audited_rows(dataset, t, quarantine) for t in TABLES}
    counts = _row_counts(dataset, quarantine)
    return ValidatedDataset(dataset, audited, quarantine, counts)


def _reject_unknown_rulesets(dataset: Dataset) -> None:
    # An unknown ruleset is not a bad row but a dataset the auditor has no rules for.
    for source in dataset.files["tables"]:
        frame = pl.scan_parquet(source.path).select("ruleset").with_row_index("row").collect()
        bad = frame.filter(~pl.col("ruleset").is_in(list(RULESETS)))
        if bad.height:
            row, value = bad.row(0)
            raise RulesetError(
                f"{source.name}: column 'ruleset', row {row}: unknown ruleset {value!r}; "
                f"expected one of {', '.join(RULESETS)}",
                path=str(source.path),
                column="ruleset",
            )


@dataclass(frozen=True)
class _Batch:
    source: SourceFile
    rows: pl.DataFrame  # in contract types, with provenance
    overflows: pl.DataFrame  # quarantine rows of integers that do not fit the contract type


def _row_checks(dataset: Dataset, progress: ProgressCallback | None) -> pl.DataFrame:
    found = []
    for batch in _read_ahead(_batches(dataset)):
        failures = _pandera_failures(batch.source, batch.rows)
        if batch.overflows.height:
            # An overflowing integer reads as null; report the overflow, not a missing value.
            failures = failures.join(
                batch.overflows.select("file", "row", "column"),
                on=["file", "row", "column"],
                how="anti",
            )
        found += [batch.overflows, failures]
        if progress:
            progress(batch.source.table, batch.rows.height)
    return _concat(found)


def _batches(dataset: Dataset) -> Iterator[_Batch]:
    for table in dataset.tables():
        for source in dataset.files[table]:
            normalize = [FILE_COLUMN, ROW_COLUMN, *normalize_exprs(source)]
            for raw in iter_batches(source):
                rows = raw.select(normalize)
                yield _Batch(source, rows, _overflows(source, raw))


def _read_ahead(batches: Iterator[_Batch]) -> Iterator[_Batch]:
    """The batches, each read while the one before is checked.

    pandera's checks run one after another and mostly on one core; reading (decoding
    Parquet) in a second thread meanwhile keeps both cores busy, for one batch more
    in memory. polars releases the GIL while it works.
    """
    with ThreadPoolExecutor(max_workers=1) as reader:
        ahead = reader.submit(next, batches, None)
        while (batch := ahead.result()) is not None:
            ahead = reader.submit(next, batches, None)
            yield batch


def _overflows(source: SourceFile, raw: pl.DataFrame) -> pl.DataFrame:
    frames = []
    for column in wider_integer_columns(source):
        dtype = TABLES[source.table][column][0]
        lost = raw.filter(
            pl.col(column).is_not_null() & pl.col(column).cast(dtype, strict=False).is_null()
        )
        if lost.height:
            frames.append(
                _quarantine_rows(
                    source.table,
                    lost,
                    column=column,
                    check="fits_type",
                    value=pl.col(column).cast(pl.String),
                    reason=f"value does not fit the contract type {dtype}",
                )
            )
    return _concat(frames)


def _pandera_failures(source: SourceFile, batch: pl.DataFrame) -> pl.DataFrame:
    model = MODELS[source.table]
    try:
        model.validate(batch, lazy=True)
        return _empty_quarantine()
    except pa.errors.SchemaErrors as errors:
        cases = errors.failure_cases
    cases = cases.filter(pl.col("index").is_not_null())
    cases = _name_bad_cards(batch, cases)
    rows = batch.with_row_index("index").join(
        cases.select(
            pl.col("index").cast(pl.UInt32),
            pl.col("column"),
            pl.col("check"),
            pl.col("failure_case").alias("value"),
        ),
        on="index",
        how="inner",
    )
    return _quarantine_rows(
        source.table,
        rows,
        column=pl.col("column"),
        check=pl.col("check"),
        value=pl.col("value"),
        reason=_reason_expr(),
    )


def _name_bad_cards(batch: pl.DataFrame, cases: pl.DataFrame) -> pl.DataFrame:
    """For a list of cards, show the cards that are wrong rather than the whole list."""
    is_card_check = pl.col("check") == "card_format"
    fixed = [cases.filter(~is_card_check)]
    for column in cases.filter(is_card_check).get_column("column").unique().sort():
        bad_cards = batch.select(
            pl.int_range(pl.len(), dtype=pl.Int64).alias("index"),
            pl.col(column)
            .list.eval(pl.element().filter(~pl.element().str.contains(CARD_PATTERN)))
            .list.join(" ")
            .alias("bad_cards"),
        )
        mine = cases.filter(is_card_check & (pl.col("column") == column))
        fixed.append(
            mine.with_columns(pl.col("index").cast(pl.Int64))
            .join(bad_cards, on="index", how="left")
            .with_columns(pl.col("bad_cards").alias("failure_case"))
            .drop("bad_cards")
            .cast(mine.schema)
        )
    return pl.concat(fixed, how="vertical")


def _reason_expr() -> pl.Expr:
    check_name = pl.col("check").str.extract(r"^([a-z_]+)", 1)
    reason = pl.lit("failed check")
    for name, text in CHECK_REASONS.items():
        reason = pl.when(check_name == name).then(pl.lit(text)).otherwise(reason)
    return pl.concat_str(reason, pl.lit(" ("), pl.col("check"), pl.lit(")"))


def _quarantine_rows(
    table: str,
    rows: pl.DataFrame,
    *,
    column: str | pl.Expr,
    check: str | pl.Expr,
    value: pl.Expr,
    reason: str | pl.Expr,
) -> pl.DataFrame:
    def lit(x: str | pl.Expr) -> pl.Expr:
        return pl.lit(x) if isinstance(x, str) else x

    return rows.select(
        pl.lit(table).alias("table"),
        pl.col(FILE_COLUMN).alias("file"),
        pl.col(ROW_COLUMN).cast(pl.Int64).alias("row"),
        _row_key_expr(table).alias("row_key"),
        lit(column).cast(pl.String).alias("column"),
        lit(check).cast(pl.String).alias("check"),
        value.cast(pl.String).alias("value"),
        lit(reason).cast(pl.String).alias("reason"),
    )


def _row_key_expr(table: str) -> pl.Expr:
    parts = [pl.col(c).cast(pl.String).fill_null("<null>") for c in ROW_KEY[table]]
    return pl.concat_str(parts, separator="/")


# ---- cross-row checks ------------------------------------------------------------

# Cross-row checks compare ids across whole tables (32 million wager ids at 10 million
# rounds). Comparing strings that many times is what costs, so the checks compare u64
# hashes first and strings only where hashes agree: equal ids always hash equal, so no
# finding is missed, and every finding is confirmed on the ids themselves, so a hash
# collision can never make or hide one. Queries run on the streaming engine, which holds
# a batch of a large table at a time rather than all of it.
HASH = "_hash"
PARENT = "_parent"


def _keys(dataset: Dataset, table: str, *columns: str) -> pl.LazyFrame:
    unique_columns = list(dict.fromkeys(columns))  # a row key may include the joined column
    return scan_table(dataset, table).select(FILE_COLUMN, ROW_COLUMN, *unique_columns)


def _collect(query: pl.LazyFrame) -> pl.DataFrame:
    return query.collect(engine="streaming")


def _key_hash(columns: Sequence[str]) -> pl.Expr:
    # A null hashes like any other value, so rows that share a null key share a hash too.
    if len(columns) == 1:
        return pl.col(columns[0]).hash()
    return pl.struct(columns).hash()


def _repeated(hashes: pl.Series) -> pl.Series:
    """The hashes that occur more than once (sorting is far faster than `is_duplicated`)."""
    ordered = hashes.sort()
    return ordered.filter(ordered == ordered.shift(1)).unique()


class _HashedIds:
    """Id columns with their hashes, each read once per validation run."""

    def __init__(self, dataset: Dataset) -> None:
        self.dataset = dataset
        self._ids: dict[tuple[str, str], pl.DataFrame] = {}
        self._repeated: dict[tuple[str, ...], pl.Series] = {}
        self._indexes: dict[tuple[str, str], pl.DataFrame | None] = {}

    def ids(self, table: str, column: str) -> pl.DataFrame:
        """`HASH` and the value as `PARENT`, for every row of the table."""
        if (table, column) not in self._ids:
            query = scan_table(self.dataset, table).select(
                _key_hash([column]).alias(HASH), pl.col(column).alias(PARENT)
            )
            self._ids[table, column] = _collect(query)
        return self._ids[table, column]

    def repeated(self, table: str, key: Sequence[str]) -> pl.Series:
        """The hashes of the key that more than one row of the table has."""
        if (table, *key) not in self._repeated:
            if len(key) == 1 and (table, key[0]) in self._ids:
                hashes = self._ids[table, key[0]].get_column(HASH)
            else:  # only the hashes: a large table's ids as strings would not be small
                hashes = _collect(scan_table(self.dataset, table).select(_key_hash(key)))
                hashes = hashes.to_series()
            self._repeated[table, *key] = _repeated(hashes)
        return self._repeated[table, *key]

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
        shared = ids.filter(is_repeated).unique()
        if shared.get_column(HASH).n_unique() < shared.height:
            return None
        return pl.concat([ids.filter(~is_repeated), shared])


def _cross_row_checks(dataset: Dataset, row_level: pl.DataFrame) -> pl.DataFrame:
    ids = _HashedIds(dataset)
    # Parents first: their ids are read once and serve their own duplicate check too.
    found = [
        _missing_parent(ids, "shoes", "table_id", "tables", "table_id"),
        _missing_parent(ids, "rounds", "shoe_id", "shoes", "shoe_id"),
        _missing_parent(ids, "rounds", "table_id", "tables", "table_id"),
        _missing_parent(ids, "wagers", "round_id", "rounds", "round_id"),
        _round_table_mismatch(dataset),
        _shoe_before_options(dataset, row_level),
    ]
    if "commission_collections" in dataset.files:
        found.append(_missing_parent(ids, "commission_collections", "shoe_id", "shoes", "shoe_id"))
    if "royal9_seats" in dataset.files:
        found.append(_missing_parent(ids, "royal9_seats", "table_id", "tables", "table_id"))
    found += [_duplicates(ids, t) for t in dataset.tables()]
    return _concat(found)


def _duplicates(ids: _HashedIds, table: str) -> pl.DataFrame:
    key = list(ROW_KEY[table])
    candidates = ids.repeated(table, key)
    if candidates.is_empty():
        return _empty_quarantine()
    # Every row of a repeated id is a candidate, so counting among candidates is exact.
    rows = _collect(
        _keys(ids.dataset, table, *key)
        .filter(_key_hash(key).is_in(candidates.implode()))
        .filter(pl.len().over(key) > 1)
        .with_columns(pl.len().over(key).alias("copies"))
    )
    return _quarantine_rows(
        table,
        rows,
        column="/".join(key),
        check="unique",
        value=_row_key_expr(table),
        reason=pl.format("{} rows share this id; none can be trusted", pl.col("copies")),
    )


def _missing_parent(
    ids: _HashedIds, table: str, column: str, parent: str, parent_column: str
) -> pl.DataFrame:
    # Only the column and provenance go through the join (32 million wager ids would
    # double its memory); the few rows found are named afterwards.
    children = _keys(ids.dataset, table, column)
    index = ids.index(parent, parent_column)
    if index is None:  # two parent ids share a hash: compare the ids themselves
        parents = scan_table(ids.dataset, parent).select(pl.col(parent_column).alias(column))
        missing = children.join(parents, on=column, how="anti")
    else:
        # A null id is missing, as in an anti-join: null equals nothing.
        found = pl.col(column).eq(pl.col(PARENT)).fill_null(False)
        missing = (
            children.with_columns(_key_hash([column]).alias(HASH))
            .join(index.lazy(), on=HASH, how="left")
            .filter(~found)
            .select(FILE_COLUMN, ROW_COLUMN, column)
        )
    rows = _collect(missing)
    if rows.height == 0:
        return _empty_quarantine()
    return _quarantine_rows(
        table,
        _with_row_keys(ids.dataset, table, rows),
        column=column,
        check="foreign_key",
        value=pl.col(column),
        reason=f"{column} not found in {parent}.{parent_column}",
    )


def _with_row_keys(dataset: Dataset, table: str, rows: pl.DataFrame) -> pl.DataFrame:
    """The rows with the columns of their row key, read from the table again."""
    missing = [c for c in ROW_KEY[table] if c not in rows.columns]
    if not missing:
        return rows
    keys = _keys(dataset, table, *missing)
    return _collect(keys.join(rows.lazy(), on=[FILE_COLUMN, ROW_COLUMN], how="inner"))


def _round_table_mismatch(dataset: Dataset) -> pl.DataFrame:
    shoes = scan_table(dataset, "shoes").select("shoe_id", pl.col("table_id").alias("shoe_table"))
    shoes = shoes.unique(subset="shoe_id", keep="any").collect()
    rows = _collect(
        _keys(dataset, "rounds", "round_id", "shoe_id", "table_id")
        .join(shoes.lazy(), on="shoe_id", how="inner")
        .filter(pl.col("table_id") != pl.col("shoe_table"))
    )
    return _quarantine_rows(
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
    rows = _collect(
        _keys(dataset, "shoes", "shoe_id", "table_id", "opened_at")
        .join(first, on="table_id", how="inner")
        .filter(pl.col("opened_at") < pl.col("first_effective"))
    )
    return _quarantine_rows(
        "shoes",
        rows,
        column="opened_at",
        check="options_in_force",
        value=pl.col("opened_at"),
        reason=pl.format(
            "opened before the table's first options row ({})", pl.col("first_effective")
        ),
    )


# ---- dependants ------------------------------------------------------------------

# child table, its column, parent table, parent key: a child of a quarantined parent
# cannot be audited (no options, no cards, no round to settle against).
DEPENDENCIES = (
    ("shoes", "table_id", "tables", "table_id"),
    ("rounds", "shoe_id", "shoes", "shoe_id"),
    ("wagers", "round_id", "rounds", "round_id"),
    ("commission_collections", "shoe_id", "shoes", "shoe_id"),
    ("royal9_seats", "table_id", "tables", "table_id"),
)


def _dependents(dataset: Dataset, quarantine: pl.DataFrame) -> pl.DataFrame:
    found = [quarantine]
    for child, column, parent, parent_key in DEPENDENCIES:
        if child not in dataset.files:
            continue
        bad_parents = _quarantined_keys(dataset, parent, parent_key, _concat(found))
        if bad_parents.height == 0:
            continue
        rows = _collect(
            _keys(dataset, child, *ROW_KEY[child], column).join(
                bad_parents.lazy().rename({parent_key: column}), on=column, how="inner"
            )
        )
        found.append(
            _quarantine_rows(
                child,
                rows,
                column=column,
                check="parent_quarantined",
                value=pl.col(column),
                reason=f"its {parent[:-1]} {column} is quarantined",
            )
        )
    return _concat(found)


def _quarantined_keys(
    dataset: Dataset, table: str, key: str, quarantine: pl.DataFrame
) -> pl.DataFrame:
    bad = quarantine.filter(pl.col("table") == table).select(
        pl.col("file").alias(FILE_COLUMN), pl.col("row").alias(ROW_COLUMN)
    )
    if bad.height == 0:
        return pl.DataFrame(schema={key: pl.String()})
    return _collect(
        _keys(dataset, table, key)
        .join(bad.lazy().unique(), on=[FILE_COLUMN, ROW_COLUMN], how="inner")
        .select(key)
        .unique()
    )


# ---- results ---------------------------------------------------------------------


def _audited_rows(dataset: Dataset, table: str, quarantine: pl.DataFrame) -> pl.LazyFrame:
    bad = (
        quarantine.filter(pl.col("table") == table)
        .select(pl.col("file").alias(FILE_COLUMN), pl.col("row").alias(ROW_COLUMN))
        .unique()
    )
    rows = scan_table(dataset, table)
    if bad.height == 0:
        return rows
    return rows.join(bad.lazy(), on=[FILE_COLUMN, ROW_COLUMN], how="anti")


def _row_counts(dataset: Dataset, quarantine: pl.DataFrame) -> pl.DataFrame:
    records = []
    for table in TABLES:
        rows_in = sum(s.rows for s in dataset.files.get(table, ()))
        quarantined = (
            quarantine.filter(pl.col("table") == table).select("file", "row").unique().height
        )
        records.append((table, rows_in, rows_in - quarantined, quarantined))
    return pl.DataFrame(records, schema=COUNTS_SCHEMA, orient="row")


def _sort_quarantine(quarantine: pl.DataFrame) -> pl.DataFrame:
    order = {t: i for i, t in enumerate(TABLES)}
    return (
        quarantine.unique()
        .with_columns(pl.col("table").replace_strict(order, return_dtype=pl.Int32).alias("_t"))
        .sort(["_t", "file", "row", "column", "check"], nulls_last=True)
        .drop("_t")
    )


def _empty_quarantine() -> pl.DataFrame:
    return pl.DataFrame(schema=QUARANTINE_SCHEMA)


def _concat(frames: list[pl.DataFrame]) -> pl.DataFrame:
    frames = [f for f in frames if f.height]
    if not frames:
        return _empty_quarantine()
    return pl.concat([f.cast(QUARANTINE_SCHEMA) for f in frames], how="vertical")
