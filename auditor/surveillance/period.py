"""Surveillance over a period: the nights' counts summed, tested as a night's are.

What no night shows, a month may: a patron winning side wagers at one and a half times
the game's rate, a few hundred dollars a night, or a table keeping two points less than
its theoretical hold, never pass a night's threshold, but thirty nights' counts do. The
period reads the counts each run kept in its output set (`cells.py`), never a dataset,
sums them per table, dealer and patron (shoes do not span nights: the nights tested
them), runs the night's own tests (`round_tests.level_tests`, `patrons.patron_tests`,
`holds.table_holds`, `holds.dealer_holds`) against the chances each night was priced at, and applies
Benjamini-Hochberg across every test of the period (`night.judge`).

Memory and time stay flat in the period's length: each night's cells are read once and
spread into buckets of keys (`store.bucket`'s hash) on disk, then each bucket, which
holds every night's cells of its keys, is summed and tested alone.

What it cannot see: a pattern that keeps to a scale no period's counts resolve (two
points of hold are about one standard deviation over 4,000 hand wagers; see
docs/surveillance.md), one no key ties together (a patron under several ids, a dealer
under several), or counts a night was audited without (a run of an earlier auditor,
whose set holds none: the caller says it is left out).
"""

from __future__ import annotations

import math
import shutil
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import polars as pl

from auditor.defaults import ALERT_FDR
from auditor.surveillance.cells import CELL_FILES, CHANCES_FILE
from auditor.surveillance.gather import ROUND_COUNTS
from auditor.surveillance.holds import dealer_holds, table_holds
from auditor.surveillance.night import judge
from auditor.surveillance.patrons import patron_tests
from auditor.surveillance.round_tests import level_tests
from auditor.surveillance.schema import SURVEILLANCE_SCHEMA, TEST_SCHEMA
from auditor.surveillance.store import BYTES_PER_CELL, MIN_BUCKET_CELLS

TESTS_FILE = "tests.parquet"
ALERTS_FILE = "alerts.parquet"
PERIOD_COLUMNS = {"period_from": pl.Date(), "period_to": pl.Date()}
PERIOD_TESTS_SCHEMA = {**PERIOD_COLUMNS, **SURVEILLANCE_SCHEMA}
PERIOD_ALERTS_SCHEMA = {k: v for k, v in PERIOD_TESTS_SCHEMA.items() if k != "alert"}
# What the period tests, from which kind of cells, keyed and bucketed by which column.
PARTS = {
    "table": ("rounds", "table_id"),
    "dealer": ("rounds", "dealer_id"),
    "patron": ("patrons", "patron_id"),
    "hold": ("tables", "table_id"),
    "dealer_hold": ("dealers", "dealer_id"),
}
# Kinds of cells summed over a run's tables: in force only when all of the run is.
WHOLE_RUN = ("patrons", "dealers")
_BUCKET = "_bucket"


@dataclass(frozen=True)
class NightCells:
    """One run's counts for the period: its output set, the tables whose counts are in
    force for the period (None: all of them), and whether its patrons' and dealers'
    counts are (they are summed over the run's tables and nights, so they count only
    when the whole run is in force within the period)."""

    folder: Path
    tables: frozenset[str] | None = None
    whole: bool = True


@dataclass(frozen=True)
class PeriodSurveillance:
    tests: Path  # PERIOD_TESTS_SCHEMA: every test of the period, in a stable order
    alerts: pl.DataFrame  # PERIOD_ALERTS_SCHEMA
    nights: int  # the runs whose counts were summed


def survey_period(
    nights: Sequence[NightCells],
    start: date,
    end: date,
    folder: Path,
    alert_fdr: float = ALERT_FDR,
    budget_bytes: int | None = None,
) -> PeriodSurveillance:
    """Every test of the period over the counts of `nights`, into `folder`
    (`TESTS_FILE`, `ALERTS_FILE`); each bucket of keys within `budget_bytes` (one
    bucket if None)."""
    if not 0 < alert_fdr < 1:
        raise ValueError(f"alert_fdr must lie strictly between 0 and 1, not {alert_fdr}")
    folder.mkdir(parents=True, exist_ok=True)
    work = folder / "work"
    counts = spread(nights, work, budget_bytes)
    chances = _chances(nights)
    totals = _totals(work, counts)
    parts = []
    for index, batch in enumerate(period_tests(work, counts, chances, totals)):
        parts.append(work / f"tests-{index:06d}.parquet")
        batch.select(list(TEST_SCHEMA)).cast(pl.Schema(TEST_SCHEMA)).with_columns(
            pl.col("p_value").fill_nan(1.0).fill_null(1.0).clip(0.0, 1.0)
        ).write_parquet(parts[-1])
    judged = work / "judged.parquet"
    judge(parts, alert_fdr, judged, work / "sort", budget_bytes)
    period = [pl.lit(start).alias("period_from"), pl.lit(end).alias("period_to")]
    tests = pl.scan_parquet(judged).select(*period, pl.all()).cast(pl.Schema(PERIOD_TESTS_SCHEMA))
    tests.sink_parquet(folder / TESTS_FILE, compression="zstd", statistics=False)
    alerts = (
        pl.scan_parquet(folder / TESTS_FILE)
        .filter(pl.col("alert"))
        .select(list(PERIOD_ALERTS_SCHEMA))
        .collect()
    )
    alerts.write_parquet(folder / ALERTS_FILE, compression="zstd", statistics=False)
    shutil.rmtree(work)
    return PeriodSurveillance(folder / TESTS_FILE, alerts, len(nights))


