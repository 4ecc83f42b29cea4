"""The catalog's views: over the dataset's own Parquet files (`INPUT_VIEWS`, one per
contract table, each file named by the caller), and the views that join them.

Building them costs file footers, not rows. A contract column a file lacks reads as NULL;
naive timestamps read as UTC, as the auditor reads them; hive partitions are kept, as the
loader found them inside the table's folder (`SourceFile.partition`): DuckDB's own hive
reading would take any `KEY=VALUE` folder of a file's whole path, the dataset's parent
folders too, and a file's symlink target has none of its link's folders.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import date
from urllib.parse import unquote

import duckdb
import polars as pl

from auditor.contract import MONEY, TABLES, TIMESTAMP
from auditor.input.load import FILE_COLUMN, ROW_COLUMN, Dataset, SourceFile
from auditor.input.scan import table_runs
from auditor.output.macros import literal_path, sql_literal

INPUT_VIEWS = tuple(TABLES)
GATHERED_PROVENANCE = f"{FILE_COLUMN}, {ROW_COLUMN}"


def view_statements(
    dataset: Dataset, where: Callable[[SourceFile], str], gathered: bool = False
) -> list[str]:
    """The input views, naming each file `where(file)`, then the views that join them.

    `gathered`: a run of many small files the audit copied into one (`input.gather`) is
    read from that copy instead: DuckDB opens every file of a view each time a query
    reads it (1.4 s for 10,000 files), and the run's own reads of its catalog (where
    each finding happened, the report) would pay it a dozen times. The copy lives as
    long as the run: the views are pointed at the files themselves before the catalog
    is switched in (`catalog.point_views_at_files`)."""
    files = dataset.files

    def relation(table: str) -> str | None:
        return _gathered_relation(dataset, table, where) if gathered else None

    statements = [
        _input_view(table, files.get(table, ()), where, relation(table)) for table in INPUT_VIEWS
    ]
    return statements + JOIN_VIEWS


def _gathered_relation(
    dataset: Dataset, table: str, where: Callable[[SourceFile], str]
) -> str | None:
    """The table's files as one relation, its gathered runs read from their copies; None
    where none of its runs was gathered (or its files are hive-partitioned, whose keys
    the copies do not carry as the views add them)."""
    sources = dataset.files.get(table, ())
    if not dataset.gathered or not sources or any(s.partition for s in sources):
        return None
    runs = table_runs(dataset, table)
    if not any(run.gathered for run in runs):
        return None
    selects = []
    for run in runs:
        if run.gathered is not None:
            # The copy adds each row's provenance, which the files themselves do not hold.
            gathered = sql_literal([literal_path(str(run.gathered))])
            copy = f"read_parquet({gathered}, hive_partitioning = false)"
            selects.append(f"SELECT * EXCLUDE ({GATHERED_PROVENANCE}) FROM {copy}")
        else:
            paths = [where(s) for s in run.files]
            selects.append(f"SELECT * FROM {_read_parquet(paths, _one_schema(run.files))}")
    return "(" + " UNION ALL BY NAME ".join(selects) + ")"


def unreadable_view_statements(location: str, reason: str) -> list[str]:
    """Input views with their tables' columns that fail, when queried, with a message
    naming `location` and why DuckDB could not read it; then the views that join them."""
    statements = []
    for table in INPUT_VIEWS:
        message = sql_literal(
            f"{table}: the audited files are at {location}, which DuckDB could not read "
            f"when the catalog was written ({reason}); read them there"
        )
        statements.append(
            f"CREATE VIEW {table} AS SELECT {_typed_nulls(table)} WHERE error({message})"
        )
    return statements + JOIN_VIEWS


def _typed_nulls(table: str) -> str:
    """A select list of `table`'s contract columns, each NULL of its type."""
    return ", ".join(f"CAST(NULL AS {_sql_type(t)}) AS {c}" for c, (t, _) in TABLES[table].items())


def _input_view(
    table: str,
    sources: Sequence[SourceFile],
    where: Callable[[SourceFile], str],
    relation: str | None = None,
) -> str:
    columns = TABLES[table]
    if not sources:
        # An optional table the dataset does not hold: its columns, no rows, so that a
        # query naming it still runs.
        return f"CREATE VIEW {table} AS SELECT {_typed_nulls(table)} LIMIT 0"
    # union_by_name fills a column some files lack with NULL; one that no file has is
    # added here, as the auditor reads it (a missing nullable column is all null).
    present = set().union(*(s.arrow_schema.names for s in sources))
    missing = [c for c in columns if c not in present]
    naive = [
        c
        for c, (dtype, _) in columns.items()
        if dtype == TIMESTAMP
        and c in present
        and all(
            getattr(s.arrow_schema.field(c).type, "tz", None) is None
            for s in sources
            if c in s.arrow_schema.names
        )
    ]
    utc = sql_literal("UTC")
    replace = ", ".join(f"timezone({utc}, {c}) AS {c}" for c in naive)
    replace = f" REPLACE ({replace})" if naive else ""
    extra = "".join(f", CAST(NULL AS {_sql_type(columns[c][0])}) AS {c}" for c in missing)
    relation = relation or _files(sources, where)
    return f"CREATE VIEW {table} AS SELECT *{replace}{extra} FROM {relation}"


def _read_parquet(paths: list[str], one_schema: bool = False) -> str:
    # union_by_name reads every file's footer whenever a query binds the view (a second
    # for ten thousand files); files that share one schema need none of it.
    by_name = "" if one_schema else ", union_by_name = true"
    literal = [literal_path(path) for path in paths]
    return f"read_parquet({sql_literal(literal)}, hive_partitioning = false{by_name})"


