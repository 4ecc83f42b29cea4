"""Stage 2, validate: sort every input row into audited or quarantined.

Row checks run through the pandera models batch by batch, so memory stays bounded
by the batch, not the file. Cross-row checks (unique ids, foreign keys, the options
row in force when a shoe opened) are polars queries over the key columns only.
A quarantined row takes the rows that depend on it along (a shoe's rounds, a
round's wagers), each with the reason. Nothing is dropped silently: for every
table, rows in = rows audited + rows quarantined.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pandera.polars as pa
import polars as pl

from auditor.contract import CARD_PATTERN, ROW_KEYS, RULESETS, TABLES
from auditor.errors import RulesetError
from auditor.load import (
    FILE_COLUMN,
    ROW_COLUMN,
    Dataset,
    SourceFile,
    integer_columns,
    iter_batches,
    normalize_exprs,
    scan_table,
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
    "two_or_three_cards": "a hand holds 2 or 3 cards (ma-baccarat §10(c): never more than "
    "one additional card per hand)",
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
    parts = [_row_checks(source, progress) for t in dataset.tables() for source in dataset.files[t]]
    row_level = _concat(parts)
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


def _row_checks(source: SourceFile, progress: ProgressCallback | None) -> pl.DataFrame:
    found = []
    for raw in iter_batches(source):
        overflows = _overflows(source, raw)
        batch = raw.select(FILE_COLUMN, ROW_COLUMN, *normalize_exprs(source))
        # An overflowing integer reads as null; report the overflow, not a missing value.
        failures = _pandera_failures(source, batch).join(
            overflows.select("file", "row", "column"), on=["file", "row", "column"], how="anti"
        )
        found += [overflows, failures]
        if progress:
            progress(source.table, batch.height)
    return _concat(found)


def _overflows(source: SourceFile, raw: pl.DataFrame) -> pl.DataFrame:
    frames = []
    for column in integer_columns(source.table):
        if column not in raw.columns:
            continue
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


def _keys(dataset: Dataset, table: str, *columns: str) -> pl.LazyFrame:
    unique_columns = list(dict.fromkeys(columns))  # a row key may include the joined column
    return scan_table(dataset, table).select(FILE_COLUMN, ROW_COLUMN, *unique_columns)


def _cross_row_checks(dataset: Dataset, row_level: pl.DataFrame) -> pl.DataFrame:
    found = [_duplicates(dataset, t) for t in dataset.tables()]
    found += [
        _missing_parent(dataset, "shoes", "table_id", "tables", "table_id"),
        _missing_parent(dataset, "rounds", "shoe_id", "shoes", "shoe_id"),
        _missing_parent(dataset, "rounds", "table_id", "tables", "table_id"),
        _missing_parent(dataset, "wagers", "round_id", "rounds", "round_id"),
        _round_table_mismatch(dataset),
        _shoe_before_options(dataset, row_level),
    ]
    if "commission_collections" in dataset.files:
        found.append(
            _missing_parent(dataset, "commission_collections", "shoe_id", "shoes", "shoe_id")
        )
    if "royal9_seats" in dataset.files:
        found.append(_missing_parent(dataset, "royal9_seats", "table_id", "tables", "table_id"))
    return _concat(found)


def _duplicates(dataset: Dataset, table: str) -> pl.DataFrame:
    key = list(ROW_KEY[table])
    rows = (
        _keys(dataset, table, *key)
        .filter(pl.len().over(key) > 1)
        .with_columns(pl.len().over(key).alias("copies"))
        .collect()
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
    dataset: Dataset, table: str, column: str, parent: str, parent_column: str
) -> pl.DataFrame:
    parents = scan_table(dataset, parent).select(pl.col(parent_column).alias(column)).unique()
    rows = (
        _keys(dataset, table, *ROW_KEY[table], column)
        .join(parents, on=column, how="anti")
        .collect()
    )
    return _quarantine_rows(
        table,
        rows,
        column=column,
        check="foreign_key",
        value=pl.col(column),
        reason=f"{column} not found in {parent}.{parent_column}",
    )


def _round_table_mismatch(dataset: Dataset) -> pl.DataFrame:
    shoes = scan_table(dataset, "shoes").select("shoe_id", pl.col("table_id").alias("shoe_table"))
    shoes = shoes.unique(subset="shoe_id", keep="any")
    rows = (
        _keys(dataset, "rounds", "round_id", "shoe_id", "table_id")
        .join(shoes, on="shoe_id", how="inner")
        .filter(pl.col("table_id") != pl.col("shoe_table"))
        .collect()
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
    rows = (
        _keys(dataset, "shoes", "shoe_id", "table_id", "opened_at")
        .join(first, on="table_id", how="inner")
        .filter(pl.col("opened_at") < pl.col("first_effective"))
        .collect()
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
        rows = (
            _keys(dataset, child, *ROW_KEY[child], column)
            .join(bad_parents.lazy().rename({parent_key: column}), on=column, how="inner")
            .collect()
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
    return (
        _keys(dataset, table, key)
        .join(bad.lazy().unique(), on=[FILE_COLUMN, ROW_COLUMN], how="inner")
        .select(key)
        .unique()
        .collect()
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
