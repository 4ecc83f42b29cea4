"""Witnesses: each check's proof as one SQL statement over the catalog.

A witness is `sql/CODE.sql`: a header of `--` comments (the first line names the code,
a `-- proves:` line the regulation it proves, as the pack rules the check applies), then
one SELECT over the catalog's input views and game macros that returns exactly the
entities the check flags, in the findings' columns (`COLUMNS`), with `expected`,
`logged` and `impact` as the finding states them. Of the auditor's own outputs it reads
only `quarantine`, to leave out the rows the audit did not audit.

It is written from the regulation and the packs' macros, never translated from the
check's polars expressions: two implementations of one rule, so that where they
disagree one of them is wrong (`tests/integration/test_witness_differential.py`).

This module reads its files with importlib.resources and imports nothing of the
pipeline: `auditor rules CODE --sql` prints a witness without loading polars.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from importlib import resources
from importlib.resources.abc import Traversable

COLUMNS = (
    "rule",
    "table_id",
    "shoe_id",
    "round_id",
    "wager_id",
    "discriminator",
    "expected",
    "logged",
    "impact",
)
# What a finding's identity narrows a witness to (`narrowed`): its entity and discriminator.
IDENTITY = ("table_id", "shoe_id", "round_id", "wager_id", "discriminator")
VIEW = "witness_findings"
_CODE = re.compile(r"[A-Z]{3}[0-9]{3}")
# A statement several witnesses share (the wagers settled again) is written once, in a
# file of its own that a witness names on a line `-- include: NAME.sql`.
INCLUDE = "-- include: "
_SHARED = re.compile(r"[a-z_]+\.sql")


def _folder() -> Traversable:
    return resources.files(__package__).joinpath("sql")


def codes() -> list[str]:
    """The codes that have a witness, sorted."""
    names = (entry.name for entry in _folder().iterdir())
    return sorted(n[:-4] for n in names if n.endswith(".sql") and _CODE.fullmatch(n[:-4]))


def text(code: str) -> str | None:
    """The witness file of `code` (header and statement), with the statement a line
    `-- include: NAME.sql` names written in its place, or None."""
    if not _CODE.fullmatch(code):
        return None
    entry = _folder().joinpath(f"{code}.sql")
    if not entry.is_file():
        return None
    return "".join(_included(line) for line in entry.read_text(encoding="utf-8").splitlines(True))


def _included(line: str) -> str:
    """The line as it is, or the statement of the shared file it names (its header
    comment left out), so that every statement printed or run stands whole."""
    if not line.startswith(INCLUDE):
        return line
    name = line.removeprefix(INCLUDE).strip()
    if not _SHARED.fullmatch(name):
        raise ValueError(f"a witness includes {name!r}: not a shared file's name")
    shared = _folder().joinpath(name).read_text(encoding="utf-8").splitlines(True)
    while shared and shared[0].startswith("--"):
        shared.pop(0)
    return "".join(shared).rstrip("\n") + ("\n" if line.endswith("\n") else "")


def statement(code: str) -> str | None:
    """The witness's SELECT alone: its header and the closing semicolon left out."""
    whole = text(code)
    if whole is None:
        return None
    lines = whole.splitlines()
    while lines and (not lines[0].strip() or lines[0].lstrip().startswith("--")):
        lines.pop(0)
    return "\n".join(lines).strip().rstrip(";").rstrip()


def proves(code: str) -> str | None:
    """What the header says the witness proves (its `-- proves:` line)."""
    whole = text(code) or ""
    for line in whole.splitlines():
        if line.startswith("-- proves:"):
            return line.removeprefix("-- proves:").strip()
    return None


def view_statement(with_codes: Iterable[str] | None = None, deferred: bool = False) -> str:
    """`CREATE VIEW witness_findings`: the union of every witness, in code order;
    `deferred`, bound when first read rather than when created (DuckDB 2.0's
    `WITH (DEFER_BINDING)`, which the 1.x client reads as any other view).

    Witnesses that include the same shared statements are one member of the union: the
    shared WITH clause written once, each witness's own part a subquery inside it. DuckDB
    binds a CTE once however often it is named, where written into each witness it was
    bound again for each (the catalog's CREATE took 0.56 s, most of an audit's catalog);
    the rows are those of each witness's statement, and a test holds them equal."""
    chosen = codes() if with_codes is None else sorted(with_codes)
    create = f"CREATE VIEW {VIEW}{' WITH (DEFER_BINDING)' if deferred else ''} AS\n"
    if not chosen:
        empty = ", ".join(f"CAST(NULL AS VARCHAR) AS {c}" for c in COLUMNS[:-1])
        return f"{create}SELECT {empty}, CAST(NULL AS DECIMAL(18, 2)) AS impact LIMIT 0"
    groups: dict[str, list[str]] = {}
    for code in chosen:
        shared, own = _split(code)
        groups.setdefault(shared, []).append(own)
    selects = []
    for shared, owns in groups.items():
        members = "\nUNION ALL BY NAME\n".join(f"SELECT * FROM (\n{own}\n)" for own in owns)
        selects.append(f"SELECT * FROM (\n{shared}\n{members}\n)" if shared else members)
    return create + "\nUNION ALL BY NAME\n".join(selects)


def _split(code: str) -> tuple[str, str]:
    """A witness's statement as the shared statements it includes (their WITH clause, or
    "" when it includes none) and its own part, a query of its own: the CTEs it adds
    after the shared ones begin a WITH clause of their own."""
    entry = _folder().joinpath(f"{code}.sql")
    lines = entry.read_text(encoding="utf-8").splitlines(True)
    last = max((i for i, line in enumerate(lines) if line.startswith(INCLUDE)), default=-1)
    if last < 0:
        return "", statement(code) or ""
    shared = "".join(_included(line) for line in lines[: last + 1] if line.startswith(INCLUDE))
    own = "".join(lines[last + 1 :]).strip().rstrip(";").rstrip()
    if own.startswith(","):
        own = "WITH " + own[1:].lstrip()
    return shared.rstrip("\n"), own


def narrowed(code: str, finding: Mapping[str, object]) -> str | None:
    """The witness of `code` narrowed to one finding's entity and discriminator: a
    statement to paste into `duckdb audit.duckdb`, every value quoted as SQL."""
    select = statement(code)
    if select is None:
        return None
    conditions = [
        f"{column} IS NOT DISTINCT FROM {_quoted(finding.get(column))}" for column in IDENTITY
    ]
    header = f"-- {code}, narrowed to one finding's entity\n"
    body = "\n".join("  " + line for line in select.splitlines())
    return (
        f"{header}SELECT * FROM (\n{body}\n) AS witness\nWHERE " + "\n  AND ".join(conditions) + ";"
    )


def _quoted(value: object) -> str:
    if value is None:
        return "NULL"
    return "'" + str(value).replace("'", "''") + "'"