def _one_schema(sources: Sequence[SourceFile]) -> bool:
    """Whether the files share one schema, their schema-level metadata aside."""
    first = sources[0].arrow_schema
    plain = first.remove_metadata()
    return all(
        s.arrow_schema is first or s.arrow_schema.remove_metadata().equals(plain, True)
        for s in sources[1:]
    )


def _files(sources: Sequence[SourceFile], where: Callable[[SourceFile], str]) -> str:
    """The files as one relation; hive-partitioned (gaming_date=...), one `read_parquet`
    per partition with its keys as constant columns (a query filtering on a key reads only
    its partitions' files)."""
    if not any(s.partition for s in sources):
        return _read_parquet([where(s) for s in sources], _one_schema(sources))
    types = _partition_types(sources)
    branches: dict[tuple, list[SourceFile]] = {}
    for source in sources:
        # A key the file also holds as a column is read from the file, like the audit.
        held = {name.lower() for name in source.arrow_schema.names}
        keys = tuple((k, v) for k, v in source.partition if k.lower() not in held)
        branches.setdefault(keys, []).append(source)
    selects = [
        f"SELECT *{''.join(_partition_column(k, v, types[k]) for k, v in keys)} "
        f"FROM {_read_parquet([where(s) for s in files], _one_schema(files))}"
        for keys, files in branches.items()
    ]
    return "(" + " UNION ALL BY NAME ".join(selects) + ")"


# Spark's folder for a null partition value; other values are percent-encoded, as Spark,
# Hive and DuckDB write and read them.
NULL_PARTITION = "__HIVE_DEFAULT_PARTITION__"
DATE_TEXT = re.compile(r"\d{4}-\d{2}-\d{2}")
INTEGER_TEXT = re.compile(r"-?[1-9]\d{0,17}|0")


def _partition_value(raw: str) -> str | None:
    return None if raw == NULL_PARTITION else unquote(raw)


def _partition_types(sources: Sequence[SourceFile]) -> dict[str, str]:
    """Each key's SQL type, as DuckDB would choose it: DATE when every value is a date,
    BIGINT when every one is an integer (written as DuckDB writes it back), else VARCHAR."""
    values: dict[str, set[str]] = {}
    for source in sources:
        for key, raw in source.partition:
            value = _partition_value(raw)
            values.setdefault(key, set()).update([] if value is None else [value])
    return {key: _sql_type_of(texts) for key, texts in values.items()}


def _sql_type_of(texts: set[str]) -> str:
    if texts and all(DATE_TEXT.fullmatch(t) and _is_date(t) for t in texts):
        return "DATE"
    if texts and all(INTEGER_TEXT.fullmatch(t) for t in texts):
        return "BIGINT"
    return "VARCHAR"


def _is_date(text: str) -> bool:
    try:
        date.fromisoformat(text)
    except ValueError:
        return False
    return True


def _partition_column(key: str, raw: str, sql_type: str) -> str:
    name = str(duckdb.ColumnExpression(key))
    return f", CAST({sql_literal(_partition_value(raw))} AS {sql_type}) AS {name}"


def _sql_type(dtype: pl.DataType) -> str:
    if dtype == MONEY:
        return "DECIMAL(18, 2)"
    if dtype == TIMESTAMP:
        return "TIMESTAMPTZ"
    if isinstance(dtype, pl.List):
        return "VARCHAR[]"
    names = {
        pl.String: "VARCHAR",
        pl.Boolean: "BOOLEAN",
        pl.Int8: "TINYINT",
        pl.Int16: "SMALLINT",
        pl.Int32: "INTEGER",
        pl.Int64: "BIGINT",
    }
    return names[type(dtype)]


JOIN_VIEWS = [
    # The Rules Submission row in force when each shoe opened (CONTRACT: a tables row
    # applies to shoes opened at or after effective_from, until the next row).
    """CREATE VIEW shoe_rules AS
SELECT s.shoe_id, s.opened_at, t.*
FROM shoes s ASOF LEFT JOIN tables t
  ON s.table_id = t.table_id AND s.opened_at >= t.effective_from""",
    # A finding names only its entity (CONTRACT); this view puts back where it happened.
    """CREATE VIEW findings_located AS
WITH latest AS (
  SELECT table_id, arg_max(property_id, effective_from) AS property_id,
         arg_max(ruleset, effective_from) AS ruleset
  FROM tables GROUP BY table_id
)
SELECT f.* REPLACE (
         coalesce(f.table_id, o.table_id) AS table_id,
         coalesce(f.shoe_id, r.shoe_id) AS shoe_id),
       coalesce(o.property_id, l.property_id) AS property_id,
       coalesce(o.ruleset, l.ruleset) AS ruleset,
       r.dealer_id, r.dealt_at, w.seat, w.patron_id
FROM findings f
LEFT JOIN rounds r ON r.round_id = f.round_id
LEFT JOIN shoe_rules o ON o.shoe_id = coalesce(f.shoe_id, r.shoe_id)
LEFT JOIN latest l ON l.table_id = f.table_id
LEFT JOIN wagers w ON w.wager_id = f.wager_id""",
    """CREATE VIEW input_files AS
SELECT run_id, unnest(inputs, recursive := true) FROM runs""",
    """CREATE VIEW rule_packs AS
SELECT run_id, unnest(rule_packs, recursive := true) FROM runs""",
    """CREATE VIEW traceability_checks AS
SELECT ruleset, section, citation, verdict, unnest(codes) AS code FROM traceability""",
]
