"""Command line: parses arguments and calls the library; nothing else lives here.

Exit codes follow ruff and sqlfluff: 0 clean, 1 findings (or quarantined rows for
`validate`), 2 when the input or the command cannot be used.

Every command writes where `--out` (`-o`) says; its earlier spellings (`--output`, the
positional OUT of `simulate`) still work, with a one-line note on stderr.
"""

from __future__ import annotations

import sys
from datetime import date, timedelta
from pathlib import Path
from typing import Literal

import click
from rich.table import Table

from auditor import __version__
from auditor.commands.archive import add_after_audit, archive, review
from auditor.commands.diff import diff
from auditor.commands.exits import Commands
from auditor.commands.explain import explain
from auditor.commands.formats import emit, emit_rows, format_option, json_text
from auditor.commands.odds import odds
from auditor.commands.options import (
    FiniteFloatRange,
    alert_fdr_option,
    day_option,
    loaded_packs,
    nights_asked,
    old_out_spelling,
    out_option,
    rules_options,
)
from auditor.commands.progress import progress_bar, shows_progress
from auditor.commands.query import query
from auditor.commands.report import report
from auditor.commands.rules import rules
from auditor.commands.serve import serve
from auditor.commands.surveil import surveil
from auditor.commands.terminal import fail, stdout, text_table, visible
from auditor.commands.users import users
from auditor.commands.verify import verify
from auditor.commands.watch import live_into, live_options, watch
from auditor.defaults import DEFAULT_MEMORY_LIMIT, parse_size
from auditor.errors import AuditorError, ExitStatus


@click.group(cls=Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="auditor")
def main() -> None:
    """Compliance hand-history auditor for casino baccarat.

    Examples:

    \b
      auditor validate /exports/2026-11-24
      auditor audit /exports/2026-11-24 -o /audits/2026-11-24
      auditor query /audits/2026-11-24 "SELECT rule, count(*) FROM findings GROUP BY rule"
      auditor rules --format csv

    Every command answers -h: auditor audit -h.

    Exit status: 0 nothing to report, 1 findings (or quarantined rows, differences), 2
    unusable input or arguments, 3 internal error, 130 interrupted.
    """


def _rows_in(dataset_path: Path, *counted_twice: str, quiet: bool = False) -> int | None:
    """The rows of every table, and those of `counted_twice` once more (the audit's
    progress counts the rounds again as it audits them); one look at the footers, taken
    only for a bar that is drawn (ten thousand files' footers take a second)."""
    from auditor.input.load import open_dataset

    if not shows_progress(quiet):
        return None
    dataset = open_dataset(dataset_path)
    rows = {table: sum(s.rows for s in sources) for table, sources in dataset.files.items()}
    return sum(rows.values()) + sum(rows.get(table, 0) for table in counted_twice)


def _counts_table(counts) -> Table:
    table = text_table(title="Row accounting")
    for name in ("table", "rows in", "audited", "quarantined"):
        table.add_column(name, justify="left" if name == "table" else "right")
    for name, rows_in, audited, quarantined in counts.iter_rows():
        table.add_row(name, f"{rows_in:,}", f"{audited:,}", f"{quarantined:,}")
    return table


def _quarantine_digest(quarantine, limit: int = 10) -> None:

    if quarantine.height == 0:
        return
    stdout.print(f"[bold yellow]{quarantine.height:,} quarantine entries[/]", highlight=False)
    for row in quarantine.head(limit).iter_rows(named=True):
        # Every field may quote the data (a key, a file name, a rejected value): escaped,
        # so that it can neither drive the terminal nor break the one line per entry.
        shown = {name: visible(str(value)) for name, value in row.items()}
        stdout.print(
            f"  {shown['table']} {shown['row_key']} ({shown['file']} row {shown['row']}): "
            f"{shown['column']}={shown['value']}: {shown['reason']}",
            highlight=False,
            markup=False,
        )
    if quarantine.height > limit:
        stdout.print(f"  ... and {quarantine.height - limit:,} more", highlight=False)


