"""Nothing forged unseen, nothing read outside: a manifest edited to name another file, a
set's or an archive's catalog crafted to read one, a run id that is a path; and the
leftovers of killed runs swept by the next one. Each attack is made for real on sets and
archives the auditor wrote itself."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import duckdb
import polars as pl
import pytest

from auditor.archive.catalog import CATALOG_FILE
from auditor.archive.period_layout import PERIODS
from auditor.archive.periods import WORK_PREFIX
from auditor.archive.store import ArchiveError, _run_id, archived_runs
from auditor.output.catalog_packs import PACKS_PARTS_PREFIX, packs_part
from auditor.output.files import DUCKDB_FILE
from auditor.output.leftovers import CLAIM_FILE, UNCLAIMED_SECONDS, claimed_folder, sweep
from auditor.output.lock import waiting
from auditor.output.outdir import MANIFEST_FILE
from auditor.output.sandbox import sandboxed
from auditor.packs.kept import MOST_KEPT
from auditor.packs.loaded import LoadedPacks, builtin_packs
from auditor.pipeline import SURVEY_PREFIX
from tests.support.cli import AUDITOR, cli
from tests.support.paths import SAMPLE

NIGHT = "2026-11-24"  # the sample's gaming day


@pytest.fixture(scope="module")
def audited(tmp_path_factory) -> Path:
    """The sample audited once; each test works on a copy of the set."""
    out = tmp_path_factory.mktemp("sandbox") / "out"
    assert cli("audit", SAMPLE, "--out", out, "--exit-zero").exit_code == 0
    return out


@pytest.fixture
def outdir(audited: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "out"
    shutil.copytree(audited, copy, symlinks=True)
    return copy


@pytest.fixture
def secret(tmp_path: Path) -> tuple[Path, str]:
    """A file outside every set and archive, holding a token no output may ever show."""
    token = "TOKEN-" + hashlib.sha256(str(tmp_path).encode()).hexdigest()[:16]
    path = tmp_path / "outside" / "secret.txt"
    path.parent.mkdir()
    path.write_text(token)
    return path, token


def edit_manifest(folder: Path, change) -> None:
    path = folder / MANIFEST_FILE
    manifest = json.loads(path.read_text())
    change(manifest)
    path.write_text(json.dumps(manifest))


def rehash(folder: Path, name: str) -> None:
    """The manifest's entry for `name` made to match the file as it now is: a forger who
    rewrites a file and its entry together."""

    def change(manifest: dict) -> None:
        data = (folder / name).read_bytes()
        manifest["files"][name] = {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}

    edit_manifest(folder, change)


def name_passwd(manifest: dict) -> None:
    manifest["inputs"].append({"path": "/etc/passwd", "bytes": os.stat("/etc/passwd").st_size})


def craft_catalog(catalog: Path, *statements: str) -> None:
    with duckdb.connect(str(catalog)) as con:
        for statement in statements:
            con.execute(statement)


def everything_under(folder: Path) -> str:
    """Every regular file's bytes under `folder`, as text, to look for a token in."""
    found = [p.read_bytes() for p in folder.rglob("*") if p.is_file() and not p.is_symlink()]
    return b"".join(found).decode("utf-8", errors="replace")


# ---- 8: a manifest's inputs are the catalog's -----------------------------------------


def test_a_manifest_naming_an_input_the_catalog_does_not_is_a_changed_set(outdir: Path) -> None:
    reads_passwd = "SELECT count(*) FROM read_text('/etc/passwd')"
    assert cli("verify", outdir).exit_code == 0
    assert cli("query", outdir, "SELECT count(*) FROM rounds").exit_code == 0

    edit_manifest(outdir, name_passwd)

    verified = cli("verify", outdir)
    assert verified.exit_code == 1
    assert "names an input the catalog does not record: /etc/passwd" in verified.output
    queried = cli("query", outdir, reads_passwd)
    assert queried.exit_code == 2
    assert "not as the audit wrote it" in queried.output


def test_a_manifest_leaving_out_an_input_is_a_changed_set(outdir: Path) -> None:
    edit_manifest(outdir, lambda manifest: manifest["inputs"].pop())
    verified = cli("verify", outdir)
    assert verified.exit_code == 1
    assert "leaves out an input the catalog records" in verified.output


