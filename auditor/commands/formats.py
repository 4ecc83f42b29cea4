"""How a command prints what it found: `--format table|csv|json` and the file formats
`--out FILE` implies by its suffix.

csv and json keep every value exact: money (Decimal) is written as its digits, in json
as a string, never as a float; dates and times as ISO 8601 text; a list or a struct
in a csv cell as JSON text (as `auditor query` writes them).
"""

from __future__ import annotations

import csv
import io
import json
import sys
from collections.abc import Iterable, Mapping, Sequence
from datetime import date, datetime, time
from decimal import Decimal
from pathlib import Path
from typing import Any

import click

from auditor.commands.terminal import visible

TEXT_FORMATS = ("table", "csv", "json")
# What a file's name says it holds; `query --out FILE` writes that without --format.
SUFFIX_FORMATS = {".csv": "csv", ".json": "json", ".parquet": "parquet"}
# What a report's name says it holds: `auditor report` writes HTML, or PDF with --pdf.
PAGE_SUFFIXES = {".html": "html", ".htm": "html", ".pdf": "pdf"}


# One help text for `--format` on every command that prints results: what each format
# holds for that command is said in the command's own help.
FORMAT_HELP = (
    "table: for a person (plain columns when piped); csv: a header row, then a row each; "
    'json: one JSON document; money as decimal text ("12.50"), never a float. With csv '
    "or json, stdout holds the data alone and messages go to stderr."
)


def format_option(formats: tuple[str, ...] = TEXT_FORMATS, also: str = "", **attrs: Any):
    """`--format`, default `table`: a table for a person, csv or json for a program; the
    same help everywhere, with `also` for a format only one command writes."""
    attrs.setdefault("default", "table")
    attrs.setdefault("show_default", attrs["default"] is not None)
    return click.option(
        "--format",
        "fmt",
        type=click.Choice(formats),
        help=f"{FORMAT_HELP} {also}".strip(),
        **attrs,
    )


def say(text: str, fmt: str) -> None:
    """A message beside a command's results: on stdout under a table, on stderr when
    stdout carries a csv or json document a program parses."""
    click.echo(text, err=fmt != "table")


def stdout_is_terminal() -> bool:
    return sys.stdout.isatty()


def file_format(
    target: Path, fmt: str | None, formats: Iterable[str], format_flag: str | None = "--format"
) -> str:
    """The format to write `target` in: `fmt` when given, else the one its suffix names.

    A suffix of another known format than an explicit `fmt` is refused rather than
    written under a misleading name; a name that says nothing needs `fmt` (or, for a
    command with no `format_flag` for its file, one of the suffixes)."""
    allowed = list(formats)
    implied = SUFFIX_FORMATS.get(target.suffix.lower())
    if fmt is None:
        if implied is None or implied not in allowed:
            suffixes = ", ".join(f".{fmt}" for fmt in allowed)
            otherwise = f", or add {format_flag}" if format_flag else ""
            raise click.UsageError(
                f"--out {target}: its name says no format; end it in {suffixes}{otherwise}"
            )
        return implied
    if fmt not in allowed:
        raise click.UsageError(f"--out writes {', '.join(allowed)}, not {fmt}")
    if implied is not None and implied != fmt:
        raise click.UsageError(
            f"--format {fmt} and --out {target} disagree: its name says {implied}; "
            "drop --format or rename the file"
        )
    return fmt


def refuse_misnamed_page(target: Path, pdf: bool) -> None:
    """Refuse a report's `--out` whose name says another format than the one written: a
    PDF named .html (or a page named .pdf) opens as garbage in whatever its name picks."""
    writes = "pdf" if pdf else "html"
    if PAGE_SUFFIXES.get(target.suffix.lower()) == writes:
        return
    wanted = " or ".join(s for s, f in PAGE_SUFFIXES.items() if f == writes)
    how = "--pdf writes a PDF" if pdf else "without --pdf the report is an HTML page"
    other = "; or leave out --pdf for the HTML page" if pdf else "; or add --pdf for a PDF"
    raise click.UsageError(f"--out {target}: {how}; end its name in {wanted}{other}")


def plain(value: Any) -> Any:
    """A value as JSON holds it exactly: Decimal as its digits (a string), dates as ISO."""
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


def json_text(data: Any) -> str:
    return json.dumps(plain(data), indent=2, ensure_ascii=False) + "\n"


def csv_text(rows: Iterable[Mapping[str, Any]], columns: list[str]) -> str:
    """Rows as csv with a header; a list or struct cell as JSON text, None as empty."""
    sink = io.StringIO()
    writer = csv.writer(sink, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow([_csv_cell(row.get(c)) for c in columns])
    return sink.getvalue()


def _csv_cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, list | tuple | Mapping):
        return json.dumps(plain(value), ensure_ascii=False)
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(plain(value))


def emit(text: str) -> None:
    """csv or json to stdout: as it is to a file or a pipe; to a terminal with the data's
    control and bidirectional characters escaped, as every value shown there is."""
    click.echo(visible(text, lines=True) if stdout_is_terminal() else text, nl=False)


def emit_rows(rows: Sequence[Mapping[str, Any]], columns: list[str], fmt: str) -> None:
    """Rows as csv or json (an array of objects) on stdout."""
    if fmt == "json":
        emit(json_text([{c: row.get(c) for c in columns} for row in rows]))
    else:
        emit(csv_text(rows, columns))
