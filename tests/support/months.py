"""A month in the archive, as the tests that read one build it: thirty simulated nights
audited and archived one run a night (the last two by two `auditor archive add` at once),
three of them audited again from corrected logs, reviews recorded before and after.

Each night is small (200 rounds, faults in one round in ten) and audited in this process
without its HTML report: the month is under a minute of CPU to build, once a test session
(`archive_month` in tests/e2e/conftest.py).
"""

from __future__ import annotations

import csv
import shutil
import subprocess
import time
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

import duckdb
import polars as pl

from auditor.archive.store import add_run
from auditor.pipeline import run_audit
from tests.support.cli import AUDITOR, cli

NIGHTS = 30
START = date(2026, 11, 16)  # a Monday: the month spans five weeks and two calendar months
ROUNDS = 200
SEED = 2026
FAULTS = 0.1
# The nights audited again, and the fault each re-audit's logs no longer hold: a payout
# restored to what was owed (the fault key's impact taken off) or a late wager voided.
REAUDITS = ((8, "overpayment"), (15, "underpayment"), (24, "late_wager"))


def day_name(night: int) -> str:
    return (START + timedelta(days=night)).isoformat()


@dataclass(frozen=True)
class Reaudit:
    day: str
    fault: str  # the fault the corrected logs no longer hold
    wager_id: str
    fixed: list[str]  # the first run's findings on that wager: gone from the re-audit
    kept: str  # a finding of the night found again by the re-audit, reviewed before it
    first_run: str
    run_id: str


@dataclass(frozen=True)
class Month:
    root: Path
    archive: Path
    datasets: Path  # OUT/YYYY-MM-DD/ of `auditor simulate`
    outs: dict[str, Path]  # each night's first audit
    reaudits: list[Reaudit]
    concurrent: list[tuple[int, str]]  # exit status and stderr of the two adds at once
    seconds: dict[str, float]  # how long the build's steps took


