"""What the reports read, all of it from the catalog (`output.sandboxed_query.open_catalog`):
the run's record, the findings located, and the hand histories the evidence shows, read in
place through the catalog's views. So a report can be built for any past run's OUTDIR, and
the nightly report reads what an investigator would.

Every statement here is our own; ids from the command line or the data are passed as
parameters, never formatted into SQL.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import polars as pl

from auditor.archive.ledger import ledger_head
from auditor.findings.table import OUTPUT_SCHEMA
from auditor.output.files import DUCKDB_FILE
from auditor.output.macros import sql_literal
from auditor.output.sandbox import sandboxed
from auditor.output.sandboxed_query import Catalog, QueryError, open_catalog

SEVERITIES = ("high", "medium", "low")

# The order findings are shown in when the page cannot show them all: what a manager
# looks at first (severity, then the money), then the findings' own stable order.
PRIORITY = ("_severity_rank", "_abs_impact", "_order")

ROUND_COLUMNS = (
    "round_id", "shoe_id", "table_id", "round_no", "dealt_at", "no_more_bets_at", "kind",
    "player_cards", "banker_cards", "player_total", "banker_total", "outcome", "ez_event",
    "cover_card_drawn", "discarded_after", "dealer_id", "curator_seat", "banker_seat",
    "banker_bid",
)  # fmt: skip
WAGER_COLUMNS = (
    "wager_id", "round_id", "seat", "patron_id", "bet", "call", "amount", "rollover",
    "placed_at", "result", "payout", "commission", "award",
)  # fmt: skip
FINDING_COLUMNS = tuple(OUTPUT_SCHEMA)
# The run's record as the pages show it.
RUN_COLUMNS = (
    "tool", "tool_version", "contract_version", "command_line", "dataset", "started_at",
    "rule_packs", "inputs",
)  # fmt: skip
CHECK_COLUMNS = ("code", "name", "title", "severity", "citation", "what", "why")
ROW_COUNT_COLUMNS = ("table", "rows_in", "rows_audited", "rows_quarantined")
QUARANTINE_COLUMNS = ("table", "file", "row", "row_key", "column", "check", "value", "reason")
SURVEILLANCE_COLUMNS = (
    "level", "key", "table_id", "statistic", "observed", "expected", "z", "p_value",
    "q_value", "detail", "rounds", "wagers", "alert", "alert_fdr",
)  # fmt: skip
ALERT_COLUMNS = (*SURVEILLANCE_COLUMNS[:-2], "round_ids", "wager_ids")
SHOE_RULE_COLUMNS = (
    "shoe_id", "table_id", "property_id", "ruleset", "ez_baccarat", "commission_percent",
)  # fmt: skip

# Every table and view the reports read, with the columns they name: what a catalog that
# fails to answer is checked against, to say what it lacks. The surveillance tables may
# be absent (a catalog written before surveillance), not incomplete.
CATALOG_PARTS: dict[str, tuple[str, ...]] = {
    "runs": RUN_COLUMNS,
    "row_counts": ROW_COUNT_COLUMNS,
    "checks": CHECK_COLUMNS,
    "findings": FINDING_COLUMNS,
    "quarantine": QUARANTINE_COLUMNS,
    "rounds": ROUND_COLUMNS,
    "wagers": WAGER_COLUMNS,
    "shoes": ("shoe_id", "table_id", "opened_at"),
    "tables": ("table_id", "property_id", "ruleset", "effective_from"),
    "shoe_rules": SHOE_RULE_COLUMNS,
    "commission_collections": ("collection_id", "patron_id"),
    "surveillance": SURVEILLANCE_COLUMNS,
    "alerts": ALERT_COLUMNS,
}
OPTIONAL_PARTS = ("surveillance", "alerts")


def quoted(columns: Sequence[str], alias: str = "") -> str:
    """A select list naming each column, so that a catalog without one fails in DuckDB
    (and is explained) rather than in the page."""
    prefix = f"{alias}." if alias else ""
    return ", ".join(f'{prefix}"{c}"' for c in columns)


def open_report_catalog(outdir: Path, being_written: bool = False) -> Catalog:
    """`open_catalog`, with a DuckDB error (a catalog whose `runs` lacks a column) told as
    what the catalog lacks."""
    try:
        return open_catalog(outdir, being_written=being_written)
    except duckdb.Error as exc:
        path = Path(outdir) / DUCKDB_FILE
        try:
            with sandboxed(path) as con:
                fault = catalog_fault(path, con, exc)
        except duckdb.Error:
            raise QueryError(f"{path}: cannot be read as an audit's catalog ({exc})") from exc
        raise QueryError(fault) from exc


def catalog_fault(path: Path, con: duckdb.DuckDBPyConnection, error: duckdb.Error) -> str:
    """Why the catalog at `path` could not answer: the tables, views and columns the
    reports read that it lacks, or DuckDB's own first line when it lacks none."""
    lacking = missing_parts(con)
    if not lacking:
        return f"{path}: {str(error).splitlines()[0]}"
    return (
        f"{path}: the catalog lacks {', '.join(lacking)}; it was written by another version "
        "of the auditor or changed since. Re-run `auditor audit DATASET --out OUTDIR` to "
        "write it again."
    )


