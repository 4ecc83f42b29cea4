"""`auditor audit DATASET --out OUTDIR`: the night audited through the library
(`auditor.api.audit`), with what only a terminal needs around it: the progress bar, the
row accounting, the findings by rule, the summary as csv or json, `--exit-zero`, URLs
copied to a local folder and back, and a word when the run's memory passed its limit."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Literal

import click

from auditor.commands.accounting import counts_table, quarantine_digest
from auditor.commands.archive import add_after_audit
from auditor.commands.formats import emit, emit_rows, format_option, json_text
from auditor.commands.progress import progress_bar, rows_in
from auditor.commands.shared_options import (
    alert_fdr_option,
    loaded_packs,
    out_option,
    rules_options,
)
from auditor.commands.terminal import fail, stdout
from auditor.defaults import DEFAULT_MEMORY_LIMIT, parse_size
from auditor.errors import AuditorError, ExitStatus


@click.command()
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
            total = rows_in(dataset_path, "rounds", quiet=quiet)
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
    stdout.print(counts_table(results.counts))
    quarantine_digest(results.quarantine)
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
    """Say so when the run's peak memory passed the limit it was given: the partitions and
    validation's batches are sized to it, but some of what a run holds is not (docs/scale.md,
    Scale on one machine)."""
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # kilobytes on Linux
    if peak > limit_bytes:
        click.echo(
            f"warning: this run's memory peaked at {peak / 2**30:.2f} GiB, above "
            f"--memory-limit {memory_limit}: the libraries, and the findings and quarantine "
            "held for the outputs, are not sized to it (docs/scale.md, 'Scale on one "
            "machine')",
            err=True,
        )
