"""An audit never harms its dataset, two runs never share an OUTDIR, a changed output
set is never read as if intact, and a crash never reads as "findings": each attack tried
for real (real symlinks, real concurrent processes), the dataset hashed before and after."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import time
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from auditor.cli import main
from auditor.commands.locations import output_folder
from auditor.errors import InputError
from auditor.input.load import open_dataset
from auditor.output.catalog import RunInfo
from auditor.output.files import AuditOutputs, write_outputs
from auditor.output.outdir import MANIFEST_FILE
from auditor.output.verify import verify_set
from tests.support.cli import AUDITOR
from tests.support.folders import PLANTED_MANIFEST, snapshot
from tests.support.paths import SAMPLE


@pytest.fixture
def dataset(tmp_path) -> Path:
    """A copy of the sample with a manifest planted in it: to a careless check it looks
    like a previous run's output folder, which an audit would replace."""
    data = tmp_path / "data"
    shutil.copytree(SAMPLE, data)
    (data / MANIFEST_FILE).write_text(PLANTED_MANIFEST)
    return data


def audit(dataset: Path, out: str | Path) -> object:
    return CliRunner().invoke(main, ["audit", str(dataset), "--out", str(out), "--exit-zero"])


def test_an_outdir_naming_the_dataset_through_dotdot_is_refused(dataset):
    before = snapshot(dataset)
    result = audit(dataset, f"{dataset}/../{dataset.name}")
    assert result.exit_code == 2, result.output
    assert "would hold the dataset" in result.output
    assert snapshot(dataset) == before


def test_an_outdir_reaching_the_dataset_through_a_symlinked_parent_is_refused(tmp_path):
    # The dataset lives at x/out/data; OUTDIR is link/x/out, `link` pointing at tmp_path.
    data = tmp_path / "x" / "out" / "data"
    shutil.copytree(SAMPLE, data)
    (data.parent / MANIFEST_FILE).write_text(PLANTED_MANIFEST)
    link = tmp_path.parent / f"{tmp_path.name}-link"
    link.symlink_to(tmp_path, target_is_directory=True)
    try:
        before = snapshot(tmp_path / "x")
        result = audit(data, link / "x" / "out")
        assert result.exit_code == 2, result.output
        assert "would hold the dataset" in result.output
        assert snapshot(tmp_path / "x") == before
    finally:
        link.unlink()


@pytest.mark.parametrize("inside", ["wagers.parquet/../out", "new/out", "."])
def test_an_outdir_inside_the_dataset_is_refused_and_leaves_no_trace(tmp_path, inside):
    data = tmp_path / "data"
    shutil.copytree(SAMPLE, data)
    before = snapshot(data)
    result = audit(data, f"{data}/{inside}")
    assert result.exit_code == 2, result.output
    assert snapshot(data) == before  # not even a lock file or a parent folder


