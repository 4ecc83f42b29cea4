"""`auditor rules test DIR`: a pack's own YAML cases (DIR/cases/) run against it, and the
pack's `case_table`, the table those cases are dealt at."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

from auditor.packs.model import parse_pack
from auditor.packs.problems import PackRefused
from tests.support.cli import AUDITOR, cli
from tests.support.paths import CASES, RULES

BASE, NEW = "ma-baccarat", "xx-baccarat"
# Checks whose cases of the base ruleset are copied: one that pins a message naming its
# table, one of the money, one of the draw.
COPIED = ("COM001", "DRW003", "TBL001")  # in file order, as they run


def copied_cases(code: str) -> str:
    """The base ruleset's cases of `code`, renamed to the new pack's id."""
    spec = yaml.safe_load((CASES / f"{code}.yaml").read_text(encoding="utf-8"))
    spec["cases"] = {n: c for n, c in spec["cases"].items() if c["ruleset"] == BASE}
    assert spec["cases"], code
    return yaml.safe_dump(spec, sort_keys=False, allow_unicode=True).replace(BASE, NEW)


@pytest.fixture
def pack_folder(tmp_path: Path) -> Path:
    """A built-in pack copied under an id of its own, with a few of its cases beside it."""
    folder = tmp_path / "packs"
    (folder / "cases").mkdir(parents=True)
    text = (RULES / f"{BASE}.yaml").read_text(encoding="utf-8")
    (folder / f"{NEW}.yaml").write_text(
        text.replace(f"ruleset: {BASE}\n", f"ruleset: {NEW}\n"), encoding="utf-8"
    )
    for code in COPIED:
        (folder / "cases" / f"{code}.yaml").write_text(copied_cases(code), encoding="utf-8")
    return folder


def run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [AUDITOR, "rules", "test", *map(str, args)], capture_output=True, text=True, timeout=300
    )


@pytest.mark.e2e
def test_a_copied_pack_passes_its_own_cases(pack_folder: Path) -> None:
    done = run(pack_folder)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    names = [n for code in COPIED for n in yaml.safe_load(copied_cases(code))["cases"]]
    assert len(lines) == len(names) + 1
    assert lines[0] == f"{COPIED[0]}.yaml::{names[0]} PASSED"
    assert all(line.endswith(" PASSED") for line in lines[:-1])
    assert lines[-1].startswith(f"{len(names)} passed, 0 failed in ")
    assert lines[-1].endswith(" s")


@pytest.mark.e2e
def test_a_case_broken_on_purpose_fails_with_its_difference(pack_folder: Path) -> None:
    path = pack_folder / "cases" / "TBL001.yaml"
    spec = yaml.safe_load(path.read_text(encoding="utf-8"))
    broken = next(name for name, case in spec["cases"].items() if "message" in case)
    reported = spec["cases"][broken]["message"]
    spec["cases"][broken]["message"] = "table T1 has too few seats"
    path.write_text(yaml.safe_dump(spec, sort_keys=False, allow_unicode=True), encoding="utf-8")
    done = run(pack_folder)
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"TBL001.yaml::{broken} FAILED\n" in done.stdout
    assert "finding 1's message (- pinned, + reported)" in done.stdout
    assert "- table T1 has too few seats" in done.stdout
    assert f"+ {reported}" in done.stdout  # the table's own id, as the case wrote it
    assert " passed, 1 failed in " in done.stdout.splitlines()[-1]


def invoke(*args: str | Path):
    return cli("rules", "test", *args)


def test_a_case_file_of_no_check_is_refused_by_file_and_line(pack_folder: Path) -> None:
    (pack_folder / "cases" / "XYZ999.yaml").write_text(
        f"# not a check\ncheck: XYZ999\ncases:\n  pass_x: {{ruleset: {NEW}, round: {{}}}}\n",
        encoding="utf-8",
    )
    result = invoke(pack_folder)
    assert result.exit_code == 2, result.output
    assert f"{pack_folder / 'cases' / 'XYZ999.yaml'}:2: check 'XYZ999' is no check's code" in (
        result.output
    )
    assert "PASSED" not in result.output  # nothing runs before every file reads


def test_malformed_yaml_is_refused_by_file_and_line(pack_folder: Path) -> None:
    path = pack_folder / "cases" / "COM001.yaml"
    path.write_text(path.read_text(encoding="utf-8") + "  pass_x: [\n", encoding="utf-8")
    result = invoke(pack_folder)
    assert result.exit_code == 2, result.output
    lines = path.read_text(encoding="utf-8").count("\n")
    assert f"{path}:{lines + 1}: not valid YAML" in result.output


@pytest.mark.parametrize(
    ("edit", "problem"),
    [
        ({"alsoo": {"TOT003": "a reason"}}, "unknown key 'alsoo'"),
        ({"ruleset": "yy-baccarat"}, "ruleset 'yy-baccarat' is no loaded pack's id"),
    ],
)
def test_a_case_written_wrongly_is_refused_by_file_and_line(
    pack_folder: Path, edit: dict, problem: str
) -> None:
    path = pack_folder / "cases" / "COM001.yaml"
    spec = yaml.safe_load(path.read_text(encoding="utf-8"))
    name = next(iter(spec["cases"]))
    spec["cases"][name].update(edit)
    text = yaml.safe_dump(spec, sort_keys=False)
    path.write_text(text, encoding="utf-8")
    line = text.splitlines().index(f"  {name}:") + 1
    result = invoke(pack_folder)
    assert result.exit_code == 2, result.output
    assert f"{path}:{line}: {name}: {problem}" in result.output


def test_a_pack_folder_without_cases_or_a_folder_is_refused(tmp_path: Path, pack_folder) -> None:
    assert invoke().exit_code == 2
    assert invoke(pack_folder, pack_folder).exit_code == 2
    missing = invoke(tmp_path / "nowhere")
    assert missing.exit_code == 2 and "no such folder" in missing.output
    for case_file in (pack_folder / "cases").iterdir():
        case_file.unlink()
    empty = invoke(pack_folder)
    assert empty.exit_code == 2 and "holds no case file" in empty.output


# ---- the pack's case_table ----------------------------------------------------------------

PACK_TEXT = (RULES / f"{BASE}.yaml").read_text(encoding="utf-8")
CASE_TABLE = next(line for line in PACK_TEXT.splitlines() if line.startswith("case_table:"))


def test_a_pack_without_a_case_table_loads_and_its_cases_must_give_the_table(
    pack_folder: Path,
) -> None:
    pack_path = pack_folder / f"{NEW}.yaml"
    text = pack_path.read_text(encoding="utf-8").replace(CASE_TABLE + "\n", "")
    assert parse_pack(text, file="x.yaml").rules.case_table is None
    pack_path.write_text(text, encoding="utf-8")
    result = invoke(pack_folder)
    assert result.exit_code == 2, result.output
    text = (pack_folder / "cases" / f"{COPIED[0]}.yaml").read_text(encoding="utf-8")
    name = next(iter(yaml.safe_load(text)["cases"]))
    line = text.splitlines().index(f"  {name}:") + 1
    assert f"cases/{COPIED[0]}.yaml:{line}: {name}: cannot be dealt: pack {NEW} declares " in (
        result.output
    )
    assert "declares no case_table, and the case's table gives no" in result.output


@pytest.mark.parametrize(
    ("given", "problem"),
    [
        ("seats: 12", None),
        ("seats: 15", "case_table.seats: 15 is outside limits.seats (10 to 14)"),
        ("decks: 8", None),
        ("decks: 9", "case_table.decks: 9 is outside limits.decks (6 to 8)"),
        ("commission_percent: 4", "4 is not one of commission.percents (5)"),
    ],
)
def test_a_case_table_the_pack_itself_forbids_is_refused(given: str, problem: str | None) -> None:
    key = given.split(":")[0]
    changed = CASE_TABLE.replace(f"{key}: {getattr(_builtin_case_table(), key)}", given)
    text = PACK_TEXT.replace(CASE_TABLE, changed)
    if problem is None:
        parse_pack(text, file="x.yaml")
        return
    with pytest.raises(PackRefused) as refused:
        parse_pack(text, file="x.yaml")
    assert any(problem in line for line in refused.value.problems), refused.value.problems


def _builtin_case_table():
    return parse_pack(PACK_TEXT, file="x.yaml").rules.case_table
