"""What the rule packs alone decide of a catalog (`auditor.output.catalog`): their drawing
tables, the traceability matrix, the game's macros and the witnesses' union. The same
for every night audited under the same packs, so it is written once a process into a
file of its own, and each run's catalog begins as a copy of it: writing the macros and
the union anew took a tenth of each small night's audit.

The file lies in a folder the process claims while it lives (`leftovers`): one a killed
process left is swept by the next.
"""

from __future__ import annotations

import atexit
import contextlib
import tempfile
from collections import deque
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb
import polars as pl

from auditor.output import traceability
from auditor.output.leftovers import claimed_folder, sweep
from auditor.output.macros import literal_path, macro_statements, sql_literal
from auditor.packs.kept import MOST_KEPT, per_packs
from auditor.packs.loaded import LoadedPacks
from auditor.packs.model import RulePack
from auditor.packs.tables import pack_tables
from auditor.witness import view_statement as witness_view_statement

STORAGE_VERSION = "v1.4.0"
CATALOG = "catalog"
PACKS_PARTS_PREFIX = "auditor-catalog-"
# Each part's claimed folder, oldest first, and no more than `per_packs` keeps sets: it
# keeps the sets met since it last emptied itself, whose parts are the latest written, so
# an older part is no set's and goes. A process auditing under many sets in turn keeps
# a file for the few it still keeps, not for every set it met.
_CLAIMS: deque[contextlib.AbstractContextManager[Path]] = deque()


@contextmanager
def attached(
    path: Path,
    name: str = CATALOG,
    *,
    new: bool = True,
    filesystem: Any = None,
) -> Iterator[duckdb.DuckDBPyConnection]:
    """A connection to no file, with the DuckDB file at `path` attached as `name` and in
    use: what is written goes to that file alone, and it is detached (its writes made
    whole) on leaving without an error; the connection is closed either way. `new`: the
    file is being made, in the storage version every auditor reads (`STORAGE_VERSION`).
    `filesystem`: an fsspec file system the statements read through."""
    con = duckdb.connect(":memory:")
    try:
        if filesystem is not None:
            con.register_filesystem(filesystem)
        version = f" (STORAGE_VERSION '{STORAGE_VERSION}')" if new else ""
        con.execute(f"ATTACH {sql_literal(str(path))} AS {name}{version}")
        con.execute(f"USE {name}")
        yield con
        con.execute("USE memory")
        con.execute(f"DETACH {name}")
    finally:
        con.close()


@atexit.register
def _release_claims() -> None:
    while _CLAIMS:
        _CLAIMS.popleft().__exit__(None, None, None)


@per_packs
def packs_part(packs: LoadedPacks) -> Path:
    """A catalog file holding only what `packs` decide, written on first use."""
    scratch = Path(tempfile.gettempdir())
    sweep(scratch, PACKS_PARTS_PREFIX)
    claim = claimed_folder(scratch, PACKS_PARTS_PREFIX)
    folder = claim.__enter__()
    _CLAIMS.append(claim)
    if len(_CLAIMS) > MOST_KEPT:
        _CLAIMS.popleft().__exit__(None, None, None)
    path = folder / "packs.duckdb"
    with attached(path) as con:
        write_packs_part(con, packs, witnesses=True)
    return path


def write_packs_part(
    con: duckdb.DuckDBPyConnection, packs: Mapping[str, RulePack], witnesses: bool
) -> None:
    """The packs' drawing tables and macros; with `witnesses`, a run's catalog's
    traceability matrix and witnesses' union too."""
    tables = _rule_tables(packs)
    if witnesses:
        tables["traceability"] = traceability.matrix(packs)
    for name, frame in tables.items():
        create_table(con, name, frame)
    for statement in macro_statements(packs):
        con.execute(statement)
    if witnesses:
        # Every check's proof in SQL, beside the findings it proves (`auditor.witness`):
        # bound by its first reader, not here, where binding every witness took 0.15 s
        # of each audit (the tests read it, so a witness that cannot bind fails them).
        # Deferred, it names the input views a run's catalog adds after it.
        con.execute(witness_view_statement(deferred=True))


def create_table(con: duckdb.DuckDBPyConnection, name: str, frame: pl.DataFrame | Path) -> None:
    """Table `name` (one of the catalog's own names, never input) from a frame, or from a
    Parquet file read streaming."""
    if isinstance(frame, Path):
        source = sql_literal(literal_path(str(frame)))
        con.execute(f"CREATE TABLE {name} AS SELECT * FROM read_parquet({source})")
        return
    con.register("_frame", frame.to_arrow())
    try:
        con.execute(f"CREATE TABLE {name} AS SELECT * FROM _frame")
    finally:
        con.unregister("_frame")


def _rule_tables(packs: Mapping[str, RulePack]) -> dict[str, pl.DataFrame]:
    tables = pack_tables(packs)
    return {"banker_draw_rules": tables.draw_cells, "player_draw_rules": tables.player_cells}