def missing_parts(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The tables or views (`wagers (a table or view)`) and columns (`findings.message`)
    of `CATALOG_PARTS` the catalog does not have."""
    present = relations(con, CATALOG_PARTS)
    lacking = []
    for relation, columns in CATALOG_PARTS.items():
        if relation not in present:
            if relation not in OPTIONAL_PARTS:
                lacking.append(f"{relation} (a table or view)")
            continue
        lacking += [f"{relation}.{c}" for c in columns if c not in present[relation]]
    return lacking


def relations(con: duckdb.DuckDBPyConnection, names: Iterable[str]) -> dict[str, set[str]]:
    """Of the tables and views `names`, those the catalog has, with their columns. Named
    in the statement itself: DuckDB then binds only those views, where listing every
    view's columns binds the union of every witness too (a tenth of a second, which
    every audit's report paid)."""
    present: dict[str, set[str]] = {}
    listed = ", ".join(sql_literal(name) for name in sorted(set(names)))
    rows = con.execute(
        "SELECT table_name, column_name FROM duckdb_columns() "
        "WHERE database_name = current_database() AND schema_name = 'main' "
        f"AND table_name IN ({listed})"
    ).fetchall()
    for relation, column in rows:
        present.setdefault(relation, set()).add(column)
    return present


def frame(catalog: Catalog, sql: str, params: Mapping[str, Any] | None = None) -> pl.DataFrame:
    """One statement's result as a polars frame; a dataset that moved is named. Parameters
    the statement does not name are left out (`among` may leave a list out)."""
    used = {k: v for k, v in (params or {}).items() if re.search(rf"\${k}\b", sql)}
    try:
        table = catalog.con.sql(sql, params=used).to_arrow_table()
    except (duckdb.IOException, duckdb.PermissionException) as exc:
        if catalog.missing:
            raise QueryError(catalog.moved_message()) from exc
        raise QueryError(str(exc)) from exc
    except (duckdb.CatalogException, duckdb.BinderException) as exc:
        # A table, view or column the statement names is not in this catalog.
        raise QueryError(catalog_fault(catalog.path, catalog.con, exc)) from exc
    except duckdb.Error as exc:
        raise QueryError(str(exc)) from exc
    result = pl.from_arrow(table)
    assert isinstance(result, pl.DataFrame)
    return result


def run_record(catalog: Catalog) -> dict[str, Any]:
    """The run that wrote the catalog (the latest, should a catalog hold several)."""
    runs = frame(
        catalog, f"SELECT {quoted(RUN_COLUMNS)} FROM runs ORDER BY started_at DESC LIMIT 1"
    )
    if runs.height == 0:
        raise QueryError(f"{catalog.path}: the catalog records no run; re-run the audit")
    return runs.row(0, named=True)


def row_counts(catalog: Catalog) -> pl.DataFrame:
    return frame(catalog, f"SELECT {quoted(ROW_COUNT_COLUMNS)} FROM row_counts")


def checks(catalog: Catalog) -> dict[str, dict[str, Any]]:
    """Every check's documentation by code."""
    statement = f"SELECT {quoted(CHECK_COLUMNS)} FROM checks ORDER BY code"
    rows = frame(catalog, statement).iter_rows(named=True)
    return {row["code"]: row for row in rows}


LOCATION = {
    "property_id": pl.String(),
    "ruleset": pl.String(),
    "dealer_id": pl.String(),
    "dealt_at": pl.Datetime("us", "UTC"),
    "seat": pl.Int8(),
    "patron_id": pl.String(),
}


def located(
    catalog: Catalog,
    where: str = "",
    params: Mapping[str, Any] | None = None,
    plain: bool = False,
    patrons: bool = True,
) -> pl.DataFrame:
    """Findings with their table, shoe, property, ruleset, dealer, time and patron, as the
    catalog's `findings_located` gives them, in the findings' stable order (`_order`),
    with the columns `PRIORITY` sorts by.

    `where`: a condition of our own on the `findings` table (alias `f`), values as params.
    `plain`: no place, for when the views over the dataset cannot be read.
    """
    found = frame(
        catalog,
        f"SELECT {quoted(FINDING_COLUMNS, 'f')} FROM findings f "
        f"{('WHERE (' + where + ')') if where else ''}",
        params,
    )
    if plain:
        found = found.with_columns(pl.lit(None, dtype).alias(c) for c, dtype in LOCATION.items())
    else:
        found = locate(catalog, found, patrons)
    found = found.sort(
        ["table_id", "shoe_id", "round_id", "wager_id", "rule", "finding_id", "message"],
        nulls_last=[True, False, False, False, False, False, False],
    )
    return found.with_row_index("_order").with_columns(
        pl.col("severity")
        .replace_strict({s: i for i, s in enumerate(SEVERITIES)}, default=len(SEVERITIES))
        .alias("_severity_rank"),
        (-pl.col("impact").abs().cast(pl.Float64)).fill_null(0.0).alias("_abs_impact"),
    )


def locate(catalog: Catalog, found: pl.DataFrame, patrons: bool = True) -> pl.DataFrame:
    """`findings_located`'s columns, by one narrow read of each view for the ids the
    findings name: the view itself joins every round and wager of the night, which at
    ten million rounds costs seconds the report does not have. `patrons=False` leaves
    the wagers' seat and patron empty, for a caller that reads the wagers anyway."""
    own = found.columns
    ids = {
        "rounds": ids_of(found["round_id"]),
        "wagers": ids_of(found["wager_id"]) if patrons else [],
    }
    rounds = frame(
        catalog,
        f"""SELECT round_id, shoe_id AS _shoe, table_id AS _round_table, dealer_id, dealt_at
        FROM rounds WHERE {among("round_id", "rounds", ids["rounds"])}""",
        ids,
    ).unique("round_id", keep="first")
    wagers = frame(
        catalog,
        f"""SELECT wager_id, seat, patron_id FROM wagers
        WHERE {among("wager_id", "wagers", ids["wagers"])}""",
        ids,
    ).unique("wager_id", keep="first")
    found = found.join(rounds, on="round_id", how="left").join(wagers, on="wager_id", how="left")
    found = found.with_columns(pl.coalesce("shoe_id", "_shoe").alias("shoe_id"))
    ids = {"shoes": ids_of(found["shoe_id"]), "tables": ids_of(found["table_id"])}
    shoes = frame(
        catalog,
        f"""SELECT shoe_id, table_id AS _shoe_table, property_id, ruleset FROM shoe_rules
        WHERE {among("shoe_id", "shoes", ids["shoes"])}""",
        ids,
    ).unique("shoe_id", keep="first")
    # A table finding: the table's latest Rules Submission row, as findings_located takes.
    tables = frame(
        catalog,
        f"""SELECT table_id, property_id AS _table_property, ruleset AS _table_ruleset
        FROM tables WHERE {among("table_id", "tables", ids["tables"])}
        QUALIFY row_number() OVER (PARTITION BY table_id ORDER BY effective_from DESC) = 1""",
        ids,
    )
    found = found.join(shoes, on="shoe_id", how="left").join(tables, on="table_id", how="left")
    return found.with_columns(
        pl.coalesce("table_id", "_shoe_table", "_round_table").alias("table_id"),
        pl.coalesce("property_id", "_table_property").alias("property_id"),
        pl.coalesce("ruleset", "_table_ruleset").alias("ruleset"),
    ).select(*own, *LOCATION)


def among(column: str, name: str, ids: Sequence[str]) -> str:
    """`column` is one of the list parameter `$name`; "false" for no ids, so that DuckDB
    reads nothing rather than scanning a view to match an empty list."""
    return f"{column} IN (SELECT unnest(${name}::VARCHAR[]))" if len(ids) else "false"


def by_priority(findings: pl.DataFrame) -> pl.DataFrame:
    return findings.sort(PRIORITY)


def ids_of(values: Sequence[str | None] | pl.Series) -> list[str]:
    return sorted({v for v in values if v is not None})


def rounds_by_id(catalog: Catalog, round_ids: Sequence[str | None] | pl.Series) -> pl.DataFrame:
    """The rounds (as logged) with the ruleset and options their shoe was dealt under; the
    first row of an id that the dataset holds twice (the audit quarantined both)."""
    ids = ids_of(round_ids)
    return rounds_where(catalog, among("round_id", "ids", ids), {"ids": ids})


def rounds_where(catalog: Catalog, where: str, params: Mapping[str, Any]) -> pl.DataFrame:
    """Rounds by a condition of our own, with their shoe's options. Two reads joined here,
    not one join in SQL: the planner would join every shoe of the night first."""
    rounds = frame(
        catalog,
        f"""SELECT {", ".join(ROUND_COLUMNS)} FROM rounds WHERE {where}
        ORDER BY round_id, dealt_at, round_no""",
        params,
    ).unique("round_id", keep="first", maintain_order=True)
    ids = ids_of(rounds["shoe_id"])
    options = frame(
        catalog,
        f"""SELECT shoe_id, ruleset, property_id, ez_baccarat, commission_percent
        FROM shoe_rules WHERE {among("shoe_id", "ids", ids)}""",
        {"ids": ids},
    ).unique("shoe_id", keep="first")
    return rounds.join(options, on="shoe_id", how="left", maintain_order="left")


def wagers_of_rounds(
    catalog: Catalog,
    round_ids: Sequence[str | None] | pl.Series,
    wager_ids: Sequence[str | None] | pl.Series = (),
) -> pl.DataFrame:
    """Every wager (as logged) of the rounds, and the wagers named, by round and seat: one
    read of the view for both."""
    ids = {"rounds": ids_of(round_ids), "wagers": ids_of(wager_ids)}
    return frame(
        catalog,
        f"""SELECT {", ".join(WAGER_COLUMNS)} FROM wagers
        WHERE {among("round_id", "rounds", ids["rounds"])}
           OR {among("wager_id", "wagers", ids["wagers"])}
        ORDER BY round_id, seat, wager_id""",
        ids,
    ).unique("wager_id", keep="first", maintain_order=True)


def shoes_by_id(catalog: Catalog, shoe_ids: Sequence[str | None] | pl.Series) -> pl.DataFrame:
    ids = ids_of(shoe_ids)
    return frame(
        catalog,
        f"SELECT * FROM shoes WHERE {among('shoe_id', 'ids', ids)} ORDER BY shoe_id",
        {"ids": ids},
    ).unique("shoe_id", keep="first", maintain_order=True)


def table_options(catalog: Catalog, table_ids: Sequence[str | None] | pl.Series):
    """Each table's Rules Submission rows, oldest first."""
    ids = ids_of(table_ids)
    return frame(
        catalog,
        f"""SELECT * FROM tables WHERE {among("table_id", "ids", ids)}
        ORDER BY table_id, effective_from""",
        {"ids": ids},
    )


def patron_net() -> pl.Expr:
    """The patron's net result of a wager as logged: the payout less commission when won,
    the stake (with any House Money rollover on it) when lost, nothing on a push."""
    stake = pl.col("amount") + pl.col("rollover").fill_null(0)
    return (
        pl.when(pl.col("result") == "win")
        .then(pl.col("payout") - pl.col("commission"))
        .when(pl.col("result") == "lose")
        .then(-stake)
        .otherwise(pl.lit(0))
        .cast(pl.Decimal(38, 2))
    )


# ---- surveillance (statistics, not findings) ------------------------------------------

TEST_COLUMNS = (
    "level, key, table_id, statistic, observed, expected, z, p_value, q_value, detail, "
    "rounds, wagers"
)


def surveillance_summary(catalog: Catalog) -> dict[str, Any] | None:
    """The night's tests, alerts and their false-discovery rate; None for a catalog
    written before surveillance (it has no such table)."""
    # Absent, not unreadable: a surveillance table that lacks a column is a fault told
    # like any other, not a catalog of an older auditor.
    if "surveillance" not in relations(catalog.con, ["surveillance"]):
        return None
    return frame(
        catalog,
        "SELECT count(*) AS tests, count(*) FILTER (WHERE alert) AS alerts, "
        "max(alert_fdr) AS alert_fdr FROM surveillance",
    ).row(0, named=True)


def strongest_alerts(catalog: Catalog, limit: int) -> pl.DataFrame:
    """The `limit` strongest alerts, with how many rounds and wagers each covers (null
    rounds: every round of the table)."""
    return frame(
        catalog,
        f"SELECT {TEST_COLUMNS}, len(round_ids) AS rounds_covered, "
        "len(wager_ids) AS wagers_covered FROM alerts "
        "ORDER BY q_value, p_value, level, key, statistic LIMIT $limit",
        {"limit": limit},
    )


def surveillance_tests(
    catalog: Catalog, where: str, params: Mapping[str, Any] | None = None
) -> pl.DataFrame:
    """The tests matching `where` (over the `surveillance` table), alerts first."""
    return frame(
        catalog,
        f"SELECT {TEST_COLUMNS}, alert FROM surveillance WHERE {where} "
        "ORDER BY alert DESC, p_value, level, key, statistic",
        params,
    )


def holds(catalog: Catalog) -> pl.DataFrame:
    """Each table's observed hold beside its theoretical hold, the tables that kept the
    least against their theory first. z is a sum of floats whose last bits follow the
    order it was added in, which the partitions decide: ordered by z to 9 places, tables
    of equal play (z equal but for those bits) come in the order of their ids, the same
    page every run."""
    return frame(
        catalog,
        "SELECT key AS table_id, observed, expected, observed - expected AS difference, z, "
        "p_value, q_value, alert, wagers, detail FROM surveillance "
        "WHERE level = 'table' AND statistic = 'hold' ORDER BY round(z, 9) NULLS LAST, key",
    )


@dataclass(frozen=True)
class LedgerHead:
    """The review ledger's last record as a report read it, printed in its footer: a
    page kept on paper can be held against the ledger later (`auditor review ARCHIVE
    --verify --head HASH`), and a record removed or rewritten since shows. seq 0: the
    ledger holds no record yet."""

    seq: int
    hash: str


def read_ledger_head(archive: Path) -> LedgerHead:
    seq, last = ledger_head(archive)
    return LedgerHead(seq, last)
