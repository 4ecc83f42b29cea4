"""`auditor query`: SQL against a run's catalog, read-only and sandboxed, as a table, csv,
json or parquet, or at an interactive prompt. The command line (`auditor.cli`) adds it
to its commands; the sandbox itself is `auditor.output.sandboxed_query`."""

from __future__ import annotations

import io
import os
import sys
import tempfile
from contextlib import suppress
from pathlib import Path
from types import ModuleType
from typing import BinaryIO

import click
from rich.console import JustifyMethod
from rich.markup import escape

from auditor.commands.formats import file_format, format_option, stdout_is_terminal
from auditor.commands.shared_options import FiniteFloatRange, old_out_spelling, out_option
from auditor.commands.terminal import fail, stdout, text_table, visible
from auditor.defaults import DEFAULT_MEMORY_LIMIT
from auditor.errors import AuditorError, ExitStatus

QUERY_FORMATS = ("table", "csv", "json", "parquet")
TABLE_ROWS_SHOWN = 1000
DEFAULT_TIMEOUT_SECONDS = 60


@click.command()
@click.argument("outdir", type=click.Path(path_type=Path))
@click.argument("sql", required=False)
@format_option(
    QUERY_FORMATS,
    also="parquet: the result as a Parquet file, to --out FILE or a pipe. [default: table; "
    "with --out, what FILE's name ends in]",
    default=None,
)
@out_option(
    "Write the result to FILE instead of stdout: csv, json or parquet, as its name ends "
    "(.csv, .json, .parquet) or --format says.",
    metavar="FILE",
    type=click.Path(path_type=Path, dir_okay=False),
)
@old_out_spelling("--output", metavar="FILE", type=click.Path(path_type=Path, dir_okay=False))
@click.option(
    "--timeout",
    type=FiniteFloatRange(min=0),
    default=DEFAULT_TIMEOUT_SECONDS,
    show_default=True,
    metavar="SECONDS",
    help="Stop a statement that runs longer than this (0: no limit).",
)
@click.option(
    "--memory-limit",
    default=DEFAULT_MEMORY_LIMIT,
    show_default=True,
    metavar="SIZE",
    help="Stop a statement that needs more memory than this (e.g. 500MB, 4GB).",
)
def query(
    outdir: Path,
    sql: str | None,
    fmt: str | None,
    out: Path | None,
    timeout: float,
    memory_limit: str,
) -> None:
    """Run SQL against OUTDIR/audit.duckdb, read-only; with no SQL, an interactive prompt.

    Only queries run; a write, COPY, ATTACH, INSTALL or a file outside the dataset and
    OUTDIR is refused with exit status 2, as is a statement past --timeout or
    --memory-limit, or any failed statement at a prompt. Ctrl-C stops the running
    statement: the prompt goes on, a command exits 130.

    --out FILE takes its format from FILE's name (.csv, .json, .parquet); a --format
    that names another is refused, as is a name that says none without --format.
    Parquet is written to a file or a pipe, never to a terminal (exit status 2).

    Examples:

    \b
      auditor query /audits/2026-11-24 "SELECT rule, count(*) FROM findings GROUP BY rule"
      auditor query /audits/2026-11-24 "SELECT * FROM findings" -o findings.csv
      auditor query /audits/archive "SELECT * FROM findings_current" --format json
      auditor query /audits/2026-11-24
    """
    if out is not None:
        fmt = file_format(out, fmt, QUERY_FORMATS[1:])
    fmt = fmt or "table"
    if fmt == "parquet" and out is None and stdout_is_terminal():
        from auditor.output.sandboxed_query import QueryError

        fail(QueryError("--format parquet is binary: give --out FILE or redirect stdout"))
    try:
        _run_query(outdir, sql, fmt, out, timeout or None, memory_limit)
    except KeyboardInterrupt:
        # Ctrl-C outside a statement (opening the catalog, printing): the same exit.
        click.echo("interrupted", err=True)
        sys.exit(ExitStatus.INTERRUPTED)


def _run_query(
    outdir: Path,
    sql: str | None,
    fmt: str,
    output: Path | None,
    timeout: float | None,
    memory_limit: str,
) -> None:
    from auditor.commands.owned import refuse_owned_target
    from auditor.output import sandboxed_query as catalog_query

    try:
        if output is not None:
            _check_folder_of(output)  # before a long query, not after it
            refuse_owned_target(output, reads=[outdir])
        catalog = _open(outdir, memory_limit, timeout)
    except AuditorError as error:
        fail(error)
    try:
        if catalog.missing:
            click.echo(f"warning: {visible(catalog.moved_warning(), lines=True)}", err=True)
        if sql is None:
            if _query_prompt(catalog, fmt):
                sys.exit(ExitStatus.UNUSABLE)
            return
        results = catalog_query.results(catalog, sql, as_text=fmt != "parquet")
        if fmt == "table":
            for result in results:
                _show_result(result)
            return
        if len(catalog_query.statements(catalog, sql)) != 1:
            raise catalog_query.QueryError(f"--format {fmt} writes one result: give one statement")
        result = next(results)
        if output is not None:
            _write_file(output, result, fmt)
        else:
            _write_data(result, fmt)
    except AuditorError as error:
        fail(error)
    finally:
        catalog.close()


