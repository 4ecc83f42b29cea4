"""Nothing destroyed, nothing written outside: every spelling of local disk gets the
path's checks, an archive's entries never leave the copy, a dataset's links never let
an audit replace what they reach, and no `--out FILE` lands in an output set, an archive
or an input dataset. Each attack made for real (real zip and tar files, real links, sets
and archives made by the tool, real subprocesses), with the folders around hashed before
and after."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import tarfile
import zipfile
from pathlib import Path

import pytest

from auditor.contract import TABLES
from auditor.errors import InputError
from auditor.input.remote import copy_dataset, is_remote, local_disk_path
from auditor.output.outdir import MANIFEST_FILE
from auditor.output.verify import verify_set
from tests.support.cli import AUDITOR, cli
from tests.support.folders import PLANTED_MANIFEST, snapshot
from tests.support.paths import SAMPLE

VICTIM_BYTES = b"an innocent file outside the copy"
TABLE_FILES = sorted(p.name for p in SAMPLE.glob("*.parquet"))
COPIED = [name for name in TABLE_FILES if name.removesuffix(".parquet") in TABLES]


def installed(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """The installed command, as a user runs it."""
    return subprocess.run([AUDITOR, *args], cwd=cwd, capture_output=True, timeout=600)


def local_spellings(folder: Path) -> list[str]:
    return [
        f"local://{folder}",
        f"file://{folder}",
        f"simplecache::file://{folder}",
        f"filecache::local://{folder}",
        f"blockcache::file://{folder}",
    ]


# ---- 1. every spelling of local disk gets the same checks as a path ----------------------


def test_every_spelling_of_local_disk_is_its_path(tmp_path):
    for spelling in local_spellings(tmp_path / "out"):
        assert local_disk_path(spelling) == tmp_path / "out", spelling
        assert not is_remote(spelling), spelling
    for elsewhere in ("memory:///out", "zip://night::x.zip", f"tar://night::{tmp_path}/x.tar"):
        assert is_remote(elsewhere) and local_disk_path(elsewhere) is None, elsewhere


@pytest.mark.e2e
@pytest.mark.parametrize("spelling", range(5))
def test_a_local_url_outdir_holding_the_dataset_is_refused(tmp_path, spelling):
    prev = tmp_path / "prev"
    shutil.copytree(SAMPLE, prev / "input")
    before = snapshot(tmp_path)
    result = installed("audit", str(prev / "input"), "--out", local_spellings(prev)[spelling])
    assert result.returncode == 2, result.stderr
    assert b"Traceback" not in result.stderr
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("spelling", range(5))
def test_a_local_url_outdir_naming_a_dataset_with_a_planted_manifest_is_refused(tmp_path, spelling):
    data = tmp_path / "ds"
    shutil.copytree(SAMPLE, data)
    (data / MANIFEST_FILE).write_text(PLANTED_MANIFEST)
    before = snapshot(tmp_path)
    result = cli("audit", str(data), "--out", local_spellings(data)[spelling], "--quiet")
    assert result.exit_code == 2, result.output
    assert "would hold the dataset" in result.output
    assert snapshot(tmp_path) == before


def test_a_local_url_outdir_is_written_in_place_and_replaced_by_a_rerun(tmp_path):
    out = tmp_path / "out"
    for spelling in (f"local://{out}", f"simplecache::file://{out}"):
        result = cli("audit", str(SAMPLE), "--out", spelling, "--exit-zero", "--quiet")
        assert result.exit_code == 0, result.output
        assert verify_set(out) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # no lock or staging left


# ---- 2. an archive's entries never leave the copy ---------------------------------------


def _zip_dataset(path: Path, extra: dict[str, bytes] | None = None, link: str | None = None):
    with zipfile.ZipFile(path, "w") as archive:
        for name in TABLE_FILES:
            archive.write(SAMPLE / name, f"night/{name}")
        for name, data in (extra or {}).items():
            archive.writestr(name, data)
        if link is not None:
            entry = zipfile.ZipInfo("night/wagers/part-9.parquet")
            entry.external_attr = 0o120777 << 16  # a Unix symlink, as `zip -y` stores one
            archive.writestr(entry, link)


def _tar_dataset(path: Path, member: tarfile.TarInfo, data: bytes = b"") -> None:
    with tarfile.open(path, "w") as archive:
        for name in TABLE_FILES:
            archive.add(SAMPLE / name, f"night/{name}")
        archive.addfile(member, io.BytesIO(data) if data else None)


def _member(name: str, kind: bytes = tarfile.REGTYPE, link: str = "", size: int = 0):
    member = tarfile.TarInfo(name)
    member.type, member.linkname, member.size = kind, link, size
    return member


@pytest.fixture
def victim(tmp_path) -> Path:
    path = tmp_path / "victim.txt"
    path.write_bytes(VICTIM_BYTES)
    return path


@pytest.mark.e2e
def test_a_zip_entry_climbing_out_of_the_copy_is_refused_before_anything_is_written(
    tmp_path, victim
):
    # The audit's copy is TMPDIR/auditor-dataset-*/dataset: four `..` past wagers/ climb to
    # tmp_path, where the victim is.
    evil = tmp_path / "evil.zip"
    _zip_dataset(evil, {"night/wagers/../../../../victim.txt": b"overwritten"})
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    command = [AUDITOR, "audit", f"zip://night::{evil}", "--out", str(tmp_path / "o"), "--quiet"]
    result = subprocess.run(
        command, capture_output=True, timeout=600, env={**os.environ, "TMPDIR": str(temporary)}
    )
    assert result.returncode == 2, result.stderr
    assert b"outside the dataset's folder" in result.stderr
    assert victim.read_bytes() == VICTIM_BYTES
    assert not (tmp_path / "o").exists() and not any(temporary.iterdir())


def test_a_zip_symlink_entry_is_refused(tmp_path, victim):
    evil = tmp_path / "evil.zip"
    _zip_dataset(evil, link=str(victim))
    copy = tmp_path / "copy"
    with pytest.raises(InputError, match="is a link"):
        copy_dataset(f"zip://night::{evil}", copy)
    assert not copy.exists()
    assert victim.read_bytes() == VICTIM_BYTES


def test_a_zip_absolute_entry_writes_nothing_outside(tmp_path, victim):
    evil = tmp_path / "evil.zip"
    _zip_dataset(evil, {str(victim): b"overwritten", f"/{victim}": b"overwritten"})
    copy = tmp_path / "copy"
    copy_dataset(f"zip://night::{evil}", copy)
    assert victim.read_bytes() == VICTIM_BYTES
    assert sorted(p.name for p in copy.iterdir()) == COPIED


@pytest.mark.parametrize(
    ("member", "refusal"),
    [
        (_member("night/wagers/../../victim.txt", size=11), b"outside the dataset's folder"),
        (_member("night/wagers/part-9.parquet", tarfile.SYMTYPE, "VICTIM"), b"is a link"),
        (_member("night/wagers/part-9.parquet", tarfile.LNKTYPE, "VICTIM"), b"is a link"),
        (_member("night/wagers/part-9.parquet", tarfile.SYMTYPE, "../../victim.txt"), b"a link"),
    ],
    ids=["dotdot", "absolute-symlink", "hardlink", "relative-symlink"],
)
@pytest.mark.e2e
def test_validate_refuses_a_tar_entry_leaving_the_copy_before_writing_it(
    tmp_path, victim, member, refusal
):
    member.linkname = member.linkname.replace("VICTIM", str(victim))
    evil = tmp_path / "evil.tar"
    _tar_dataset(evil, member, b"overwritten" if member.size else b"")
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    command = [AUDITOR, "validate", f"tar://night::{evil}"]
    env = {**os.environ, "TMPDIR": str(temporary)}
    result = subprocess.run(command, capture_output=True, timeout=600, env=env)
    assert result.returncode == 2, result.stderr
    assert refusal in result.stderr
    assert victim.read_bytes() == VICTIM_BYTES
    assert not any(temporary.iterdir())


def test_a_tar_absolute_member_is_never_copied(tmp_path, victim):
    evil = tmp_path / "evil.tar"
    _tar_dataset(evil, _member(str(victim), size=11), b"overwritten")
    copy = tmp_path / "copy"
    copy_dataset(f"tar://night::{evil}", copy)
    assert victim.read_bytes() == VICTIM_BYTES
    assert sorted(p.name for p in copy.iterdir()) == COPIED


def test_a_clean_archive_validates_as_the_folder_does(tmp_path):
    clean = tmp_path / "clean.zip"
    _zip_dataset(clean)
    local = cli("validate", str(SAMPLE))
    zipped = cli("validate", f"zip://night::{clean}")
    assert zipped.exit_code == local.exit_code
    assert zipped.output == local.output


def test_an_archive_is_never_an_outdir(tmp_path):
    clean = tmp_path / "clean.zip"
    _zip_dataset(clean)
    before = snapshot(tmp_path)
    result = cli("audit", str(SAMPLE), "--out", f"zip://out::{clean}", "--quiet")
    assert result.exit_code == 2, result.output
    assert "read-only" in result.output
    assert snapshot(tmp_path) == before


# ---- 3. a dataset's links into OUTDIR ----------------------------------------------------


@pytest.fixture
def previous(tmp_path) -> Path:
    """A previous run's output set, made by the tool."""
    prev = tmp_path / "prev"
    assert cli("audit", str(SAMPLE), "--out", str(prev), "--exit-zero", "--quiet").exit_code == 0
    return prev


