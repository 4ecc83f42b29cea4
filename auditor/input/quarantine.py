"""The quarantine's rows: one per failed check of an input row, with the row's file,
place and id, so that a person finds it, and the reason in words.

A value or id longer than `MAX_ID_CHARS` (a 100 MB "id", a list of ten thousand cards) is
shown by its first `SHOWN_CHARS` characters and its length (`shown_past_bound`), so that
the quarantine stays small whatever the input holds. A quarantined row is taken out of
the audit by its `file` and `row`, never by the id shown, so shortening it lets no row
through."""

from __future__ import annotations

import polars as pl

from auditor.contract import ROW_KEYS, TABLES
from auditor.input.load import FILE_COLUMN, ROW_COLUMN
from auditor.schemas import MAX_ID_CHARS, SHOWN_CHARS, shown_past_bound

QUARANTINE_SCHEMA = pl.Schema(
    {
        "table": pl.String(),
        "file": pl.String(),
        "row": pl.Int64(),
        "row_key": pl.String(),
        "column": pl.String(),
        "check": pl.String(),
        "value": pl.String(),
        "reason": pl.String(),
    }
)

# Each row's name in the quarantine is the contract id, which is what a person searches for.
ROW_KEY = ROW_KEYS


def quarantine_rows(
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
        row_key_expr(table).alias("row_key"),
        lit(column).cast(pl.String).alias("column"),
        lit(check).cast(pl.String).alias("check"),
        shortened(value.cast(pl.String)).alias("value"),
        lit(reason).cast(pl.String).alias("reason"),
    )


def row_key_expr(table: str) -> pl.Expr:
    # Each part shortened before they are joined: joining copies every value, and rows
    # sharing one 100 MB id would each get a copy.
    parts = [shortened(pl.col(c).cast(pl.String)).fill_null("<null>") for c in ROW_KEY[table]]
    return pl.concat_str(parts, separator="/")


def shortened(text: pl.Expr) -> pl.Expr:
    """`text`, or its start and length where it is longer than `MAX_ID_CHARS`."""
    length = text.str.len_chars()
    shown = shown_past_bound(text.str.slice(0, SHOWN_CHARS), length)
    return pl.when(length > MAX_ID_CHARS).then(shown).otherwise(text)


def shortened_text(text: str) -> str:
    """`shortened` for one value, for a message."""
    if len(text) <= MAX_ID_CHARS:
        return text
    return pl.select(shortened(pl.lit(text))).item()


def empty_quarantine() -> pl.DataFrame:
    return pl.DataFrame(schema=QUARANTINE_SCHEMA)


def concat_quarantine(frames: list[pl.DataFrame]) -> pl.DataFrame:
    frames = [f for f in frames if f.height]
    if not frames:
        return empty_quarantine()
    return pl.concat([f.cast(QUARANTINE_SCHEMA) for f in frames], how="vertical")


def sorted_quarantine(quarantine: pl.DataFrame) -> pl.DataFrame:
    """The quarantine without repeated rows, in the contract's table order, then by file,
    row, column and check: the same rows always come out in the same order."""
    order = {t: i for i, t in enumerate(TABLES)}
    return (
        quarantine.unique()
        .with_columns(pl.col("table").replace_strict(order, return_dtype=pl.Int32).alias("_t"))
        .sort(["_t", "file", "row", "column", "check"], nulls_last=True)
        .drop("_t")
    )
