"""Input that could be dropped or misread in silence: every such dataset is refused with
one message naming the file (exit 2, the dataset untouched) or read whole, every row
audited or quarantined with its reason."""

from __future__ import annotations

import hashlib
import os
import stat
import subprocess
import sys
from pathlib import Path

import duckdb
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from auditor.schemas import MAX_ID_CHARS, bounded_text_columns
from click.testing import CliRunner

from auditor.cli import main
from auditor.contract import TABLES
from auditor.pipeline import run_validation
from tests.support.datasets import T0, base_rows, contract_frame
from tests.support.paths import SAMPLE

AUDITOR = Path(sys.executable).with_name("auditor")


# ---- helpers ---------------------------------------------------------------------


def snapshot(root: Path) -> dict[str, object]:
    """Every entry under `root` by its relative path: a regular file's SHA-256, a
    symlink's target, any other entry's kind. Nothing but regular files is opened (a
    FIFO would block)."""
    entries: dict[str, object] = {}
    for folder, folders, files in os.walk(root):
        for name in folders + files:
            path = Path(folder, name)
            key = path.relative_to(root).as_posix()
            mode = path.lstat().st_mode
            if stat.S_ISLNK(mode):
                entries[key] = ("symlink", os.readlink(path))
            elif stat.S_ISREG(mode):
                entries[key] = hashlib.sha256(path.read_bytes()).hexdigest()
            else:
                entries[key] = ("kind", stat.S_IFMT(mode))
    return entries


def assert_refused(root: Path, tmp_path: Path, *names: str) -> str:
    """`validate` and `audit` both exit 2 with one message naming every one of `names`,
    without a traceback, and leave the dataset's files as they were. The message."""
    before = snapshot(root)
    messages = []
    for args in (["validate", str(root)], ["audit", str(root), "--out", str(tmp_path / "out")]):
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 2, result.output
        message = result.stderr.strip()
        assert message.startswith("error: ") and message.count("error: ") == 1, message
        assert "Traceback" not in result.output and "internal error" not in result.output
        for name in names:
            assert name in message, (name, message)
        messages.append(message)
    assert snapshot(root) == before
    return messages[0]


def refused_by_subprocess(root: Path, tmp_path: Path, *names: str) -> str:
    """`assert_refused` in a child process with a time limit: for a dataset that would
    block a reader (a FIFO), a hang must fail the test, not stall it."""
    before = snapshot(root)
    messages = []
    for args in (["validate", str(root)], ["audit", str(root), "--out", str(tmp_path / "out")]):
        done = subprocess.run(
            [str(AUDITOR), *args], capture_output=True, text=True, timeout=120, check=False
        )
        assert done.returncode == 2, done.stdout + done.stderr
        assert done.stderr.startswith("error: ") and "Traceback" not in done.stderr
        for name in names:
            assert name in done.stderr, (name, done.stderr)
        messages.append(done.stderr)
    assert snapshot(root) == before
    return messages[0]


def wagers_frame() -> pl.DataFrame:
    return contract_frame("wagers", base_rows()["wagers"])


def as_folder(root: Path, table: str) -> Path:
    """Remove `TABLE.parquet` and return the (new) folder `TABLE/` for its files."""
    (root / f"{table}.parquet").unlink()
    folder = root / table
    folder.mkdir()
    return folder


def counts(validated) -> dict[str, tuple[int, int, int]]:
    return {row[0]: row[1:] for row in validated.counts.iter_rows()}


def audit_cli(root: Path, out: Path) -> None:
    result = CliRunner().invoke(main, ["audit", str(root), "--out", str(out)])
    assert result.exit_code in (0, 1), result.output


# ---- 1. a table in two forms; other files in a table's folder ----------------------


def test_a_table_given_as_file_and_as_folder_is_refused_naming_both(write_dataset, tmp_path):
    root = write_dataset()
    (root / "wagers").mkdir()
    wagers_frame().with_columns(pl.col("wager_id") + "b").write_parquet(root / "wagers/p.parquet")
    message = assert_refused(root, tmp_path, "wagers.parquet", f"{root / 'wagers'}/")
    assert "given twice" in message


def test_every_parquet_file_of_a_folder_is_counted_at_any_depth(write_dataset):
    root = write_dataset()
    folder = as_folder(root, "wagers")
    (folder / "a" / "b").mkdir(parents=True)
    wagers = wagers_frame()
    wagers.slice(0, 1).write_parquet(folder / "z.parquet")
    wagers.slice(1, 1).write_parquet(folder / "a" / "x.parquet")
    wagers.slice(2, 1).write_parquet(folder / "a" / "b" / "y.parquet")
    validated = run_validation(root)
    assert counts(validated)["wagers"] == (3, 3, 0)
    assert sorted(s.name for s in validated.dataset.files["wagers"]) == [
        "wagers/a/b/y.parquet",
        "wagers/a/x.parquet",
        "wagers/z.parquet",
    ]


