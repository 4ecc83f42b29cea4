"""`auditor diff`: two audits' findings compared by finding id, as a table, csv or json,
and written to a file too with `--out`."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.markup import escape

from auditor.commands.formats import emit_rows, file_format, format_option, json_text
from auditor.commands.shared_options import old_out_spelling, out_option
from auditor.commands.terminal import fail, stdout, text_table
from auditor.errors import AuditorError, ExitStatus

DIFF_FILE_FORMATS = ("parquet", "csv", "json")


@click.command()
@click.argument("before", type=click.Path(path_type=Path))
@click.argument("after", type=click.Path(path_type=Path))
@out_option(
    "Write the differences to FILE too, in the format its name ends in: .parquet, .csv "
    "or .json (any other name is refused).",
    metavar="FILE",
    type=click.Path(path_type=Path, dir_okay=False),
)
@old_out_spelling("--output", metavar="FILE", type=click.Path(path_type=Path, dir_okay=False))
@format_option()
def diff(before: Path, after: Path, out: Path | None, fmt: str) -> None:
    """Compare two audits' findings by finding id: new, gone and changed in AFTER.
    --format table shows the first 200 differences, csv and json every one.

    Exit status 0 when the findings are the same, 1 when they differ, 2 when an output
    folder cannot be read or --out FILE's name ends in none of .parquet, .csv, .json.

    Examples:

    \b
      auditor diff /audits/2026-11-24 /audits/2026-11-24-rerun
      auditor diff /audits/2026-11-24 /audits/2026-11-24-rerun --format csv
      auditor diff /audits/2026-11-24 /audits/2026-11-24-rerun -o changes.parquet
    """
    from auditor.commands.owned import refuse_owned_target
    from auditor.output.diff import diff_runs
    from auditor.output.verify import verified

    # The file's format is its name's: refused before any work, not written misnamed.
    written = None
    if out is not None:
        written = (out, file_format(out, None, DIFF_FILE_FORMATS, format_flag=None))
    try:
        if out is not None:
            refuse_owned_target(out, reads=[before, after])
        verified(before)
        verified(after)
        changes = diff_runs(before, after)
        if written is not None:
            _write_changes(changes, *written)
    except AuditorError as error:
        fail(error)
    if fmt == "table":
        _changes_table(changes)
    else:
        emit_rows(changes.to_dicts(), changes.columns, fmt)
    sys.exit(ExitStatus.FOUND if changes.height else ExitStatus.OK)


def _write_changes(changes, target: Path, fmt: str) -> None:
    """The differences at `target`, as Parquet, csv or json."""
    from auditor.commands.formats import csv_text
    from auditor.output.diff import ChangesNotWritten, write_changes

    if fmt == "parquet":
        write_changes(changes, target)
        return
    rows = changes.to_dicts()
    text = json_text(rows) if fmt == "json" else csv_text(rows, changes.columns)
    try:
        target.write_text(text, encoding="utf-8")
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        if not target.parent.is_dir():
            reason = f"no folder {target.parent}; create it first"
        raise ChangesNotWritten(f"{target}: cannot write the differences ({reason})") from exc


def _changes_table(changes) -> None:
    from auditor.commands.terminal import visible  # ids and messages quote the data
    from auditor.output.diff import CHANGES

    counts = dict(changes.group_by("change").len().iter_rows())
    table = text_table(title=", ".join(f"{counts.get(c, 0):,} {c}" for c in CHANGES))
    for name in ("change", "finding_id", "rule", "round_id", "wager_id", "what or message"):
        table.add_column(name)
    for row in changes.head(200).iter_rows(named=True):
        cells = (
            *(row[c] for c in ("change", "finding_id", "rule")),
            row["round_id"] or row["shoe_id"] or row["table_id"],
            row["wager_id"],
            row["what"] or row["message"],
        )
        table.add_row(*(escape(visible(str(cell or ""))) for cell in cells))
    stdout.print(table)
    if changes.height > 200:
        stdout.print(f"... and {changes.height - 200:,} more", highlight=False)
