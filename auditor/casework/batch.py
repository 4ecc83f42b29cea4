"""Many cases, one dataset: every case's rows under ids of its own, and the audit's
findings and quarantine split back to the cases.

Each case's ids (`*_id`: tables, shoes, rounds, wagers, collections, patrons, dealers,
the property) take a prefix of its own, so that no id of one case is another's: the
validation's cross-row checks (unique ids, each child's parent, the options row in force
for a table's shoe) then meet only rows of one case. The later stages' checks look at
one table's rows only (`auditor.input.partition`: a night is audited in groups of whole
tables): each groups, windows, joins and reads the row before by a table's, shoe's or
round's id, or joins a pack's own rows by ruleset, and never by a value two cases could
share (a seat, a patron, a time), so a case among others yields what it yields alone
(`tests/integration/test_rule_cases.py` holds a few cases of checks that read across rows to it).
A finding that names no case's table is not split at all (`runner.py`). The prefix is
taken out of every word of a case's findings and quarantine again, so that a message
naming a table, shoe or round reads as it would in the case's own dataset.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from auditor.casework.build import Rows
from auditor.contract import TABLES

CASE_COLUMN = "_case"


# The ids a finding may name, its own entity's first.
FINDING_IDS = ("wager_id", "round_id", "shoe_id", "table_id")
PREFIX_PATTERN = r"^k(\d{5}):"


def case_prefix(index: int) -> str:
    """The prefix of case `index`'s ids: fixed width, so that one case's ids sort
    together (a partition is a run of consecutive table ids)."""
    return f"k{index:05d}:"


def prefixed(rows: Rows, prefix: str) -> Rows:
    """`rows` with every id given `prefix`."""
    return {
        table: [
            {
                column: f"{prefix}{value}"
                if column.endswith("_id") and value is not None
                else value
                for column, value in row.items()
            }
            for row in table_rows
        ]
        for table, table_rows in rows.items()
    }


@dataclass(frozen=True)
class Batch:
    """The dataset of several cases: where each case's rows lie, by contract table."""

    root: Path
    starts: dict[str, list[int]]  # contract table -> first row of each case, by index

    def case_of_row(self, table: str, row: int) -> int:
        return bisect.bisect_right(self.starts[table], row) - 1


def write_batch(cases_rows: Sequence[Rows], root: Path) -> Batch:
    """One Parquet file per contract table under `root`, each case's rows in turn."""
    root.mkdir(parents=True, exist_ok=True)
    names = [name for name in TABLES if any(name in rows for rows in cases_rows)]
    starts: dict[str, list[int]] = {name: [] for name in names}
    written: dict[str, list[dict]] = {name: [] for name in names}
    for index, rows in enumerate(cases_rows):
        own = prefixed(rows, case_prefix(index))
        for name in names:
            starts[name].append(len(written[name]))
            written[name] += own.get(name, [])
    for name, table_rows in written.items():
        contract_frame(name, table_rows).write_parquet(root / f"{name}.parquet")
    return Batch(root, starts)


def contract_frame(table: str, rows: list[dict]) -> pl.DataFrame:
    """Rows as a frame in the contract's exact types (a key a row leaves out is null)."""
    schema = {column: dtype for column, (dtype, _) in TABLES[table].items()}
    return pl.DataFrame([{c: r.get(c) for c in schema} for r in rows], schema=schema)


def split_findings(findings: pl.DataFrame, count: int) -> list[pl.DataFrame] | None:
    """Each case's findings in the audit's order, its ids and words without its prefix;
    None where a finding names no case's id (it could be any case's). A finding names
    only its most specific entity (a round, not its table), so its case is that id's."""
    named = pl.coalesce(FINDING_IDS).str.extract(PREFIX_PATTERN).cast(pl.Int64)
    cases = findings.select(named.alias(CASE_COLUMN))[CASE_COLUMN]
    if cases.null_count() or not cases.is_between(0, count - 1).all():
        return None
    tagged = findings.with_columns(cases)
    return [
        unprefixed(tagged.filter(pl.col(CASE_COLUMN) == i).drop(CASE_COLUMN), case_prefix(i))
        for i in range(count)
    ]


def split_quarantine(batch: Batch, quarantine: pl.DataFrame, count: int) -> list[pl.DataFrame]:
    """Each case's quarantine rows (by the file row each came from), without its prefix."""
    owners = [batch.case_of_row(t, r) for t, r in quarantine.select("table", "row").iter_rows()]
    tagged = quarantine.with_columns(pl.Series(CASE_COLUMN, owners, pl.Int64))
    return [
        unprefixed(tagged.filter(pl.col(CASE_COLUMN) == i).drop(CASE_COLUMN), case_prefix(i))
        for i in range(count)
    ]


def unprefixed(frame: pl.DataFrame, prefix: str) -> pl.DataFrame:
    """Every text of `frame` with `prefix` taken out, wherever it stands in the text."""
    texts = [name for name, dtype in frame.schema.items() if dtype == pl.String]
    return frame.with_columns(pl.col(texts).str.replace_all(prefix, "", literal=True))
