"""The planted month: thirty simulated nights of 12,000 rounds on the floor's twelve tables,
with a patron whose Dragon Bonus wagers win at about twice the game's chance and a dealer
whose tables keep about two points under their theoretical hold, each night audited and
archived. No night shows the plants; surveillance over the month finds both.

Built once a test session (`planted_month` in tests/e2e/conftest.py), a minute of audits;
each test module takes its own copy of the archive (`copy_of_planted`) to add and surveil.
"""

from __future__ import annotations

import shutil
from datetime import date, timedelta
from pathlib import Path

import polars as pl
from click.testing import Result

from auditor.archive.store import add_run
from auditor.pipeline import run_audit
from auditor.simulator.nights import simulate_nights
from auditor.simulator.plants import Plant
from tests.support.cli import cli

START = date(2026, 11, 1)
NIGHTS = 30
END = date(2026, 11, NIGHTS)
ROUNDS = 12_000  # a night's, over the floor's twelve tables
PATRON, PATRON_TABLE = "PT010001", "T-MA-BAC-01"
DEALER = "D0701"
# Two points of hold under theory are about one standard deviation over 30,000 hand
# wagers of the simulator's spread of stakes: the dealer deals eight tables' shoes (half
# a million wagers a month), and the patron sits at a shoe or two a night.
DEALER_TABLES = (
    "T-MA-BAC-02", "T-MA-BAC-03", "T-MA-MID-01", "T-MA-MID-02", "T-MA-MID-03",
    "T-MD-MIN-01", "T-MD-MIN-02", "T-MD-MIN-03",
)  # fmt: skip
PLANT = Plant(PATRON, PATRON_TABLE, DEALER, DEALER_TABLES, patron_shoes=0.15)


def archived_month(root: Path, rounds: int, seed: int, plant: Plant | None) -> list:
    """A month of `rounds`-round nights from `seed` (with `plant` planted, or fair play),
    each night audited into ROOT/out/DAY and archived in ROOT/archive."""
    simulate_nights(root / "data", rounds, seed, START, NIGHTS, plant=plant)
    nights = []
    for day in sorted(p for p in (root / "data").iterdir() if p.is_dir()):
        out = root / "out" / day.name
        nights.append(run_audit(day, out, report=False))
        add_run(root / "archive", out)
    return nights


def build_planted_month(root: Path) -> Path:
    """The planted month's datasets (ROOT/data), output sets (ROOT/out) and archive."""
    archived_month(root, ROUNDS, 1, PLANT)
    return root


def copy_of_planted(built: Path, copy_to: Path) -> Path:
    """The planted month at `copy_to`: its archive copied, so that a test may add and
    surveil; its datasets and output sets linked, read and never written."""
    copy_to.mkdir(parents=True, exist_ok=True)
    for name in ("data", "out"):
        (copy_to / name).symlink_to(built / name)
    shutil.copytree(built / "archive", copy_to / "archive", symlinks=True)
    return copy_to


# ---- three planted nights, surveilled once ------------------------------------------------

PERIOD_START, PERIOD_NIGHTS = START, 3
PERIOD_END = PERIOD_START + timedelta(days=PERIOD_NIGHTS - 1)
PERIOD = f"{PERIOD_START}_{PERIOD_END}"
# The period's first surveil run: its folder, and its name in the archive's record.
PERIOD_RUN = f"{PERIOD}/1"
# Three nights of the planted patron are too few for the default rate to alert on them;
# at this rate the period holds an alert, for a tampered file to leave out.
LENIENT_FDR = "0.5"


def surveilled_nights(root: Path) -> Path:
    """Three planted nights audited, archived and surveilled at LENIENT_FDR, by the
    auditor's commands; the archive (ROOT/archive)."""
    simulate_nights(root / "data", ROUNDS, 1, PERIOD_START, PERIOD_NIGHTS, plant=PLANT)
    archive = root / "archive"
    for day in sorted(p for p in (root / "data").iterdir() if p.is_dir()):
        out = root / "out" / day.name
        assert cli("audit", day, "--out", out, "--exit-zero").exit_code == 0
        assert cli("archive", "add", archive, out).exit_code == 0
    dates = ("--from", PERIOD_START, "--to", PERIOD_END, "--alert-fdr", LENIENT_FDR)
    done = cli("surveil", archive, *dates)
    assert done.exit_code == 0, done.output
    assert pl.read_parquet(archive / "periods" / PERIOD_RUN / "alerts.parquet").height > 0
    return archive


def period_report(archive: Path, target: Path) -> Result:
    """`auditor report ARCHIVE --period` of the three nights, written to `target`."""
    return cli("report", archive, "--period", f"{PERIOD_START}..{PERIOD_END}", "-o", target)


def verify_output(archive: Path) -> tuple[int, str]:
    """`auditor verify ARCHIVE`: its exit status and what it printed."""
    result = cli("verify", archive)
    return result.exit_code, result.output