def _check_folder_of(target: Path) -> None:
    from auditor.output.sandboxed_query import QueryError

    if not target.parent.is_dir():
        raise QueryError(f"--out {target}: there is no folder {target.parent}")


def _write_file(target: Path, result, fmt: str) -> None:
    """The result into a file beside `target`, which replaces it once whole: a statement
    stopped midway (--memory-limit, Ctrl-C) leaves `target` as it was."""
    from auditor.output.results import write_result
    from auditor.output.sandboxed_query import QueryError

    try:
        handle, staged = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    except OSError as exc:
        raise QueryError(f"--out {target}: cannot be written ({exc.strerror or exc})") from exc
    try:
        with os.fdopen(handle, "wb") as sink:
            write_result(result, fmt, sink)
        os.chmod(staged, 0o666 & ~_umask())
        os.replace(staged, target)
    except OSError as exc:
        raise QueryError(f"--out {target}: cannot be written ({exc.strerror or exc})") from exc
    finally:
        with suppress(FileNotFoundError):
            os.unlink(staged)


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _write_data(result, fmt: str) -> None:
    """A result as it is to a file or a pipe (machine formats); to a terminal, csv or json
    with the data's control and bidirectional characters escaped, and no parquet. Either
    way a batch at a time."""
    from auditor.output.results import write_result
    from auditor.output.sandboxed_query import QueryError

    if not stdout_is_terminal():
        sys.stdout.flush()  # text already printed goes first
        write_result(result, fmt, sys.stdout.buffer)
        sys.stdout.buffer.flush()
    elif fmt == "parquet":
        raise QueryError("parquet is binary: use --out FILE or redirect stdout")
    else:
        write_result(result, fmt, _EscapedTerminal())


class _EscapedTerminal(io.RawIOBase, BinaryIO):
    """What a result writes, shown at a terminal with the data's control and
    bidirectional characters escaped; each write is whole rows, whole characters."""

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        click.echo(visible(bytes(data).decode("utf-8", errors="replace"), lines=True), nl=False)
        return len(data)


def _show_result(result) -> None:
    import pyarrow as pa

    from auditor.output.results import first_rows

    table = text_table(show_lines=False)
    for field in result.schema:
        numeric = pa.types.is_integer(field.type) or pa.types.is_floating(field.type)
        numeric = numeric or pa.types.is_decimal(field.type)
        justify: JustifyMethod = "right" if numeric else "left"
        table.add_column(escape(visible(field.name)), overflow="fold", justify=justify)
    shown, count = first_rows(result, TABLE_ROWS_SHOWN)
    for row in shown:
        table.add_row(*("[dim]NULL[/]" if v is None else escape(visible(v)) for v in row))
    stdout.print(table)
    more = count - TABLE_ROWS_SHOWN
    rows = f"{count:,} row{'' if count == 1 else 's'}" + (
        f" ({more:,} not shown; --format csv writes all)" if more > 0 else ""
    )
    stdout.print(rows, style="dim", highlight=False)


def _query_prompt(catalog, fmt: str) -> int:
    """Run the prompt; how many statements failed."""
    from auditor.output.prompt import prompt_loop

    interactive = sys.stdin.isatty()
    history = Path.home() / ".auditor_query_history"
    readline: ModuleType | None = None
    if interactive:
        with suppress(ImportError):
            import readline  # line editing and history for input()
        if readline is not None:
            with suppress(OSError):
                readline.read_history_file(history)
        click.echo(
            f"auditor query: {visible(str(catalog.path))} (read-only). "
            ".help for help, .quit to leave."
        )

    def show(result) -> None:
        if fmt == "table":
            _show_result(result)
        else:
            _write_data(result, fmt)

    def say(text: str) -> None:
        click.echo(visible(text, lines=True))  # errors and .tables quote the catalog

    try:
        return prompt_loop(catalog, input, show, say, interactive)
    finally:
        if readline is not None:
            with suppress(OSError):
                readline.write_history_file(history)


def _open(folder: Path, memory_limit: str, timeout: float | None):
    """A run's catalog, or an archive's (`auditor.archive`), in the same sandbox."""
    from auditor.archive.integrity import is_archive

    if is_archive(folder):
        from auditor.archive.attached_runs import open_archive_catalog

        return open_archive_catalog(folder, memory_limit=memory_limit, timeout=timeout)
    from auditor.output.sandboxed_query import open_catalog

    return open_catalog(folder, memory_limit=memory_limit, timeout=timeout)
