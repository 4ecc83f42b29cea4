"""`auditor surveil ARCHIVE --from DATE --to DATE`: surveillance over a period of nights."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import click

from auditor.commands.options import alert_fdr_option, day_option
from auditor.commands.terminal import fail, visible
from auditor.defaults import DEFAULT_MEMORY_LIMIT, parse_size
from auditor.errors import AuditorError


@click.command()
@click.argument("archive_folder", metavar="ARCHIVE", type=click.Path(path_type=Path))
@day_option("--from", "start", "First gaming day of the period, as YYYY-MM-DD.", required=True)
@day_option("--to", "end", "Last gaming day of the period, inclusive, as YYYY-MM-DD.", True)
@alert_fdr_option("False-discovery rate of the period's alerts (Benjamini-Hochberg).")
@click.option(
    "--memory-limit",
    default=DEFAULT_MEMORY_LIMIT,
    show_default=True,
    help="Memory the counts of one bucket of keys may take (e.g. 1GB, 1500MB).",
)
def surveil(
    archive_folder: Path, start: datetime, end: datetime, alert_fdr: float, memory_limit: str
) -> None:
    """Surveillance over a period: what no night shows, the period's counts may. Sums
    the surveillance counts that the runs in force for the period kept in their sets
    (a superseded run's give way to its re-audit's) per table, dealer and patron, runs
    the night's tests on the sums against the same exact chances, and holds the alerts
    to --alert-fdr across every test of the period. Writes the tests and alerts into
    ARCHIVE as the period's next surveil run, with its rate (an earlier run of the
    period, at any rate, is kept: the catalog's period_runs lists them and marks the one
    the period report shows, the latest at the default rate; period_surveillance and
    period_alerts hold every run's, each row with its surveil_run) and prints one line
    per alert. A period in which no run is in force (no night audited, or none whose
    set keeps surveillance counts) is said so, and nothing is written. Alerts are not
    findings: exit status 0 whatever is found, and for a period without nights; 2 when
    ARCHIVE is not an archive or the period is malformed.

    Examples:

    \b
      auditor surveil /audits/archive --from 2026-11-01 --to 2026-11-30
      auditor surveil /audits/archive --from 2026-11-01 --to 2026-11-30 --alert-fdr 0.05
      auditor query /audits/archive "SELECT * FROM period_runs"
    """
    from auditor.archive.periods import surveil as run_surveil

    try:
        done = run_surveil(
            archive_folder, start.date(), end.date(), alert_fdr, parse_size(memory_limit) // 2
        )
    except (AuditorError, ValueError) as error:
        fail(error if isinstance(error, AuditorError) else AuditorError(str(error)))
    for note in done.notes:
        click.echo(f"note: {visible(note)}", err=True)
    if done.surveillance is None:
        why = (
            "no run in force in the period keeps counts to sum (see the notes above)"
            if done.notes
            else "no run is in force in the period (no night of it was audited into the archive)"
        )
        click.echo(f"{start.date()} to {end.date()}: {why}; nothing written")
        return
    alerts = done.surveillance.alerts
    tested = _tested(done.surveillance.tests)
    click.echo(
        f"{start.date()} to {end.date()}: {done.surveillance.nights} runs, {tested:,} tests, "
        f"{alerts.height:,} alerts (not findings) at false-discovery rate {alert_fdr:g}; "
        f"surveil run {done.number} of the period, written to {visible(str(done.folder))}"
    )
    for row in alerts.iter_rows(named=True):
        click.echo(
            f"  {row['level']:<8}{visible(row['key']):<20}{row['statistic']:<28}"
            f"p = {row['p_value']:.2e}  q = {row['q_value']:.2e}  {visible(row['detail'] or '')}"
        )


def _tested(path: Path) -> int:
    import polars as pl

    return int(pl.scan_parquet(path).select(pl.len()).collect().item())