def build_month(root: Path) -> Month:
    seconds: dict[str, float] = {}
    clock = time.perf_counter()
    datasets = root / "nights"
    dealt = {"--from": START, "--nights": NIGHTS, "--rounds": ROUNDS, "--seed": SEED}
    options = [part for pair in {**dealt, "--faults": FAULTS}.items() for part in pair]
    simulated = cli("simulate", "--out", datasets, *options)
    assert simulated.exit_code == 0, simulated.output
    seconds["simulate"] = time.perf_counter() - clock

    clock = time.perf_counter()
    outs = {day: root / "audits" / day for day in map(day_name, range(NIGHTS))}
    for day, out in outs.items():
        run_audit(datasets / day, out, report=False)
    seconds["audit"] = time.perf_counter() - clock

    clock = time.perf_counter()
    archive = root / "archive"
    for night in range(NIGHTS - 2):
        add_run(archive, outs[day_name(night)])
    # The last two nights: two `auditor archive add` processes at once.
    adds = [
        subprocess.Popen(
            [AUDITOR, "archive", "add", str(archive), str(outs[day_name(night)])],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        for night in (NIGHTS - 2, NIGHTS - 1)
    ]
    concurrent = [(add.communicate(timeout=300)[1], add.returncode) for add in adds]
    concurrent = [(code, err) for err, code in concurrent]
    seconds["add"] = time.perf_counter() - clock

    clock = time.perf_counter()
    chosen = [_fix_night(datasets, outs, root, night, fault) for night, fault in REAUDITS]
    _review_before(root, archive, outs, chosen)
    reaudits = []
    for fix in chosen:
        out = root / "reaudits" / fix["day"]
        run_audit(fix["dataset"], out, report=False)
        run, new = add_run(archive, out)
        assert new
        reaudits.append(
            Reaudit(
                day=fix["day"],
                fault=fix["fault"],
                wager_id=fix["wager_id"],
                fixed=fix["fixed"],
                kept=fix["kept"],
                first_run=run_id_of(outs[fix["day"]]),
                run_id=run.run_id,
            )
        )
    _review_after(root, archive, outs, chosen)
    seconds["reaudit"] = time.perf_counter() - clock
    return Month(
        root=root,
        archive=archive,
        datasets=datasets,
        outs=outs,
        reaudits=reaudits,
        concurrent=concurrent,
        seconds=seconds,
    )


def run_id_of(out: Path) -> str:
    with duckdb.connect(str(out / "audit.duckdb"), read_only=True) as con:
        return con.execute("SELECT run_id FROM runs").fetchone()[0]


def _fix_night(datasets: Path, outs: dict[str, Path], root: Path, night: int, fault: str) -> dict:
    """A copy of the night's dataset with one injected fault gone: the first of `fault`
    in the fault key, on a round with no other fault, away from Chemin de Fer (whose Bank
    settles against every wager of the round)."""
    day = day_name(night)
    key = pl.read_parquet(datasets / day / "fault_key.parquet")
    alone = key.group_by("round_id").len().filter(pl.col("len") == 1)["round_id"]
    candidates = key.filter(
        (pl.col("fault") == fault)
        & pl.col("round_id").is_in(alone.implode())
        & ~pl.col("table_id").str.contains("CDF")
    ).sort("round_id")
    assert candidates.height, f"{day}: no {fault} to remove"
    entry = candidates.row(0, named=True)
    dataset = root / "corrected" / day
    shutil.copytree(datasets / day, dataset)
    wagers = pl.read_parquet(dataset / "wagers.parquet")
    if fault == "late_wager":  # the wager is voided: out of the log
        wagers = wagers.filter(pl.col("wager_id") != entry["wager_id"])
    else:  # paid what was owed
        owed = pl.col("payout") - pl.lit(entry["impact"])
        fixed = pl.when(pl.col("wager_id") == entry["wager_id"]).then(owed)
        wagers = wagers.with_columns(fixed.otherwise(pl.col("payout")).alias("payout"))
    wagers.write_parquet(dataset / "wagers.parquet")
    findings = pl.read_parquet(outs[day] / "findings.parquet").sort("finding_id")
    fixed_ids = findings.filter(pl.col("wager_id") == entry["wager_id"])["finding_id"].to_list()
    assert fixed_ids, f"{day}: the first audit found nothing on {entry['wager_id']}"
    kept = findings.filter(pl.col("round_id") != entry["round_id"])["finding_id"][0]
    return {
        "day": day,
        "fault": fault,
        "wager_id": entry["wager_id"],
        "fixed": fixed_ids,
        "kept": kept,
        "dataset": dataset,
    }


def _located(outs: dict[str, Path]) -> pl.DataFrame:
    """Every first run's findings where they happened, in a fixed order."""
    frames = [pl.read_parquet(outs[day_name(n)] / "located.parquet") for n in range(NIGHTS)]
    return pl.concat(frames).sort("gaming_day", "finding_id")


def review_file(root: Path, name: str, rows: list[tuple[str, str, str, str]]) -> Path:
    path = root / name
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(("finding_id", "status", "note", "by"))
        writer.writerows(rows)
    return path


def _review_before(root: Path, archive: Path, outs: dict[str, Path], chosen: list[dict]) -> None:
    """The compliance team's first reviews, as a batch file and on the command line: the
    corrected payouts and the voided wager, a finding on each night to be re-audited,
    large wrong payouts escalated, the first late wagers dismissed."""
    taken = {f for c in chosen for f in (*c["fixed"], c["kept"])}
    located = _located(outs).filter(~pl.col("finding_id").is_in(sorted(taken)))
    note = "corrected in the log; re-exported"
    fixed = [(f, "corrected", note, "M. Ortiz") for c in chosen for f in c["fixed"]]
    kept = [(c["kept"], "explained", "seen on the tape", "J. Doe") for c in chosen]
    escalated = [(f, "escalated", "to the gaming agent", "R. Singh") for f in _large(located)]
    batch = review_file(root, "reviews-1.csv", fixed + kept + escalated)
    result = cli("review", archive, "--from-file", batch)
    assert result.exit_code == 0, result.output
    late = located.filter(pl.col("rule") == "WAG004")["finding_id"].head(5)
    how = ("--status", "dismissed", "--note", "clock drift", "--by", "J. Doe")
    result = cli("review", archive, *late, *how)
    assert result.exit_code == 0, result.output


def _large(located: pl.DataFrame) -> pl.Series:
    """Wrong payouts of $500 or more in the first two weeks."""
    return located.filter(
        (pl.col("rule") == "PAY002")
        & (pl.col("impact").abs() >= 500)
        & (pl.col("gaming_day") < START + timedelta(days=14))
    )["finding_id"]


def _review_after(root: Path, archive: Path, outs: dict[str, Path], chosen: list[dict]) -> None:
    """Later reviews: two escalations settled (a second record: the latest stands) and
    the table options findings of the first week explained."""
    taken = {f for c in chosen for f in (*c["fixed"], c["kept"])}
    located = _located(outs).filter(~pl.col("finding_id").is_in(sorted(taken)))
    settled = [(f, "corrected", "patron repaid", "R. Singh") for f in _large(located).head(2)]
    options = located.filter(
        (pl.col("rule") == "TBL001") & (pl.col("gaming_day") < START + timedelta(days=7))
    )["finding_id"]
    note = "options row mistyped; table as approved"
    explained = [(f, "explained", note, "A. Lee") for f in options]
    batch = review_file(root, "reviews-2.csv", settled + explained)
    result = cli("review", archive, "--from-file", batch)
    assert result.exit_code == 0, result.output
