"""A run's outputs are all or nothing, the output folder is checked, and every row is
accounted for: the promises an investigator relies on when citing a finding."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import polars as pl
import pytest
from click.testing import CliRunner

from auditor.cli import main
from auditor.output.outdir import MANIFEST_FILE, sha256_of
from auditor.pipeline import (
    RowAccountingError,
    check_row_accounting,
    find,
    run_audit,
    run_validation,
)
from tests.support.paths import SAMPLE


def assert_one_complete_set(out: Path) -> dict:
    """OUTDIR holds exactly the files its manifest names (the report's pages in their
    folder too), each with its recorded hash."""
    manifest = json.loads((out / MANIFEST_FILE).read_text())
    names = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()}
    assert names == {*manifest["files"], MANIFEST_FILE}, names
    for name, entry in manifest["files"].items():
        assert sha256_of(out / name) == entry["sha256"], name
    findings = pl.read_parquet(out / "findings.parquet")
    with duckdb.connect(str(out / "audit.duckdb"), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM findings").fetchone()[0] == findings.height
    return manifest


@pytest.fixture(scope="module")
def second_night(tmp_path_factory) -> Path:
    """The sample with one more discrepancy, so that two runs' outputs differ."""
    night = tmp_path_factory.mktemp("night") / "data"
    shutil.copytree(SAMPLE, night)
    wagers = pl.read_parquet(night / "wagers.parquet")
    first = wagers.filter(pl.col("result") == "lose").row(0, named=True)["wager_id"]
    wagers.with_columns(
        pl.when(pl.col("wager_id") == first)
        .then(pl.col("amount"))
        .otherwise("payout")
        .alias("payout")
    ).write_parquet(night / "wagers.parquet")
    return night


def _audit_process(dataset: Path, out: Path) -> subprocess.Popen:
    # The installed command, from a folder of its own: run from the repository, `python -m`
    # would import the source tree instead of the installed package.
    command = [
        str(Path(sys.executable).with_name("auditor")),
        "audit",
        str(dataset),
        "--out",
        str(out),
    ]
    return subprocess.Popen(
        command, cwd=out.parent, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )


def _kill_when(process: subprocess.Popen, ready, delay: float) -> None:
    deadline = time.monotonic() + 60
    while not ready() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.002)
    time.sleep(delay)
    if process.poll() is None:
        process.send_signal(signal.SIGKILL)
    process.wait()


@pytest.mark.e2e
def test_a_killed_run_leaves_one_complete_set(tmp_path, second_night):
    out = tmp_path / "out"
    run_audit(SAMPLE, out)
    before = assert_one_complete_set(out)
    # Kills spread over the whole run, then kills once the run has started writing.
    moments = [(lambda: True, d) for d in (0.3, 0.8, 1.3, 1.8, 2.3, 2.8)]
    staging = lambda: any(tmp_path.glob(".out.run-*"))  # noqa: E731
    moments += [(staging, d) for d in (0.0, 0.005, 0.02, 0.05, 0.1, 0.2)]
    for ready, delay in moments:
        _kill_when(_audit_process(second_night, out), ready, delay)
        assert_one_complete_set(out)
    # A run left to finish switches its whole set in.
    finished = _audit_process(second_night, out)
    assert finished.wait() == 1
    assert_one_complete_set(out)
    # The whole set switched in is the finished run's: its findings are the second night's.
    expected = find(run_validation(second_night))
    assert pl.read_parquet(out / "findings.parquet").equals(expected)
    assert before["files"]["findings.parquet"]["sha256"] != sha256_of(out / "findings.parquet")
    assert not list(tmp_path.glob(".out.*")), "no leftovers once a run completes"


def test_a_folder_of_other_files_is_refused_and_left_untouched(tmp_path):
    folder = tmp_path / "home"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine")
    result = CliRunner().invoke(main, ["audit", str(SAMPLE), "--out", str(folder)])
    assert result.exit_code == 2
    assert "not an audit's outputs" in result.output
    assert [p.name for p in folder.iterdir()] == ["notes.txt"]


@pytest.mark.parametrize("where", ["dataset", "its_parent"])
def test_the_dataset_folder_is_never_an_output_folder(tmp_path, where):
    dataset = tmp_path / "data"
    shutil.copytree(SAMPLE, dataset)
    out = dataset if where == "dataset" else tmp_path
    result = CliRunner().invoke(main, ["audit", str(dataset), "--out", str(out)])
    assert result.exit_code == 2
    assert "would hold the dataset" in result.output
    assert sorted(p.name for p in dataset.iterdir()) == sorted(p.name for p in SAMPLE.iterdir())


def test_a_symlinked_output_folder_switches_its_target(tmp_path):
    target = tmp_path / "real"
    link = tmp_path / "link"
    link.symlink_to(target, target_is_directory=True)
    run_audit(SAMPLE, link)
    run_audit(SAMPLE, link)
    assert link.is_symlink() and link.resolve() == target
    assert_one_complete_set(target)


def test_a_previous_run_and_an_empty_folder_are_accepted(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    run_audit(SAMPLE, empty)
    run_audit(SAMPLE, empty)
    assert_one_complete_set(empty)


def test_rows_neither_audited_nor_quarantined_stop_the_run():
    validated = run_validation(SAMPLE)
    audited = {t: a for t, _, a, _ in validated.counts.iter_rows()}
    check_row_accounting(validated, audited)  # the real counts add up
    audited["wagers"] -= 1
    with pytest.raises(RowAccountingError, match="table wagers") as error:
        check_row_accounting(validated, audited)
    assert error.value.exit_code == 2
