"""The documentation builds with `mkdocs build --strict` (no broken link, anchor or nav
entry), and the checks reference has a page for every check code with its cases."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from auditor.check_docs import check_docs
from tests.support.paths import REPO


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    if importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("material") is None:
        if os.environ.get("CI"):
            pytest.fail("CI must build the documentation: mkdocs-material is in the test extra")
        pytest.skip("mkdocs-material is not installed (pip install '.[test]')")
    folder = tmp_path_factory.mktemp("site")
    # -P: the build's hooks import the installed auditor, not the repository's source
    # folder (the working directory), which lacks what installing maps into the package
    # (its built-in packs under `auditor.rules`), as `.venv/bin/mkdocs` in CI does.
    built = subprocess.run(
        [sys.executable, "-P", "-m", "mkdocs", "build", "--strict", "--site-dir", str(folder)],
        cwd=REPO,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert built.returncode == 0, built.stdout + built.stderr
    return folder


def test_the_documentation_builds_strictly(site):
    assert (site / "index.html").is_file()
    assert (site / "commands" / "index.html").is_file()


def test_every_check_has_its_page_with_its_cases(site):
    index = (site / "checks" / "index.html").read_text(encoding="utf-8")
    for doc in check_docs():
        page = site / "checks" / doc.code / "index.html"
        assert page.is_file(), doc.code
        text = page.read_text(encoding="utf-8")
        assert doc.name in text and "Cases that must fail" in text, doc.code
        assert "Cases that must pass" in text and f"tests/cases/{doc.code}.yaml" in text
        assert f'href="{doc.code}/"' in index, f"{doc.code} is not in the checks index"


def test_the_commands_page_holds_the_readmes_table(site):
    page = (site / "commands" / "index.html").read_text(encoding="utf-8")
    assert "auditor validate DATASET" in page and "auditor --version" in page
