"""Archives of many nights (`auditor simulate --from --to`, `--nights`) and the simulator's
output folder: one dataset per gaming day, the same tables every night, ids unique across
nights, byte-identical reruns, and no folder overwritten that a simulation did not write.
"""

from __future__ import annotations

import re
import shutil
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest

from auditor.commands.shared_options import deprecation_note
from auditor.contract import TABLES
from auditor.simulator.folder import MARKER, FolderInUse
from auditor.simulator.nights import simulate_nights
from auditor.simulator.simulate import simulate
from tests.support.checker import SYMPTOMS, Checker
from tests.support.cli import cli
from tests.support.paths import SAMPLE

ARCHIVE = ["--from", "2026-11-01", "--nights", "3", "--rounds", "300", "--seed", "1"]
DAYS = ("2026-11-01", "2026-11-02", "2026-11-03")
NIGHT_FILES = sorted([MARKER, "fault_key.parquet", *(f"{t}.parquet" for t in TABLES)])


def tree(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def window(day: str) -> tuple[datetime, datetime]:
    noon = datetime.fromisoformat(day).replace(hour=12, tzinfo=UTC)
    return noon, noon + timedelta(days=1)


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("archive") / "nights"
    result = cli("simulate", "--out", out, *ARCHIVE)
    assert result.exit_code == 0, result.output
    return out, result.output


def read(out: Path, day: str, table: str) -> pl.DataFrame:
    return pl.read_parquet(out / day / f"{table}.parquet")


def test_one_dataset_folder_per_night(archive) -> None:
    out, _ = archive
    assert sorted(p.name for p in out.iterdir()) == [*DAYS, MARKER]
    for day in DAYS:
        assert sorted(p.name for p in (out / day).iterdir()) == NIGHT_FILES
        assert read(out, day, "rounds").height == 300
        assert read(out, day, "fault_key").height == 0


def test_each_night_audits_cleanly(archive, tmp_path: Path) -> None:
    out, _ = archive
    for day in DAYS:
        result = cli("audit", out / day, "--out", tmp_path / day)
        assert result.exit_code == 0, result.output
        assert pl.read_parquet(tmp_path / day / "findings.parquet").height == 0


def test_every_time_of_a_night_falls_within_its_gaming_day(archive) -> None:
    out, _ = archive
    columns = {
        "shoes": ["opened_at"],
        "rounds": ["dealt_at", "no_more_bets_at"],
        "wagers": ["placed_at"],
        "commission_collections": ["collected_at"],
        "tables": ["effective_from"],
    }
    for day in DAYS:
        start, end = window(day)
        for table, names in columns.items():
            for name in names:
                times = read(out, day, table)[name].drop_nulls()
                assert times.len() > 0, (day, table, name)
                assert start <= times.min() and times.max() < end, (day, table, name)


def test_the_nights_share_their_tables_dealers_and_patrons(archive) -> None:
    out, _ = archive
    options = [c for c in TABLES["tables"] if c != "effective_from"]
    first = read(out, DAYS[0], "tables").select(options).unique().sort(options)
    assert first["table_id"].n_unique() == 12
    seats = read(out, DAYS[0], "royal9_seats").sort(pl.all())
    dealers: dict[str, set[str]] = {}
    for day in DAYS:
        assert read(out, day, "tables").select(options).unique().sort(options).equals(first)
        assert read(out, day, "royal9_seats").sort(pl.all()).equals(seats)
        rounds = read(out, day, "rounds")
        for table, dealer in rounds.select("table_id", "dealer_id").unique().iter_rows():
            dealers.setdefault(table, set()).add(dealer)
        patrons = read(out, day, "wagers")["patron_id"].drop_nulls()
        assert patrons.str.contains(r"^PT\d{6}$").all()
    # Five dealers to a table, the same every night: some deal at one table on two nights.
    assert all(len(names) <= 5 for names in dealers.values())
    assert sum(len(names) for names in dealers.values()) < read(out, DAYS[0], "shoes").height * 3


def test_ids_carry_their_night_and_never_repeat_across_nights(archive) -> None:
    out, _ = archive
    for table, column in [
        ("shoes", "shoe_id"),
        ("rounds", "round_id"),
        ("wagers", "wager_id"),
        ("commission_collections", "collection_id"),
    ]:
        seen: set[str] = set()
        for day in DAYS:
            ids = read(out, day, table)[column]
            assert ids.str.contains(f"^[A-Z]+{day.replace('-', '')}-").all(), (table, day)
            assert seen.isdisjoint(ids), (table, day)
            seen |= set(ids)


def test_the_nights_are_dealt_differently(archive) -> None:
    out, _ = archive
    hands = [read(out, day, "rounds")["player_cards"].to_list() for day in DAYS]
    assert hands[0] != hands[1] != hands[2] != hands[0]


def test_a_rerun_writes_the_same_bytes(archive, tmp_path: Path) -> None:
    out, _ = archive
    again = tmp_path / "again"
    assert cli("simulate", again, *ARCHIVE).exit_code == 0
    assert tree(again) == tree(out)
    # A night is dealt the same in any archive that holds it: from the seed and its date.
    alone = tmp_path / "alone"
    assert cli("simulate", alone, *ARCHIVE[2:], "--from", DAYS[1]).exit_code == 0
    assert tree(alone / DAYS[1]) == tree(out / DAYS[1])


def test_the_summary_is_written_for_a_person(archive, tmp_path: Path) -> None:
    _, output = archive
    for text in (output, cli("simulate", "--out", tmp_path / "one", "--rounds", "200").output):
        assert not re.search(r"\w+\(|\{|\}|PosixPath|Summary", text), text
        assert "ma-chemin-de-fer  3 tables" in text
        assert "faults injected: none" in text
    lines = output.splitlines()
    assert [line.split()[0] for line in lines[1:5]] == [*DAYS, "in"]
    assert all("300 rounds in 12 shoes" in line for line in lines[1:4])
    faulty = cli(
        "simulate", "--out", tmp_path / "faulty", "--rounds", "300", "--faults", "0.1"
    ).output
    assert re.search(r"faults injected: \d+ of \d+ kinds, keyed in .*fault_key.parquet", faulty)


def test_a_folder_holding_anything_else_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "notes.txt").write_text("keep me")
    for args in (["--rounds", "10"], ARCHIVE):
        result = cli("simulate", folder, *args)
        assert result.exit_code == 2
        assert result.output.count("error:") == 1 and "notes.txt" in result.output
        assert [p.name for p in folder.iterdir()] == ["notes.txt"]
        assert (folder / "notes.txt").read_text() == "keep me"
    sample = tmp_path / "sample"
    shutil.copytree(SAMPLE, sample)
    before = tree(sample)
    assert cli("simulate", sample, "--rounds", "10").exit_code == 2
    assert tree(sample) == before
    # A previous simulation with a file of someone else's in it is not replaced either.
    previous = tmp_path / "previous"
    simulate(previous, 20, seed=1)
    (previous / "2026-11-01").mkdir()
    (previous / "2026-11-01" / "findings.parquet").write_bytes(b"not ours")
    with pytest.raises(FolderInUse, match=re.escape("2026-11-01/findings.parquet")):
        simulate_nights(previous, 20, 1, date(2026, 11, 1), 2)
    assert (previous / "2026-11-01" / "findings.parquet").read_bytes() == b"not ours"
    (tmp_path / "file").write_text("a file")
    assert cli("simulate", tmp_path / "file", "--rounds", "1").exit_code == 2
    assert (tmp_path / "file").read_text() == "a file"


