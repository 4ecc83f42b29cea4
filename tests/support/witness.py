"""What the witness tests share: a catalog of a dataset the pipeline checked (in memory,
as the audit's catalog holds it: input views, macros, quarantine, findings), and the
differences between a check's findings and its witness's rows."""

from __future__ import annotations

from pathlib import Path

import duckdb

from auditor import witness
from auditor.output.macros import macro_statements
from auditor.output.views import view_statements
from auditor.pipeline import find, run_validation

COLUMNS = ", ".join(witness.COLUMNS)


def memory_catalog(dataset_path: Path) -> duckdb.DuckDBPyConnection:
    """The catalog of `dataset_path` as an audit would write it, in memory: the input
    views over its files, the game's macros, the quarantine and the findings."""
    validated = run_validation(dataset_path)
    findings = find(validated)
    con = duckdb.connect(":memory:")
    for name, frame in (("quarantine", validated.quarantine), ("findings", findings)):
        con.register("_frame", frame.to_arrow())
        con.execute(f"CREATE TABLE {name} AS SELECT * FROM _frame")
        con.unregister("_frame")
    for statement in macro_statements(validated.packs):
        con.execute(statement)
    for statement in view_statements(validated.dataset, lambda s: str(s.path.resolve())):
        # The run's record is no part of what a witness reads.
        if "FROM runs" not in statement and "FROM traceability" not in statement:
            con.execute(statement)
    # Bound by the first comparison that reads it, as the catalog's own is.
    con.execute(witness.view_statement(deferred=True))
    return con


def differences(con: duckdb.DuckDBPyConnection, code: str) -> tuple[list, list]:
    """The findings of `code` its witness does not return, and the rows it returns that
    are no finding: entity, discriminator, expected, logged and impact compared."""
    found = f"FROM findings WHERE rule = '{code}'"
    by_code = _compared(con, found, f"FROM ({witness.statement(code)})")
    # Every row, whatever its rule: a witness's row under another code is an extra too.
    missing = [row for rows, _ in by_code.values() for row in rows]
    extra = [row for _, rows in by_code.values() for row in rows]
    return missing, extra


def differences_of_every_code(
    con: duckdb.DuckDBPyConnection, view: str = witness.VIEW
) -> dict[str, tuple[list, list]]:
    """`differences` of every code at once, through the catalog's `witness_findings`
    view: the rule is one of the columns compared, so the rows missing or extra over all
    codes are each code's own. Only the codes that differ are keys."""
    return _compared(con, "FROM findings", f"FROM {view}")


def comparison(findings: str = "FROM findings", witnessed: str = f"FROM {witness.VIEW}") -> str:
    """The statement comparing them: a row ('missing' or 'extra', then the columns) for
    each row of one side the other lacks; none when they agree. Plain SQL, so that the
    DuckDB command line runs it as it is."""
    # One statement, each side named twice as a CTE and so bound and run once: a witness
    # run twice, once for each side, was most of what comparing it on whole nights took.
    return (
        f"WITH found AS (SELECT {COLUMNS} {findings}), "
        f"witnessed AS (SELECT {COLUMNS} {witnessed}) "
        "SELECT 'missing' AS side, * FROM (FROM found EXCEPT ALL FROM witnessed) "
        "UNION ALL SELECT 'extra', * FROM (FROM witnessed EXCEPT ALL FROM found) ORDER BY ALL"
    )


def _compared(
    con: duckdb.DuckDBPyConnection, findings: str, witnessed: str
) -> dict[str, tuple[list, list]]:
    """The rows of `findings` missing from `witnessed` and the reverse, by code."""
    rows = con.execute(comparison(findings, witnessed)).fetchall()
    by_code: dict[str, tuple[list, list]] = {}
    for side, *row in rows:
        missing, extra = by_code.setdefault(row[0], ([], []))
        (missing if side == "missing" else extra).append(tuple(row))
    return by_code


def described(code: str, where: str, missing: list, extra: list, shown: int = 5) -> str:
    lines = [f"{code} on {where}: {len(missing)} findings unwitnessed, {len(extra)} extra"]
    lines += [f"  finding only: {row}" for row in missing[:shown]]
    lines += [f"  witness only: {row}" for row in extra[:shown]]
    return "\n".join(lines)
