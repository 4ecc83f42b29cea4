"""What an investigation across nights reads (`across`): one patron, dealer or table over
every night of an archive (`auditor.archive`).

The archive's catalog gives the subject's findings in force night by night (a re-audit
supersedes), their reviews, and the surveillance tests naming the subject. Its rounds and
wagers come from each night's own catalog, which reads the dataset where the audit read
it: a night whose dataset is no longer there is shown without them, and says so.

A night is a gaming day, noon to noon UTC, as everywhere in the archive; `--from` and
`--to` name the first and last gaming day. The subject's id is only ever a query
parameter, and in the page it is escaped like any other value.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import date
from pathlib import Path
from typing import Any

import polars as pl

from auditor.archive.attached_runs import open_archive_catalog
from auditor.archive.catalog import RUNS, SET
from auditor.archive.integrity import refuse_changed_periods
from auditor.archive.store import open_archive
from auditor.errors import AuditorError
from auditor.output.sandboxed_query import Catalog, open_catalog
from auditor.report import data
from auditor.report.across.cells import AgainstGame, against_the_game
from auditor.report.investigate import ReportError, Subject, gather
from auditor.report.period import surveillance as periods

KINDS = ("patron", "dealer", "table")

# The subject's rows in the archive's views, with its id as the parameter $id.
FINDINGS_OF = {
    "patron": "f.patron_id = $id",
    "dealer": "f.dealer_id = $id",
    "table": "f.located_table_id = $id",
}
TESTS_OF = {
    "patron": "level = 'patron' AND key = $id",
    "dealer": "level = 'dealer' AND key = $id",
    # A table's own tests, and the alerts of its shoes (a shoe's tests are many and
    # mostly quiet; its alerts are what an investigator of the table needs).
    "table": "(level = 'table' AND key = $id) OR (level = 'shoe' AND table_id = $id AND alert)",
}
FINDING_COLUMNS = (
    "finding_id", "rule", "severity", "table_id", "shoe_id", "round_id", "wager_id", "impact",
    "message", "run_id", "gaming_day", "property_id", "dealer_id", "patron_id",
    "located_table_id",
)  # fmt: skip


@dataclass
class NightSource:
    """A run in force and what its own catalog gave of the subject: its rounds and wagers,
    or why they could not be read (`missing`: the dataset is no longer in place)."""

    run_id: str
    dataset: str | None = None
    read: bool = False
    missing: bool = False
    problem: str | None = None


@dataclass
class Gathered:
    """Everything the page shows, read from the archive and the runs' catalogs."""

    subject: Subject
    archive: Path
    coverage: pl.DataFrame  # the runs in force: table_id, gaming_day, run_id, rounds
    findings: pl.DataFrame  # in force, with their latest review
    reviews: pl.DataFrame  # every review record of those findings
    tests: pl.DataFrame  # surveillance naming the subject, runs in force only
    rounds: pl.DataFrame = field(default_factory=pl.DataFrame)
    wagers: pl.DataFrame = field(default_factory=pl.DataFrame)
    sources: dict[str, NightSource] = field(default_factory=dict)
    # Against the game night by night (the runs' kept counts), and the tests naming the
    # subject in the surveilled periods overlapping its nights (none surveilled: False).
    against: AgainstGame = field(default_factory=AgainstGame)
    period_tests: pl.DataFrame = field(default_factory=pl.DataFrame)
    periods: list[dict[str, Any]] = field(default_factory=list)
    surveilled: bool = False
    ledger: data.LedgerHead | None = None


def archive_subject(subject: Subject, start: date | None, end: date | None) -> Subject:
    """The subject with the window asked for, checked: a round belongs to one night, and
    its report is the run's (`auditor report OUTDIR --round`)."""
    if subject.kind not in KINDS:
        raise ReportError(
            "an investigation across the archive's nights is of a patron, a dealer or a "
            f"table; a "
            f"{subject.kind} belongs to one night: `auditor report ARCHIVE/{RUNS}/RUN_ID/{SET} "
            f"--{subject.kind} ID` reports it from that night's run"
        )
    subject = replace(subject, start=start or subject.start, end=end or subject.end)
    if subject.start and subject.end and subject.start > subject.end:
        raise ReportError(f"--from {subject.start} is after --to {subject.end}")
    return subject


def gather_archive(archive: Path, subject: Subject) -> Gathered:
    """The subject's findings, reviews and tests from the archive's catalog, then its rounds
    and wagers from the catalog of each run in force whose dataset is still in place."""
    folder = open_archive(archive)
    catalog = open_archive_catalog(folder, inputs=False)
    try:
        refuse_changed_periods(folder)
        # Read before the catalog's views: the page's reviews are as of this head or later.
        ledger = data.read_ledger_head(folder)
        found = _from_archive(catalog, folder, subject)
    finally:
        catalog.close()
    found.ledger = ledger
    _hand_histories(found)
    _check_known(found)
    return found


def _window(subject: Subject, column: str) -> tuple[str, dict[str, Any]]:
    clauses, params = [], {}
    if subject.start is not None:
        clauses.append(f"{column} >= $start")
        params["start"] = subject.start
    if subject.end is not None:
        clauses.append(f"{column} <= $end")
        params["end"] = subject.end
    return "".join(f" AND {c}" for c in clauses), params


