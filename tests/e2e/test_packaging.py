"""The wheel ships schemas and rules inside the auditor namespace, and works installed."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from importlib import resources
from pathlib import Path

import pytest

from tests.support.paths import REPO


def tracked_files() -> list[str]:
    listed = subprocess.run(
        ["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=False
    )
    return listed.stdout.split() if listed.returncode == 0 else []


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """Built from a copy of the checkout's own files: a `build/` folder left by an earlier
    build would hand setuptools modules that pyproject.toml no longer (or never) lists."""
    source = REPO
    if files := tracked_files():
        source = tmp_path_factory.mktemp("source")
        for name in files:
            if (REPO / name).is_file():
                (source / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(REPO / name, source / name)
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(source)],
        check=True,
    )
    (path,) = out.glob("auditor-*.whl")
    return path


def test_wheel_has_no_generic_top_level_packages(wheel: Path):
    names = zipfile.ZipFile(wheel).namelist()
    top_level = {n.split("/")[0] for n in names}
    assert "schemas" not in top_level and "rules" not in top_level
    assert "auditor/schemas/models.py" in names
    assert any(n.startswith("auditor/rules/") and n.endswith(".yaml") for n in names)


def test_wheel_ships_the_report_templates_and_regulation_texts(wheel: Path):
    names = zipfile.ZipFile(wheel).namelist()
    assert "auditor/rules/regulations/ma-baccarat.texts.json" in names
    assert "auditor/rules/regulations/ma-baccarat.traceability.yaml" in names
    for template in ("base.html", "macros.html", "nightly.html", "table.html", "report.css"):
        assert f"auditor/report/templates/{template}" in names, template


def test_wheel_ships_every_witness(wheel: Path):
    from auditor import witness

    names = zipfile.ZipFile(wheel).namelist()
    for code in witness.codes():
        assert f"auditor/witness/sql/{code}.sql" in names, code


def test_rule_packs_are_package_data():
    packs = [p.name for p in resources.files("auditor.rules").iterdir() if p.name.endswith(".yaml")]
    assert sorted(packs) == [
        "ma-baccarat.yaml",
        "ma-chemin-de-fer.yaml",
        "ma-midi-baccarat.yaml",
        "md-mini-baccarat.yaml",
    ]


def test_installed_console_script_runs(tmp_path: Path):
    # The entry point installed with the package, run as a user would, from elsewhere.
    exe = Path(sys.executable).with_name("auditor")
    result = subprocess.run(
        [str(exe), "--version"], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    assert result.stdout.startswith("auditor, version")


def test_wheel_ships_every_file_of_the_package(wheel: Path):
    """Packages and package data are listed by hand in pyproject.toml: a new package or
    data file left off the list works from the source tree and fails once installed."""
    tracked = [n for n in tracked_files() if n.split("/")[0] in ("auditor", "schemas", "rules")]
    if not tracked:
        pytest.skip("not a git checkout: the files to ship cannot be listed")
    installed = {
        path.replace("auditor/schemas/", "schemas/", 1).replace("auditor/rules/", "rules/", 1)
        for path in zipfile.ZipFile(wheel).namelist()
    }
    missing = [path for path in tracked if path not in installed]
    assert missing == []