@main.command()
@click.argument("dataset")
@format_option()
@rules_options
def validate(dataset: str, fmt: str, rules_dir: Path | None, replace_builtin: bool) -> None:
    """Check DATASET (a folder, a file:// or another fsspec URL) against the contract;
    report quarantined rows without auditing. --format table shows the row accounting
    and the first quarantined rows, csv the row accounting, json the accounting and
    every quarantine entry.

    Exit status: 0 every row passed, 1 rows quarantined, 2 unusable input.

    Examples:

    \b
      auditor validate /exports/2026-11-24
      auditor validate s3://exports/2026-11-24 --format json
      auditor validate /exports/2026-11-24 --rules /packs/freedonia
    """
    from auditor.commands.locations import dataset_folder
    from auditor.pipeline import run_validation

    try:
        packs = loaded_packs(rules_dir, replace_builtin)
        with (
            dataset_folder(dataset) as folder,
            progress_bar("validating", _rows_in(folder)) as advance,
        ):
            result = run_validation(folder, lambda _table, n: advance(n), packs=packs)
    except AuditorError as error:
        fail(error)
    if fmt == "table":
        stdout.print(_counts_table(result.counts))
        _quarantine_digest(result.quarantine)
    else:
        _validation_data(result.counts, result.quarantine, fmt)
    sys.exit(ExitStatus.FOUND if result.quarantine.height else ExitStatus.OK)


COUNT_COLUMNS = ["table", "rows_in", "audited", "quarantined"]


def _validation_data(counts, quarantine, fmt: str) -> None:
    """The row accounting as csv, or it and every quarantine entry as json."""
    accounting = [dict(zip(COUNT_COLUMNS, row, strict=True)) for row in counts.iter_rows()]
    if fmt == "csv":
        emit_rows(accounting, COUNT_COLUMNS, "csv")
    else:
        emit(json_text({"counts": accounting, "quarantine": quarantine.to_dicts()}))


