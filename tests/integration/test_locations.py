"""Datasets and output folders on another fsspec file system: fsspec's in-memory file
system (a real one, process-wide) stands for s3:// or gs://. The audit of a dataset there,
written there, gives the bytes a local run gives, and the catalog names the dataset by
its URL."""

from __future__ import annotations

import io
import json
import tempfile
import uuid
from pathlib import Path

import duckdb
import fsspec
import polars as pl
import pytest
from click.testing import CliRunner

from auditor.cli import main
from auditor.commands.locations import is_remote
from auditor.contract import TABLES
from auditor.errors import InputError
from auditor.input import remote
from auditor.input.remote import (
    WORKER_COPIES,
    content_digest,
    copy_dataset,
    remove_worker_copies,
    worker_copy,
)
from tests.support.paths import SAMPLE

SAME_BYTES = ("findings.parquet", "quarantine.parquet", "row_counts.parquet", "alerts.parquet")


@pytest.fixture
def memory():
    fs = fsspec.filesystem("memory")
    root = f"/auditor-{uuid.uuid4().hex}"
    yield fs, root
    if fs.exists(root):
        fs.rm(root, recursive=True)


def audit(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["audit", *args, "--quiet"])
    return result.exit_code, result.output + result.stderr


def test_only_other_file_systems_are_remote() -> None:
    assert is_remote("s3://bucket/night") and is_remote("memory://night")
    assert not is_remote("file:///data/night") and not is_remote("/data/night")


def test_a_dataset_and_outdir_at_urls_give_the_local_runs_outputs(memory, tmp_path) -> None:
    fs, root = memory
    fs.put(str(SAMPLE) + "/", f"{root}/night/", recursive=True)
    local_code, _ = audit(str(SAMPLE), "--out", str(tmp_path / "local"))
    code, output = audit(f"memory://{root}/night", "--out", f"memory://{root}/out")
    assert code == local_code == 1, output
    for name in SAME_BYTES:
        assert fs.cat_file(f"{root}/out/{name}") == (tmp_path / "local" / name).read_bytes(), name
    manifest = json.loads(fs.cat_file(f"{root}/out/manifest.json"))
    local_manifest = json.loads((tmp_path / "local" / "manifest.json").read_text())
    assert sorted(manifest["files"]) == sorted(local_manifest["files"])
    # The report names the dataset by its URL, not by the copy the run read.
    report = fs.cat_file(f"{root}/out/report.html").decode()
    assert f"Dataset memory://{root}/night<" in report and "auditor-dataset-" not in report
    # The whole set, downloaded: a reader verifies it against its manifest first.
    catalog = tmp_path / "copied" / "audit.duckdb"
    fs.get(f"{root}/out/", str(catalog.parent) + "/", recursive=True)
    with duckdb.connect(str(catalog), read_only=True) as con:
        dataset, paths = con.execute(
            "SELECT dataset, [i.path FOR i IN inputs] FROM runs"
        ).fetchone()
        assert con.execute("SELECT count(*) FROM findings").fetchone()[0] > 0
        # The input views name the URL: a reader with access to it reads the rows.
        con.register_filesystem(fs)
        rounds = con.execute("SELECT count(*) FROM rounds").fetchone()[0]
    assert rounds == pl.read_parquet(SAMPLE / "rounds.parquet").height
    assert dataset == f"memory://{root}/night"
    assert paths and all(p.startswith(f"memory://{root}/night/") for p in paths)
    # The query command opens it: the outputs' tables, the remote inputs left unchecked.
    query = ["query", str(catalog.parent), "SELECT count(*) FROM findings"]
    result = CliRunner().invoke(main, query)
    assert result.exit_code == 0, result.output
    assert "no longer as audited" not in result.output + result.stderr


def test_views_of_a_dataset_duckdb_cannot_read_say_where_it_is(ftp_dataset, tmp_path) -> None:
    """fsspec's ftp:// gives DuckDB no modification times, so the views cannot be bound
    there: each keeps its columns (the joining views still bind) and names the URL."""
    code, output = audit(ftp_dataset, "--out", str(tmp_path / "out"))
    assert code == 1, output
    with duckdb.connect(str(tmp_path / "out" / "audit.duckdb"), read_only=True) as con:
        assert con.execute("SELECT dataset FROM runs").fetchone()[0] == ftp_dataset.rstrip("/")
        columns = [row[0] for row in con.execute("DESCRIBE rounds").fetchall()]
        assert columns == list(TABLES["rounds"])
        assert con.execute("SELECT count(*) FROM findings").fetchone()[0] > 0
        for view in ("rounds", "shoe_rules"):
            with pytest.raises(duckdb.InvalidInputException, match=f"are at {ftp_dataset}"):
                con.execute(f"SELECT count(*) FROM {view}").fetchone()


def test_a_second_run_replaces_the_previous_set(memory, tmp_path) -> None:
    fs, root = memory
    fs.put(str(SAMPLE) + "/", f"{root}/night/", recursive=True)
    out = f"memory://{root}/out"
    assert audit(f"memory://{root}/night", "--out", out)[0] == 1
    fs.pipe_file(f"{root}/out/tables/stale.html", b"from an older run")
    assert audit(f"memory://{root}/night", "--out", out)[0] == 1
    assert not fs.exists(f"{root}/out/tables/stale.html")
    assert pl.read_parquet(io.BytesIO(fs.cat_file(f"{root}/out/findings.parquet"))).height > 0


