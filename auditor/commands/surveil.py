"""`auditor surveil ARCHIVE --from DATE --to DATE`: surveillance over a period of nights."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

import click

from auditor.commands.formats import emit, emit_rows, format_option, json_text, say
from auditor.commands.shared_options import alert_fdr_option, day_option
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
@format_option()
def surveil(
    archive_folder: Path,
    start: datetime,
    end: datetime,
    alert_fdr: float,
    memory_limit: str,
    fmt: str,
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
    ARCHIVE is not an archive or the period is malformed. --format csv writes the alerts,
    a row each; json the period, its runs, tests and alerts in one document.

    Examples:

    \b
      auditor surveil /audits/archive --from 2026-11-01 --to 2026-11-30
      auditor surveil /audits/archive --from 2026-11-01 --to 2026-11-30 --alert-fdr 0.05
      auditor query /audits/archive "SELECT * FROM period_runs"
    """
    from auditor.archive.periods import surveil as run_surveil
    from auditor.findings.words import count_text  # polars: not for `--help`

    try:
        done = run_surveil(
            archive_folder, start.date(), end.date(), alert_fdr, parse_size(memory_limit) // 2
        )
    except (AuditorError, ValueError) as error:
        fail(error if isinstance(error, AuditorError) else AuditorError(str(error)))
    for note in done.notes:
        click.echo(f"note: {visible(note)}", err=True)
    period = {"from": start.date(), "to": end.date(), "alert_fdr": alert_fdr}
    if done.surveillance is None:
        why = (
            "no run in force in the period keeps counts to sum (see the notes above)"
            if done.notes
            else "no run is in force in the period (no night of it was audited into the archive)"
        )
        say(f"{start.date()} to {end.date()}: {why}; nothing written", fmt)
        nothing = {"runs": 0, "tests": 0, "surveil_run": None, "written_to": None}
        _period_data({**period, **nothing}, None, fmt)
        return
    alerts = done.surveillance.alerts
    tested = _tested(done.surveillance.tests)
    runs = done.surveillance.nights
    say(
        f"{start.date()} to {end.date()}: {count_text(runs, 'run', 'runs')}, "
        f"{count_text(tested, 'test', 'tests')}, "
        f"{count_text(alerts.height, 'alert', 'alerts')} (not findings) at false-discovery "
        f"rate {alert_fdr:g}; surveil run {done.number} of the period, written to "
        f"{visible(str(done.folder))}",
        fmt,
    )
    if fmt != "table":
        written = {
            "runs": runs,
            "tests": tested,
            "surveil_run": done.number,
            "written_to": str(done.folder),
        }
        _period_data({**period, **written}, alerts, fmt)
        return
    for row in alerts.iter_rows(named=True):
        click.echo(
            f"  {row['level']:<8}{visible(row['key']):<20}{row['statistic']:<28}"
            f"p = {row['p_value']:.2e}  q = {row['q_value']:.2e}  {visible(row['detail'] or '')}"
        )


ALERT_COLUMNS = ["level", "key", "statistic", "p_value", "q_value", "detail"]


def _period_data(period: dict[str, Any], alerts, fmt: str) -> None:  # alerts: pl.DataFrame
    """The period's alerts as csv, or the period and them as json; nothing under a table."""
    rows = [] if alerts is None else alerts.select(ALERT_COLUMNS).to_dicts()
    if fmt == "json":
        emit(json_text({**period, "alerts": rows}))
    elif fmt == "csv":
        emit_rows(rows, ALERT_COLUMNS, "csv")


def _tested(path: Path) -> int:
    import polars as pl

    return int(pl.scan_parquet(path).select(pl.len()).collect().item())
