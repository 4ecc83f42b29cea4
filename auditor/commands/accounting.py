"""The row accounting and the first quarantine entries, as `auditor validate` and
`auditor audit` print them: a row per contract table (rows in, audited, quarantined),
then the entries, each escaped for the terminal; csv and json give the same figures."""

from __future__ import annotations

from rich.table import Table

from auditor.commands.formats import emit, emit_rows, json_text
from auditor.commands.terminal import stdout, text_table, visible

COUNT_COLUMNS = ["table", "rows_in", "audited", "quarantined"]


def counts_table(counts) -> Table:
    """The row accounting as a terminal table."""
    table = text_table(title="Row accounting")
    for name in ("table", "rows in", "audited", "quarantined"):
        table.add_column(name, justify="left" if name == "table" else "right")
    for name, rows_in, audited, quarantined in counts.iter_rows():
        table.add_row(name, f"{rows_in:,}", f"{audited:,}", f"{quarantined:,}")
    return table


def quarantine_digest(quarantine, limit: int = 10) -> None:
    """The first `limit` quarantine entries, one line each, and how many more."""
    if quarantine.height == 0:
        return
    stdout.print(f"[bold yellow]{quarantine.height:,} quarantine entries[/]", highlight=False)
    for row in quarantine.head(limit).iter_rows(named=True):
        # Every field may quote the data (a key, a file name, a rejected value): escaped,
        # so that it can neither drive the terminal nor break the one line per entry.
        shown = {name: visible(str(value)) for name, value in row.items()}
        stdout.print(
            f"  {shown['table']} {shown['row_key']} ({shown['file']} row {shown['row']}): "
            f"{shown['column']}={shown['value']}: {shown['reason']}",
            highlight=False,
            markup=False,
        )
    if quarantine.height > limit:
        stdout.print(f"  ... and {quarantine.height - limit:,} more", highlight=False)


def validation_data(counts, quarantine, fmt: str) -> None:
    """The row accounting as csv, or it and every quarantine entry as json."""
    accounting = [dict(zip(COUNT_COLUMNS, row, strict=True)) for row in counts.iter_rows()]
    if fmt == "csv":
        emit_rows(accounting, COUNT_COLUMNS, "csv")
    else:
        emit(json_text({"counts": accounting, "quarantine": quarantine.to_dicts()}))