@main.command()
# A string, not a click.Path: a file:// URL must reach the engine whole.
@click.argument("dataset")
@out_option(
    "Output folder (a path or an fsspec URL): missing, empty or a previous run's.",
    metavar="OUTDIR",
    required=True,
)
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when findings were written.")
@click.option(
    "--partition-rounds",
    type=click.IntRange(min=1),
    default=None,
    help="Rounds audited together (whole tables); by default as many as --memory-limit allows.",
)
@click.option(
    "--memory-limit",
    default=DEFAULT_MEMORY_LIMIT,
    show_default=True,
    help="Memory the audit may use (e.g. 1GB, 1500MB); partitions are sized to it.",
)
@click.option("--quiet", is_flag=True, help="No progress bars on stderr.")
@click.option(
    "--archive",
    "archive_folder",
    type=click.Path(path_type=Path),
    help="Add the finished run to this archive folder (created when missing).",
)
@click.option(
    "--engine",
    type=click.Choice(["local", "dask"]),
    default="local",
    show_default=True,
    help="Where the partitions are audited: local, in this process, or dask, on a Dask "
    "cluster (pip install 'auditor[dask]'); the outputs are the same.",
)
@click.option(
    "--scheduler",
    metavar="tcp://HOST:PORT",
    help="With --engine dask: the address of the Dask cluster's scheduler; without it, a "
    "local cluster on this machine.",
)
@alert_fdr_option("False-discovery rate of the surveillance alerts (Benjamini-Hochberg).")
@format_option()
@rules_options
def audit(
    dataset: str,
    out: str,
    exit_zero: bool,
    partition_rounds: int | None,
    memory_limit: str,
    quiet: bool,
    engine: Literal["local", "dask"],
    scheduler: str | None,
    alert_fdr: float,
    fmt: str,
    archive_folder: Path | None,
    rules_dir: Path | None,
    replace_builtin: bool,
) -> None:
    """Audit DATASET and write findings, quarantine, row counts, report.html and a
    DuckDB file to OUTDIR (--out); then print the findings by rule and where the report
    is. Either may be a local folder, a file:// URL or another fsspec URL (s3://, gs://,
    ...: a dataset there is copied to local disk first, and to each machine of a
    --scheduler's cluster; an OUTDIR there receives the written set). --engine dask
    audits the partitions on the Dask cluster at --scheduler, or on a local one.
    --format json writes the summary as one document (row accounting, findings by rule
    and by severity, money at stake, alerts), csv the same figures a row each (part,
    name, figure, value).

    \b
    Exit status:
      0    no finding (or findings, with --exit-zero)
      1    findings written (a night whose every row was quarantined has none: it
           exits 0, as the hand-history contract says, and says loudly that nothing
           was audited)
      2    unusable input, output folder or arguments: one message, nothing written
           (or, with --archive, the run written but not archived)
      3    internal error: one line on stderr names the file that holds the traceback
      130  interrupted (Ctrl-C)

    Examples:

    \b
      auditor audit /exports/2026-11-24 -o /audits/2026-11-24
      auditor audit /exports/2026-11-24 --out /audits/2026-11-24 --archive /audits/archive
      auditor audit s3://exports/2026-11-24 -o /audits/2026-11-24 --engine dask
      auditor audit /exports/2026-11-24 -o /audits/2026-11-24 --rules /packs/freedonia
    """
    from auditor.api import AuditOptions
    from auditor.api import audit as audit_night
    from auditor.commands.digest import REPORT_FILE, SUMMARY_COLUMNS, findings_digest
    from auditor.commands.locations import dataset_folder, is_remote, output_folder
    from auditor.findings.words import count_text
    from auditor.output.files import nothing_audited, nothing_audited_line

    if scheduler and engine != "dask":
        raise click.UsageError("--scheduler needs --engine dask")
    try:
        packs = loaded_packs(rules_dir, replace_builtin)
        limit_bytes = parse_size(memory_limit)
        options = AuditOptions(
            memory_limit=memory_limit,
            partition_rounds=partition_rounds,
            rules=rules_dir,
            replace_builtin=replace_builtin,
            alert_fdr=alert_fdr,
            engine=engine,
            scheduler=scheduler,
        )
        with dataset_folder(dataset) as dataset_path, output_folder(out) as out_path:
            # Validation advances by the rows of every table, then the audit by the rounds.
            total = _rows_in(dataset_path, "rounds", quiet=quiet)
            with progress_bar("auditing", total, quiet) as advance:
                # The process's command line, program by name, for the catalog's record.
                command = [Path(sys.argv[0]).name, *sys.argv[1:]]
                results = audit_night(
                    dataset_path,
                    out_path,
                    options,
                    progress=lambda stage, n: advance(n, stage),
                    command=command,
                    origin=dataset if is_remote(dataset) else None,
                    archive=archive_folder,
                    packs=packs,
                )
                findings, alerts = results.findings.height, results.alerts.height
            if archive_folder is not None:
                add_after_audit(archive_folder, out_path, fmt)
    except AuditorError as error:
        fail(error)
    folder = out.rstrip("/")
    if fmt != "table":
        from auditor.commands.digest import audit_summary, summary_rows

        if nothing_audited(results.counts):
            click.echo(nothing_audited_line(results.counts), err=True)
        summary = audit_summary(
            results.counts, results.quarantine.height, results.findings, alerts, folder
        )
        if fmt == "json":
            emit(json_text(summary))
        else:
            emit_rows(summary_rows(summary), SUMMARY_COLUMNS, "csv")
        _warn_over_limit(memory_limit, limit_bytes)
        sys.exit(ExitStatus.OK if exit_zero or findings == 0 else ExitStatus.FOUND)
    stdout.print(_counts_table(results.counts))
    _quarantine_digest(results.quarantine)
    if nothing_audited(results.counts):
        stdout.print(nothing_audited_line(results.counts), style="bold red", highlight=False)
    for line in findings_digest(results.findings, folder):
        stdout.print(line, highlight=False, markup=False)
    # Alerts are statistics, not findings: reported, never in the exit status.
    stdout.print(
        f"{count_text(alerts, 'surveillance alert', 'surveillance alerts')} (not findings) "
        f"written to {folder}/alerts.parquet",
        highlight=False,
        markup=False,
    )
    stdout.print(f"report: {folder}/{REPORT_FILE}", highlight=False, markup=False)
    _warn_over_limit(memory_limit, limit_bytes)
    # The contract's status: 0 when no finding. A night whose every row was quarantined
    # has none, and is no clean night either: the line above and summary.txt say so.
    sys.exit(ExitStatus.OK if exit_zero or findings == 0 else ExitStatus.FOUND)