def test_names_starting_with_dot_or_underscore_are_ignored_in_a_table_folder(write_dataset):
    root = write_dataset()
    folder = as_folder(root, "wagers")
    wagers_frame().write_parquet(folder / "part-0.parquet")
    # What Spark, Hive and Arrow leave beside the data: never read as rows.
    (folder / "_SUCCESS").write_bytes(b"")
    (folder / ".part-0.parquet.crc").write_bytes(b"\x00crc")
    pq.write_metadata(wagers_frame().to_arrow().schema, folder / "_metadata")
    (folder / "_temporary" / "0").mkdir(parents=True)
    wagers_frame().write_parquet(folder / "_temporary" / "0" / "part-0.parquet")
    wagers_frame().write_parquet(folder / ".hidden.parquet")
    validated = run_validation(root)
    assert counts(validated)["wagers"] == (3, 3, 0)
    assert [s.name for s in validated.dataset.files["wagers"]] == ["wagers/part-0.parquet"]


@pytest.mark.parametrize("name", ["notes.txt", "part-1.csv", "part-2.PARQUET", "sub/part-3.pq"])
def test_any_other_file_in_a_table_folder_is_refused_naming_it(write_dataset, tmp_path, name):
    root = write_dataset()
    folder = as_folder(root, "wagers")
    wagers_frame().write_parquet(folder / "part-0.parquet")
    (folder / name).parent.mkdir(exist_ok=True)
    (folder / name).write_text("wager_id,round_id\nW9,R1\n")
    message = assert_refused(root, tmp_path, str(folder / name))
    assert "is not a Parquet file" in message


# ---- 2. a hive partition key that names a column ----------------------------------


@pytest.mark.parametrize(
    ("key", "column"),
    [
        ("patron_id", "patron_id"),
        ("Patron_ID", "patron_id"),  # DuckDB compares names without case
        ("round_id", "round_id"),
        ("_file", "_file"),
        ("_row", "_row"),
    ],
)
def test_a_partition_key_naming_a_column_is_refused(write_dataset, tmp_path, key, column):
    root = write_dataset()
    partition = as_folder(root, "wagers") / f"{key}=EVIL"
    partition.mkdir()
    wagers_frame().write_parquet(partition / "part.parquet")
    message = assert_refused(root, tmp_path, str(partition), f"'{column}'")
    assert "hive partition key" in message


def test_catalog_views_read_partitions_as_the_audit_does(tmp_path):
    """The views take a partition column from the folders inside the table's folder only:
    not from a `KEY=VALUE` folder above the dataset, and not from a symlinked file's
    target, whose path has no partition folders."""
    root = tmp_path / "patron_id=ANCESTOR" / "data"
    root.mkdir(parents=True)
    for table, rows in base_rows().items():
        if table != "wagers":
            contract_frame(table, rows).write_parquet(root / f"{table}.parquet")
    wagers = wagers_frame()
    day1 = root / "wagers" / "gaming_date=2026-11-24"
    day2 = root / "wagers" / "gaming_date=2026-11-25"
    day1.mkdir(parents=True)
    day2.mkdir()
    wagers.head(2).write_parquet(day1 / "part-0.parquet")
    stored = tmp_path / "store" / "blob"
    stored.parent.mkdir()
    wagers.tail(1).write_parquet(stored)
    (day2 / "part-0.parquet").symlink_to(stored)
    audit_cli(root, tmp_path / "out")
    with duckdb.connect(str(tmp_path / "out" / "audit.duckdb"), read_only=True) as con:
        got = con.execute(
            "SELECT wager_id, patron_id, gaming_date, typeof(gaming_date) FROM wagers "
            "ORDER BY wager_id"
        ).fetchall()
        assert [(w, p, str(d), t) for w, p, d, t in got] == [
            ("W1", "PAT1", "2026-11-24", "DATE"),
            ("W2", "PAT1", "2026-11-24", "DATE"),
            ("W3", "PAT1", "2026-11-25", "DATE"),
        ]
        assert "patron_id_1" not in [c[0] for c in con.execute("DESCRIBE wagers").fetchall()]


# ---- 3. layouts and schemas that used to end in a traceback ------------------------


def test_a_hive_folder_beside_a_plain_folder_is_refused(write_dataset, tmp_path):
    root = write_dataset()
    folder = as_folder(root, "wagers")
    (folder / "plain").mkdir()
    (folder / "gaming_date=2026-11-24").mkdir()
    wagers_frame().head(1).write_parquet(folder / "plain" / "x.parquet")
    wagers_frame().tail(2).write_parquet(folder / "gaming_date=2026-11-24" / "y.parquet")
    assert_refused(
        root,
        tmp_path,
        str(folder / "plain" / "x.parquet"),
        str(folder / "gaming_date=2026-11-24" / "y.parquet"),
        "different hive partition keys",
    )


