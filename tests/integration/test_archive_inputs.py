"""`auditor query ARCHIVE` reaches each run's input views where its dataset is still in
place, as the run's own catalog does, and says which runs it could not reach; adding a
run leaves the archive's catalog as it is (its views read every run's folder)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import polars as pl
import pytest

from auditor.archive.store import archived_runs
from tests.support.cli import cli
from tests.support.paths import SAMPLE


def csv_rows(archive: Path, sql: str) -> list[str]:
    result = cli("query", archive, sql, "--format", "csv")
    assert result.exit_code == 0, result.output
    return result.output.strip().splitlines()[1:]


@pytest.fixture(scope="module")
def audited(tmp_path_factory) -> dict[str, Path]:
    """Two nights' datasets (the sample, and the sample less one wager), each audited; the
    output sets are archived by each test into an archive of its own."""
    root = tmp_path_factory.mktemp("inputs")
    first, second = root / "first", root / "second"
    shutil.copytree(SAMPLE, first)
    shutil.copytree(SAMPLE, second)
    wagers = pl.read_parquet(second / "wagers.parquet")
    wagers.slice(1).write_parquet(second / "wagers.parquet")
    outs = {}
    for name, dataset in (("first", first), ("second", second)):
        out = root / f"out-{name}"
        assert cli("audit", dataset, "--out", out, "--exit-zero").exit_code == 0
        outs[name] = out
    return {"first": first, "second": second, **{f"out-{k}": v for k, v in outs.items()}}


@pytest.fixture
def archive(audited: dict[str, Path], tmp_path: Path) -> Path:
    """Both runs archived, their datasets copied beside the test (so each test may move
    or edit them) and the runs' manifests pointing at the copies."""
    folder = tmp_path / "archive"
    for name in ("first", "second"):
        assert cli("archive", "add", folder, audited[f"out-{name}"]).exit_code == 0
    return folder


def run_ids(archive: Path) -> dict[str, str]:
    """Run id by dataset folder name ("first", "second")."""
    return {Path(r.record["dataset"]).name: r.run_id for r in archived_runs(archive)}


def test_each_runs_input_views_are_reachable_where_its_dataset_is_in_place(archive, audited):
    ids = run_ids(archive)
    assert csv_rows(archive, "SELECT run_id, in_place FROM run_inputs ORDER BY run_id") == sorted(
        f"{i},true" for i in ids.values()
    )
    counted = csv_rows(archive, "SELECT run_id, count(*) FROM all_wagers GROUP BY 1 ORDER BY 1")
    wagers = pl.read_parquet(audited["first"] / "wagers.parquet").height
    assert sorted(counted) == sorted([f"{ids['first']},{wagers}", f"{ids['second']},{wagers - 1}"])
    # As in the run's own catalog: its views by their names, the joined ones too.
    own = csv_rows(archive, f"SELECT count(*) FROM run_{ids['first']}.findings_located")
    findings = pl.read_parquet(audited["out-first"] / "findings.parquet").height
    assert own == [str(findings)]
    joined = csv_rows(
        archive,
        "SELECT count(*) FROM findings_every_run f JOIN all_rounds r USING (run_id, round_id)",
    )
    assert int(joined[0]) > 0


def test_a_run_whose_dataset_is_gone_is_listed_not_reached(archive, audited):
    ids = run_ids(archive)
    shutil.rmtree(audited["second"])
    try:
        rows = csv_rows(
            archive, "SELECT run_id, in_place, missing_files FROM run_inputs ORDER BY run_id"
        )
        assert f"{ids['first']},true,0" in rows
        assert any(r.startswith(f"{ids['second']},false,") for r in rows)
        assert csv_rows(archive, "SELECT DISTINCT run_id FROM all_rounds") == [ids["first"]]
        unreached = cli("query", archive, f"SELECT count(*) FROM run_{ids['second']}.rounds")
        assert unreached.exit_code == 2
        # The archive's own tables answer whatever became of the datasets.
        assert int(csv_rows(archive, "SELECT count(*) FROM findings_every_run")[0]) > 0
    finally:
        shutil.copytree(SAMPLE, audited["second"])
        wagers = pl.read_parquet(audited["second"] / "wagers.parquet")
        wagers.slice(1).write_parquet(audited["second"] / "wagers.parquet")


def test_with_no_dataset_in_place_the_input_views_say_why(archive, audited, tmp_path):
    moved = {}
    for name in ("first", "second"):
        moved[name] = tmp_path / f"moved-{name}"
        os.rename(audited[name], moved[name])
    try:
        result = cli("query", archive, "SELECT count(*) FROM all_rounds")
        assert result.exit_code == 2
        assert "no archived run's dataset is in place" in result.output
        assert int(csv_rows(archive, "SELECT count(*) FROM findings_current")[0]) > 0
    finally:
        for name, place in moved.items():
            os.rename(place, audited[name])


def test_an_input_file_swapped_for_a_link_is_not_reached(archive, audited, tmp_path):
    """A link planted where an input file was, to a file of the same size elsewhere: the
    run is not attached, and the sandbox does not admit the link's target."""
    ids = run_ids(archive)
    rounds = audited["first"] / "rounds.parquet"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.move(rounds, elsewhere / "rounds.parquet")
    rounds.symlink_to(elsewhere / "rounds.parquet")
    try:
        rows = csv_rows(archive, "SELECT run_id, in_place FROM run_inputs ORDER BY run_id")
        assert f"{ids['first']},false" in rows
        outside = cli("query", archive, f"SELECT count(*) FROM '{elsewhere}/rounds.parquet'")
        assert outside.exit_code == 2
    finally:
        rounds.unlink()
        shutil.move(elsewhere / "rounds.parquet", rounds)
    refused = cli("query", archive, "SELECT * FROM read_text('/etc/passwd')")
    assert refused.exit_code == 2 and "root:" not in refused.output


def test_adding_a_run_leaves_the_catalog_as_it_is_and_the_run_is_seen(audited, tmp_path):
    archive = tmp_path / "archive"
    assert cli("archive", "add", archive, audited["out-first"]).exit_code == 0
    catalog = archive / "archive.duckdb"
    before = catalog.stat()
    assert cli("archive", "add", archive, audited["out-second"]).exit_code == 0
    after = catalog.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert len(csv_rows(archive, "SELECT DISTINCT run_id FROM findings_every_run")) == 2
    # A catalog lost is written again by the next add, or the next reader.
    catalog.unlink()
    assert len(csv_rows(archive, "SELECT DISTINCT run_id FROM findings_every_run")) == 2
    assert catalog.is_file()


def test_a_run_folder_planted_as_a_link_is_refused(archive, tmp_path):
    """A link among the runs would lend the catalog and the sandbox files from outside."""
    ids = run_ids(archive)
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(archive / "runs" / ids["first"], elsewhere)
    (archive / "runs" / "ffffffffffffffffffffffffffffffff").symlink_to(elsewhere)
    refused = cli("query", archive, "SELECT 1")
    assert refused.exit_code == 2 and "a link, not a folder of the archive's own" in refused.output
    verified = cli("verify", archive)
    assert verified.exit_code == 1 and "not in the archive's record" in verified.output
