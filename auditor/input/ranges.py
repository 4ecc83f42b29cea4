"""Row checks of the values no later stage could compute with: money past what the
settlement's arithmetic in cents holds, timestamps no date and time can name."""

from __future__ import annotations

import polars as pl

from auditor.input.quarantine import concat_quarantine, quarantine_rows
from auditor.schemas import MONEY_BOUND, money_columns, timestamp_columns, within_years


def out_of_range(table: str, raw: pl.DataFrame) -> pl.DataFrame:
    """Quarantine rows of money past `MONEY_BOUND` (measured in the file's own column: a
    wider decimal's value would read as missing once cast) and of timestamps outside the
    years 1 to 9999, which no later stage could compute with or show."""
    return concat_quarantine([*_money_past_bound(table, raw), *_times_outside_years(table, raw)])


def _money_past_bound(table: str, raw: pl.DataFrame) -> list[pl.DataFrame]:
    frames = []
    for column in money_columns(table):
        if column not in raw.columns:
            continue
        past = raw.filter(pl.col(column).abs() > MONEY_BOUND)
        if past.height:
            frames.append(
                quarantine_rows(
                    table,
                    past,
                    column=column,
                    check="in_range",
                    value=pl.col(column),
                    reason=f"out of range: more than {MONEY_BOUND:,} dollars, past what the "
                    "settlement's arithmetic in cents holds",
                )
            )
    return frames


def _times_outside_years(table: str, raw: pl.DataFrame) -> list[pl.DataFrame]:
    frames = []
    for column in timestamp_columns(table):
        if column not in raw.columns:
            continue
        dtype = raw.schema[column]
        # A file whose timestamp column is not one is refused whole (`load._type_problem`).
        assert isinstance(dtype, pl.Datetime)
        unit = dtype.time_unit
        outside = raw.filter(pl.col(column).is_not_null() & ~within_years(pl.col(column), unit))
        if outside.height:
            frames.append(
                quarantine_rows(
                    table,
                    outside,
                    column=column,
                    check="in_range",
                    # As the number the file holds: the timestamp itself has no text.
                    value=pl.format(f"{{}} {unit} from 1970-01-01", pl.col(column).dt.epoch(unit)),
                    reason="out of range: a timestamp outside the years 1 to 9999",
                )
            )
    return frames
