"""Command line: parses arguments and calls the library; nothing else lives here.

Exit codes follow ruff and sqlfluff: 0 clean, 1 findings (or quarantined rows for
`validate`), 2 when the input or the command cannot be used.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from auditor import __version__
from auditor.commands.archive import add_after_audit, archive, review
from auditor.commands.progress import progress_bar, shows_progress
from auditor.commands.query import query
from auditor.commands.report import report
from auditor.commands.terminal import crash, fail, stdout
from auditor.commands.verify import verify
from auditor.defaults import ALERT_FDR, DEFAULT_MEMORY_LIMIT, parse_size
from auditor.errors import AuditorError


class _Commands(click.Group):
    """The commands, with one answer to what none of them expected: exit 3 and the
    traceback in a file, never exit 1, which a scheduler reads as "findings written"."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except (click.exceptions.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except AuditorError as error:
            fail(error)
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            sys.exit(130)
        except Exception as error:  # every unexpected error, by design
            crash(error)


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="auditor")
def main() -> None:
    """Compliance hand-history auditor for casino baccarat."""


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
    table = Table(title="Row accounting")
    for name in ("table", "rows in", "audited", "quarantined"):
        table.add_column(name, justify="left" if name == "table" else "right")
    for name, rows_in, audited, quarantined in counts.iter_rows():
        table.add_row(name, f"{rows_in:,}", f"{audited:,}", f"{quarantined:,}")
    return table


def _quarantine_digest(quarantine, limit: int = 10) -> None:
    from auditor.commands.terminal import visible

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
def validate(dataset: str) -> None:
    """Check DATASET (a folder, a file:// or another fsspec URL) against the contract;
    report quarantined rows without auditing."""
    from auditor.audit import run_validation
    from auditor.commands.locations import dataset_folder

    try:
        with (
            dataset_folder(dataset) as folder,
            progress_bar("validating", _rows_in(folder)) as advance,
        ):
            result = run_validation(folder, lambda _table, n: advance(n))
    except AuditorError as error:
        fail(error)
    stdout.print(_counts_table(result.counts))
    _quarantine_digest(result.quarantine)
    sys.exit(1 if result.quarantine.height else 0)