def _from_archive(catalog: Catalog, archive: Path, subject: Subject) -> Gathered:
    days, window = _window(subject, "gaming_day")
    params = {"id": subject.id, **window}
    only_table = " AND table_id = $id" if subject.kind == "table" else ""
    coverage = data.frame(
        catalog,
        f"SELECT table_id, gaming_day, run_id, rounds FROM coverage_current WHERE true"
        f"{only_table}{days} ORDER BY gaming_day, table_id",
        params,
    )
    in_force = f"SELECT * FROM findings_current f WHERE ({FINDINGS_OF[subject.kind]}){days}"
    findings = data.frame(
        catalog,
        f"""SELECT {data.quoted(FINDING_COLUMNS, "f")}, s.status, s.note, s.reviewed_by,
               s.reviewed_at, s.first_night, s.last_night, s.nights
        FROM ({in_force}) f LEFT JOIN finding_status s USING (finding_id)
        ORDER BY f.gaming_day NULLS LAST, f.finding_id""",
        params,
    )
    reviews = data.frame(
        catalog,
        f"""SELECT r.seq, r.finding_id, r.status, r.note, r."by", r."at" FROM reviews r
        WHERE r.finding_id IN (SELECT finding_id FROM ({in_force})) ORDER BY r.seq""",
        params,
    )
    tests = data.frame(
        catalog,
        f"""SELECT gaming_day, run_id, {data.TEST_COLUMNS}, alert FROM surveillance
        WHERE ({TESTS_OF[subject.kind]}) AND run_id IN (SELECT run_id FROM coverage_current)
        {days} ORDER BY gaming_day NULLS LAST, alert DESC, p_value, level, key, statistic""",
        params,
    )
    found = Gathered(subject, archive, coverage, findings, reviews, tests)
    found.against = against_the_game(catalog, archive, subject.kind, subject.id, (days, params))
    found.surveilled = periods.surveilled(catalog)
    if found.surveilled:
        found.periods = periods.periods(catalog, subject.start, subject.end)
        found.period_tests = periods.subject_tests(
            catalog, subject.kind, subject.id, subject.start, subject.end
        )
    return found


# ---- each night's rounds and wagers, from its own run's catalog ----------------------------


def gaming_day(column: str) -> pl.Expr:
    """A timestamp's gaming day: noon to noon UTC, as the archive draws it."""
    return (pl.col(column).dt.convert_time_zone("UTC") - pl.duration(hours=12)).dt.date()


def _hand_histories(found: Gathered) -> None:
    rounds, wagers = [], []
    for (run_id,), covered in found.coverage.group_by("run_id", maintain_order=True):
        source = NightSource(run_id)
        found.sources[run_id] = source
        read = _read_run(found.archive, found.subject, source)
        if read is None:
            continue
        # Only the tables and nights the run is in force for: a re-audit supersedes.
        keys = covered.select("table_id", "gaming_day")
        run_rounds, run_wagers = read
        rounds.append(run_rounds.join(keys, on=["table_id", "gaming_day"], how="semi"))
        wagers.append(run_wagers.join(keys, on=["table_id", "gaming_day"], how="semi"))
    if rounds:
        found.rounds = pl.concat(rounds, how="diagonal_relaxed").sort(
            "dealt_at", "table_id", "round_no", "round_id", nulls_last=True
        )
        found.wagers = pl.concat(wagers, how="diagonal_relaxed").sort(
            "dealt_at", "round_id", "seat", "wager_id", nulls_last=True
        )


def _read_run(
    archive: Path, subject: Subject, source: NightSource
) -> tuple[pl.DataFrame, pl.DataFrame] | None:
    """The subject's rounds and wagers in one run, each with its gaming day; None when the
    run's dataset is not in place or its catalog cannot be read (said in `source`)."""
    try:
        catalog = open_catalog(archive / RUNS / source.run_id / SET)
    except AuditorError as error:
        source.problem = str(error)
        return None
    try:
        source.dataset = None if catalog.dataset is None else str(catalog.dataset)
        if catalog.missing:
            source.missing = True
            return None
        got = gather(catalog, replace(subject, start=None, end=None))
    except AuditorError as error:
        source.problem = str(error)
        return None
    finally:
        catalog.close()
    source.read = True
    quarantined = got["quarantine"].filter(pl.col("table") == "wagers")["row_key"]
    rounds = got["rounds"].with_columns(
        gaming_day("dealt_at").alias("gaming_day"), pl.lit(source.run_id).alias("run_id")
    )
    wagers = got["wagers"].with_columns(
        gaming_day("dealt_at").alias("gaming_day"),
        pl.lit(source.run_id).alias("run_id"),
        data.patron_net().alias("net"),
        pl.col("wager_id").is_in(quarantined.implode()).alias("quarantined"),
    )
    return rounds, wagers


# ---- a subject the archive does not know ---------------------------------------------------


def _check_known(found: Gathered) -> None:
    if found.findings.height or found.tests.height or found.rounds.height:
        return
    if found.period_tests.height or found.against.measures:
        return
    if found.wagers.height or (found.subject.kind == "table" and found.coverage.height):
        return
    subject = found.subject
    if subject.start or subject.end:
        raise ReportError(
            f"nothing of {subject.kind} {subject.id!r} in the archive {found.archive} between "
            f"{subject.start or 'the start'} and {subject.end or 'the end'}: no finding in "
            "force, surveillance test or hand history of those nights names it; widen "
            "--from/--to"
        )
    unread = sum(not s.read for s in found.sources.values())
    not_read = f" ({unread} run{'s' * (unread != 1)} not read)" if unread else ""
    raise ReportError(
        f"no {subject.kind} {subject.id!r} in the archive {found.archive}: no finding in "
        "force or surveillance test names it, nor a hand history of the nights whose "
        f"datasets are in place{not_read}. Ids are matched exactly; `auditor query "
        "ARCHIVE` lists them"
    )
