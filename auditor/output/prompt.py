"""`auditor query`'s prompt: statements read line by line and dot commands (`.tables`,
`.schema`), each statement run through the sandbox of `auditor.output.sandboxed_query`."""

from __future__ import annotations

from collections.abc import Callable

from auditor.interrupts import interrupt_handled
from auditor.output.sandboxed_query import Catalog, QueryError, QueryInterrupted, Streamed, results

# ---- what is there ------------------------------------------------------------------


def objects(catalog: Catalog) -> list[tuple[str, str, str | None]]:
    """(name, kind, description) of every table, view and macro of the catalog (an
    archive's `internal` schema, which its views are built on, left out)."""
    rows = catalog.con.execute(
        """
        SELECT table_name, 'table', comment FROM duckdb_tables()
        WHERE NOT internal AND database_name IN (current_database(), 'temp')
          AND schema_name = 'main'
        UNION ALL
        SELECT view_name, 'view', comment FROM duckdb_views()
        WHERE NOT internal AND database_name IN (current_database(), 'temp')
          AND schema_name = 'main'
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
        "WHERE table_name = $name AND NOT internal "
        "AND database_name IN (current_database(), 'temp') ORDER BY column_index",
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
    show: Callable[[Streamed], None],
    say: Callable[[str], None],
    interactive: bool,
) -> int:
    """The interactive prompt: read statements (multi-line, ended by ';') and dot commands
    until end of input; an error is reported and the prompt goes on. Ctrl-C clears the
    line or stops the running statement and the prompt goes on; read from a pipe
    (`interactive` false) it ends the prompt (`QueryInterrupted`, KeyboardInterrupt).
    Returns how many statements and dot commands failed."""
    buffer: list[str] = []
    failed = 0
    while True:
        prompt = ("audit> " if not buffer else "   ...> ") if interactive else ""
        try:
            line = read(prompt)
        except EOFError:
            break
        except KeyboardInterrupt:
            if not interactive:
                raise
            interrupt_handled()
            buffer = []
            say("")
            continue
        if not buffer and line.strip().startswith("."):
            try:
                if _dot_command(catalog, line.strip(), say):
                    break
            except QueryError as error:
                say(f"error: {error}")
                failed += 1
            continue
        if not line.strip() and not buffer:
            continue
        buffer.append(line)
        text = "\n".join(buffer).strip()
        if not text.endswith(";"):
            continue
        buffer = []
        failed += not _run_and_show(catalog, text, show, say, interactive)
    text = "\n".join(buffer).strip()
    if text:
        failed += not _run_and_show(catalog, text, show, say, interactive)
    return failed


def _run_and_show(
    catalog: Catalog,
    text: str,
    show: Callable[[Streamed], None],
    say: Callable[[str], None],
    interactive: bool,
) -> bool:
    """Run and show the statements of `text`; False when one failed. An interrupted one
    did not fail: the person at the prompt stopped it."""
    try:
        for result in results(catalog, text, as_text=True):
            show(result)
    except (QueryInterrupted, KeyboardInterrupt):
        if not interactive:
            raise
        interrupt_handled()
        say("query interrupted (Ctrl-C)")
    except QueryError as error:
        say(f"error: {error}")
        return False
    return True


def _dot_command(catalog: Catalog, line: str, say: Callable[[str], None]) -> bool:
    """Run a dot command; True when it ends the prompt. A wrong one raises QueryError."""
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
            raise QueryError(f"no table or view {rest.strip()!r}; .tables lists them")
        for column, dtype in found:
            say(f"  {column:<32} {dtype}")
    else:
        raise QueryError(f"unknown command {line!r}; .help lists them")
    return False