@main.command()
# A string, not a click.Path: a file:// URL must reach the engine whole.
@click.argument("dataset")
@click.option("--out", "out", required=True, help="Output folder (a path or an fsspec URL).")
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
@click.option("--engine", type=click.Choice(["local", "dask"]), default="local", show_default=True)
@click.option("--scheduler", metavar="tcp://HOST:PORT", help="Dask's (default: a local cluster).")
@click.option(
    "--alert-fdr",
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
    default=ALERT_FDR,
    show_default=True,
    help="False-discovery rate of the surveillance alerts (Benjamini-Hochberg).",
)
def audit(
    dataset: str,
    out: str,
    exit_zero: bool,
    partition_rounds: int | None,
    memory_limit: str,
    quiet: bool,
    engine: str,
    scheduler: str | None,
    alert_fdr: float,
    archive_folder: Path | None,
) -> None:
    """Audit DATASET and write findings, quarantine, row counts and a DuckDB file to
    OUTDIR. Either may be a local folder, a file:// URL or another fsspec URL (s3://,
    gs://, ...: a dataset there is copied to local disk first, and to each machine of a
    --scheduler's cluster; an OUTDIR there receives the written set). --engine dask audits
    the partitions on the Dask cluster at --scheduler, or on a local one (pip install
    'auditor[dask]').

    \b
    Exit status: 0 no finding, 1 findings written (0 with --exit-zero), 2 unusable input
    or output folder (nothing written), 3 internal error (details in a file), 130 Ctrl-C.
    Example: auditor audit /exports/2026-11-24 --out /audits/2026-11-24 --archive /audits/archive"""
    from auditor.audit import run_audit
    from auditor.commands.locations import dataset_folder, is_remote, output_folder
    from auditor.input.partition import rounds_within

    if scheduler and engine != "dask":
        raise click.UsageError("--scheduler needs --engine dask")
    try:
        limit_bytes = parse_size(memory_limit)
        if partition_rounds is None:
            partition_rounds = rounds_within(limit_bytes)
        with dataset_folder(dataset) as dataset_path, output_folder(out) as out_path:
            # Validation advances by the rows of every table, then the audit by the rounds.
            total = _rows_in(dataset_path, "rounds", quiet=quiet)
            with progress_bar("auditing", total, quiet) as advance:
                # The process's command line, program by name, for the catalog's record.
                command = [Path(sys.argv[0]).name, *sys.argv[1:]]
                if engine == "dask":
                    from auditor.engines.cluster import dask_audit

                    # The same call, on the cluster. A local cluster's workers read this
                    # machine's copy of a dataset at a URL; a remote cluster's copy it.
                    where = dataset_path if is_remote(dataset) and not scheduler else dataset
                    run_audit = dask_audit(where, scheduler)
                results = run_audit(
                    dataset_path,
                    out_path,
                    lambda stage, n: advance(n, stage),
                    partition_rounds,
                    command=command,
                    alert_fdr=alert_fdr,
                    origin=dataset if is_remote(dataset) else None,
                    archive=archive_folder,
                )
                findings, alerts = results.findings.height, results.alerts.height
            if archive_folder is not None:
                add_after_audit(archive_folder, out_path)
    except AuditorError as error:
        fail(error)
    stdout.print(_counts_table(results.counts))
    _quarantine_digest(results.quarantine)
    stdout.print(f"{findings:,} findings written to {out}", highlight=False)
    # Alerts are statistics, not findings: reported, never in the exit status.
    written = f"{out.rstrip('/')}/alerts.parquet"
    stdout.print(
        f"{alerts:,} surveillance alerts (not findings) written to {written}", highlight=False
    )
    _warn_over_limit(memory_limit, limit_bytes)
    sys.exit(0 if exit_zero or findings == 0 else 1)


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
@click.argument("code", required=False)
@click.option(
    "--schema",
    is_flag=True,
    help="Print the JSON Schema of a rule pack (rules/*.yaml), for editors.",
)
@click.option(
    "--by-section",
    is_flag=True,
    help="Print the traceability matrix: every regulation section, its verdict and checks.",
)
def rules(code: str | None, schema: bool, by_section: bool) -> None:
    """List the checks (code, title, citation), or document one CODE in full.

    With --schema, print the JSON Schema of a rule pack instead, for editors. With
    --by-section, print every section of the four regulations (INDEX.md), whether the
    logs can audit it and the checks that do, or why none does.
    """
    if schema:
        import json

        from auditor.packs.sections import pack_json_schema

        click.echo(json.dumps(pack_json_schema(), indent=2))
        return
    if by_section:
        _sections_table()
        return
    from auditor.check_docs import check_docs

    checks = check_docs()
    if code:
        chosen = [c for c in checks if c.code == code.upper()]
        if not chosen:
            click.echo(f"error: no check {code!r}; `auditor rules` lists them", err=True)
            sys.exit(2)
        check = chosen[0]
        click.echo(f"{check.code} {check.name}: {check.title}")
        click.echo(f"severity: {check.severity}\ncites: {check.citation}\n")
        for heading, text in (
            ("What it does", check.what),
            ("Why is this bad?", check.why),
            ("Example", check.example),
        ):
            click.echo(f"## {heading}\n{text}\n")
        return
    table = Table(title=f"{len(checks)} checks")
    for name in ("code", "name", "title", "severity", "cites"):
        table.add_column(name)
    for check in checks:
        table.add_row(check.code, check.name, check.title, check.severity, check.citation)
    stdout.print(table)


def _sections_table() -> None:
    from auditor.output.traceability import matrix

    # Plain lines, one section each: 355 rows read (and grep) better than a wrapped table.
    sections = matrix()
    for (ruleset,), rows in sections.group_by("ruleset", maintain_order=True):
        audited = rows.filter(rows["codes"].list.len() > 0).height
        from_logs = rows.filter(rows["from_logs"]).height
        click.echo(
            f"{ruleset}: {rows.height} sections, {from_logs} auditable from the logs "
            f"(or partly), {audited} audited by checks"
        )
        for row in rows.iter_rows(named=True):
            codes = " ".join(row["codes"]) or "-"
            reason = f"  ({row['reason']})" if row["reason"] else ""
            click.echo(f"  {row['section']:<22}{row['verdict']:<15}{codes}{reason}")
        click.echo("")


