"""`auditor archive add|list`: the archive of runs across nights (`auditor.archive`)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from auditor.commands.terminal import fail, visible
from auditor.errors import AuditorError


@click.group()
def archive() -> None:
    """Keep every run's output set across nights, with one catalog over them all:
    `archive add` adds an earlier run's verified output set, `archive list` prints one
    line per run, `auditor query ARCHIVE [SQL]` runs SQL over every run (archive.duckdb)
    and `auditor audit --archive ARCHIVE` adds a run as it finishes.

    Examples:

    \b
      auditor archive add /audits/archive /audits/2026-11-24
      auditor archive list /audits/archive
      auditor query /audits/archive "SELECT run_id, count(*) FROM findings GROUP BY run_id"
    """


@archive.command("add")
@click.argument("archive_folder", metavar="ARCHIVE", type=click.Path(path_type=Path))
@click.argument("outdir", type=click.Path(path_type=Path))
def add(archive_folder: Path, outdir: Path) -> None:
    """Add the output set in OUTDIR (verified against its manifest) to ARCHIVE, created
    when missing. A run already in the archive is left as it is. Exit status 2 when the
    set is changed, incomplete or written by an earlier auditor, or ARCHIVE is not one.

    Examples:

    \b
      auditor archive add /audits/archive /audits/2026-11-24
    """
    from auditor.archive.store import add_run

    try:
        run, new = add_run(archive_folder, outdir)
    except AuditorError as error:
        fail(error)
    verb = "added to" if new else "already in"
    click.echo(f"run {run.run_id} {verb} {archive_folder}: {_summary(run.record)}")


def add_after_audit(archive_folder: Path, outdir: Path) -> None:
    """`audit --archive`: the finished run into the archive, said on the terminal."""
    from auditor.archive.store import add_run

    run, _ = add_run(archive_folder, outdir)
    click.echo(f"run {run.run_id} added to {archive_folder}")


@archive.command("list")
@click.argument("archive_folder", metavar="ARCHIVE", type=click.Path(path_type=Path))
def list_runs(archive_folder: Path) -> None:
    """One line per run, oldest audit first: run id, gaming days, properties, tables,
    findings, and whether a later run supersedes it (re-audited tables and days).

    Examples:

    \b
      auditor archive list /audits/archive
    """
    from auditor.archive.store import archived_runs, superseded

    try:
        runs = archived_runs(archive_folder)
        states = superseded(archive_folder)
    except AuditorError as error:
        fail(error)
    for run in runs:
        click.echo(f"{run.run_id}  {_summary(run.record)}  {states.get(run.run_id, 'in force')}")
    if not runs:
        click.echo(f"{archive_folder}: no runs yet", err=True)
    sys.exit(0)


def _summary(record: dict) -> str:
    days = record["gaming_days"]
    span = f"{days[0]}..{days[-1]}" if len(days) > 1 else (days[0] if days else "no day")
    properties = ",".join(record["properties"]) or "-"
    return visible(
        f"{span}  properties {properties}  {len(record['tables'])} tables  "
        f"{record['findings']:,} findings"
    )


@click.command()
@click.argument("archive_folder", metavar="ARCHIVE", type=click.Path(path_type=Path))
@click.argument("finding_ids", metavar="FINDING_ID...", nargs=-1)
@click.option(
    "--status",
    type=click.Choice(("open", "explained", "corrected", "escalated", "dismissed")),
    help="How the finding stands now.",
)
@click.option("--note", default="", help="What was found out or done.")
@click.option("--by", "reviewer", default="", help="Who reviewed it (required).")
@click.option(
    "--from-file",
    "batch_file",
    type=click.Path(path_type=Path, dir_okay=False),
    help="A CSV or Parquet batch with the columns finding_id, status, note, by.",
)
@click.option("--verify", "check", is_flag=True, help="Check the ledger's chain of records.")
def review(
    archive_folder: Path,
    finding_ids: tuple[str, ...],
    status: str | None,
    note: str,
    reviewer: str,
    batch_file: Path | None,
    check: bool,
) -> None:
    """Record how archived findings were resolved, in ARCHIVE's append-only review ledger
    (each record chained to the one before by its SHA-256).

    Examples:

    \b
      auditor review ARCHIVE ID1 ID2 --status explained --note "dealer retrained" --by "J. Doe"
      auditor review ARCHIVE --from-file reviews.csv
      auditor review ARCHIVE --verify

    Exit status 0 when written (or, with --verify, intact); 1 when --verify finds an
    edited, deleted, inserted or reordered record (the first one named); 2 when an unknown
    finding id, status or an empty --by refuses the batch, and nothing is written.
    """
    from auditor.archive import ledger

    try:
        if check:
            _verify_ledger(archive_folder)
            return
        batch = _batch(finding_ids, status, note, reviewer, batch_file)
        written = ledger.append_reviews(archive_folder, batch)
    except AuditorError as error:
        fail(error)
    click.echo(f"{len(written):,} review records written to {archive_folder}")


def _batch(ids, status, note, reviewer, batch_file):
    from auditor.archive.ledger import LedgerError, ReviewInput, read_review_file

    if batch_file is not None:
        if ids or status:
            raise LedgerError("--from-file takes the whole batch: give no FINDING_ID or --status")
        return read_review_file(batch_file)
    if not ids or status is None:
        raise LedgerError("name at least one FINDING_ID and its --status (or --from-file)")
    return [ReviewInput(i, status, note, reviewer) for i in ids]


def _verify_ledger(archive_folder: Path) -> None:
    from auditor.archive.ledger import verify_ledger

    problems = verify_ledger(archive_folder)
    for problem in problems:
        click.echo(visible(problem))
    if problems:
        sys.exit(1)
    click.echo(f"{archive_folder}: the review ledger is intact")