def _dataset_linking(tmp_path: Path, target: Path) -> Path:
    data = tmp_path / "ds"
    shutil.copytree(SAMPLE, data)
    (data / "wagers.parquet").unlink()
    (data / "wagers.parquet").symlink_to(target)
    return data


@pytest.mark.e2e
def test_a_dataset_file_linked_into_a_previous_set_is_refused(tmp_path, previous):
    (previous / "keep").mkdir()
    shutil.copy(SAMPLE / "wagers.parquet", previous / "keep" / "wagers.parquet")
    data = _dataset_linking(tmp_path, Path("../prev/keep/wagers.parquet"))
    before = snapshot(tmp_path)
    result = installed("audit", str(data), "--out", str(previous), "--quiet")
    assert result.returncode == 2, result.stderr
    assert snapshot(tmp_path) == before


def test_a_linked_input_named_by_a_forged_manifest_is_still_refused(tmp_path):
    prev = tmp_path / "prev"
    (prev / "keep").mkdir(parents=True)
    shutil.copy(SAMPLE / "wagers.parquet", prev / "keep" / "wagers.parquet")
    forged = {"tool": "auditor", "files": {"keep/wagers.parquet": {}}}
    (prev / MANIFEST_FILE).write_text(json.dumps(forged))
    data = _dataset_linking(tmp_path, Path("../prev/keep/wagers.parquet"))
    before = snapshot(tmp_path)
    result = cli("audit", str(data), "--out", str(prev), "--quiet")
    assert result.exit_code == 2, result.output
    assert "is a link to" in result.output
    assert snapshot(tmp_path) == before


