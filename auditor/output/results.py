"""A query's result as it streams (`Streamed`), and how it is written: as csv, json or
parquet a batch at a time, or its first rows as text; a column of a type polars cannot
write comes as DuckDB's text of it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import BinaryIO

import duckdb
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from auditor.output.query_errors import QueryError

FORMATS = ("table", "csv", "json", "parquet")


@dataclass
class Streamed:
    """A statement's result: its columns, and its rows batch by batch (read once)."""

    schema: pa.Schema
    batches: Iterator[pa.RecordBatch]

    @property
    def column_names(self) -> list[str]:
        return list(self.schema.names)


# ---- showing results as text ----------------------------------------------------------

# The DuckDB types polars writes as csv and json and shows in a table cell; every other
# (VARIANT, BLOB, BIT, BIGNUM, UNION, MAP, INTERVAL, HUGEINT past 38 digits, TIME WITH
# TIME ZONE, fixed-size arrays) is cast to VARCHAR by DuckDB, its own text of the value.
_SHOWN_AS_IS = {
    "boolean",
    "tinyint",
    "smallint",
    "integer",
    "bigint",
    "utinyint",
    "usmallint",
    "uinteger",
    "ubigint",
    "float",
    "double",
    "decimal",
    "varchar",
    "uuid",
    "enum",
    "date",
    "time",
    "timestamp",
    "timestamp_s",
    "timestamp_ms",
    "timestamp_ns",
    "timestamp with time zone",
}


def _shown_as_is(dtype: duckdb.sqltypes.DuckDBPyType) -> bool:
    if dtype.id in ("list", "struct"):
        return all(
            isinstance(child, duckdb.sqltypes.DuckDBPyType) and _shown_as_is(child)
            for _, child in dtype.children
        )
    return dtype.id in _SHOWN_AS_IS


def shown_as_text(relation: duckdb.DuckDBPyRelation) -> duckdb.DuckDBPyRelation:
    """`relation` with each column polars cannot write cast to VARCHAR, by DuckDB's
    expressions, never by SQL text built from the user's names."""
    odd = [not _shown_as_is(dtype) for dtype in relation.types]
    if not any(odd):
        return relation
    names = relation.columns
    if len(set(names)) < len(names):
        raise QueryError(
            "the result has columns of the same name and one of a type shown as text: "
            "give the columns distinct names (AS)"
        )
    return relation.select(
        *(
            duckdb.ColumnExpression(name).cast(duckdb.sqltypes.VARCHAR).alias(name)
            if cast
            else duckdb.ColumnExpression(name)
            for name, cast in zip(names, odd, strict=True)
        )
    )


def infinite_times_as_text(batch: pa.RecordBatch) -> pa.RecordBatch:
    """The batch, with each timestamp or date column that holds a value no datetime can
    name (DuckDB's infinities, a year past 9999) as text: 'infinity', '-infinity', the
    number and its unit, and the other values as dates and times. Polars, converting
    such a value, panics."""
    columns, fields = list(batch.columns), list(batch.schema)
    for index, column in enumerate(fields):
        if not (pa.types.is_timestamp(column.type) or pa.types.is_date32(column.type)):
            continue
        if pa.types.is_timestamp(column.type) and column.type.unit == "ns":
            continue  # 64-bit nanoseconds reach years 1677 to 2262 only
        stored_as = pa.int32() if pa.types.is_date32(column.type) else pa.int64()
        numbers = columns[index].cast(stored_as).cast(pa.int64())
        low, high = (bound.as_py() for bound in pc.min_max(numbers).values())
        first, last = _shown_range(column.type)
        if low is None or (first <= low and high <= last):
            continue
        columns[index] = pa.array(
            [_instant_text(n, column.type) for n in numbers.to_pylist()], pa.string()
        )
        fields[index] = pa.field(column.name, pa.string())
    return pa.RecordBatch.from_arrays(columns, schema=pa.schema(fields))


_EPOCH = datetime(1970, 1, 1)
_STEPS = {
    "s": timedelta(seconds=1),
    "ms": timedelta(milliseconds=1),
    "us": timedelta(microseconds=1),
}
_DAY = timedelta(days=1)


