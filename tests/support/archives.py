"""Archives of a few simulated nights, built once a session and read by the reports'
tests in process and in the browser (the session fixtures `period_archive` and
`across_archive` in tests/conftest.py): never written by a test, each test writing its
pages into its own folder.

- The period's archive: five nights with faults, the third audited again from logs with
  one overpaid or underpaid wager taken out, one table of the fifth night moved to a
  property whose id is hostile markup, and a few reviews (one of them of the superseded
  finding).
- The archive across nights: five nights with a stale options row every night, a patron
  back on several nights, a dealer's finding escalated and the stale row's explained
  before the last night is added.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path

import duckdb
import polars as pl

from auditor.archive.ledger import ReviewInput, append_reviews
from auditor.archive.store import add_run
from auditor.pipeline import run_audit
from tests.support.cli import cli
from tests.support.nights import bring_a_patron_back

# ---- the period's archive ---------------------------------------------------------------

FIRST, LAST = date(2026, 11, 1), date(2026, 11, 5)
REAUDITED = date(2026, 11, 3)
HOSTILE_PROPERTY = "<script>alert(1)</script>\u202e"
MOVED_TABLE = "T-MA-BAC-01"


def catalog(folder: Path) -> duckdb.DuckDBPyConnection:
    return duckdb.connect(str(folder / "archive.duckdb"), read_only=True)


# The period's findings in force, in the catalog's own terms.
SCOPE_SQL = (
    "SELECT {what} FROM findings_current WHERE gaming_day BETWEEN DATE '2026-11-01' "
    "AND DATE '2026-11-05'"
)


def sql_rows(folder: Path, sql: str) -> list[tuple]:
    with catalog(folder) as con:
        return con.execute(sql).fetchall()


def period_nights(root: Path) -> dict:
    """The period's archive at ROOT/archive: {"folder": the archive, "gone": the superseded
    finding, "reviewed": the three findings in force reviewed}."""
    nights = root / "nights"
    dealt = cli("simulate", "--out", nights, "--from", FIRST, "--nights", 5,
                "--rounds", 300, "--seed", 11, "--faults", 0.02)  # fmt: skip
    assert dealt.exit_code == 0, dealt.output
    last = nights / str(LAST)
    tables = pl.read_parquet(last / "tables.parquet")
    moved = pl.col("table_id") == MOVED_TABLE
    tables.with_columns(
        pl.when(moved).then(pl.lit(HOSTILE_PROPERTY)).otherwise("property_id").alias("property_id")
    ).write_parquet(last / "tables.parquet")
    folder = root / "archive"
    for night in sorted(p for p in nights.iterdir() if p.is_dir()):
        out = root / f"out-{night.name}"
        run_audit(night, out, report=False)
        add_run(folder, out)
    first = pl.read_parquet(root / f"out-{REAUDITED}" / "findings.parquet")
    paid = first.filter(pl.col("wager_id").is_not_null() & (pl.col("impact") != 0))
    gone = paid.row(0, named=True)
    fixed = root / "fixed"
    shutil.copytree(nights / str(REAUDITED), fixed)
    wagers = pl.read_parquet(fixed / "wagers.parquet")
    wagers.filter(pl.col("wager_id") != gone["wager_id"]).write_parquet(fixed / "wagers.parquet")
    run_audit(fixed, root / "out-again", report=False)
    add_run(folder, root / "out-again")
    ids = [r[0] for r in sql_rows(folder, SCOPE_SQL.format(what="finding_id") + " ORDER BY 1")]
    append_reviews(
        folder,
        [
            ReviewInput(ids[0], "explained", "dealer retrained", "J. Doe"),
            ReviewInput(ids[1], "explained", "shoe replaced", "J. Doe"),
            ReviewInput(ids[2], "escalated", "to surveillance", "A. Smith"),
            ReviewInput(gone["finding_id"], "corrected", "patron repaid", "J. Doe"),
        ],
    )
    return {"folder": folder, "gone": gone, "reviewed": ids[:3]}


# ---- the archive across nights ----------------------------------------------------------

ACROSS_NIGHTS = 5
FIRST_NIGHT = date(2026, 11, 1)
STALE_NOTE = "Stale options row kept in the export; systems ticket 4411"
ESCALATED_NOTE = "Paid a push as a win <b>twice</b>; surveillance to pull the tape"


@dataclass(frozen=True)
class Archived:
    root: Path
    archive: Path
    nights: list[Path]  # the datasets, oldest first
    outs: list[Path]  # each night's output set
    dealer: str  # found on several nights
    escalated: str  # a finding of the dealer's, escalated before the last night
    stale: str  # the finding every night repeats
    patron: str  # back on several nights


def keep_a_stale_options_row(night: Path) -> None:
    """Every night's export carries the same old Rules Submission row of one table, with
    too few seats: the same finding, night after night."""
    tables = pl.read_parquet(night / "tables.parquet")
    first = tables.filter(pl.col("ruleset") == "ma-baccarat").sort("table_id", "effective_from")
    stale = first.head(1).with_columns(
        pl.lit(datetime(2026, 10, 1, 12, tzinfo=UTC)).alias("effective_from"),
        pl.lit(8, dtype=tables["seats"].dtype).alias("seats"),
    )
    pl.concat([tables, stale]).write_parquet(night / "tables.parquet")


def archive_query(archive: Path, sql: str, params: dict | None = None) -> list[tuple]:
    with duckdb.connect(str(archive / "archive.duckdb"), read_only=True) as con:
        return con.execute(sql, params or {}).fetchall()


def audit_into(archive: Path, night: Path, out: Path) -> None:
    run_audit(night, out, archive=archive)
    add_run(archive, out)


def across_nights(root: Path) -> Archived:
    """The archive across nights at ROOT/archive, its datasets at ROOT/sim."""
    sim, archive = root / "sim", root / "archive"
    dealt = cli("simulate", "--out", sim, "--from", FIRST_NIGHT, "--nights", ACROSS_NIGHTS,
                "--rounds", 400, "--seed", 11, "--faults", 0.02)  # fmt: skip
    assert dealt.exit_code == 0, dealt.output
    nights = sorted(p for p in sim.iterdir() if p.is_dir())
    for night in nights:
        keep_a_stale_options_row(night)
    first_wagers = pl.read_parquet(nights[0] / "wagers.parquet").drop_nulls("patron_id")
    patron = first_wagers["patron_id"].value_counts(sort=True)[0, 0]
    bring_a_patron_back([nights[2], nights[3]], patron)
    outs = [root / "out" / night.name for night in nights]
    for night, out in zip(nights[:-1], outs[:-1], strict=True):
        audit_into(archive, night, out)
    # Before the last night: a dealer of several nights has a finding escalated, and the
    # stale row's finding is explained.
    (dealer, _), *_ = archive_query(
        archive,
        "SELECT dealer_id, count(DISTINCT gaming_day) AS n FROM findings_current "
        "WHERE dealer_id IS NOT NULL GROUP BY 1 ORDER BY n DESC, count(*) DESC, 1 LIMIT 1",
    )
    ((escalated,),) = archive_query(
        archive,
        "SELECT finding_id FROM findings_current WHERE dealer_id = $d "
        "ORDER BY gaming_day, finding_id LIMIT 1",
        {"d": dealer},
    )
    ((stale,),) = archive_query(archive, "SELECT finding_id FROM finding_status WHERE nights > 1")
    for finding, status, note, by in (
        (escalated, "escalated", ESCALATED_NOTE, "J. Doe"),
        (stale, "explained", STALE_NOTE, "M. Okafor"),
    ):
        reviewed = cli("review", archive, finding, "--status", status, "--note", note, "--by", by)
        assert reviewed.exit_code == 0, reviewed.output
    audit_into(archive, nights[-1], outs[-1])
    return Archived(root, archive, nights, outs, dealer, escalated, stale, patron)
