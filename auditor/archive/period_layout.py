"""Where a period's surveillance lies in the archive: `ARCHIVE/periods/FROM_TO/N/`, one
folder per `auditor surveil` run of the period, numbered from 1 in the order they were
written, each holding its tests and alerts at the false-discovery rate it was run at. A
rerun at another rate (or after a re-audit) is a run of its own beside the earlier ones:
nothing a surveil wrote is replaced.

An archive written before the runs were kept holds one surveillance per period, its files
directly in `periods/FROM_TO/`: read as that period's run 1, and a later surveil of the
period is its run 2. The archive's record names a run `FROM_TO/N`, and such an earlier
run `FROM_TO`, as it was recorded then.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

PERIODS = "periods"
PERIOD_NAME = re.compile(r"\d{4}-\d\d-\d\d_\d{4}-\d\d-\d\d")
RUN_NUMBER = re.compile(r"[1-9]\d{0,8}")
TESTS_FILE = "tests.parquet"
ALERTS_FILE = "alerts.parquet"
EARLIER_RUN = 1  # the number of the one surveillance an earlier archive kept of a period


@dataclass(frozen=True)
class PeriodRunFolder:
    period: str  # FROM_TO
    number: int
    folder: Path  # where its files are
    earlier: bool  # written before the runs were kept: its files in the period's folder

    @property
    def name(self) -> str:
        """Its name in the archive's record."""
        return self.period if self.earlier else f"{self.period}/{self.number}"


def period_folders(archive: Path) -> list[Path]:
    """ARCHIVE/periods/FROM_TO folders, each a folder of its own (not a link), by name."""
    periods = archive / PERIODS
    if periods.is_symlink() or not periods.is_dir():
        return []
    return sorted(
        p
        for p in periods.iterdir()
        if PERIOD_NAME.fullmatch(p.name) and p.is_dir() and not p.is_symlink()
    )


def _is_earlier_file(path: Path) -> bool:
    return path.name in (TESTS_FILE, ALERTS_FILE) and path.is_file() and not path.is_symlink()


def period_runs(archive: Path) -> list[PeriodRunFolder]:
    """Every surveil run the archive's periods hold, by period then number: a numbered
    folder of its own (no link), or an earlier archive's files in the period's folder."""
    found = []
    for folder in period_folders(archive):
        if any(_is_earlier_file(p) for p in folder.iterdir()):
            found.append(PeriodRunFolder(folder.name, EARLIER_RUN, folder, True))
        found += [
            PeriodRunFolder(folder.name, int(p.name), p, False)
            for p in folder.iterdir()
            if is_run_folder(p)
        ]
    return sorted(found, key=lambda run: (run.period, run.number))


def run_files(run: PeriodRunFolder) -> list[Path]:
    """The files of a run (an earlier run's: only its own, beside the numbered folders)."""
    if run.earlier:
        return sorted(p for p in run.folder.iterdir() if not is_run_folder(p))
    return sorted(run.folder.iterdir())


def is_run_folder(path: Path) -> bool:
    return RUN_NUMBER.fullmatch(path.name) is not None and path.is_dir() and not path.is_symlink()


def next_run_number(period_folder: Path) -> int:
    archive = period_folder.parent.parent
    numbers = [r.number for r in period_runs(archive) if r.period == period_folder.name]
    return max(numbers, default=0) + 1
