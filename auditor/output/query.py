"""`auditor query`: SQL against the catalog, read-only and sandboxed.

The sandbox follows DuckDB's own securing guide, and adds one gate of ours:
- the catalog is opened read-only, with extension autoloading and -installing off;
- external access is limited to the dataset's folder and OUTDIR (`allowed_directories`),
  then switched off for everything else (`enable_external_access = false`) and the
  configuration locked, so no statement can undo it;
- only queries run: every statement is parsed by DuckDB first and anything that is not a
  SELECT (DESCRIBE, SHOW, SUMMARIZE and WITH ... SELECT are SELECTs) is refused before it
  runs. Without this, `COPY ... TO` a file inside OUTDIR would pass the directory rule.
A refused or failed statement raises `QueryError` (exit 2). User input is never formatted
into SQL: the user's statement runs as written, and our own lookups pass values as
parameters.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import duckdb
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from auditor.errors import AuditorError
from auditor.input.remote import is_remote
from auditor.output.files import DUCKDB_FILE
from auditor.output.views import INPUT_VIEWS

FORMATS = ("table", "csv", "json", "parquet")
SAFE_CONFIG = {
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "allow_community_extensions": False,
    "allow_unsigned_extensions": False,
}


class QueryError(AuditorError):
    """A statement refused by the sandbox, or one that failed; exit status 2."""


@dataclass
class Catalog:
    path: Path
    con: duckdb.DuckDBPyConnection
    dataset: Path | None
    missing: tuple[str, ...]  # input files the views read, gone or changed in size

    def moved_warning(self) -> str:
        return (
            f"the dataset at {self.dataset} is no longer as audited ({len(self.missing)} "
            f"input files missing or changed): the input views ({', '.join(INPUT_VIEWS)}) "
            "fail or read what is there now; the tables are as audited"
        )

    def moved_message(self) -> str:
        shown = ", ".join(self.missing[:3]) + (" ..." if len(self.missing) > 3 else "")
        return (
            f"the dataset this catalog was built from is no longer as audited at "
            f"{self.dataset} ({len(self.missing)} input files missing or changed: {shown}); "
            "the views "
            f"{', '.join(INPUT_VIEWS)} and those built on them cannot be read, while the "
            "tables (findings, quarantine, row_counts, runs, checks, traceability) still "
            "can. Re-run `auditor audit DATASET --out OUTDIR` to point the catalog at "
            "the dataset's new place."
        )

    def close(self) -> None:
        self.con.close()


def open_catalog(outdir: Path) -> Catalog:
    """The catalog in OUTDIR, opened read-only and sandboxed."""
    path = Path(outdir) / DUCKDB_FILE
    if not path.is_file():
        raise QueryError(
            f"{path}: no catalog here; `auditor audit DATASET --out {outdir}` writes one"
        )
    try:
        con = duckdb.connect(str(path), read_only=True, config=SAFE_CONFIG)
    except duckdb.Error as exc:
        raise QueryError(f"{path}: cannot be opened as a DuckDB catalog ({exc})") from exc
    try:
        return _sandboxed(path, con)
    except BaseException:
        con.close()
        raise


def _sandboxed(path: Path, con: duckdb.DuckDBPyConnection) -> Catalog:
    dataset, inputs = _recorded_inputs(con)
    # A dataset read from another file system (a URL) is neither checked nor readable
    # here: the sandbox admits local folders only.
    inputs = [(p, size) for p, size in inputs if not is_remote(p)]
    # Sizes, not hashes: cheap on every query, and a moved or rewritten file shows.
    missing = tuple(p for p, size in inputs if not Path(p).is_file() or _size(p) != size)
    # The folders the views read (a dataset's file may be a link to another folder),
    # and OUTDIR; with a trailing slash, so /data/night does not admit /data/night2.
    folders = {path.parent.resolve(), *(Path(p).parent for p, _ in inputs)}
    if dataset is not None:
        folders.add(dataset)
    allowed = sorted(str(folder).rstrip("/") + "/" for folder in folders)
    # The order matters: allowed_directories cannot be set once external access is off,
    # and nothing can be set once the configuration is locked.
    con.execute("SET allowed_directories = $dirs", {"dirs": allowed})
    con.execute("SET enable_external_access = false")
    con.execute("SET lock_configuration = true")
    return Catalog(path, con, dataset, missing)


def _size(path: str) -> int | None:
    try:
        return Path(path).stat().st_size
    except OSError:
        return None


def _recorded_inputs(
    con: duckdb.DuckDBPyConnection,
) -> tuple[Path | None, list[tuple[str, int]]]:
    has_runs = con.execute(
        "SELECT count(*) FROM duckdb_tables() WHERE table_name = $name", {"name": "runs"}
    ).fetchone()
    if not has_runs or not has_runs[0]:
        return None, []
    row = con.execute(
        "SELECT dataset, [(i.path, i.bytes) FOR i IN inputs] FROM runs "
        "ORDER BY ended_at DESC LIMIT 1"
    ).fetchone()
    if row is None:
        return None, []
    dataset = None if is_remote(row[0]) else Path(row[0])  # a URL: read from elsewhere
    return dataset, [(str(i[0]), int(i[1])) for i in row[1]]


def statements(catalog: Catalog, sql: str) -> list[duckdb.Statement]:
    """The statements of `sql`, each checked to be a query; anything else is refused."""
    try:
        found = catalog.con.extract_statements(sql)
    except duckdb.Error as exc:
        raise QueryError(str(exc)) from exc
    for statement in found:
        if statement.type != duckdb.StatementType.SELECT:
            word = statement.query.split(maxsplit=1)[0].upper() if statement.query else "?"
            raise QueryError(
                f"refused: {word} statements are not allowed here. The catalog is "
                "read-only and `auditor query` runs queries only (SELECT, WITH, DESCRIBE, "
                "SHOW, SUMMARIZE): no writes, COPY, ATTACH, INSTALL, LOAD or SET."
            )
    return found


def run(catalog: Catalog, statement: duckdb.Statement) -> pa.Table:
    """One checked statement's result."""
    try:
        return catalog.con.sql(statement.query).to_arrow_table()
    except duckdb.PermissionException as exc:
        if catalog.missing:
            raise QueryError(catalog.moved_message()) from exc
        raise QueryError(f"refused by the sandbox: {exc}") from exc
    except duckdb.IOException as exc:
        if catalog.missing:
            raise QueryError(catalog.moved_message()) from exc
        raise QueryError(str(exc)) from exc
    except duckdb.Error as exc:
        raise QueryError(str(exc)) from exc


