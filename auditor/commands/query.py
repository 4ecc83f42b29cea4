"""`auditor query`: SQL against a run's catalog, read-only and sandboxed, as a table, csv,
json or parquet, or at an interactive prompt. The command line (`auditor.cli`) adds it
to its commands; the sandbox itself is `auditor.output.query`."""

from __future__ import annotations

import sys
from contextlib import suppress
from pathlib import Path

import click
from rich.markup import escape
from rich.table import Table

from auditor.commands.terminal import fail, stdout
from auditor.errors import AuditorError

QUERY_FORMATS = ("table", "csv", "json", "parquet")
TABLE_ROWS_SHOWN = 1000


@click.command()
@click.argument("outdir", type=click.Path(path_type=Path))
@click.argument("sql", required=False)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(QUERY_FORMATS),
    default="table",
    show_default=True,
    help="How to print the result.",
)
@click.option(
    "--output",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Write the result (csv, json or parquet) to FILE instead of stdout.",
)
def query(outdir: Path, sql: str | None, fmt: str, output: Path | None) -> None:
    """Run SQL against OUTDIR/audit.duckdb, read-only; with no SQL, an interactive prompt.

    Only queries run; a write, COPY, ATTACH, INSTALL or a file outside the dataset and
    OUTDIR is refused with exit status 2.
    """
    from auditor.output import query as catalog_query

    if output is not None and fmt == "table":
        raise click.UsageError("--output writes csv, json or parquet: add --format")
    try:
        catalog = catalog_query.open_catalog(outdir)
    except AuditorError as error:
        fail(error)
    try:
        if catalog.missing:
            click.echo(f"warning: {catalog.moved_warning()}", err=True)
        if sql is None:
            _query_prompt(catalog, fmt)
            return
        results = catalog_query.query(catalog, sql)
        if fmt == "table":
            for result in results:
                _show_result(result)
            return
        if len(results) != 1:
            raise catalog_query.QueryError(f"--format {fmt} writes one result: give one statement")
        data = catalog_query.encode(results[0], fmt)
        if output is not None:
            output.write_bytes(data)
        elif fmt == "parquet" and sys.stdout.isatty():
            raise catalog_query.QueryError(
                "parquet is binary: use --output FILE or redirect stdout"
            )
        else:
            _write_binary(data)
    except AuditorError as error:
        fail(error)
    finally:
        catalog.close()


def _write_binary(data: bytes) -> None:
    sys.stdout.flush()  # text already printed goes first
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()


def _show_result(result) -> None:
    from auditor.output.query import cells

    table = Table(show_lines=False)
    for name in result.column_names:
        table.add_column(name, overflow="fold")
    for row in cells(result, TABLE_ROWS_SHOWN):
        table.add_row(*("[dim]NULL[/]" if v is None else escape(v) for v in row))
    stdout.print(table)
    more = result.num_rows - TABLE_ROWS_SHOWN
    rows = f"{result.num_rows:,} row{'' if result.num_rows == 1 else 's'}" + (
        f" ({more:,} not shown; --format csv writes all)" if more > 0 else ""
    )
    stdout.print(rows, style="dim", highlight=False)


def _query_prompt(catalog, fmt: str) -> None:
    from auditor.output.query import encode, prompt_loop

    interactive = sys.stdin.isatty()
    history = Path.home() / ".auditor_query_history"
    readline = None
    if interactive:
        with suppress(ImportError):
            import readline  # line editing and history for input()
        if readline is not None:
            with suppress(OSError):
                readline.read_history_file(history)
        click.echo(f"auditor query: {catalog.path} (read-only). .help for help, .quit to leave.")

    def show(result) -> None:
        if fmt == "table":
            _show_result(result)
        else:
            _write_binary(encode(result, fmt))

    try:
        prompt_loop(catalog, input, show, click.echo, interactive)
    finally:
        if readline is not None:
            with suppress(OSError):
                readline.write_history_file(history)