def test_an_archived_manifest_is_held_to_the_sha256_recorded_when_it_was_added(
    outdir: Path, tmp_path: Path
) -> None:
    archive = tmp_path / "archive"
    assert cli("archive", "add", archive, outdir).exit_code == 0
    (added,) = archived_runs(archive)
    set_folder = added.folder / "set"
    recorded = added.record["manifest_sha256"]
    assert recorded == hashlib.sha256((set_folder / MANIFEST_FILE).read_bytes()).hexdigest()
    assert cli("verify", archive).exit_code == 0
    assert cli("query", archive, "SELECT count(*) FROM all_rounds").exit_code == 0

    edit_manifest(set_folder, name_passwd)

    verified = cli("verify", archive)
    assert verified.exit_code == 1
    assert (
        f"run {added.run_id}: set/{MANIFEST_FILE}: not as recorded when it was added"
        in verified.output
    )
    queried = cli("query", archive, "SELECT count(*) FROM read_text('/etc/passwd')")
    assert queried.exit_code == 2
    assert "not the manifest the run was added with" in queried.output


def test_an_archived_manifest_changed_only_in_layout_still_shows(
    outdir: Path, tmp_path: Path
) -> None:
    # The same content written again without indentation: no input added, yet not the
    # manifest the archive added, so not read as it.
    archive = tmp_path / "archive"
    assert cli("archive", "add", archive, outdir).exit_code == 0
    (added,) = archived_runs(archive)
    edit_manifest(added.folder / "set", lambda manifest: None)
    assert cli("verify", archive).exit_code == 1


# ---- 9: catalogs the tool did not just write run in the sandbox -----------------------


def test_archive_add_never_runs_a_crafted_runs_view_outside_the_sandbox(
    outdir: Path, tmp_path: Path, secret: tuple[Path, str]
) -> None:
    path, token = secret
    craft_catalog(
        outdir / DUCKDB_FILE,
        "ALTER TABLE runs RENAME TO runs_kept",
        "CREATE VIEW runs AS SELECT * REPLACE ((SELECT content FROM "
        f"read_text('{path}')) AS command_line) FROM runs_kept",
    )
    rehash(outdir, DUCKDB_FILE)
    archive = tmp_path / "archive"

    added = cli("archive", "add", archive, outdir)

    assert added.exit_code == 2, added.output
    assert token not in added.output
    assert not archive.exists() or token not in everything_under(archive)
    with pytest.raises(ArchiveError):
        _run_id(outdir)  # the lookup alone, past the checks: refused, not read


def test_an_honest_set_is_added_with_what_its_catalog_records(outdir: Path, tmp_path: Path):
    archive = tmp_path / "archive"
    assert cli("archive", "add", archive, outdir).exit_code == 0
    (added,) = archived_runs(archive)
    with duckdb.connect(str(outdir / DUCKDB_FILE), read_only=True) as con:
        recorded = con.execute("SELECT run_id, command_line FROM runs").fetchone()
    assert (added.run_id, added.record["command_line"]) == recorded


def test_a_run_id_that_is_a_path_is_never_used_as_one(outdir: Path, tmp_path: Path) -> None:
    craft_catalog(outdir / DUCKDB_FILE, "UPDATE runs SET run_id = '../../escaped'")
    rehash(outdir, DUCKDB_FILE)
    archive = tmp_path / "a" / "b" / "archive"

    added = cli("archive", "add", archive, outdir)

    assert added.exit_code == 2, added.output
    assert "malformed run id" in added.output
    assert not (tmp_path / "a" / "escaped").exists()
    assert not (archive / "escaped").exists()


def test_surveil_reads_a_crafted_archive_catalog_in_the_sandbox(
    outdir: Path, tmp_path: Path, secret: tuple[Path, str]
) -> None:
    path, token = secret
    archive = tmp_path / "archive"
    assert cli("archive", "add", archive, outdir).exit_code == 0
    assert cli("surveil", archive, "--from", NIGHT, "--to", NIGHT).exit_code == 0

    # The catalog keeps saying it was built for this archive, so it is not rebuilt, and
    # its coverage now names a "run" read from a file outside.
    craft_catalog(
        archive / CATALOG_FILE,
        "CREATE OR REPLACE VIEW coverage AS SELECT content AS run_id, 'T1' AS table_id, "
        f"NULL AS property_id, DATE '{NIGHT}' AS gaming_day, 1::BIGINT AS rounds, "
        f"1::BIGINT AS dealers FROM read_text('{path}')",
    )

    surveyed = cli("surveil", archive, "--from", NIGHT, "--to", NIGHT)

    # Its views are not the code's own: the catalog is written anew before it is read, and
    # the file outside never is.
    assert surveyed.exit_code == 0, surveyed.output
    assert token not in surveyed.output
    assert not any(token.encode() in p.read_bytes() for p in archive.rglob("*") if p.is_file())