def spread(nights: Sequence[NightCells], work: Path, budget_bytes: int | None) -> dict[str, int]:
    """Each night's cells, read once, into `work/PART/BUCKET/NIGHT.parquet`: a bucket
    then holds every night's cells of its keys. Returns the buckets of each part, sized
    from the cells' row counts (the Parquet footers) to keep within `budget_bytes`."""
    counts = {}
    for part, (kind, key) in PARTS.items():
        files = [n.folder / CELL_FILES[kind] for n in nights]
        rows = sum(_rows(f) for f in files)
        counts[part] = _buckets(rows, budget_bytes)
        for index, night in enumerate(nights):
            cells = _night_part(night, part)
            if cells is None or cells.height == 0:
                continue
            hashed = cells.with_columns((pl.col(key).hash(seed=0) % counts[part]).alias(_BUCKET))
            for (number,), group in hashed.partition_by(_BUCKET, as_dict=True).items():
                target = work / part / f"{number:06d}"
                target.mkdir(parents=True, exist_ok=True)
                group.drop(_BUCKET).write_parquet(target / f"{index:06d}.parquet")
    return counts


def _night_part(night: NightCells, part: str) -> pl.DataFrame | None:
    """A night's cells for one part of the period's tests: a table's and a dealer's
    rounds reduced to (key, ruleset, decks) first (a night's shoes are not tested
    again), the patrons' and tables' as kept."""
    kind, key = PARTS[part]
    path = night.folder / CELL_FILES[kind]
    if not path.is_file() or (kind in WHOLE_RUN and not night.whole):
        return None
    cells = pl.scan_parquet(path)
    if night.tables is not None and kind not in WHOLE_RUN:
        cells = cells.filter(pl.col("table_id").is_in(sorted(night.tables)))
    if kind == "rounds":
        keys = ["table_id", "ruleset", "decks"]
        keys = keys if part == "table" else [key, *keys]
        cells = cells.group_by(keys).agg(pl.col(c).sum() for c in ROUND_COUNTS).sort(keys)
    return cells.collect()


def _rows(path: Path) -> int:
    if not path.is_file():
        return 0
    return int(pl.scan_parquet(path).select(pl.len()).collect().item())


def _buckets(rows: int, budget_bytes: int | None) -> int:
    # As `store.CellStore.buckets`: a bucket's cells within the budget.
    if budget_bytes is None:
        return 1
    per_bucket = max(MIN_BUCKET_CELLS, budget_bytes // BYTES_PER_CELL)
    return max(1, math.ceil(rows / per_bucket))


def _chances(nights: Sequence[NightCells]) -> pl.DataFrame:
    """The exact chances per (ruleset, decks) the nights were tested against; the latest
    night's where two differ (a ruleset's pack amended between them)."""
    files = [n.folder / CHANCES_FILE for n in nights if (n.folder / CHANCES_FILE).is_file()]
    frames = [pl.read_parquet(f) for f in reversed(files)]
    chances = pl.concat(frames) if frames else pl.DataFrame()
    if chances.height == 0:
        return chances
    return chances.unique(["ruleset", "decks"], keep="first", maintain_order=True)


def _totals(work: Path, counts: dict[str, int]) -> tuple[int, int]:
    """The period's rounds and rounds with a finding, what each dealer's share is
    weighed against (a night's sums, per table, read back)."""
    files = sorted((work / "table").glob("*/*.parquet"))
    if not files:
        return 0, 0
    row = pl.scan_parquet(files).select(pl.col("rounds").sum(), pl.col("finding_rounds").sum())
    rounds, flagged = row.collect().row(0)
    return int(rounds or 0), int(flagged or 0)


def period_tests(
    work: Path, counts: dict[str, int], chances: pl.DataFrame, totals: tuple[int, int]
) -> Iterator[pl.DataFrame]:
    """The period's tests, a part and a bucket of its keys at a time."""
    for part in PARTS:
        for index in range(counts[part]):
            files = sorted((work / part / f"{index:06d}").glob("*.parquet"))
            if not files:
                continue
            cells = pl.read_parquet(files)
            if part in ("table", "dealer"):
                if chances.height:
                    yield level_tests(part, cells, chances, totals)
            elif part == "patron":
                yield patron_tests(cells)
            elif part == "dealer_hold":
                yield dealer_holds(cells)
            else:
                yield table_holds(cells)