def test_an_outdir_inside_a_table_folder_is_refused(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    for name in ("tables", "shoes", "rounds"):
        shutil.copy(SAMPLE / f"{name}.parquet", data)
    (data / "wagers").mkdir()
    shutil.copy(SAMPLE / "wagers.parquet", data / "wagers" / "part-0.parquet")
    before = snapshot(data)
    result = audit(data, data / "wagers" / "out")
    assert result.exit_code == 2, result.output
    assert snapshot(data) == before


def test_a_dataset_inside_outdir_is_refused_through_a_symlink(tmp_path):
    data = tmp_path / "night" / "data"
    shutil.copytree(SAMPLE, data)
    (tmp_path / "night" / MANIFEST_FILE).write_text(PLANTED_MANIFEST)
    (tmp_path / "alias").symlink_to(tmp_path / "night", target_is_directory=True)
    before = snapshot(tmp_path / "night")
    result = audit(data, tmp_path / "alias")
    assert result.exit_code == 2, result.output
    assert snapshot(tmp_path / "night") == before


def test_the_root_folder_is_refused_with_one_message(dataset):
    result = audit(dataset, "/")
    assert result.exit_code == 2
    assert "root folder" in result.output
    assert "Traceback" not in result.output


def test_a_symlink_planted_as_the_lock_file_is_refused(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    (tmp_path / ".out.lock").symlink_to(victim)
    result = audit(SAMPLE, tmp_path / "out")
    assert result.exit_code == 2, result.output
    assert "lock file" in result.output
    assert victim.read_text() == "keep me"
    assert not (tmp_path / "out").exists()


def test_a_symlink_planted_as_the_previous_set_does_not_become_outdir(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / MANIFEST_FILE).write_text(PLANTED_MANIFEST)
    (elsewhere / "precious.txt").write_text("keep me")
    (tmp_path / ".out.previous").symlink_to(elsewhere, target_is_directory=True)
    result = audit(SAMPLE, tmp_path / "out")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "out").is_dir() and not (tmp_path / "out").is_symlink()
    assert (elsewhere / "precious.txt").read_text() == "keep me"


def _audit_process(dataset: Path, out: Path, cwd: Path) -> subprocess.Popen:
    command = [AUDITOR, "audit", str(dataset), "--out", str(out), "--exit-zero", "--quiet"]
    return subprocess.Popen(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


@pytest.mark.e2e
def test_a_second_run_into_a_busy_outdir_is_refused_naming_the_holder(tmp_path):
    out = tmp_path / "out"
    first = _audit_process(SAMPLE, out, tmp_path)
    lock = tmp_path / ".out.lock"
    deadline = time.monotonic() + 60
    while not (lock.exists() and lock.stat().st_size) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert first.poll() is None, "the first run should still be running"
    second = _audit_process(SAMPLE, out, tmp_path)
    _, second_err = second.communicate(timeout=120)
    _, first_err = first.communicate(timeout=300)
    assert second.returncode == 2, second_err
    assert b"in use by an audit" in second_err and str(first.pid).encode() in second_err
    assert b"Traceback" not in second_err + first_err
    assert first.returncode == 0, first_err
    assert verify_set(out) == []
    assert not lock.exists(), "the lock file goes with its holder"


@pytest.mark.e2e
def test_a_lock_left_by_a_killed_run_does_not_block_the_next(tmp_path):
    out = tmp_path / "out"
    first = _audit_process(SAMPLE, out, tmp_path)
    deadline = time.monotonic() + 60
    while not (tmp_path / ".out.lock").exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    first.kill()
    first.wait()
    result = audit(SAMPLE, out)
    assert result.exit_code == 0, result.output
    assert verify_set(out) == []


# ---- a crash never reads as "findings" -----------------------------------------------


def test_an_unexpected_error_exits_3_with_its_details_in_a_file(tmp_path, monkeypatch):
    out = tmp_path / "out"
    assert audit(SAMPLE, out).exit_code == 0
    before = snapshot(out)

    def broken(*_args, **_kwargs):
        raise ZeroDivisionError("a defect")

    monkeypatch.setattr("auditor.pipeline.run_validation", broken)
    result = CliRunner().invoke(main, ["audit", str(SAMPLE), "--out", str(out)])
    assert result.exit_code == 3
    line = result.output.strip().splitlines()[-1]
    assert line.startswith("internal error: ZeroDivisionError: a defect; details in ")
    details = Path(line.rsplit("details in ", 1)[1])
    assert "Traceback" in details.read_text() and "broken" in details.read_text()
    details.unlink()
    assert snapshot(out) == before


# ---- auditor verify, and readers that verify first -------------------------------------


@pytest.fixture(scope="module")
def audited(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("verify") / "out"
    assert audit(SAMPLE, out).exit_code == 0
    return out


@pytest.fixture
def copy_of(audited, tmp_path) -> Path:
    out = tmp_path / "out"
    shutil.copytree(audited, out, symlinks=True)
    return out


def _rewrite_manifest_entry(out: Path, name: str) -> None:
    manifest = json.loads((out / MANIFEST_FILE).read_text())
    data = (out / name).read_bytes()
    manifest["files"][name] = {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    (out / MANIFEST_FILE).write_text(json.dumps(manifest))


def test_an_intact_set_verifies(audited):
    result = CliRunner().invoke(main, ["verify", str(audited)])
    assert result.exit_code == 0, result.output
    assert "intact" in result.output


@pytest.mark.parametrize(
    ("tamper", "expected"),
    [
        (lambda out: (out / "summary.txt").write_text("all clean"), "changed: summary.txt"),
        (lambda out: (out / "alerts.parquet").unlink(), "missing: alerts.parquet"),
        (lambda out: (out / "notes.txt").write_text("mine"), "extra: notes.txt"),
        (lambda out: (out / "report" / "x").symlink_to("/etc"), "extra: report/x"),
        (
            lambda out: (
                (out / "findings.parquet").unlink()
                or (out / "findings.parquet").symlink_to(out / "alerts.parquet")
            ),
            "changed: findings.parquet (no longer a regular file)",
        ),
    ],
)
def test_verify_names_each_changed_missing_or_extra_file(copy_of, tamper, expected):
    tamper(copy_of)
    result = CliRunner().invoke(main, ["verify", str(copy_of)])
    assert result.exit_code == 1
    assert expected in result.output


def test_verify_compares_the_catalog_with_its_parquet_files(copy_of):
    with duckdb.connect(str(copy_of / "audit.duckdb")) as con:
        con.execute("DELETE FROM findings WHERE rule LIKE 'PAY%'")
    _rewrite_manifest_entry(copy_of, "audit.duckdb")
    result = CliRunner().invoke(main, ["verify", str(copy_of)])
    assert result.exit_code == 1
    assert "catalog: table findings differs from findings.parquet" in result.output


def test_verify_refuses_a_folder_without_a_manifest(tmp_path):
    result = CliRunner().invoke(main, ["verify", str(tmp_path)])
    assert result.exit_code == 2
    assert "no manifest.json" in result.output


def test_a_manifest_naming_files_outside_the_set_is_refused(copy_of):
    manifest = json.loads((copy_of / MANIFEST_FILE).read_text())
    manifest["files"]["../../etc/passwd"] = {"bytes": 1, "sha256": "0"}
    (copy_of / MANIFEST_FILE).write_text(json.dumps(manifest))
    result = CliRunner().invoke(main, ["verify", str(copy_of)])
    assert result.exit_code == 2
    assert "outside the set" in result.output


@pytest.mark.parametrize(
    "command",
    [
        ["query", "{out}", "SELECT count(*) FROM findings"],
        ["report", "{out}", "--dealer", "D1", "--out", "{tmp}/r.html"],
        ["diff", "{out}", "{out}"],
    ],
)
def test_readers_refuse_a_set_whose_findings_were_deleted(copy_of, tmp_path, command):
    with duckdb.connect(str(copy_of / "audit.duckdb")) as con:
        con.execute("DELETE FROM findings")
    args = [a.format(out=copy_of, tmp=tmp_path) for a in command]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    assert "not as the audit wrote it" in result.output
    assert not (tmp_path / "r.html").exists()


# ---- the property: no spelling of OUTDIR harms the dataset ------------------------------

SEGMENTS = st.sampled_from(["..", ".", "", "data", "wagers.parquet", "out", "link", "x"])
# How the folder is named: a path, a URL of local disk (plain, or behind fsspec's caches),
# or a folder inside an archive file (zip://, tar://) planted beside the dataset.
SCHEMES = st.sampled_from(
    ["", "file://", "local://", "simplecache::file://", "filecache::local://", "zip", "tar"]
)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    base=st.sampled_from(["data", "link/data", "parent", "link", "data/.", "x"]),
    tail=st.lists(SEGMENTS, max_size=4),
    trailing=st.booleans(),
    scheme=SCHEMES,
    linked=st.booleans(),
)
def test_no_spelling_of_outdir_changes_the_dataset(
    tmp_path_factory, base, tail, trailing, scheme, linked
):
    root = tmp_path_factory.mktemp("spell")
    parent = root / "parent"
    data = parent / "data"
    data.mkdir(parents=True)
    for table in ("tables", "shoes", "rounds", "wagers"):
        shutil.copy(SAMPLE / f"{table}.parquet", data)
    # Planted manifests make the dataset and its parent look like previous output sets.
    (data / MANIFEST_FILE).write_text(PLANTED_MANIFEST)
    (parent / MANIFEST_FILE).write_text(PLANTED_MANIFEST)
    (parent / "link").symlink_to(parent, target_is_directory=True)
    if linked:
        # An input that is a link into a folder an OUTDIR may name (parent/x).
        (parent / "x").mkdir()
        (data / "wagers.parquet").rename(parent / "x" / "wagers.parquet")
        (data / "wagers.parquet").symlink_to(parent / "x" / "wagers.parquet")
    for kind in ("zip", "tar"):
        shutil.make_archive(str(parent / "night"), kind, root_dir=data)
    before = snapshot(parent)
    spelled = "/".join([str(parent / base), *tail]) + ("/" if trailing else "")
    if scheme in ("zip", "tar"):
        location = f"{scheme}://{'/'.join(tail)}::{parent}/night.{scheme}"
    else:
        location = f"{scheme}{spelled}"
    run = RunInfo(open_dataset(data), (), (), datetime.now(UTC))
    try:
        with output_folder(location) as folder:
            written = write_outputs(folder, AuditOutputs(*_empty_outputs()), run)
    except InputError:
        event("refused")
        after = snapshot(parent)
        assert after == before
        return
    event("written")
    after = snapshot(parent)
    for name, digest in before.items():
        if name.startswith(("data/", "x/", "night.")) or name == "data":
            assert after.get(name) == digest, name
    assert not written.is_relative_to(data.resolve())
    assert not data.resolve().is_relative_to(written)
    if linked:
        assert not (parent / "x" / "wagers.parquet").resolve().is_relative_to(written)


def _empty_outputs():
    import polars as pl

    from auditor.findings.table import OUTPUT_SCHEMA
    from auditor.input.quarantine import QUARANTINE_SCHEMA

    counts = pl.DataFrame(
        {"table": [], "rows_in": [], "rows_audited": [], "rows_quarantined": []},
        schema={
            "table": pl.String,
            "rows_in": pl.Int64,
            "rows_audited": pl.Int64,
            "rows_quarantined": pl.Int64,
        },
    )
    return pl.DataFrame(schema=OUTPUT_SCHEMA), pl.DataFrame(schema=QUARANTINE_SCHEMA), counts


def test_an_edited_catalog_cannot_widen_the_query_sandbox(copy_of):
    """Even with the manifest rewritten to match, the folders admitted come from the
    manifest's inputs, never from the catalog's `runs` table."""
    with duckdb.connect(str(copy_of / "audit.duckdb")) as con:
        con.execute("UPDATE runs SET dataset = '/', outdir = '/'")
        con.execute(
            "UPDATE runs SET inputs = list_transform(inputs, lambda i: "
            "struct_update(i, path := '/etc/passwd'))"
        )
    _rewrite_manifest_entry(copy_of, "audit.duckdb")
    result = CliRunner().invoke(
        main, ["query", str(copy_of), "SELECT * FROM read_text('/etc/passwd')"]
    )
    assert result.exit_code == 2, result.output
    assert "root:" not in result.output
