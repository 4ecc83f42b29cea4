"""`auditor report`: an investigation of one subject of a run, or across the nights of an
archive, and an archive's period report."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

import click

from auditor.commands.formats import refuse_misnamed_page
from auditor.commands.shared_options import (
    day_option,
    deprecation_note,
    loaded_packs,
    out_option,
    rules_options,
)
from auditor.commands.terminal import fail
from auditor.errors import AuditorError, InputError

SUBJECT_KEYS = ("patron", "dealer", "table", "round_id")


@click.command()
@click.argument("folder", metavar="OUTDIR|ARCHIVE", type=click.Path(path_type=Path))
@click.option("--patron", help="A patron id (wagers.patron_id).")
@click.option("--dealer", help="A dealer id (rounds.dealer_id).")
@click.option("--table", help="A table id.")
@click.option("--round", "round_id", help="A round id (of a run's OUTDIR).")
@day_option(
    "--from",
    "start",
    "First day, as YYYY-MM-DD: of the subject's report, or without a subject the first "
    "gaming day of an ARCHIVE's period report.",
)
@day_option(
    "--to",
    "end",
    "Last day, inclusive, as YYYY-MM-DD: of the subject's report, or without a subject "
    "the last gaming day of an ARCHIVE's period report.",
)
@click.option(
    "--period",
    metavar="FROM..TO",
    help="The old spelling of --from FROM --to TO without a subject: an ARCHIVE's period "
    "report over gaming days FROM to TO (YYYY-MM-DD..YYYY-MM-DD).",
)
@click.option("--property", "property_id", help="A period report of one property only.")
@out_option(
    "The page (.html or .htm), or with --pdf the PDF (.pdf), to write [default: "
    "./investigation-KIND-ID.html for an OUTDIR, "
    "./investigation-KIND-ID-across-nights[-FROM-TO].html for an ARCHIVE, "
    "./period-FROM-TO.html for a period].",
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
    and cumulative, surveillance); or, with --from and --to and no subject, an ARCHIVE's
    period report for a manager or a regulator (--period FROM..TO is its old spelling).
    The rounds and wagers a finding names are on the page; every round and wager of a
    patron, dealer or table goes into STEM.rounds.csv and STEM.wagers.csv beside it
    (STEM: the report's name without its suffix). One self-contained HTML page, or a PDF
    with --pdf (US Letter, evidence unfolded); by default
    ./investigation-KIND-ID.html for an OUTDIR,
    ./investigation-KIND-ID-across-nights.html for an ARCHIVE (with -FROM-TO added for
    --from/--to), ./period-FROM-TO.html for a period (.pdf with --pdf). For an archive,
    --from and --to are gaming days (noon to noon UTC), both included.

    Examples:

    \b
      auditor report /audits/2026-11-24 --dealer D0402
      auditor report /audits/2026-11-24 --round R0000042 -o round.pdf --pdf
      auditor report /audits/archive --patron P-1187 --from 2026-10-01 --to 2026-10-31
      auditor report /audits/archive --from 2026-07-01 --to 2026-09-30 --property MA-PROP-1

    Exit status 2 for an unknown subject, an unreadable or changed OUTDIR or ARCHIVE,
    --pdf without Chromium, options that do not go together (--from or --to with
    --round, --period with --from, --to or a subject, a period without both --from and
    --to, --property with a subject, --rules with an ARCHIVE), or an --out FILE whose
    name says another format than the one written.
    """
    if out is not None:
        from auditor.commands.owned import refuse_owned_target

        try:
            # Whose the place is says more than what its name says: checked first.
            refuse_owned_target(out, reads=[folder])
        except AuditorError as error:
            fail(error)
        refuse_misnamed_page(out, pdf)
    window = _period_window(period, subject)
    _refuse_meaningless(folder, window, property_id, subject, rules_dir, replace_builtin)
    try:
        packs = loaded_packs(rules_dir, replace_builtin)
        written = _write(folder, out, pdf, window, property_id, subject, packs)
    except AuditorError as error:
        fail(error)
    click.echo(f"report written to {written}")