def test_a_dataset_file_linked_elsewhere_is_audited(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.copy(SAMPLE / "wagers.parquet", elsewhere)
    data = _dataset_linking(tmp_path, elsewhere / "wagers.parquet")
    result = cli("audit", str(data), "--out", str(tmp_path / "out"), "--exit-zero", "--quiet")
    assert result.exit_code == 0, result.output
    assert (elsewhere / "wagers.parquet").read_bytes() == (SAMPLE / "wagers.parquet").read_bytes()


def test_a_previous_set_holding_files_its_manifest_does_not_name_is_refused(tmp_path, previous):
    (previous / "notes.txt").write_text("mine")
    (previous / "report" / "mine").symlink_to(tmp_path, target_is_directory=True)
    before = snapshot(tmp_path)
    result = cli("audit", str(SAMPLE), "--out", str(previous), "--quiet")
    assert result.exit_code == 2, result.output
    assert "does not name (notes.txt, report/mine)" in result.output
    assert snapshot(tmp_path) == before


# ---- 4. no --out lands in an output set, an archive or an input dataset -------------------


@pytest.fixture(scope="module")
def night(tmp_path_factory) -> dict[str, Path]:
    """A dataset, its audit's output set and an archive holding it, all made by the tool."""
    root = tmp_path_factory.mktemp("owned")
    data = root / "data"
    shutil.copytree(SAMPLE, data)
    out, archive = root / "out", root / "archive"
    audited = cli("audit", str(data), "--out", str(out), "--archive", str(archive), "--quiet")
    assert audited.exit_code == 1, audited.output
    return {"root": root, "data": data, "out": out, "archive": archive}


OWNED_TARGETS = [
    ("query", "{out}", "SELECT 1 AS a", "--out", "{out}/findings.parquet"),
    ("query", "{out}", "SELECT 1 AS a", "--out", "{out}/report/new.csv"),
    ("query", "{out}", "SELECT 1 AS a", "--out", "{data}/wagers.parquet"),
    ("query", "{out}", "SELECT 1 AS a", "--out", "{data}/new.csv"),
    ("query", "{archive}", "SELECT 1 AS a", "--out", "{archive}/x.parquet"),
    ("query", "{archive}", "SELECT 1 AS a", "--out", "{data}/x.parquet"),
    ("report", "{out}", "--dealer", "D1", "--out", "{out}/report.html"),
    (
        "report",
        "{archive}",
        "--period",
        "2026-11-01..2026-11-30",
        "--out",
        "{archive}/reviews.jsonl",
    ),
    ("report", "{archive}", "--patron", "P1", "--out", "{data}/p.html"),
    ("diff", "{out}", "{out}", "--out", "{out}/changes.parquet"),
    ("diff", "{out}", "{out}", "--out", "{data}/rounds.parquet"),
]


@pytest.mark.e2e
@pytest.mark.parametrize("command", OWNED_TARGETS, ids=lambda c: f"{c[0]}-{c[-1]}")
def test_no_out_lands_in_what_another_command_owns(night, command):
    args = [a.format(**night) for a in command]
    before = snapshot(night["root"])
    result = cli(*args)
    assert result.exit_code == 2, result.output
    assert "only the command that writes it may change" in result.output
    assert snapshot(night["root"]) == before


def test_a_symlinked_parent_or_a_link_at_the_target_is_followed(night, tmp_path):
    (tmp_path / "alias").symlink_to(night["out"], target_is_directory=True)
    (tmp_path / "ledger.html").symlink_to(night["archive"] / "reviews.jsonl")
    before = snapshot(night["root"])
    through_parent = cli(
        "query", str(night["out"]), "SELECT 1 AS a", "-o", f"{tmp_path}/alias/x.csv"
    )
    through_link = cli(
        "report", str(night["archive"]), "--period", "2026-11-01..2026-11-30",
        "--out", str(tmp_path / "ledger.html"),
    )  # fmt: skip
    assert through_parent.exit_code == through_link.exit_code == 2
    assert snapshot(night["root"]) == before


@pytest.mark.e2e
def test_a_report_named_by_default_in_an_output_set_is_refused(night):
    before = snapshot(night["root"])
    result = installed("report", ".", "--dealer", "D1", cwd=night["out"])
    assert result.returncode == 2, result.stderr
    assert b"only the command that writes it may change" in result.stderr
    assert snapshot(night["root"]) == before


def test_out_elsewhere_is_written(night, tmp_path):
    result = cli("query", str(night["out"]), "SELECT 1 AS a", "--out", str(tmp_path / "a.csv"))
    assert result.exit_code == 0, result.output
    assert (tmp_path / "a.csv").read_text() == "a\n1\n"
    changes = cli("diff", str(night["out"]), str(night["out"]), "-o", str(tmp_path / "d.csv"))
    assert changes.exit_code == 0, changes.output
    assert (tmp_path / "d.csv").is_file()
