"""Command line: parses arguments and calls the library; nothing else lives here.

Exit codes follow ruff and sqlfluff: 0 clean, 1 findings (or quarantined rows for
`validate`), 2 when the input or the command cannot be used.
"""

from __future__ import annotations

import sys
from contextlib import contextmanager
from pathlib import Path

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from auditor import __version__
from auditor.errors import AuditorError
from auditor.input.partition import PARTITION_ROUNDS

stderr = Console(stderr=True)
stdout = Console()


@click.group()
@click.version_option(__version__, prog_name="auditor")
def main() -> None:
    """Compliance hand-history auditor for casino baccarat."""


@contextmanager
def _progress(description: str, total: int | None):
    progress = Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=stderr,
        transient=True,
        disable=not stderr.is_terminal,
    )
    with progress:
        task = progress.add_task(description, total=total)
        yield lambda n: progress.advance(task, n)


def _fail(error: AuditorError) -> None:
    # click.echo, not rich: a path in the message must not be wrapped mid-name.
    click.echo(f"error: {error}", err=True)
    sys.exit(error.exit_code)


def _rows_in(dataset_path: Path, table: str | None = None) -> int:
    from auditor.input.load import open_dataset

    dataset = open_dataset(dataset_path)
    tables = [table] if table else list(dataset.files)
    return sum(s.rows for t in tables for s in dataset.files.get(t, ()))


def _counts_table(counts) -> Table:
    table = Table(title="Row accounting")
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
        stdout.print(
            f"  {row['table']} {row['row_key']} ({row['file']} row {row['row']}): "
            f"{row['column']}={row['value']!s}: {row['reason']}",
            highlight=False,
            markup=False,
        )
    if quarantine.height > limit:
        stdout.print(f"  ... and {quarantine.height - limit:,} more", highlight=False)


@main.command()
@click.argument("dataset", type=click.Path(path_type=Path))
def validate(dataset: Path) -> None:
    """Check DATASET against the contract; report quarantined rows without auditing."""
    from auditor.audit import run_validation

    try:
        with _progress("validating", _rows_in(dataset)) as advance:
            result = run_validation(dataset, lambda _table, n: advance(n))
    except AuditorError as error:
        _fail(error)
    stdout.print(_counts_table(result.counts))
    _quarantine_digest(result.quarantine)
    sys.exit(1 if result.quarantine.height else 0)


@main.command()
@click.argument("dataset", type=click.Path(path_type=Path))
@click.option("--out", "out", required=True, type=click.Path(path_type=Path), help="Output folder.")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when findings were written.")
@click.option(
    "--partition-rounds",
    type=click.IntRange(min=1),
    default=PARTITION_ROUNDS,
    show_default=True,
    help="Rounds audited together (whole tables); lower it to use less memory.",
)
def audit(dataset: Path, out: Path, exit_zero: bool, partition_rounds: int) -> None:
    """Audit DATASET and write findings, quarantine, row counts and a DuckDB file to OUTDIR."""
    from auditor.audit import run_audit

    try:
        # Validation advances by the rows of every table, then the audit by the rounds.
        with _progress("auditing", _rows_in(dataset) + _rows_in(dataset, "rounds")) as advance:
            results = run_audit(dataset, out, lambda _t, n: advance(n), partition_rounds)
    except AuditorError as error:
        _fail(error)
    stdout.print(_counts_table(results.counts))
    _quarantine_digest(results.quarantine)
    stdout.print(f"{results.findings.height:,} findings written to {out}", highlight=False)
    sys.exit(0 if exit_zero or results.findings.height == 0 else 1)


@main.command()
@click.argument("code", required=False)
def rules(code: str | None) -> None:
    """List the checks (code, title, citation), or document one CODE in full."""
    from auditor.audit import all_checks

    checks = all_checks()
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


@main.command()
@click.argument("out", type=click.Path(path_type=Path))
@click.option("--rounds", type=click.IntRange(min=1), required=True, help="Rounds to deal.")
@click.option("--seed", type=int, default=0, show_default=True, help="Random seed.")
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
    default=None,
    help="Share of shoes that receive one injected shoe fault (default: --faults).",
)
def simulate(
    out: Path, rounds: int, seed: int, fault_rate: float, shoe_fault_rate: float | None
) -> None:
    """Deal ROUNDS rounds at tables of every ruleset and write a dataset to OUT."""
    from auditor.simulator.simulate import simulate as run_simulation

    try:
        with _progress("dealing", rounds) as advance:
            summary = run_simulation(
                out,
                rounds=rounds,
                seed=seed,
                fault_rate=fault_rate,
                progress=advance,
                shoe_fault_rate=shoe_fault_rate,
            )
    except AuditorError as error:
        _fail(error)
    stdout.print(summary)


if __name__ == "__main__":
    main()