def _period_window(period: str | None, subject: dict[str, Any]) -> tuple[date, date] | None:
    """The gaming days of the period report asked for, by --from and --to without a
    subject or by the old --period FROM..TO; None for a subject's report."""
    dates = [flag for flag, key in (("--from", "start"), ("--to", "end")) if subject[key]]
    subjects = [f"--{k.removesuffix('_id')}" for k in SUBJECT_KEYS if subject[k]]
    if period is not None:
        if dates or subjects:
            raise click.UsageError(
                f"--period and {', '.join(dates + subjects)} do not go together: --period "
                "FROM..TO is the old spelling of --from FROM --to TO, the report of the "
                "whole period of every subject"
            )
        from auditor.report.period import parse_period

        try:
            first, last = parse_period(period)  # FROM after TO refused there
        except AuditorError as error:
            fail(error)
        click.echo(deprecation_note("--period", "DATE --to DATE", new="--from"), err=True)
        return first, last
    if subjects or not dates:
        return None
    if len(dates) == 1:
        missing = "--to" if dates == ["--from"] else "--from"
        raise click.UsageError(
            f"{dates[0]} without {missing}: with no subject (--patron, --dealer, --table, "
            "--round) the report is an ARCHIVE's period report, from --from to --to"
        )
    first, last = subject["start"].date(), subject["end"].date()
    subject["start"] = subject["end"] = None
    return _in_order(first, last, f"--from {first} --to {last}")


def _in_order(first: date, last: date, asked: str) -> tuple[date, date]:
    if first > last:
        raise click.BadParameter(
            f"{asked}: {first} is after {last}; a period runs from its first gaming day to its last"
        )
    return first, last


def _write(folder, target, pdf, window, property_id, subject, packs) -> Path:
    from auditor.archive.integrity import is_archive
    from auditor.commands.owned import refuse_owned_target

    if window is not None:
        if not is_archive(folder):
            raise InputError(
                "--from and --to without a subject make an ARCHIVE's period report: "
                f"{folder} is no archive (name a --patron, --dealer, --table or --round "
                "for a run's report)"
            )
        from auditor.report.period import default_name as period_name
        from auditor.report.period import write_period_report

        first, last = window
        target = Path(target or period_name(first, last, property_id, pdf))
        refuse_owned_target(target, reads=[folder])
        return write_period_report(folder, first, last, property_id, target, pdf)
    from auditor.report.investigate import default_name as investigation_name
    from auditor.report.investigate import subject_of, write_investigation
    from auditor.report.writing import beside_paths

    chosen = subject_of(**subject)
    # The default lands in the working folder, which may be a set or a dataset too.
    across_nights = is_archive(folder)
    target = Path(target or investigation_name(chosen, pdf, across_nights))
    # The CSVs of the rows the page leaves off go beside it: checked as it is.
    for place in (target, *beside_paths(target)):
        refuse_owned_target(place, reads=[folder])
    if across_nights:
        from auditor.report.across import write_archive_investigation

        return write_archive_investigation(folder, chosen, chosen.start, chosen.end, target, pdf)
    return write_investigation(folder, chosen, target, pdf, packs)


def _refuse_meaningless(
    folder: Path,
    window: tuple[date, date] | None,
    property_id: str | None,
    subject: dict[str, Any],
    rules_dir: Path | None,
    replace_builtin: bool,
) -> None:
    """Refuse options that would be ignored or would mislabel the page: a round is one
    moment of one night, a period report has its own window, and an archive's findings
    were judged by the rules of their runs."""
    from auditor.archive.integrity import is_archive

    dates = [flag for flag, key in (("--from", "start"), ("--to", "end")) if subject[key]]
    if subject["round_id"] and dates:
        raise click.UsageError(
            f"--round and {' and '.join(dates)} do not go together: a round is one moment; "
            "leave out --from and --to"
        )
    if property_id is not None and window is None:
        raise click.UsageError(
            "--property goes with the period report alone (--from and --to with no "
            "--patron, --dealer, --table or --round): it picks a property of the period"
        )
    rules = [
        flag for flag, on in (("--rules", rules_dir), ("--replace-builtin", replace_builtin)) if on
    ]
    if rules and (window is not None or is_archive(folder)):
        raise click.UsageError(
            f"{' and '.join(rules)} with an ARCHIVE: its findings were judged by each run's "
            "own rules; --rules applies to the report of one run's OUTDIR"
        )