def test_a_remote_outdir_of_other_files_is_refused_before_any_work(memory) -> None:
    fs, root = memory
    fs.put(str(SAMPLE) + "/", f"{root}/night/", recursive=True)
    fs.pipe_file(f"{root}/mine/notes.txt", b"not an audit's")
    code, output = audit(f"memory://{root}/night", "--out", f"memory://{root}/mine")
    assert code == 2
    assert "not an audit's outputs" in output
    assert fs.ls(f"{root}/mine", detail=False) == [f"{root}/mine/notes.txt"]


def test_a_dataset_at_a_url_validates_as_the_local_one(memory) -> None:
    fs, root = memory
    fs.put(str(SAMPLE) + "/", f"{root}/night/", recursive=True)
    local = CliRunner().invoke(main, ["validate", str(SAMPLE)])
    remote = CliRunner().invoke(main, ["validate", f"memory://{root}/night"])
    assert remote.exit_code == local.exit_code
    assert remote.output == local.output


def test_a_stray_file_in_a_remote_tables_folder_is_refused_as_in_place(memory, tmp_path) -> None:
    """The copy carries every file of a table's folder: a file that is not Parquet is
    refused as it is in a local dataset, never skipped by the copy."""
    fs, root = memory
    fs.put(str(SAMPLE) + "/", f"{root}/night/", recursive=True)
    fs.mv(f"{root}/night/wagers.parquet", f"{root}/night/wagers/part-0.parquet")
    fs.pipe_file(f"{root}/night/wagers/part-1.parq", b"rows the copy must not skip")
    code, output = audit(f"memory://{root}/night", "--out", str(tmp_path / "o"))
    assert code == 2, output
    assert "part-1.parq" in output


def test_a_url_without_parquet_files_is_a_clear_input_error(memory, tmp_path) -> None:
    fs, root = memory
    fs.pipe_file(f"{root}/empty/readme.txt", b"nothing here")
    code, output = audit(f"memory://{root}/empty", "--out", str(tmp_path / "o"))
    assert code == 2
    assert "no Parquet files" in output


def test_a_worker_copies_a_remote_dataset_once_per_run(memory, tmp_path) -> None:
    fs, root = memory
    fs.put(str(SAMPLE) + "/", f"{root}/night/", recursive=True)
    validated = tmp_path / "validated"
    copy_dataset(f"memory://{root}/night", validated)
    digest = content_digest(validated)
    run = uuid.uuid4().hex
    try:
        copy = worker_copy(f"memory://{root}/night", digest, run)
        assert content_digest(copy) == digest
        assert sorted(p.name for p in copy.iterdir()) == sorted(p.name for p in validated.iterdir())
        # The run's later tasks read the copy: the dataset is not fetched again.
        fs.rm(f"{root}/night", recursive=True)
        assert worker_copy(f"memory://{root}/night", digest, run) == copy
        assert [p.name for p in copy.parent.iterdir()] == ["dataset"]  # no partial copy left
    finally:
        remove_worker_copies(run)
    assert not copy.parent.exists()


def test_a_worker_refuses_a_remote_dataset_changed_since_validation(memory, tmp_path) -> None:
    fs, root = memory
    fs.put(str(SAMPLE) + "/", f"{root}/night/", recursive=True)
    copy_dataset(f"memory://{root}/night", tmp_path / "validated")
    digest = content_digest(tmp_path / "validated")
    # Rewritten in place: the same names, rows and schema, other bytes.
    rounds = pl.read_parquet(SAMPLE / "rounds.parquet")
    buffer = io.BytesIO()
    rounds.reverse().write_parquet(buffer)
    fs.pipe_file(f"{root}/night/rounds.parquet", buffer.getvalue())
    run = uuid.uuid4().hex
    try:
        with pytest.raises(InputError, match="differ from those validated"):
            worker_copy(f"memory://{root}/night", digest, run)
        assert not any((Path(tempfile.gettempdir()) / WORKER_COPIES / run).iterdir())
    finally:
        remove_worker_copies(run)


def test_a_worker_reads_the_copy_another_worker_placed_first(memory, tmp_path, monkeypatch):
    """Two worker processes of a machine copy at once: the second to finish keeps the
    first's copy and removes its own."""
    fs, root = memory
    fs.put(str(SAMPLE) + "/", f"{root}/night/", recursive=True)
    copy_dataset(f"memory://{root}/night", tmp_path / "validated")
    digest = content_digest(tmp_path / "validated")
    run = uuid.uuid4().hex
    place = Path(tempfile.gettempdir()) / WORKER_COPIES / run / "dataset"

    def other_worker_finishes_first(folder: Path) -> str:
        if folder != place and not place.exists():
            copy_dataset(f"memory://{root}/night", place)
        return content_digest(folder)

    monkeypatch.setattr(remote, "content_digest", other_worker_finishes_first)
    try:
        assert worker_copy(f"memory://{root}/night", digest, run) == place
        assert [p.name for p in place.parent.iterdir()] == ["dataset"]
        assert content_digest(place) == digest
    finally:
        remove_worker_copies(run)


def test_a_dataset_nowhere_is_an_input_error(memory, tmp_path) -> None:
    _, root = memory
    with pytest.raises(InputError, match="no Parquet files found"):
        copy_dataset(f"memory://{root}/nothing", tmp_path / "copy")