def test_files_under_different_partition_keys_are_refused(write_dataset, tmp_path):
    root = write_dataset()
    folder = as_folder(root, "wagers")
    for index, name in enumerate(["gaming_date=2026-11-24", "pit=3"]):
        (folder / name).mkdir()
        wagers_frame().slice(index, 1).write_parquet(folder / name / "part.parquet")
    assert_refused(root, tmp_path, "gaming_date=…", "pit=…", str(folder))


def test_a_repeated_partition_key_is_refused(write_dataset, tmp_path):
    root = write_dataset()
    partition = as_folder(root, "wagers") / "day=1" / "day=2"
    partition.mkdir(parents=True)
    wagers_frame().write_parquet(partition / "part.parquet")
    assert_refused(root, tmp_path, str(partition), "repeats the key 'day'")


@pytest.mark.parametrize(
    ("names", "expected"),
    [
        (["wager_id", "wager_id"], "column 'wager_id' appears 2 times"),
        (["wager_id", "extra", "extra"], "column 'extra' appears 2 times"),
        (["wager_id", "Patron_ID"], "column 'Patron_ID' differs from the contract column"),
        (["wager_id", "_row"], "column '_row' has the name of the auditor's provenance"),
    ],
)
def test_a_file_with_an_ambiguous_column_name_is_refused(write_dataset, tmp_path, names, expected):
    root = write_dataset()
    wagers = wagers_frame().to_arrow()
    extra = [wagers.column(n if n in wagers.column_names else "patron_id") for n in names[1:]]
    columns = [*wagers.columns, *extra]
    table = pa.table(columns, names=[*wagers.column_names, *names[1:]])
    if names[1] == "Patron_ID":
        table = table.drop(["patron_id"])
    pq.write_table(table, root / "wagers.parquet")
    assert_refused(root, tmp_path, str(root / "wagers.parquet"), expected)


# ---- 4. ids longer than any real one ---------------------------------------------

LONG = 10 * 2**20  # 10 MB: far past the bound, small enough for a test's memory


def test_a_10_mb_id_is_quarantined_shortened_and_takes_its_dependants(tmp_path):
    root = tmp_path / "data"
    root.mkdir()
    rows = base_rows()
    rows["rounds"][0]["dealer_id"] = "D" * LONG
    long_round = "R" * LONG
    rows["rounds"][1]["round_id"] = long_round
    rows["wagers"][2]["round_id"] = long_round
    for table, table_rows in rows.items():
        contract_frame(table, table_rows).write_parquet(root / f"{table}.parquet")
    before = snapshot(root)
    out = tmp_path / "out"
    audit_cli(root, out)
    assert snapshot(root) == before

    quarantine = pl.read_parquet(out / "quarantine.parquet")
    shown = f"… ({LONG} characters)"
    too_long = quarantine.filter(pl.col("check") == "max_length")
    assert sorted(too_long.select("table", "column").rows()) == [
        ("rounds", "dealer_id"),
        ("rounds", "round_id"),
        ("wagers", "round_id"),
    ]
    assert too_long["reason"].str.contains(f"{MAX_ID_CHARS:,} characters").all()
    assert (too_long["value"] == too_long["value"].str.slice(0, 64) + shown).all()
    # The round with the long id is named by a shortened id too, and nothing in the
    # quarantine holds the value whole.
    long_round_row = quarantine.filter((pl.col("table") == "rounds") & (pl.col("row") == 1))
    assert (long_round_row["row_key"] == "R" * 64 + shown).all()
    longest = quarantine.select(pl.col("value", "row_key").str.len_chars().max())
    assert max(longest.row(0)) < 100
    # Every wager of a quarantined round is quarantined with it.
    cascaded = quarantine.filter(pl.col("check") == "parent_quarantined")
    assert sorted(cascaded["row_key"]) == ["W1", "W2", "W3"]

    row_counts = pl.read_parquet(out / "row_counts.parquet")
    assert (
        row_counts["rows_in"] == row_counts["rows_audited"] + row_counts["rows_quarantined"]
    ).all()
    by_table = {r[0]: r[1:] for r in row_counts.iter_rows()}
    assert by_table["rounds"] == (2, 0, 2)
    assert by_table["wagers"] == (3, 0, 3)
    findings = pl.read_parquet(out / "findings.parquet")
    assert findings.filter(pl.col("round_id").str.len_chars() > MAX_ID_CHARS).height == 0