@main.command()
@click.argument("before", type=click.Path(path_type=Path))
@click.argument("after", type=click.Path(path_type=Path))
@click.option(
    "--output", type=click.Path(path_type=Path), help="Write the differences as Parquet too."
)
def diff(before: Path, after: Path, output: Path | None) -> None:
    """Compare two audits' findings by finding id: new, gone and changed in AFTER.

    Exit status 0 when the findings are the same, 1 when they differ, 2 when an output
    folder cannot be read.
    """
    from auditor.output.diff import CHANGES, diff_runs, write_changes
    from auditor.output.verify import verified

    try:
        verified(before)
        verified(after)
        changes = diff_runs(before, after)
        if output is not None:
            write_changes(changes, output)
    except AuditorError as error:
        fail(error)
    counts = dict(changes.group_by("change").len().iter_rows())
    table = Table(title=", ".join(f"{counts.get(c, 0):,} {c}" for c in CHANGES))
    for name in ("change", "finding_id", "rule", "round_id", "wager_id", "what or message"):
        table.add_column(name)
    from auditor.commands.terminal import visible  # ids and messages quote the data

    for row in changes.head(200).iter_rows(named=True):
        cells = (
            *(row[c] for c in ("change", "finding_id", "rule")),
            row["round_id"] or row["shoe_id"] or row["table_id"],
            row["wager_id"],
            row["what"] or row["message"],
        )
        table.add_row(*(escape(visible(str(cell or ""))) for cell in cells))
    stdout.print(table)
    if changes.height > 200:
        stdout.print(f"... and {changes.height - 200:,} more", highlight=False)
    sys.exit(1 if changes.height else 0)


@main.command()
@click.argument("out", type=click.Path(path_type=Path))
@click.option("--rounds", type=click.IntRange(min=1), required=True, help="Rounds a night.")
@click.option("--seed", type=click.IntRange(0), default=0, show_default=True, help="Random seed.")
@click.option(
    "--faults",
    "fault_rate",
    type=click.FloatRange(0.0, 1.0),
    default=0.0,
    show_default=True,
    help="Share of rounds (and shoes) that receive one injected fault.",
)
@click.option(
    "--shoe-faults",
    "shoe_fault_rate",
    type=click.FloatRange(0.0, 1.0),
    help="Share of shoes that receive one injected shoe fault (default: --faults).",
)
@click.option(
    "--start",
    type=click.DateTime(["%Y-%m-%d"]),
    metavar="YYYY-MM-DD",
    help="First gaming day (noon to noon UTC): each night in a folder OUT/YYYY-MM-DD/ "
    "[default: one night in OUT itself; with --nights, from 2026-11-24].",
)
@click.option(
    "--nights",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Consecutive gaming days: the same tables, dealers and patrons, ids unique across "
    "nights, each night dealt from the seed and its date.",
)
def simulate(out: Path, rounds: int, seed: int, start, nights: int, **rates) -> None:
    """Deal ROUNDS rounds at tables of every ruleset and write a dataset to OUT; with
    --start or --nights, one dataset a night in OUT/YYYY-MM-DD/. OUT must be missing,
    empty or a previous simulation's (marked by its _simulation.json), which is
    replaced; anything else is refused with exit status 2."""
    from auditor.simulator.nights import deal

    archive = start is not None or nights > 1  # click gives --start as a datetime
    label = f"dealing {nights:,} night{'s' * (nights > 1)}" if archive else "dealing"
    day = start and start.date()
    try:
        with progress_bar(label, rounds * nights) as advance:
            summary = deal(out, rounds, seed, day, nights, archive, advance, **rates)
    except AuditorError as error:
        fail(error)
    click.echo(summary.text())


@main.command()
@click.option("--decks", type=int, required=True, help="Decks in the shoe (1 to 24).")
@click.option(
    "--ruleset", "rulesets", multiple=True, help="A ruleset (repeatable; default: every pack)."
)
@click.option(
    "--table-options",
    "option_words",
    multiple=True,
    help="key=value pairs, e.g. 'tie_pays=9 commission_percent=4 dragon_bonus_paytable=B'.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(("table", "json")),
    default="table",
    show_default=True,
    help="A table for a person, or JSON with exact fractions.",
)
@click.argument("more_options", nargs=-1)
def odds(
    decks: int, rulesets: tuple[str, ...], option_words: tuple[str, ...], fmt: str, more_options
) -> None:
    """Exact probabilities and house edges of every wager the ruleset permits.

    Full enumeration of a fresh shoe of --decks decks under the rule packs' draw tables
    and paytables. Table options (after --table-options, or as further KEY=VALUE
    arguments) fix what the table offers; left out, every permitted choice is shown.
    """
    import json

    from auditor.odds.options import parse_table_options
    from auditor.odds.report import odds_report, render, to_json

    try:
        options = parse_table_options((*option_words, *more_options))
        reports = odds_report(rulesets, decks, options)
    except AuditorError as error:
        fail(error)
    if fmt == "json":
        click.echo(json.dumps(to_json(reports, options), indent=2))
        return
    # Piped, rich would squeeze the table into 80 columns; a file reads better wide.
    console = stdout if stdout.is_terminal else Console(width=160)
    for ruleset_report in reports:
        for part in render(ruleset_report):
            console.print(part, highlight=False)


main.add_command(query)
main.add_command(archive)
main.add_command(review)
main.add_command(verify)
main.add_command(report)

if __name__ == "__main__":
    main()
