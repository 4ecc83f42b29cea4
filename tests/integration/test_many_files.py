"""A table split into many small files audits exactly as the same rows in one file: the
same findings byte for byte, the same row counts, the same quarantine with each row named
by its own file and its row there; whether the small files are gathered into one copy
first (`input.gather`) or scanned together where they lie (`input.scan`)."""

from __future__ import annotations

import hashlib
import shutil
from itertools import pairwise
from pathlib import Path

import duckdb
import polars as pl
import pytest

from auditor.errors import InputError
from auditor.input import gather, load, routing
from auditor.input.gather import gather_small_files
from auditor.input.load import open_dataset, sha256_files
from auditor.input.partition import PARTITION_ROUNDS
from auditor.output.files import AuditOutputs
from auditor.output.views import view_statements
from auditor.pipeline import run_audit
from auditor.simulator.simulate import simulate

ROUNDS = 1_000
# Files per split table: more than gathering takes for wagers, fewer for rounds.
SPLIT = {"wagers": 200, "rounds": 20}
NOT_A_BET = "not-a-bet"


def write_split(rows: pl.DataFrame, folder: Path, files: int) -> pl.DataFrame:
    """`rows` written into `files` files of consecutive rows (and one empty file among
    them); returns where each row went: its row in the whole table, its file and its row
    there."""
    folder.mkdir()
    bounds = [index * rows.height // files for index in range(files + 1)]
    places = []
    for index, (start, end) in enumerate(pairwise(bounds)):
        name = f"{folder.name}/part-{index:03d}.parquet"
        rows.slice(start, end - start).write_parquet(folder.parent / name)
        places.append(
            pl.DataFrame(
                {"whole_row": range(start, end)}, schema={"whole_row": pl.Int64()}
            ).with_columns(pl.lit(name).alias("file"), pl.int_range(pl.len()).alias("row"))
        )
    rows.clear().write_parquet(folder / f"part-{files // 2:03d}-empty.parquet")
    return pl.concat(places).with_columns(pl.col("row").cast(pl.Int64))


def damaged(table: str, rows: pl.DataFrame) -> pl.DataFrame:
    """The rows with faults the quarantine must name, in late files: the last wager's bet
    unknown, a wager repeating the first wager's id, a seat past the contract's 8 bits, a
    round of an unknown kind (whose wagers follow it into the quarantine). The wagers'
    seats are stored in 64 bits and their calls dictionary-encoded, types a copy of the
    files must keep for the checks to see what the files hold."""
    last = pl.int_range(pl.len()) == pl.len() - 1
    if table == "wagers":
        repeated = pl.int_range(pl.len()) == pl.len() - 30
        too_far = pl.int_range(pl.len()) == pl.len() - 50
        return rows.with_columns(
            pl.when(last).then(pl.lit(NOT_A_BET)).otherwise("bet").alias("bet"),
            pl.when(repeated).then(pl.first("wager_id")).otherwise("wager_id").alias("wager_id"),
            pl.when(too_far).then(300).otherwise("seat").cast(pl.Int64).alias("seat"),
            pl.col("call").cast(pl.Categorical),
        )
    late = pl.int_range(pl.len()) == pl.len() * 9 // 10
    return rows.with_columns(pl.when(late).then(pl.lit("nonsense")).otherwise("kind").alias("kind"))


@pytest.fixture(scope="module")
def night(tmp_path_factory) -> tuple[Path, Path, dict[str, pl.DataFrame]]:
    """The same damaged night twice, one file per table and with wagers and rounds split,
    and where each row of a split table went (`write_split`). The rounds are in the order
    they were dealt, every table's in every file: partitions then route (`input.routing`)."""
    root = tmp_path_factory.mktemp("many-files")
    simulate(root / "simulated", rounds=ROUNDS, seed=11, fault_rate=0.05)
    one, split = root / "one", root / "split"
    one.mkdir()
    split.mkdir()
    places = {}
    for path in sorted((root / "simulated").glob("*.parquet")):
        table = path.stem
        rows = pl.read_parquet(path)
        if table == "rounds":
            rows = rows.sort("dealt_at", "round_id")
        if table in SPLIT:
            rows = damaged(table, rows)
        rows.write_parquet(one / path.name)
        if table in SPLIT:
            places[table] = write_split(rows, split / table, SPLIT[table])
        else:
            rows.write_parquet(split / path.name)
    return one, split, places


@pytest.fixture(scope="module")
def one_file_audit(night, tmp_path_factory) -> tuple[AuditOutputs, Path]:
    out = tmp_path_factory.mktemp("out") / "one"
    return run_audit(night[0], out), out


def test_only_a_table_of_many_small_files_is_gathered(night):
    dataset = open_dataset(night[1])
    with_copies = gather_small_files(dataset)
    first_wagers = dataset.files["wagers"][0].path
    assert list(with_copies.gathered) == [first_wagers]
    copy = with_copies.gathered[first_wagers]
    assert copy.is_file()
    # The copies go with the dataset that reads them.
    del with_copies
    assert not copy.exists()


def test_the_runs_views_read_the_copy_and_give_the_same_rows(night):
    dataset = gather_small_files(open_dataset(night[1]))
    copy = str(next(iter(dataset.gathered.values())))

    def where(source) -> str:
        return str(source.path)

    rows = {}
    for gathered in (True, False):
        statements = view_statements(dataset, where, gathered=gathered)
        wagers = next(s for s in statements if s.startswith("CREATE VIEW wagers "))
        assert (copy in wagers) == gathered and ("part-000.parquet" in wagers) != gathered
        with duckdb.connect() as con:
            rows[gathered] = con.sql(wagers.replace("CREATE VIEW wagers AS ", "")).pl()
    assert rows[True].height and rows[True].equals(rows[False])


@pytest.mark.parametrize(
    ("gathered", "partition_rounds"),
    [(True, PARTITION_ROUNDS), (False, PARTITION_ROUNDS), (True, 250), (False, 250)],
    ids=["gathered", "scanned-together", "gathered-routed", "scanned-together-routed"],
)
def test_a_table_in_many_files_audits_as_in_one_file(
    night, one_file_audit, tmp_path, monkeypatch, gathered, partition_rounds
):
    if not gathered:
        monkeypatch.setattr(gather, "GATHER_MIN_FILES", 10**9)
    # Routed by validation's read or a pass of its own, every batch goes through `Held`.
    routes = []
    held_route = routing.Held.route
    monkeypatch.setattr(
        routing.Held, "route", lambda held, *args: routes.append(held_route(held, *args))
    )
    _, split, places = night
    whole, whole_out = one_file_audit
    parts = run_audit(split, tmp_path / "split", partition_rounds=partition_rounds)
    assert bool(routes) == (partition_rounds < PARTITION_ROUNDS)

    assert whole.findings.height > 0
    findings = (whole_out / "findings.parquet").read_bytes()
    assert findings == (tmp_path / "split" / "findings.parquet").read_bytes()
    assert whole.counts.equals(parts.counts)
    # Where each finding happened and what the night covered, read by the run from its
    # catalog's views (over the copies while it runs, when gathered): as from one file.
    for name in ("located.parquet", "coverage.parquet"):
        whole_rows = pl.read_parquet(whole_out / name)
        assert whole_rows.height and whole_rows.equals(pl.read_parquet(tmp_path / "split" / name))
    # After the run the views read the dataset's own files, the copies gone.
    with duckdb.connect(str(tmp_path / "split" / "audit.duckdb"), read_only=True) as con:
        for table in SPLIT:
            sql = con.execute(
                "SELECT sql FROM duckdb_views() WHERE view_name = ?", [table]
            ).fetchone()[0]
            assert "auditor-gather-" not in sql and f"{table}/part-000.parquet" in sql
            rows = con.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
            assert rows == whole.counts.filter(pl.col("table") == table)["rows_in"].item()

    # Every quarantined row of a split table is named by its own file and row there.
    checks = {"wagers": {"isin", "unique", "fits_type", "parent_quarantined"}, "rounds": {"isin"}}
    for table in SPLIT:
        expected = (
            whole.quarantine.filter(pl.col("table") == table)
            .rename({"row": "whole_row"})
            .drop("file")
            .join(places[table], on="whole_row", how="left")
            .select(whole.quarantine.columns)
        )
        found = parts.quarantine.filter(pl.col("table") == table)
        assert found.sort(pl.all()).equals(expected.sort(pl.all()))
        assert checks[table] <= {check.split("(")[0].strip() for check in found["check"]}
    others = ~pl.col("table").is_in(list(SPLIT))
    assert whole.quarantine.filter(others).equals(parts.quarantine.filter(others))

    # The last wager, in the last small file, by name.
    bet = parts.quarantine.filter(pl.col("value") == NOT_A_BET)
    last = places["wagers"].tail(1)
    assert bet.select("file", "row").rows() == last.select("file", "row").rows()
    assert last["file"].item() == f"wagers/part-{SPLIT['wagers'] - 1:03d}.parquet"


def test_files_are_hashed_in_order_whether_threaded_or_not(tmp_path, monkeypatch):
    # Small files are hashed in this thread, large ones in a pool: the order is the given one.
    monkeypatch.setattr(load, "THREADED_HASH_BYTES", 100)
    paths = []
    for index, size in enumerate([10, 500, 20, 1_000, 0]):
        paths.append(tmp_path / f"file-{index}")
        paths[-1].write_bytes(bytes([index]) * size)
    expected = [hashlib.sha256(path.read_bytes()).hexdigest() for path in paths]
    assert sha256_files(paths) == expected


@pytest.mark.parametrize("gathered", [True, False], ids=["gathered", "scanned-together"])
def test_a_damaged_small_file_among_many_is_named(night, tmp_path, monkeypatch, gathered):
    if not gathered:
        monkeypatch.setattr(gather, "GATHER_MIN_FILES", 10**9)
    root = tmp_path / "split"
    shutil.copytree(night[1], root)
    damaged_file = root / "wagers" / "part-150.parquet"
    # Its footer intact, so the dataset opens; its first page unreadable.
    data = bytearray(damaged_file.read_bytes())
    data[4:60] = b"\xff" * 56
    damaged_file.write_bytes(bytes(data))
    with pytest.raises(InputError, match=r"part-150\.parquet: Parquet file could not be read"):
        run_audit(root, tmp_path / "out")
