"""The one generator of generated files (`python -m auditor.tools.generate`): it finds the
repository's files current, finds a stale one and rewrites it in the repository, and
refuses a folder that is not the repository, another version's code and a link that
would carry a file out of the repository."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from auditor.tools.generate import main
from tests.support.paths import REPO

CHECK_DOCS = Path("auditor") / "check_docs.json"
SECTIONS = Path("rules") / "regulations" / "ma-baccarat.sections.json"
NO_REGULATIONS = ["--regulations", "/nonexistent/regulations"]


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    """A copy of the repository's sources: what the generator reads and writes."""
    root = tmp_path / "repository"
    skip = shutil.ignore_patterns("__pycache__", "*.pyc")
    for folder in ("auditor", "rules", "schemas"):
        shutil.copytree(REPO / folder, root / folder, ignore=skip)
    shutil.copy2(REPO / "pyproject.toml", root / "pyproject.toml")
    return root


def generate(root: Path, *args: str) -> int:
    return main(["--root", str(root), *NO_REGULATIONS, *args])


def test_the_repositorys_generated_files_are_current(capsys):
    """The repository as committed: every generated file is what its sources make."""
    assert main(["--root", str(REPO), "--check"]) == 0, capsys.readouterr().out


def test_a_stale_file_is_found_then_rewritten_in_the_repository(repository, capsys):
    original = (repository / CHECK_DOCS).read_bytes()
    (repository / CHECK_DOCS).write_text("[]\n", encoding="utf-8")
    assert generate(repository, "--check") == 1
    assert f"stale    {CHECK_DOCS.as_posix()}" in capsys.readouterr().out
    assert (repository / CHECK_DOCS).read_text(encoding="utf-8") == "[]\n"  # --check wrote nothing

    assert generate(repository) == 0
    assert f"written  {CHECK_DOCS.as_posix()}" in capsys.readouterr().out
    assert (repository / CHECK_DOCS).read_bytes() == original
    assert generate(repository, "--check") == 0
    assert not list((repository / "auditor").glob(".check_docs.json.*"))  # no leftover


def test_without_the_regulations_their_files_are_skipped_not_judged(repository, capsys):
    (repository / SECTIONS).write_text("[]\n", encoding="utf-8")
    assert generate(repository, "--check") == 0
    assert f"skipped  {SECTIONS.as_posix()}: needs the regulations folder" in (
        capsys.readouterr().out
    )


def test_a_folder_that_is_not_the_repository_is_refused(tmp_path, capsys):
    assert main(["--root", str(tmp_path), "--check"]) == 2
    assert "is not the auditor's repository" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_another_versions_code_is_refused(repository, capsys):
    """Files made by code other than the repository's would be wrong where no diff shows."""
    edited = repository / "auditor" / "money.py"
    edited.write_text(edited.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    (repository / CHECK_DOCS).write_text("[]\n", encoding="utf-8")
    assert generate(repository) == 2
    err = capsys.readouterr().err
    assert "is not" in err and "auditor/money.py" in err
    assert (repository / CHECK_DOCS).read_text(encoding="utf-8") == "[]\n"


def test_a_link_planted_at_the_target_is_replaced_not_followed(repository, tmp_path):
    outside = tmp_path / "outside.json"
    outside.write_text("not the auditor's\n", encoding="utf-8")
    (repository / CHECK_DOCS).unlink()
    (repository / CHECK_DOCS).symlink_to(outside)
    assert generate(repository) == 0
    assert outside.read_text(encoding="utf-8") == "not the auditor's\n"
    assert not (repository / CHECK_DOCS).is_symlink()
    assert (repository / CHECK_DOCS).read_bytes() == (REPO / CHECK_DOCS).read_bytes()


def test_a_linked_folder_on_the_way_is_refused(repository, tmp_path, capsys):
    """rules/regulations made a link: a file written through it would leave the
    repository."""
    regulations = REPO.parent / "shared" / "regulations"
    if not (regulations / "INDEX.md").is_file():
        pytest.skip(f"the regulation texts are not beside the repository ({regulations})")
    elsewhere = tmp_path / "elsewhere"
    shutil.move(repository / "rules" / "regulations", elsewhere)
    (repository / "rules" / "regulations").symlink_to(elsewhere, target_is_directory=True)
    (elsewhere / SECTIONS.name).write_text("[]\n", encoding="utf-8")
    status = main(["--root", str(repository), "--regulations", str(regulations)])
    assert status == 2
    assert "is a link or not a folder" in capsys.readouterr().err
    assert (elsewhere / SECTIONS.name).read_text(encoding="utf-8") == "[]\n"


@pytest.mark.e2e
def test_run_as_a_module_from_another_folder(tmp_path):
    """As CI runs it: `python -m auditor.tools.generate --check --root REPO`."""
    done = subprocess.run(
        [sys.executable, "-m", "auditor.tools.generate", "--check", "--root", str(REPO)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"current  {CHECK_DOCS.as_posix()}" in done.stdout