def query(catalog: Catalog, sql: str) -> list[pa.Table]:
    """Every result of `sql`, one per statement, after all of them passed the gate."""
    return [run(catalog, statement) for statement in statements(catalog, sql)]


# ---- writing results ----------------------------------------------------------------


def encode(result: pa.Table, fmt: str) -> bytes:
    """A result as csv, json (an array of objects) or parquet bytes."""
    frame = pl.from_arrow(result)
    assert isinstance(frame, pl.DataFrame)
    if fmt == "parquet":
        sink = io.BytesIO()
        pq.write_table(result, sink, compression="zstd")
        return sink.getvalue()
    if fmt == "json":
        return frame.write_json().encode() + b"\n"
    if fmt == "csv":
        return _flat(frame).write_csv().encode()
    raise QueryError(f"unknown format {fmt!r}; one of {', '.join(FORMATS)}")


def _flat(frame: pl.DataFrame) -> pl.DataFrame:
    """CSV holds no lists or structs: those cells become JSON text."""
    nested = [n for n, t in frame.schema.items() if isinstance(t, pl.List | pl.Struct | pl.Array)]
    return frame.with_columns(
        pl.Series(n, [None if v is None else _text(v) for v in frame[n].to_list()]) for n in nested
    )


def cells(result: pa.Table, limit: int) -> Iterator[list[str | None]]:
    """The first `limit` rows as text, NULL as None."""
    frame = pl.from_arrow(result.slice(0, limit))
    assert isinstance(frame, pl.DataFrame)
    for row in frame.iter_rows():
        yield [None if v is None else _text(v) for v in row]