def test_the_sandbox_reads_only_below_the_folders_named(tmp_path, secret) -> None:
    path, _ = secret
    catalog = tmp_path / "inside" / "c.duckdb"
    catalog.parent.mkdir()
    (catalog.parent / "own.txt").write_text("own")
    craft_catalog(catalog, "CREATE TABLE t AS SELECT 1 AS x")
    inside = f"SELECT content FROM read_text('{catalog.parent / 'own.txt'}')"
    outside = f"SELECT content FROM read_text('{path}')"
    with sandboxed(catalog, [catalog.parent]) as con:
        assert con.execute(inside).fetchone() == ("own",)
        with pytest.raises(duckdb.PermissionException):
            con.execute(outside)
        with pytest.raises(duckdb.Error):
            con.execute("SET enable_external_access = true")
    with sandboxed(catalog) as con:
        assert con.execute("SELECT x FROM t").fetchone() == (1,)
        with pytest.raises(duckdb.PermissionException):
            con.execute(inside)


# ---- 15: a killed run's working folder is swept by the next run ----------------------


def started(command: list[object], env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen(
        [str(part) for part in command],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def claimed_by(process: subprocess.Popen, parent: Path, prefix: str, besides: Path) -> Path:
    """The working folder `process` claims in `parent`, once it has one (polled while the
    process lives; it must not end before)."""
    while process.poll() is None:
        found = [p for p in parent.glob(f"{prefix}*") if p != besides and (p / CLAIM_FILE).exists()]
        if found:
            return found[0]
        time.sleep(0.005)
    pytest.fail(f"the run ended (status {process.returncode}) before it claimed a folder")


@pytest.mark.e2e
def test_a_killed_audits_working_folder_is_swept_by_the_next_audit(tmp_path: Path) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = {**os.environ, "TMPDIR": str(scratch)}
    audit = [AUDITOR, "audit", SAMPLE, "--exit-zero", "--quiet", "--out"]
    # Another run's folder, claimed by this process for the whole test: live, never swept.
    with claimed_folder(scratch, SURVEY_PREFIX) as live:
        first = started([*audit, tmp_path / "first"], env)
        try:
            killed = claimed_by(first, scratch, SURVEY_PREFIX, besides=live)
        finally:
            first.send_signal(signal.SIGKILL)
            first.wait()
        assert killed.is_dir()  # what a SIGKILL leaves

        second = subprocess.run([*audit, tmp_path / "second"], env=env, capture_output=True)

        assert second.returncode == 0, second.stderr
        assert not killed.exists()
        assert live.is_dir() and (live / CLAIM_FILE).is_file()
    assert not list(scratch.glob(f"{SURVEY_PREFIX}*"))


@pytest.mark.e2e
def test_a_killed_surveils_working_folder_is_swept_by_the_next_surveil(
    outdir: Path, tmp_path: Path
) -> None:
    archive = tmp_path / "archive"
    assert cli("archive", "add", archive, outdir).exit_code == 0
    periods = archive / PERIODS
    periods.mkdir()
    surveil = [AUDITOR, "surveil", archive, "--from", NIGHT, "--to", NIGHT]
    with claimed_folder(periods, WORK_PREFIX) as live:
        # Holding the archive's lock keeps the surveil waiting with its folder made, so
        # that it is killed there and not after it has cleaned up.
        with waiting(archive, "the test", 0):
            first = started(surveil, dict(os.environ))
            try:
                killed = claimed_by(first, periods, WORK_PREFIX, besides=live)
            finally:
                first.send_signal(signal.SIGKILL)
                first.wait()
        assert killed.is_dir()

        assert cli(*surveil[1:]).exit_code == 0

        assert not killed.exists()
        assert live.is_dir()
    assert [p.name for p in periods.iterdir()] == [f"{NIGHT}_{NIGHT}"]


def test_a_folder_not_yet_claimed_is_swept_only_once_old(tmp_path: Path) -> None:
    # Between making its folder and claiming it a run holds no claim: such a folder is
    # left alone while young, and removed once older than any run's first instant.
    young = tmp_path / f"{SURVEY_PREFIX}young"
    old = tmp_path / f"{SURVEY_PREFIX}old"
    young.mkdir()
    old.mkdir()
    long_ago = time.time() - 2 * UNCLAIMED_SECONDS
    os.utime(old, (long_ago, long_ago))
    link = tmp_path / f"{SURVEY_PREFIX}link"
    link.symlink_to(old, target_is_directory=True)

    assert sweep(tmp_path, SURVEY_PREFIX) == [old]

    assert young.is_dir() and link.is_symlink() and not old.exists()


def fresh_packs() -> LoadedPacks:
    """The built-in packs as objects of their own: a set of packs `per_packs` has not met."""
    return LoadedPacks({name: dataclasses.replace(pack) for name, pack in builtin_packs().items()})


def test_the_packs_part_of_a_catalog_is_claimed_and_a_dead_processs_is_swept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the packs alone decide of a catalog is written once a process into a folder
    it claims while it lives (`catalog_packs`): a dead process's is swept by the next
    that writes one, and each run's catalog holds the packs' part and its own."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    dead = tmp_path / f"{PACKS_PARTS_PREFIX}dead"
    dead.mkdir()
    (dead / CLAIM_FILE).write_text("4242\n")  # its process gone: nobody holds the lock
    (dead / "packs.duckdb").write_bytes(b"left by a killed run")

    part = packs_part(fresh_packs())  # written anew, not the process's kept one

    assert not dead.exists()
    assert part.parent.name.startswith(PACKS_PARTS_PREFIX) and part.parent.parent == tmp_path
    assert sweep(tmp_path, PACKS_PARTS_PREFIX) == []  # claimed: this process lives
    with duckdb.connect(str(part), read_only=True) as con:
        views = {
            r[0]
            for r in con.execute(
                "SELECT view_name FROM duckdb_views() WHERE NOT internal"
            ).fetchall()
        }
        tables = {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
    assert views == {"witness_findings"}
    assert tables == {"banker_draw_rules", "player_draw_rules", "traceability"}
    out = tmp_path / "out"
    assert cli("audit", SAMPLE, "--out", out, "--exit-zero", "--quiet").exit_code == 0
    with sandboxed(out / DUCKDB_FILE, [SAMPLE]) as con:
        tables = {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
        witnessed = con.execute("SELECT count(*) FROM witness_findings").fetchone()
    assert {"findings", "runs", "checks", "traceability", "banker_draw_rules"} <= tables
    assert witnessed is not None and witnessed[0] > 0


def test_a_process_keeps_the_packs_parts_of_the_sets_it_keeps_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A process auditing under many sets of packs in turn keeps a part for each set it
    still keeps (`per_packs`: the latest), not one for every set it ever met."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    first = fresh_packs()
    parts = [packs_part(first)] + [packs_part(fresh_packs()) for _ in range(MOST_KEPT)]

    assert not parts[0].parent.exists()
    assert all(part.is_file() for part in parts[1:])
    again = packs_part(first)  # no longer kept: written anew
    assert again != parts[0] and again.is_file()


# ---- 15: an audit that audited nothing says so --------------------------------------


def test_an_audit_whose_every_row_was_quarantined_says_so_and_exits_0(tmp_path: Path) -> None:
    dataset = tmp_path / "data"
    shutil.copytree(SAMPLE, dataset)
    tables = pl.read_parquet(dataset / "tables.parquet")
    # No table has a seat: every table is quarantined, and with it every row that names one.
    tables.with_columns(pl.lit(-1).cast(tables["seats"].dtype).alias("seats")).write_parquet(
        dataset / "tables.parquet"
    )

    result = cli("audit", dataset, "--out", tmp_path / "out")

    # The contract: 0 when no finding; the night's emptiness is said, not coded.
    assert result.exit_code == 0, result.output
    assert "Nothing audited: every one of the" in result.output
    summary = (tmp_path / "out" / "summary.txt").read_text()
    assert "Nothing audited: every one of the" in summary
    assert "Findings: 0" in summary
    assert cli("audit", dataset, "--out", tmp_path / "again", "--exit-zero").exit_code == 0


def test_an_audit_with_rows_audited_does_not_say_nothing_was(audited: Path) -> None:
    assert "Nothing audited" not in (audited / "summary.txt").read_text()