def test_a_previous_simulation_is_replaced(archive, tmp_path: Path) -> None:
    out = tmp_path / "out"
    shutil.copytree(archive[0], out)
    assert cli("simulate", out, "--rounds", "50", "--seed", "2").exit_code == 0
    assert sorted(p.name for p in out.iterdir()) == NIGHT_FILES
    assert pl.read_parquet(out / "rounds.parquet").height == 50
    result = cli("simulate", out, "--nights", "2", "--rounds", "40")
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir()) == ["2026-11-24", "2026-11-25", MARKER]
    # A run that stopped part way left its marker first: it is replaced too.
    (out / "2026-11-25" / "rounds.parquet").unlink()
    assert cli("simulate", out, "--rounds", "30").exit_code == 0
    assert sorted(p.name for p in out.iterdir()) == NIGHT_FILES


def test_progress_advances_over_every_night(tmp_path: Path) -> None:
    seen: list[int] = []
    summary = simulate_nights(tmp_path / "p", 250, 3, date(2027, 2, 27), 3, progress=seen.append)
    assert sum(seen) == 750
    assert [str(n.gaming_day) for n in summary.nights] == ["2027-02-27", "2027-02-28", "2027-03-01"]


def test_a_crowded_night_is_dealt_faster_within_its_day_and_breaks_only_keyed_rules(
    tmp_path: Path,
) -> None:
    """More rounds than the tables deal at their usual pace from six in the evening to
    noon: the intervals shrink so that the night still ends by noon, and each injected
    fault still breaks exactly its rule (the independent checker of test_simulate)."""
    day = date(2026, 11, 7)
    summary = simulate(tmp_path, 24_000, seed=9, fault_rate=0.04, gaming_day=day)
    start, end = window(day.isoformat())
    rounds = pl.read_parquet(tmp_path / "rounds.parquet")
    shoes = pl.read_parquet(tmp_path / "shoes.parquet")
    assert rounds.height == 24_000
    assert start <= shoes["opened_at"].min() and rounds["dealt_at"].max() < end
    last = rounds.group_by("table_id").agg(pl.col("dealt_at").max())["dealt_at"]
    assert (last > end - timedelta(hours=3)).all()  # the pace eased, not collapsed
    found: dict[tuple[str, str | None], set[str]] = {}
    for code, shoe, rnd, _ in Checker(tmp_path).run():
        found.setdefault((shoe, rnd), set()).add(code)
    key = pl.read_parquet(tmp_path / "fault_key.parquet")
    assert key.height == summary.total_faults > 500
    readers = set(shoes.filter(pl.col("card_sequence").is_not_null())["shoe_id"])
    expected: dict[tuple[str, str | None], set[str]] = {}
    for fault, table, shoe, rnd in key.select("fault", "table_id", "shoe_id", "round_id").rows():
        if shoe is None:
            expected.setdefault((table, None), set()).add(SYMPTOMS[fault])
        elif fault == "foreign_card":
            expected.setdefault((shoe, None), set()).add("card_count")
            if shoe in readers:
                expected.setdefault((shoe, rnd), set()).add("sequence")
        else:
            expected.setdefault((shoe, rnd), set()).add(SYMPTOMS[fault])
    assert found == expected


