"""`auditor validate DATASET`: the dataset checked against the contract, rows quarantined
and counted, nothing audited."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from auditor.commands.accounting import counts_table, quarantine_digest, validation_data
from auditor.commands.formats import format_option
from auditor.commands.progress import progress_bar, rows_in
from auditor.commands.shared_options import loaded_packs, rules_options
from auditor.commands.terminal import fail, stdout
from auditor.errors import AuditorError, ExitStatus


@click.command()
@click.argument("dataset")
@format_option()
@rules_options
def validate(dataset: str, fmt: str, rules_dir: Path | None, replace_builtin: bool) -> None:
    """Check DATASET (a folder, a file:// or another fsspec URL) against the contract;
    report quarantined rows without auditing. --format table shows the row accounting
    and the first quarantined rows, csv the row accounting, json the accounting and
    every quarantine entry. It holds what `audit` holds under its default --memory-limit.

    Exit status: 0 every row passed, 1 rows quarantined, 2 unusable input.

    Examples:

    \b
      auditor validate /exports/2026-11-24
      auditor validate s3://exports/2026-11-24 --format json
      auditor validate /exports/2026-11-24 --rules /packs/freedonia
    """
    from auditor.commands.locations import dataset_folder
    from auditor.input.partition import DEFAULT_PARTITION_ROUNDS
    from auditor.pipeline import run_validation

    try:
        packs = loaded_packs(rules_dir, replace_builtin)
        with (
            dataset_folder(dataset) as folder,
            progress_bar("validating", rows_in(folder)) as advance,
        ):
            # The ids checked in buckets and the rows read in batches that fit, as an audit's.
            result = run_validation(
                folder,
                lambda _table, n: advance(n),
                partition_rounds=DEFAULT_PARTITION_ROUNDS,
                packs=packs,
            )
    except AuditorError as error:
        fail(error)
    if fmt == "table":
        stdout.print(counts_table(result.counts))
        quarantine_digest(result.quarantine)
    else:
        validation_data(result.counts, result.quarantine, fmt)
    sys.exit(ExitStatus.FOUND if result.quarantine.height else ExitStatus.OK)
