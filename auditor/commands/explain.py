"""`auditor explain`: one finding beside its proof. The check's witness
(`auditor.witness`), narrowed to the finding's entity, is run in the query sandbox
(`auditor.output.sandboxed_query`) on the set's catalog, and its row is shown beside the finding,
column by column; `--sql` prints the statement alone, to paste into `duckdb audit.duckdb`."""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

import click

from auditor.commands.formats import format_option
from auditor.commands.terminal import fail, stdout, text_table, visible
from auditor.errors import AuditorError, ExitStatus

SHOWN = ("rule", "table_id", "shoe_id", "round_id", "wager_id", "discriminator")
COMPARED = ("expected", "logged", "impact")


@click.command()
@click.argument("outdir", type=click.Path(path_type=Path))
@click.argument("finding_id")
@click.option(
    "--sql",
    "sql_only",
    is_flag=True,
    help="Print only the witness narrowed to the finding, to run in `duckdb audit.duckdb`.",
)
@format_option(
    also="csv: a row per column (column, finding, witness); json: the statement, the "
    "finding's and the witness's values and whether they agree."
)
def explain(outdir: Path, finding_id: str, sql_only: bool, fmt: str) -> None:
    """Prove one finding of OUTDIR: its check's witness, the SQL statement that finds
    what the check finds, narrowed to the finding's entity, is printed, run read-only in
    the sandbox of `auditor query`, and its row shown beside the finding (expected,
    logged, impact). With --sql, only the statement.

    Exit status: 0 the witness returns the finding as it is; 1 it returns no such row,
    or another one; 2 an unknown FINDING_ID, a changed or unreadable OUTDIR, or a check
    without a witness.

    Examples:

    \b
      auditor explain out 3f2a9c0d41b7e6a85c12
      auditor explain out 3f2a9c0d41b7e6a85c12 --sql
    """
    from auditor import witness
    from auditor.output.sandboxed_query import open_catalog, query

    try:
        catalog = open_catalog(outdir, timeout=60)
    except AuditorError as error:
        fail(error)
    try:
        result = catalog.con.execute(
            "SELECT * FROM findings WHERE finding_id = $id", {"id": finding_id}
        )
        names = [d[0] for d in result.description]
        rows = result.fetchall()
        if not rows:
            click.echo(f"error: no finding {visible(finding_id)!r} in {outdir}", err=True)
            sys.exit(ExitStatus.UNUSABLE)
        finding = dict(zip(names, rows[0], strict=True))
        statement = witness.narrowed(finding["rule"], finding)
        if statement is None:
            click.echo(f"error: {finding['rule']} has no witness yet", err=True)
            sys.exit(ExitStatus.UNUSABLE)
        if sql_only:
            click.echo(statement)
            return
        try:
            tables = query(catalog, statement)
        except AuditorError as error:
            fail(error)
    finally:
        catalog.close()
    found = tables[0].to_pylist()
    agrees = _agrees(finding, found)
    if fmt == "table":
        click.echo(statement + "\n")
        _show(finding, found)
    else:
        _write(fmt, statement, finding, found[0] if len(found) == 1 else {}, agrees)
    sys.exit(ExitStatus.OK if agrees else ExitStatus.FOUND)


def _write(fmt: str, statement: str, finding: dict, proof: dict, agrees: bool) -> None:
    """The comparison for a program: every value as the text the table shows."""
    columns = (*SHOWN, *COMPARED)
    if fmt == "json":
        document = {
            "statement": statement,
            "finding": {c: finding.get(c) and _cell(finding.get(c)) for c in columns},
            "witness": {c: proof.get(c) and _cell(proof.get(c)) for c in columns}
            if proof
            else None,
            "agrees": agrees,
        }
        click.echo(json.dumps(document, indent=2))
        return
    writer = csv.writer(sys.stdout, lineterminator="\n")
    writer.writerow(("column", "finding", "witness"))
    for column in columns:
        writer.writerow((column, _cell(finding.get(column)), _cell(proof.get(column))))


def _agrees(finding: dict, found: list[dict]) -> bool:
    """The witness returned one row, the finding's to the last character."""
    proof = found[0] if len(found) == 1 else {}
    return bool(proof) and all(
        _cell(finding.get(c)) == _cell(proof.get(c)) for c in (*SHOWN, *COMPARED)
    )


def _show(finding: dict, found: list[dict]) -> bool:
    """The finding and the witness's row side by side; whether they agree."""
    proof = found[0] if len(found) == 1 else {}
    agrees = _agrees(finding, found)
    table = text_table(title=f"finding {finding['finding_id']}")
    for name in ("column", "finding", "witness"):
        table.add_column(name)
    for column in (*SHOWN, *COMPARED):
        table.add_row(column, _cell(finding.get(column)), _cell(proof.get(column)))
    stdout.print(table)
    if agrees:
        click.echo("The witness returns this finding: the SQL proves it.")
    elif not found:
        click.echo("The witness returns no row for this entity: it does not prove the finding.")
    else:
        rows = "1 row that differs" if len(found) == 1 else f"{len(found):,} rows that differ"
        click.echo(f"The witness returns {rows} from the finding.")
    return agrees


def _cell(value: object) -> str:
    return "" if value is None else visible(str(value))