def test_a_dictionary_encoded_long_id_is_never_copied_into_each_row(write_dataset):
    """Polars reads a dictionary-encoded column as categorical; cast whole, each row
    would get its own copy of the value (200 rows of 100 MB: 20 GB)."""
    root = write_dataset()
    rounds = pq.read_table(root / "rounds.parquet")
    dealer = pa.DictionaryArray.from_arrays(pa.array([0, 0], pa.int32()), pa.array(["D" * LONG]))
    rounds = rounds.set_column(rounds.column_names.index("dealer_id"), "dealer_id", dealer)
    pq.write_table(rounds, root / "rounds.parquet")
    validated = run_validation(root)
    bad = validated.quarantine.filter(pl.col("check") == "max_length")
    assert bad.select("table", "column").rows() == [("rounds", "dealer_id")] * 2
    assert bad["value"].to_list() == ["D" * 64 + f"… ({LONG} characters)"] * 2
    assert counts(validated)["rounds"] == (2, 0, 2)


def _optional_rows() -> dict[str, list[dict]]:
    rows = base_rows()
    rows["commission_collections"] = [
        {
            "collection_id": "C1",
            "table_id": "T1",
            "shoe_id": "S1",
            "seat": 1,
            "patron_id": "PAT1",
            "collected_at": T0,
            "amount": rows["wagers"][0]["amount"],
        }
    ]
    rows["royal9_seats"] = [{"table_id": "T1", "seat": 1, "combo": "KS9H"}]
    return rows


@pytest.mark.parametrize(
    ("table", "column"),
    [(t, c) for t in TABLES for c in bounded_text_columns(t)],
)
def test_every_id_column_is_held_to_the_bound(write_dataset, table, column):
    rows = _optional_rows()
    rows[table][0][column] = "x" * MAX_ID_CHARS  # at the bound: an id like any other
    at_bound = run_validation(write_dataset(rows)).quarantine
    assert at_bound.filter(pl.col("check") == "max_length").height == 0
    rows[table][0][column] = "x" * (MAX_ID_CHARS + 1)
    validated = run_validation(write_dataset(rows))
    bad = validated.quarantine.filter(pl.col("check") == "max_length")
    assert bad.select("table", "column", "row").rows() == [(table, column, 0)]
    assert bad["value"].item() == "x" * 64 + f"… ({MAX_ID_CHARS + 1} characters)"
    table_counts = counts(validated)[table]
    assert table_counts[0] == table_counts[1] + table_counts[2] and table_counts[2] >= 1


# ---- 5. table files that are not regular files -----------------------------------


def _special(path: Path, kind: str) -> str:
    """Make `path` a FIFO, a symlink to /dev/zero or a symlink to nothing; return the
    words the refusal must use."""
    if kind == "fifo":
        os.mkfifo(path)
        return "is a FIFO, not a regular file"
    if kind == "device":
        path.symlink_to("/dev/zero")
        return "is a symlink to /dev/zero, which is a character device"
    path.symlink_to(path.with_name("nowhere.parquet"))
    return f"is a symlink to {path.with_name('nowhere.parquet')}, which does not exist"


@pytest.mark.e2e
@pytest.mark.parametrize("kind", ["fifo", "device", "dangling"])
def test_a_table_file_that_is_not_a_regular_file_says_what_it_is(write_dataset, tmp_path, kind):
    root = write_dataset()
    (root / "rounds.parquet").unlink()
    words = _special(root / "rounds.parquet", kind)
    message = refused_by_subprocess(root, tmp_path, str(root / "rounds.parquet"), words)
    assert "is missing" not in message


@pytest.mark.e2e
@pytest.mark.parametrize("kind", ["fifo", "device", "dangling"])
def test_a_file_in_a_table_folder_that_is_not_a_regular_file_says_what_it_is(
    write_dataset, tmp_path, kind
):
    root = write_dataset()
    folder = as_folder(root, "wagers")
    wagers_frame().write_parquet(folder / "part-0.parquet")
    words = _special(folder / "part-1.parquet", kind)
    refused_by_subprocess(root, tmp_path, str(folder / "part-1.parquet"), words)


@pytest.mark.e2e
def test_a_table_name_that_is_a_fifo_rather_than_a_folder_is_refused(write_dataset, tmp_path):
    root = write_dataset()
    (root / "wagers.parquet").unlink()
    os.mkfifo(root / "wagers")
    refused_by_subprocess(root, tmp_path, str(root / "wagers"), "is a FIFO")


def test_a_dataset_path_that_is_a_file_says_so(tmp_path):
    from click.testing import CliRunner

    from auditor.cli import main

    result = CliRunner().invoke(
        main, ["audit", str(SAMPLE / "rounds.parquet"), "--out", str(tmp_path / "o")]
    )
    assert result.exit_code == 2
    assert "a file, not a dataset folder" in result.output
    assert not (tmp_path / "o").exists()
    missing = CliRunner().invoke(
        main, ["audit", str(tmp_path / "nowhere"), "--out", str(tmp_path / "o")]
    )
    assert missing.exit_code == 2 and "dataset folder not found" in missing.output
