"""A DuckDB file the tool did not just write, opened so that nothing in it reaches out.

A set's or an archive's catalog is a file anyone who can write its folder may have
replaced: its `runs` may be a view over `read_text('/etc/shadow')`, its `built_for` or
`coverage` views anything at all. The tool's own lookups in such a file (a run's id and
times, where an archive's catalog was built for, which runs are in force) therefore run
in the same sandbox as `auditor query`: read-only, no extension installed or loaded,
external access limited to the folders named (none by default) and the configuration
locked, so no statement in a view can undo it. DuckDB's temporary folder is switched off
(nothing these lookups read needs to spill), so it admits no `<file>.tmp` folder either.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeAlias

import duckdb

from auditor.output.macros import admitted_folders

# The settings `duckdb.connect(config=...)` takes, by name.
DuckDBConfig: TypeAlias = dict[str, str | bool | int | float | list[str]]

SAFE_CONFIG: DuckDBConfig = {
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "allow_community_extensions": False,
    "allow_unsigned_extensions": False,
}


@contextmanager
def sandboxed(path: Path, readable: Iterable[Path] = ()) -> Iterator[duckdb.DuckDBPyConnection]:
    """The DuckDB file at `path`, read-only, able to read only below the `readable`
    folders (each resolved). Raises `duckdb.Error` when the file cannot be opened."""
    con = duckdb.connect(str(path), read_only=True, config=SAFE_CONFIG)
    try:
        lock_down(con, readable)
        yield con
    finally:
        con.close()


def lock_down(con: duckdb.DuckDBPyConnection, readable: Iterable[Path] = ()) -> None:
    """Limit `con` to reading below `readable`, then lock its configuration."""
    # A trailing slash, so that /data/night does not admit /data/night2; a folder whose
    # name holds glob characters, in the bracketed spelling its files are read by too.
    folders = sorted(
        {name for folder in readable for name in admitted_folders(str(Path(folder).resolve()))}
    )
    # The order matters: allowed_directories cannot be set once external access is off,
    # and nothing can be set once the configuration is locked.
    con.execute("SET temp_directory = ''")
    con.execute("SET allowed_directories = $dirs", {"dirs": folders})
    con.execute("SET enable_external_access = false")
    con.execute("SET lock_configuration = true")