def _step(dtype: pa.DataType) -> timedelta:
    """What one unit of a date32 or timestamp column is."""
    return _STEPS[dtype.unit] if pa.types.is_timestamp(dtype) else _DAY


def _shown_range(dtype: pa.DataType) -> tuple[int, int]:
    """The integers of `dtype` that a datetime (years 1 to 9999) can name."""
    step = _step(dtype)
    return (datetime.min - _EPOCH) // step, (datetime.max - _EPOCH) // step


def _instant_text(number: int | None, dtype: pa.DataType) -> str | None:
    if number is None:
        return None
    # DuckDB's infinities: the type's largest integer and its negation.
    largest = 2**31 - 1 if pa.types.is_date32(dtype) else 2**63 - 1
    if abs(number) == largest:
        return "infinity" if number > 0 else "-infinity"
    first, last = _shown_range(dtype)
    if not first <= number <= last:
        unit = dtype.unit if pa.types.is_timestamp(dtype) else "days"
        return f"{number} {unit} from 1970-01-01"
    instant = _EPOCH + number * _step(dtype)
    if pa.types.is_date32(dtype):
        return instant.date().isoformat()
    zoned = pa.types.is_timestamp(dtype) and dtype.tz
    return instant.isoformat(sep=" ") + ("+00:00" if zoned else "")


# ---- writing results ----------------------------------------------------------------


def write_result(result: Streamed, fmt: str, sink: BinaryIO) -> None:
    """A result as csv, json (an array of objects) or parquet, written to `sink` a batch
    at a time: what is held is one batch, never the whole result."""
    if fmt not in FORMATS[1:]:
        raise QueryError(f"unknown format {fmt!r}; one of {', '.join(FORMATS[1:])}")
    try:
        if fmt == "parquet":
            _write_parquet(result, sink)
        elif fmt == "json":
            _write_json(result, sink)
        else:
            _write_csv(result, sink)
    except (pa.ArrowException, pl.exceptions.PolarsError) as exc:
        raise QueryError(f"the result cannot be written as {fmt}: {exc}") from exc


def _write_parquet(result: Streamed, sink: BinaryIO) -> None:
    with pq.ParquetWriter(sink, result.schema, compression="zstd") as writer:
        for batch in result.batches:
            writer.write_batch(batch)


def _write_json(result: Streamed, sink: BinaryIO) -> None:
    # One array, as polars' write_json writes a frame: its objects, batch by batch.
    sink.write(b"[")
    first = True
    for batch in result.batches:
        lines = _frame(batch).write_ndjson().encode().splitlines()
        if lines:
            sink.write((b"" if first else b",") + b",".join(lines))
            first = False
    sink.write(b"]\n")


def _write_csv(result: Streamed, sink: BinaryIO) -> None:
    header = True
    for batch in result.batches:
        sink.write(_flat(_frame(batch)).write_csv(include_header=header).encode())
        header = False
    if header:  # no rows: the header alone
        sink.write(_flat(_frame(result.schema.empty_table())).write_csv().encode())


def _frame(batch: pa.RecordBatch | pa.Table) -> pl.DataFrame:
    frame = pl.from_arrow(batch)
    assert isinstance(frame, pl.DataFrame)
    return frame


def _flat(frame: pl.DataFrame) -> pl.DataFrame:
    """CSV holds no lists or structs: those cells become JSON text."""
    nested = [n for n, t in frame.schema.items() if isinstance(t, pl.List | pl.Struct | pl.Array)]
    return frame.with_columns(
        pl.Series(n, [None if v is None else _text(v) for v in frame[n].to_list()]) for n in nested
    )


def first_rows(result: Streamed, limit: int) -> tuple[list[list[str | None]], int]:
    """The first `limit` rows as text (NULL as None), and how many rows the result has:
    the rest are counted as they stream past, never held."""
    shown: list[list[str | None]] = []
    rows = 0
    for batch in result.batches:
        rows += batch.num_rows
        if len(shown) < limit:
            for row in _frame(batch.slice(0, limit - len(shown))).iter_rows():
                shown.append([None if v is None else _text(v) for v in row])
    return shown, rows


def _text(value: object) -> str:
    if isinstance(value, list | dict):
        return json.dumps(value, default=str, ensure_ascii=False)
    return str(value)