def _warn_over_limit(memory_limit: str, limit_bytes: int) -> None:
    """Say so when the run's peak memory passed the limit it was given: the partitions are
    sized to it, but some of what a run holds is not (README, Scale on one machine)."""
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # kilobytes on Linux
    if peak > limit_bytes:
        click.echo(
            f"warning: this run's memory peaked at {peak / 2**30:.2f} GiB, above "
            f"--memory-limit {memory_limit}: validation's batches, the libraries and the "
            "findings and quarantine held for the outputs are not sized to it (see the "
            "README's 'Scale on one machine')",
            err=True,
        )


@main.command()
@out_option(
    "Dataset folder to write: missing, empty or a previous simulation's.",
    metavar="OUT",
    type=click.Path(path_type=Path, file_okay=False),
)
@old_out_spelling("OUT", metavar="OUT", positional=True, type=click.Path(path_type=Path))
@click.option("--rounds", type=click.IntRange(min=1), required=True, help="Rounds a night.")
@click.option("--seed", type=click.IntRange(0), default=0, show_default=True, help="Random seed.")
@click.option(
    "--faults",
    "fault_rate",
    type=FiniteFloatRange(0.0, 1.0),
    default=0.0,
    show_default=True,
    help="Share of rounds (and shoes) that receive one injected fault.",
)
@click.option(
    "--shoe-faults",
    "shoe_fault_rate",
    type=FiniteFloatRange(0.0, 1.0),
    help="Share of shoes that receive one injected shoe fault (default: --faults).",
)
@day_option(
    "--from",
    "first",
    "First gaming day (noon to noon UTC): each night in a folder OUT/YYYY-MM-DD/ "
    "[default: one night in OUT itself; with --nights, from 2026-11-24].",
)
@day_option("--to", "last", "Last gaming day, inclusive (with --from; instead of --nights).")
@click.option("--start", type=click.DateTime(["%Y-%m-%d"]), hidden=True)  # --from's old name
@click.option(
    "--nights",
    type=click.IntRange(min=1),
    help="Consecutive gaming days: the same tables, dealers and patrons, ids unique across "
    "nights, each night dealt from the seed and its date [default: 1].",
)
@live_options
def simulate(
    out: Path, rounds: int, seed: int, first, last, start, nights: int | None, **rates
) -> None:
    """Deal ROUNDS rounds at tables of every ruleset and write a dataset to OUT (--out);
    with --from (and --to or --nights) or --nights, one dataset a night in
    OUT/YYYY-MM-DD/. OUT must be missing, empty or a previous simulation's (marked by its
    _simulation.json), which is replaced; anything else is refused with exit status 2
    and left as it is. Ends with a summary of what was written. OUT as a positional
    argument and --start (for --from) are the old spellings.

    Examples:

    \b
      auditor simulate --out night --rounds 2000 --faults 0.02
      auditor simulate -o nights --rounds 5000 --from 2026-11-01 --to 2026-11-30
      auditor simulate -o nights --rounds 5000 --from 2026-11-01 --nights 30
    """
    from auditor.findings.words import count_text
    from auditor.simulator.live import deal_live
    from auditor.simulator.nights import DEFAULT_START, deal

    day, nights = nights_asked(first, start, last, nights)
    if live_into(deal_live, rounds, seed, day, nights, rates):
        return
    if out is None:
        raise click.UsageError("Missing option '--out' / '-o' (OUT).")
    archive = day is not None or nights > 1
    label = f"dealing {count_text(nights, 'night', 'nights')}" if archive else "dealing"
    _check_last_night(day or DEFAULT_START, nights)
    try:
        with progress_bar(label, rounds * nights, unit="rounds") as advance:
            summary = deal(out, rounds, seed, day, nights, archive, advance, **rates)
    except AuditorError as error:
        fail(error)
    click.echo(summary.text())


def _check_last_night(first: date, nights: int) -> None:
    """The nights end by 9999-12-31, the last day a date can name."""
    try:
        first + timedelta(days=nights - 1)
    except OverflowError:
        raise click.BadParameter(
            f"{nights:,} nights from {first} run past 9999-12-31",
            param_hint="'--nights'",
        ) from None


main.add_command(odds)
main.add_command(rules)
main.add_command(diff)
main.add_command(query)
main.add_command(explain)
main.add_command(archive)
main.add_command(review)
main.add_command(verify)
main.add_command(report)
main.add_command(surveil)
main.add_command(serve)
main.add_command(users)
main.add_command(watch)

if __name__ == "__main__":
    main()
