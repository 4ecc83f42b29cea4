"""Datasets and output folders on another fsspec file system: fsspec's in-memory file
system (a real one, process-wide) stands for s3:// or gs://. The audit of a dataset there,
written there, gives the bytes a local run gives, and the catalog names the dataset by
its URL."""

from __future__ import annotations

import io
import json
import uuid
from pathlib import Path

import duckdb
import fsspec
import polars as pl
import pytest
from click.testing import CliRunner

from auditor.cli import main
from auditor.commands.locations import is_remote

SAMPLE = Path(__file__).resolve().parents[1] / "sample_data"
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
    assert fs.exists(f"{root}/out/report.html")
    catalog = tmp_path / "copied" / "audit.duckdb"
    catalog.parent.mkdir()
    catalog.write_bytes(fs.cat_file(f"{root}/out/audit.duckdb"))
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


def test_a_url_without_parquet_files_is_a_clear_input_error(memory, tmp_path) -> None:
    fs, root = memory
    fs.pipe_file(f"{root}/empty/readme.txt", b"nothing here")
    code, output = audit(f"memory://{root}/empty", "--out", str(tmp_path / "o"))
    assert code == 2
    assert "no Parquet files" in output