# ---- one spelling of a range of days: --from and --to ----------------------------------------


def test_from_and_to_deal_the_nights_between_them(tmp_path: Path) -> None:
    out = tmp_path / "nights"
    done = cli(
        "simulate", "-o", out, "--rounds", "20", "--from", "2026-11-29", "--to", "2026-12-01"
    )
    assert done.exit_code == 0, done.output
    assert done.stderr == ""
    assert sorted(p.name for p in out.iterdir() if p.is_dir()) == [
        "2026-11-29",
        "2026-11-30",
        "2026-12-01",
    ]


def test_start_is_the_old_spelling_of_from(tmp_path: Path) -> None:
    old = cli("simulate", "-o", tmp_path / "a", "--rounds", "20", "--start", "2026-11-01")
    new = cli("simulate", "-o", tmp_path / "b", "--rounds", "20", "--from", "2026-11-01")
    assert old.exit_code == new.exit_code == 0, old.output
    assert old.stderr == deprecation_note("--start", "DATE", new="--from") + "\n"
    days = [sorted(p.name for p in (tmp_path / n).iterdir() if p.is_dir()) for n in "ab"]
    assert days[0] == days[1] == ["2026-11-01"]


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--to", "2026-11-02"], "--to needs --from"),
        (["--from", "2026-11-01", "--to", "2026-11-02", "--nights", "2"], "--nights"),
        (["--from", "2026-11-03", "--to", "2026-11-01"], "is before --from"),
        (["--from", "2026-11-01", "--start", "2026-11-01"], "--start is its old spelling"),
    ],
)
def test_simulate_refuses_a_range_said_two_ways(tmp_path: Path, args: list[str], said: str) -> None:
    refused = cli("simulate", "-o", tmp_path / "x", "--rounds", "5", *args)
    assert refused.exit_code == 2 and said in refused.output
    assert not (tmp_path / "x").exists()
