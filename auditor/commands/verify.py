"""`auditor verify OUTDIR|ARCHIVE`: an output set against its manifest, or every run of an
archive with its review ledger."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from auditor.commands.formats import emit, emit_rows, format_option, json_text, say
from auditor.commands.terminal import fail, visible
from auditor.errors import AuditorError, ExitStatus

PROBLEM_COLUMNS = ["folder", "intact", "problem"]


@click.command()
@click.argument("folder", metavar="OUTDIR|ARCHIVE", type=click.Path(path_type=Path))
@format_option()
def verify(folder: Path, fmt: str) -> None:
    """Check the output set in OUTDIR against its manifest: every file there, of its size
    and SHA-256, no other file, and the catalog's tables equal to their Parquet files. For
    an ARCHIVE, every run's set so, each against the archive's record of what it holds
    (run.json, manifest, periods' files by SHA-256; no run missing or added by hand), the
    catalog's views against the auditor's own, and the review ledger's records (chain,
    validity, the heads the record anchored; signatures when the archive's key is found).
    --format csv writes a row a problem (folder, intact, problem; one row with no problem
    when intact), json the verdict, the problems and, for an ARCHIVE, the signatures.

    Exit status 0 when intact, 1 naming each changed, missing or extra file (or the first
    bad review record), 2 when there is no manifest or archive to check.

    Examples:

    \b
      auditor verify /audits/2026-11-24
      auditor verify /audits/archive
      auditor verify /audits/archive --format json
    """
    from auditor.archive.integrity import archive_check, is_archive
    from auditor.findings.words import count_text
    from auditor.output.verify import verify_set

    signatures = None
    try:
        if is_archive(folder):
            problems, signatures = archive_check(folder)
            click.echo(f"signatures: {signatures}", err=True)
        else:
            problems = verify_set(folder)
    except AuditorError as error:
        fail(error)
    if fmt == "json":
        verdict = {"intact": not problems, "problems": problems, "signatures": signatures}
        emit(json_text({"folder": str(folder), **verdict}))
    elif fmt == "csv":
        rows = [{"folder": str(folder), "intact": False, "problem": p} for p in problems]
        emit_rows(rows or [{"folder": str(folder), "intact": True}], PROBLEM_COLUMNS, "csv")
    else:
        for problem in problems:
            click.echo(visible(problem))
    if problems:
        found = count_text(len(problems), "difference", "differences")
        click.echo(f"{folder}: {found} found", err=True)
        sys.exit(ExitStatus.FOUND)
    say(f"{folder}: intact, every file as written", fmt)
