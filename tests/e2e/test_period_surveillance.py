"""Surveillance over a period (`auditor surveil`): a planted month whose frauds no night
shows and the period finds; clean months; runs superseded; the catalog's tables; the
bucketed sums equal to the sums at once."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import polars as pl
import pytest

from auditor.archive.catalog import CATALOG_FILE
from auditor.archive.periods import nights_in_force, surveil
from auditor.archive.store import add_run
from auditor.pipeline import run_audit
from auditor.surveillance import period
from auditor.surveillance.period import survey_period
from tests.support.planted import (
    DEALER,
    DEALER_TABLES,
    END,
    NIGHTS,
    PATRON,
    START,
    archived_month,
    copy_of_planted,
)


@pytest.fixture(scope="module")
def planted(planted_month: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list]:
    root = copy_of_planted(planted_month, tmp_path_factory.mktemp("planted"))
    nights = sorted((root / "out").iterdir())
    return root, nights


def test_no_night_shows_the_plants_and_the_month_does(planted: tuple[Path, list]) -> None:
    root, nights = planted
    subjects = [PATRON, DEALER, *DEALER_TABLES]
    assert len(nights) == NIGHTS
    for night in nights:
        assert pl.read_parquet(night / "findings.parquet").height == 0  # payouts as dealt
        alerts = pl.read_parquet(night / "alerts.parquet")
        assert alerts.filter(pl.col("key").is_in(subjects)).height == 0
    done = surveil(root / "archive", START, END)
    assert done.surveillance.nights == NIGHTS and done.notes == []
    alerts = done.surveillance.alerts
    found = set(zip(alerts["key"], alerts["statistic"], strict=True))
    assert (PATRON, "dragon_bonus_win_rate") in found
    assert (DEALER, "hold") in found
    # The patron's Dragon Bonus wins at about twice the game's chance.
    row = alerts.filter(pl.col("key") == PATRON).row(0, named=True)
    assert 1.6 < row["observed"] / row["expected"] < 2.4
    # The dealer's tables keep about two points less than in theory, seen over all of
    # them, the z-score on the hold's side; nothing else is alerted.
    row = alerts.filter((pl.col("key") == DEALER) & (pl.col("statistic") == "hold")).row(
        0, named=True
    )
    assert row["level"] == "dealer" and row["z"] < 0
    assert 0.01 < row["expected"] - row["observed"] < 0.03
    others = alerts.filter(~pl.col("key").is_in([PATRON, DEALER, *DEALER_TABLES]))
    assert others.height == 0
    assert (alerts["period_from"] == START).all() and (alerts["period_to"] == END).all()


def test_catalog_tables_and_the_command(planted: tuple[Path, list], tmp_path: Path) -> None:
    root, _ = planted
    archive = root / "archive"
    command = [sys.executable, "-m", "auditor", "surveil", str(archive)]
    dates = ["--from", START.isoformat(), "--to", END.isoformat()]
    env = {**os.environ, "NO_COLOR": "1"}
    shown = subprocess.run(
        [*command, *dates], cwd=tmp_path, capture_output=True, text=True, env=env
    )
    assert shown.returncode == 0, shown.stderr  # alerts are not findings
    assert PATRON in shown.stdout and "dragon_bonus_win_rate" in shown.stdout
    con = duckdb.connect(str(archive / CATALOG_FILE), read_only=True)
    try:
        tests, alerts = con.execute(
            "SELECT (SELECT count(*) FROM period_surveillance WHERE period_from = $s "
            "AND period_to = $e), (SELECT count(*) FROM period_alerts WHERE period_from = $s)",
            {"s": START, "e": END},
        ).fetchone()
    finally:
        con.close()
    assert tests > 1000 and alerts >= 2
    helped = subprocess.run([*command[:-1], "-h"], cwd=tmp_path, capture_output=True, text=True)
    assert helped.returncode == 0 and "Examples" in helped.stdout
    wrong = subprocess.run(
        [*command, "--from", END.isoformat(), "--to", START.isoformat()],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert wrong.returncode == 2


def test_buckets_sum_as_one(
    planted: tuple[Path, list], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, _ = planted
    nights, _ = nights_in_force(root / "archive", START, END)
    whole = survey_period(nights, START, END, tmp_path / "one")
    monkeypatch.setattr(period, "MIN_BUCKET_CELLS", 1)
    # About 2,000 cells a bucket: several buckets of the month's patrons.
    bucketed = survey_period(nights, START, END, tmp_path / "many", budget_bytes=2_000_000)
    spread = period.spread(nights, tmp_path / "spread", 2_000_000)
    assert spread["patron"] >= 5
    one, many = pl.read_parquet(whole.tests), pl.read_parquet(bucketed.tests)
    assert one.select("level", "key", "statistic").equals(many.select("level", "key", "statistic"))
    for column in ("observed", "expected", "p_value", "q_value"):
        assert one[column].to_numpy() == pytest.approx(
            many[column].to_numpy(), rel=1e-9, nan_ok=True
        )
    assert one["alert"].equals(many["alert"])


def test_a_reaudit_replaces_the_superseded_counts(planted: tuple[Path, list]) -> None:
    root, _ = planted
    archive = root / "archive"
    before, _ = nights_in_force(archive, START, END)
    day = START.isoformat()
    again = root / "again"
    run_audit(root / "data" / day, again, report=False)
    add_run(archive, again)
    after, notes = nights_in_force(archive, START, END)
    assert len(after) == len(before) == NIGHTS and notes == []
    old = {n.folder.parent.name for n in before} - {n.folder.parent.name for n in after}
    new = {n.folder.parent.name for n in after} - {n.folder.parent.name for n in before}
    assert len(old) == 1 and len(new) == 1  # the first night's run gave way to its re-audit


@pytest.mark.parametrize("seed", [11, 12, 13])
def test_clean_months_raise_no_more_alerts_than_the_rate(tmp_path: Path, seed: int) -> None:
    archived_month(tmp_path, 500, seed, None)
    done = surveil(tmp_path / "archive", START, END)
    # At a false-discovery rate of 0.01, a month of fair play raises any alert at all with
    # a chance of at most 1%.
    assert done.surveillance.alerts.height == 0


def test_links_planted_among_the_periods_are_not_followed(planted: tuple[Path, list]) -> None:
    from auditor.archive.catalog import rebuild_catalog
    from auditor.archive.store import ArchiveError

    root, _ = planted
    archive = root / "archive"
    surveil(archive, START, END)

    def alerts() -> int:
        with duckdb.connect(str(archive / CATALOG_FILE), read_only=True) as con:
            return con.execute("SELECT count(*) FROM period_alerts").fetchone()[0]

    counted = alerts()
    # A period folder that is a link (to this archive's own period: its rows would count
    # twice, or to another archive's): left out of the catalog.
    real = archive / "periods" / f"{START.isoformat()}_{END.isoformat()}"
    (archive / "periods" / "2026-12-01_2026-12-31").symlink_to(real)
    rebuild_catalog(archive)
    assert alerts() == counted
    # The periods folder itself a link to elsewhere: refused, nothing written there.
    elsewhere = root / "elsewhere"
    elsewhere.mkdir()
    shutil.move(archive / "periods", root / "periods-aside")
    (archive / "periods").symlink_to(elsewhere)
    try:
        with pytest.raises(ArchiveError, match="not a folder of the archive's own"):
            surveil(archive, START, END)
        assert list(elsewhere.iterdir()) == []
    finally:
        (archive / "periods").unlink()
        shutil.move(root / "periods-aside", archive / "periods")
        (archive / "periods" / "2026-12-01_2026-12-31").unlink()