def _text(value: object) -> str:
    if isinstance(value, list | dict):
        return json.dumps(value, default=str, ensure_ascii=False)
    return str(value)


# ---- what is there ------------------------------------------------------------------


def objects(catalog: Catalog) -> list[tuple[str, str, str | None]]:
    """(name, kind, description) of every table, view and macro of the catalog."""
    rows = catalog.con.execute(
        """
        SELECT table_name, 'table', comment FROM duckdb_tables() WHERE NOT internal
        UNION ALL
        SELECT view_name, 'view', comment FROM duckdb_views() WHERE NOT internal
        UNION ALL
        SELECT DISTINCT function_name, 'macro', comment FROM duckdb_functions()
        WHERE function_type = 'macro' AND NOT internal AND database_name = current_database()
        ORDER BY CASE #2 WHEN 'table' THEN 0 WHEN 'view' THEN 1 ELSE 2 END, 1
        """
    ).fetchall()
    return [(str(n), str(k), c) for n, k, c in rows]


def columns(catalog: Catalog, name: str) -> list[tuple[str, str]]:
    """(column, type) of a table or view, by its name as a parameter."""
    rows = catalog.con.execute(
        "SELECT column_name, data_type FROM duckdb_columns() "
        "WHERE table_name = $name AND NOT internal ORDER BY column_index",
        {"name": name},
    ).fetchall()
    return [(str(c), str(t)) for c, t in rows]


HELP = """Statements end with ';' and may span lines. Only queries run (SELECT, WITH,
DESCRIBE, SHOW, SUMMARIZE); the catalog is read-only.
  .tables          tables, views and macros, with what each holds
  .schema NAME     the columns of a table or view
  .help            this text
  .quit            leave (or Ctrl-D)
A finding joins its round with `findings JOIN rounds USING (round_id)`; the view
findings_located adds the table, shoe, property, ruleset, dealer and patron."""


def prompt_loop(
    catalog: Catalog,
    read: Callable[[str], str],
    show: Callable[[pa.Table], None],
    say: Callable[[str], None],
    interactive: bool,
) -> None:
    """The interactive prompt: read statements (multi-line, ended by ';') and dot commands
    until end of input; an error is reported and the prompt goes on."""
    buffer: list[str] = []
    while True:
        prompt = ("audit> " if not buffer else "   ...> ") if interactive else ""
        try:
            line = read(prompt)
        except EOFError:
            break
        except KeyboardInterrupt:
            buffer = []
            say("")
            continue
        if not buffer and line.strip().startswith("."):
            if _dot_command(catalog, line.strip(), say):
                break
            continue
        if not line.strip() and not buffer:
            continue
        buffer.append(line)
        text = "\n".join(buffer).strip()
        if not text.endswith(";"):
            continue
        buffer = []
        try:
            for result in query(catalog, text):
                show(result)
        except QueryError as error:
            say(f"error: {error}")
    if buffer and "\n".join(buffer).strip():
        try:
            for result in query(catalog, "\n".join(buffer)):
                show(result)
        except QueryError as error:
            say(f"error: {error}")


def _dot_command(catalog: Catalog, line: str, say: Callable[[str], None]) -> bool:
    """Run a dot command; True when it ends the prompt."""
    word, _, rest = line.rstrip(";").partition(" ")
    if word in (".quit", ".exit"):
        return True
    if word == ".help":
        say(HELP)
    elif word == ".tables":
        for name, kind, comment in objects(catalog):
            say(f"  {kind:<6} {name:<24} {comment or ''}")
    elif word == ".schema" and rest.strip():
        found = columns(catalog, rest.strip())
        if not found:
            say(f"error: no table or view {rest.strip()!r}; .tables lists them")
        for column, dtype in found:
            say(f"  {column:<32} {dtype}")
    else:
        say(f"error: unknown command {line!r}; .help lists them")
    return False
