"""`auditor report`: an investigation of one subject of a run, or across the nights of an
archive, and an archive's period report."""

from __future__ import annotations

from datetime import date, datetime
from pathlib import Path

import click

from auditor.commands.options import day_option, loaded_packs, out_option, rules_options
from auditor.commands.terminal import fail
from auditor.errors import AuditorError, InputError


@click.command()
@click.argument("folder", metavar="OUTDIR|ARCHIVE", type=click.Path(path_type=Path))
@click.option("--patron", help="A patron id (wagers.patron_id).")
@click.option("--dealer", help="A dealer id (rounds.dealer_id).")
@click.option("--table", help="A table id.")
@click.option("--round", "round_id", help="A round id (of a run's OUTDIR).")
@day_option("--from", "start", "First day, as YYYY-MM-DD.")
@day_option("--to", "end", "Last day, inclusive, as YYYY-MM-DD.")
@click.option(
    "--period",
    metavar="FROM..TO",
    help="An ARCHIVE's period report over gaming days FROM to TO (YYYY-MM-DD..YYYY-MM-DD).",
)
@click.option("--property", "property_id", help="With --period: one property only.")
@out_option(
    "The page (or PDF) to write [default: ./investigation-KIND-ID.html, ./period-FROM-TO.html].",
    metavar="FILE",
    type=click.Path(path_type=Path, dir_okay=False),
)
@click.option("--pdf", is_flag=True, help="Print to PDF through headless Chromium.")
@rules_options
def report(
    folder: Path,
    out: Path | None,
    pdf: bool,
    period: str | None,
    property_id: str | None,
    rules_dir: Path | None,
    replace_builtin: bool,
    **subject,
) -> None:
    """An investigation report of one patron, dealer, table or round: of the run in OUTDIR
    (its rounds, wagers, findings with their evidence, money, quarantined rows), or over
    every night of an ARCHIVE (findings night by night with their reviews, money per night
    and cumulative, surveillance); or, with --period, an ARCHIVE's period report for a
    manager or a regulator. One self-contained HTML page (default
    ./investigation-KIND-ID.html or ./period-FROM-TO.html), or a PDF with --pdf. For an
    archive, --from and --to are gaming days (noon to noon UTC), both included.

    Examples:

    \b
      auditor report /audits/2026-11-24 --dealer D0402
      auditor report /audits/2026-11-24 --round R0000042 -o round.pdf --pdf
      auditor report /audits/archive --patron P-1187 --from 2026-10-01 --to 2026-10-31
      auditor report /audits/archive --period 2026-07-01..2026-09-30 --property MA-PROP-1

    Exit status 2 for an unknown subject, an unreadable or changed OUTDIR or ARCHIVE, or
    --pdf without Chromium.
    """
    try:
        packs = loaded_packs(rules_dir, replace_builtin)
        written = _write(folder, out, pdf, period, property_id, subject, packs)
    except AuditorError as error:
        fail(error)
    click.echo(f"report written to {written}")


def _write(folder, target, pdf, period, property_id, subject, packs) -> Path:
    from auditor.archive.check import is_archive
    from auditor.commands.owned import refuse_owned_target

    if period is not None or property_id is not None:
        if not is_archive(folder) or period is None:
            raise InputError("--period (and --property) take an ARCHIVE: the report of a period")
        if any(subject.values()):
            raise InputError("--period reports on the whole period: give no subject or --from")
        from auditor.report.period import default_name, write_period_report

        first, last = _period(period)
        target = Path(target or default_name(first, last, property_id, pdf))
        refuse_owned_target(target, reads=[folder])
        return write_period_report(folder, first, last, property_id, target, pdf)
    from auditor.report.investigate import default_name, subject_of, write_investigation

    chosen = subject_of(**subject)
    # The default lands in the working folder, which may be a set or a dataset too.
    target = Path(target or default_name(chosen, pdf))
    refuse_owned_target(target, reads=[folder])
    if is_archive(folder):
        from auditor.report.across import write_archive_investigation

        return write_archive_investigation(folder, chosen, chosen.start, chosen.end, target, pdf)
    return write_investigation(folder, chosen, target, pdf, packs)


def _period(text: str) -> tuple[date, date]:
    first, sep, last = text.partition("..")
    try:
        if not sep:
            raise ValueError(text)
        return (
            datetime.strptime(first, "%Y-%m-%d").date(),
            datetime.strptime(last, "%Y-%m-%d").date(),
        )
    except ValueError:
        raise InputError(
            f"--period {text!r}: expected FROM..TO as YYYY-MM-DD..YYYY-MM-DD"
        ) from None
