"""The regulator's SQL console: a statement over the archive's catalog in the sandbox and
limits of `auditor query ARCHIVE` (read-only, queries only, no file outside the archive
and its runs' inputs, the timeout and memory limit), its result a page at a time, or
whole as CSV or Parquet.

The statement is the person's own and runs as written, never inside SQL of ours: a page
is taken from the result as it streams (the rows before it read and dropped, the result
closed after it), so paging needs no LIMIT written around someone else's statement.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from starlette.background import BackgroundTask
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import Route

from auditor.archive.attached_runs import open_archive_catalog
from auditor.desk.auth import Session
from auditor.desk.core import Desk, desk_of
from auditor.desk.queue import parse_page
from auditor.output.results import write_result
from auditor.output.sandboxed_query import Catalog, QueryError, statements, stream

SQL_LIMIT = 100_000  # characters of one statement
PAGE_ROWS = 100
DOWNLOADS = {"csv": "text/csv", "parquet": "application/vnd.apache.parquet"}
EXAMPLE = "SELECT rule, count(*) AS findings FROM findings_current GROUP BY rule ORDER BY 2 DESC"


@dataclass(frozen=True)
class Shown:
    columns: list[str]
    rows: list[list[str | None]]
    page: int
    more: bool


def _cell(value: object) -> str | None:
    if value is None:
        return None
    if isinstance(value, list | dict):
        return json.dumps(value, default=str, ensure_ascii=False)
    return str(value)


def _open(desk: Desk) -> Catalog:
    return open_archive_catalog(
        desk.archive, memory_limit=desk.sql_memory_limit, timeout=desk.sql_timeout
    )


def _one_statement(catalog: Catalog, sql: str) -> Any:
    gated = statements(catalog, sql)
    if len(gated) != 1:
        raise QueryError(f"the console runs one statement at a time ({len(gated)} given)")
    return gated[0]


def run_page(desk: Desk, sql: str, page: int) -> Shown:
    catalog = _open(desk)
    try:
        result = stream(catalog, _one_statement(catalog, sql), as_text=True)
        skip, more = (page - 1) * PAGE_ROWS, False
        rows: list[list[str | None]] = []
        for batch in result.batches:
            if skip >= batch.num_rows:
                skip -= batch.num_rows
                continue
            wanted = batch.slice(skip, PAGE_ROWS + 1 - len(rows))
            skip = 0
            rows += [[_cell(v) for v in row.values()] for row in wanted.to_pylist()]
            if len(rows) > PAGE_ROWS:
                more = True
                break
        return Shown(result.column_names, rows[:PAGE_ROWS], page, more)
    finally:
        catalog.close()


def write_download(desk: Desk, sql: str, fmt: str) -> tuple[Path, Path]:
    """The whole result written as `fmt` into a private folder; (file, folder)."""
    folder = Path(tempfile.mkdtemp(prefix="auditor-desk-"))
    target = folder / f"query.{fmt}"
    try:
        catalog = _open(desk)
        try:
            result = stream(catalog, _one_statement(catalog, sql), as_text=fmt == "csv")
            with target.open("wb") as sink:
                write_result(result, fmt, sink)
        finally:
            catalog.close()
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return target, folder


def _refused(desk: Desk, session: Session, sql: str, error: str) -> Response:
    return desk.html(
        "sql.html", session, sql=sql, shown=None, error=error, http_status=400, active="sql"
    )


def _statement(form: FormData) -> str | None:
    sql = form.get("q")
    if not isinstance(sql, str) or not sql.strip() or len(sql) > SQL_LIMIT:
        return None
    return sql


async def console(request: Request, session: Session) -> Response:
    desk = desk_of(request)
    return desk.html("sql.html", session, sql=EXAMPLE, shown=None, error=None, active="sql")


async def run(request: Request, session: Session) -> Response:
    desk = desk_of(request)
    form: FormData = request.state.form
    sql = _statement(form)
    if sql is None:
        return desk.html(
            "sql.html", session, sql="", shown=None, error="Write one statement.", http_status=400,
            active="sql",
        )  # fmt: skip
    page = parse_page(form.get("page"))
    try:
        shown = await run_in_threadpool(run_page, desk, sql, page)
    except QueryError as error:
        return _refused(desk, session, sql, str(error))
    return desk.html("sql.html", session, sql=sql, shown=shown, error=None, active="sql")


async def download(request: Request, session: Session) -> Response:
    desk = desk_of(request)
    form: FormData = request.state.form
    sql, fmt = _statement(form), form.get("format")
    if sql is None or fmt not in DOWNLOADS:
        return desk.problem(session, 400, "Nothing to download", "A statement and csv or parquet.")
    try:
        target, folder = await run_in_threadpool(write_download, desk, sql, str(fmt))
    except QueryError as error:
        return _refused(desk, session, sql, str(error))
    return FileResponse(
        target,
        media_type=DOWNLOADS[str(fmt)],
        filename=target.name,
        background=BackgroundTask(shutil.rmtree, folder, ignore_errors=True),
    )


def routes(guarded: Callable[..., Any]) -> list[Route]:
    return [
        Route("/sql", guarded(console, need="query"), methods=["GET"]),
        Route("/sql", guarded(run, need="query"), methods=["POST"]),
        Route("/sql/download", guarded(download, need="query"), methods=["POST"]),
    ]
