"""Gathering: a table's many small files copied into one file before the audit reads them.

Reading a Parquet file costs a fixed price besides its rows (its footer, its reader: about
0.2 ms in polars for a wager's columns, what 1,000 of its rows cost). The audit reads a
table several times over (validation's row checks and id checks, each partition's
stages), so a table in 10,000 files of a few dozen rows would pay that price 10,000
times a read, seconds each time. One streaming pass copies each run of many small files
(`scan.Run`) into one file of a temporary folder, in the files' own types and with each
row's `_file` and `_row`; every later read takes that copy, so the price per file is paid
once. Rows, provenance and so the findings and the quarantine are the same either way
(`tests/integration/test_many_files.py`). The copy takes about the table's size on disk,
and lives as long as the dataset that reads it.
"""

from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path

import polars as pl

from auditor.errors import AuditorError
from auditor.input.load import Dataset
from auditor.input.scan import Run, raw_scan, table_runs, unreadable

# A run is gathered when it holds this many files at least, of this many rows or fewer
# on average: fewer files cost little however often they are read, and a larger file's
# price is small beside its rows', whose copy would then cost more than it saves.
GATHER_MIN_FILES = 100
GATHER_MAX_AVERAGE_ROWS = 1_000


def gather_small_files(dataset: Dataset) -> Dataset:
    """The dataset, with its runs of many small files copied into one file each (in a
    temporary folder removed with the dataset returned); the dataset itself if none is."""
    runs = [run for table in dataset.tables() for run in table_runs(dataset, table)]
    chosen = [run for run in runs if _worth_gathering(run)]
    if not chosen:
        return dataset
    folder = tempfile.TemporaryDirectory(prefix="auditor-gather-")
    gathered = dict(dataset.gathered)
    for index, run in enumerate(chosen):
        target = Path(folder.name) / f"{run.first.table}-{index}.parquet"
        _copy(run, target)
        gathered[run.first.path] = target
    return replace(dataset, gathered=gathered, gathered_in=folder)


def _worth_gathering(run: Run) -> bool:
    files = len(run.files)
    small = run.rows <= GATHER_MAX_AVERAGE_ROWS * files
    return run.gathered is None and files >= GATHER_MIN_FILES and small


def _copy(run: Run, target: Path) -> None:
    try:
        # Read once and soon: the fastest codec, not the smallest file.
        raw_scan(run).sink_parquet(target, compression="lz4")
    except (OSError, pl.exceptions.PolarsError) as exc:
        # A file that cannot be read is named; otherwise the copy could not be written.
        raise unreadable(run.files) or AuditorError(
            f"{target}: the copy of table '{run.first.table}' ({len(run.files):,} small "
            f"files) could not be written ({exc}); TMPDIR names the temporary folder"
        ) from exc
