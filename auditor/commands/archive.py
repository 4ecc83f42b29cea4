"""`auditor archive add|list`: the archive of runs across nights (`auditor.archive`)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from auditor.commands.formats import emit_rows, format_option, say
from auditor.commands.terminal import fail, visible
from auditor.errors import AuditorError, ExitStatus


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
      auditor query /audits/archive "SELECT run_id, count(*) FROM findings_current GROUP BY 1"
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


def add_after_audit(archive_folder: Path, outdir: Path, fmt: str = "table") -> None:
    """`audit --archive`: the finished run into the archive, said on the terminal (on
    stderr when stdout carries the audit's csv or json)."""
    from auditor.archive.store import add_run

    run, _ = add_run(archive_folder, outdir)
    say(f"run {run.run_id} added to {archive_folder}", fmt)


@archive.command("init")
@click.argument("archive_folder", metavar="ARCHIVE", type=click.Path(path_type=Path))
@click.option(
    "--key",
    "key_file",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Where to write the signing key (default: $AUDITOR_KEY_DIR or "
    "~/.config/auditor/keys/, named by the archive's id); never inside ARCHIVE.",
)
def init(archive_folder: Path, key_file: Path | None) -> None:
    """Make a new, empty ARCHIVE whose review ledger and record are signed with a key kept
    outside it (mode 0600, never overwritten): re-chaining them after an edit then needs
    the key. Commands find the key at $AUDITOR_KEY_FILE, else at the default place.

    Examples:

    \b
      auditor archive init /audits/archive
      auditor archive init /audits/archive --key /secure/archive.key
    """
    from auditor.archive.store import init_archive

    try:
        folder, key_path = init_archive(archive_folder, key_file)
    except AuditorError as error:
        fail(error)
    click.echo(f"archive {folder} made; its signing key: {key_path} (keep it outside the archive)")


@archive.command("seal")
@click.argument("archive_folder", metavar="ARCHIVE", type=click.Path(path_type=Path))
def seal(archive_folder: Path) -> None:
    """Record the runs of an ARCHIVE made before archives kept their record of what they
    hold, each verified against its manifest first; from then on `auditor verify` checks
    every run against the record. Exit status 2 when a run is not as written.

    Examples:

    \b
      auditor verify /audits/archive
      auditor archive seal /audits/archive
    """
    from auditor.archive.store import seal_archive

    try:
        sealed = seal_archive(archive_folder)
    except AuditorError as error:
        fail(error)
    from auditor.findings.words import count_text

    click.echo(f"{archive_folder}: {count_text(len(sealed), 'run', 'runs')} recorded")


@archive.command("list")
@click.argument("archive_folder", metavar="ARCHIVE", type=click.Path(path_type=Path))
@format_option()
def list_runs(archive_folder: Path, fmt: str) -> None:
    """One line per run, oldest audit first: run id, gaming days, properties, tables,
    findings, and whether a later run supersedes it (re-audited tables and days).

    Examples:

    \b
      auditor archive list /audits/archive
      auditor archive list /audits/archive --format csv
    """
    from auditor.archive.store import archived_runs, superseded

    try:
        runs = archived_runs(archive_folder)
        states = superseded(archive_folder)
    except AuditorError as error:
        fail(error)
    rows = [_row(run.run_id, run.record, states.get(run.run_id, "in force")) for run in runs]
    if fmt != "table":
        emit_rows(rows, list(RUN_COLUMNS), fmt)
    elif runs:
        _runs_table(rows)
    if not runs:
        click.echo(f"{archive_folder}: no runs yet", err=True)
    sys.exit(ExitStatus.OK)


RUN_COLUMNS = ("run_id", "gaming_days", "properties", "tables", "findings", "state")


def _row(run_id: str, record: dict, state: str) -> dict:
    return {
        "run_id": run_id,
        "gaming_days": list(record["gaming_days"]),
        "properties": list(record["properties"]),
        "tables": len(record["tables"]),
        "findings": record["findings"],
        "state": state,
    }


def _summary(record: dict) -> str:
    from auditor.findings.words import count_text

    days = record["gaming_days"]
    span = f"{days[0]}..{days[-1]}" if len(days) > 1 else (days[0] if days else "no day")
    properties = ",".join(record["properties"]) or "-"
    return visible(
        f"{span}  properties {properties}  {count_text(len(record['tables']), 'table', 'tables')}"
        f"  {count_text(record['findings'], 'finding', 'findings')}"
    )


def _runs_table(rows: list[dict]) -> None:
    """A header row, then a run a line, in aligned columns, nothing after the last one:
    `cut`, `awk` and a reader's eye all find the state last."""
    header = ("run", "gaming days", "properties", "tables", "findings", "state")
    lines = [header]
    for row in rows:
        days = row["gaming_days"]
        span = f"{days[0]}..{days[-1]}" if len(days) > 1 else (days[0] if days else "no day")
        properties = ",".join(row["properties"]) or "-"
        tables, findings = f"{row['tables']:,}", f"{row['findings']:,}"
        lines.append((row["run_id"], span, properties, tables, findings, row["state"]))
    widths = [max(len(visible(line[i])) for line in lines) for i in range(len(header))]
    right = {3, 4}  # the counts
    for line in lines:
        cells = [
            visible(cell).rjust(width) if i in right else visible(cell).ljust(width)
            for i, (cell, width) in enumerate(zip(line, widths, strict=True))
        ]
        click.echo("  ".join(cells).rstrip())


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
@click.option(
    "--head",
    metavar="HASH",
    help="With --verify: a ledger head kept elsewhere (printed by review and the reports) "
    "that the ledger must still hold.",
)
def review(
    archive_folder: Path,
    finding_ids: tuple[str, ...],
    status: str | None,
    note: str,
    reviewer: str,
    batch_file: Path | None,
    check: bool,
    head: str | None,
) -> None:
    """Record how archived findings were resolved, in ARCHIVE's append-only review ledger
    (each record chained to the one before by its SHA-256).

    Examples:

    \b
      auditor review ARCHIVE ID1 ID2 --status explained --note "dealer retrained" --by "J. Doe"
      auditor review ARCHIVE --from-file reviews.csv
      auditor review ARCHIVE --verify --head 9c1f...e2

    Each write prints the ledger's head (its last record's seq and hash): keep it
    elsewhere, and `--verify --head` shows any record removed or rewritten since. A batch
    already in the ledger is not entered twice.

    Exit status 0 when written (or, with --verify, intact); 1 when --verify finds an
    edited, deleted, inserted, reordered or invalid record (each named); 2 when an unknown
    finding id, status or an empty --by refuses the batch, and nothing is written.
    """
    from auditor.archive import ledger
    from auditor.archive.ledger_read import check_for_reading

    try:
        if check:
            _verify_ledger(archive_folder, head)
            return
        batch = _batch(finding_ids, status, note, reviewer, batch_file)
        # Never chain onto a ledger whose records were changed: refused as a reader would.
        check_for_reading(archive_folder)
        written = ledger.append_reviews(
            archive_folder, batch, notify=lambda said: click.echo(visible(said), err=True)
        )
        seq, last = ledger.ledger_head(archive_folder)
    except AuditorError as error:
        fail(error)
    from auditor.findings.words import count_text

    records = count_text(len(written), "review record", "review records")
    click.echo(f"{records} written to {archive_folder}")
    click.echo(f"ledger head: seq {seq} {last}")


def _batch(ids, status, note, reviewer, batch_file):
    from auditor.archive.ledger import LedgerError, ReviewInput
    from auditor.archive.review_file import read_review_file

    if batch_file is not None:
        if ids or status:
            raise LedgerError("--from-file takes the whole batch: give no FINDING_ID or --status")
        return read_review_file(batch_file)
    if not ids or status is None:
        raise LedgerError("name at least one FINDING_ID and its --status (or --from-file)")
    return [ReviewInput(i, status, note, reviewer) for i in ids]


def _verify_ledger(archive_folder: Path, head: str | None) -> None:
    from auditor.archive.keys import find_key
    from auditor.archive.ledger import ledger_head
    from auditor.archive.ledger_check import verify_ledger

    key, keyed, said = find_key(archive_folder)
    problems = verify_ledger(archive_folder, key=key, keyed=keyed, head=head)
    for problem in problems:
        click.echo(visible(problem))
    click.echo(f"signatures: {said}", err=True)
    if problems:
        sys.exit(ExitStatus.FOUND)
    seq, last = ledger_head(archive_folder)
    checked = f", and holds the head {head}" if head else ""
    click.echo(f"{archive_folder}: the review ledger is intact{checked}; head: seq {seq} {last}")
