"""Rule packs an audit must refuse before it runs, refused alike by `auditor rules lint`
and by `auditor audit --rules DIR`: exit 2, with the file, the line and the key.

Each case is a real folder of packs: the Massachusetts Baccarat pack under an id of its
own (`own_pack`), with one thing changed. The audit is of the sample night; a pack it
refuses stops it before any data is read. The hostile files are built at the size the
issue describes where that costs the test nothing (a billion-laughs of ten levels, 3,000
levels of nesting, a 200 MB file, sparse on disk); the list of 60 million values is
replaced by the smallest list past the bound on values, since a file of 60 million
values is past the bound on size, which has a case of its own.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from auditor.cli import main
from auditor.packs.entries import MAX_DECKS
from auditor.packs.payouts import MAX_ODDS
from auditor.packs.sections import MAX_STEP_CENTS
from auditor.packs.yamlload import MAX_DEPTH, MAX_NODES, MAX_PACK_BYTES
from tests.support.cli import AUDITOR
from tests.support.paths import RULES, SAMPLE

OWN = "ee-baccarat"
PANDA = 'panda8: {odds: 25, cite: "§13(g)"}'
DECKS = 'decks: {min: 6, max: 8, cite: "§3(a)"}'
STEP = "step_cents: {5: 25}"


def own_pack(ruleset: str = OWN) -> str:
    """The Massachusetts pack as a jurisdiction of its own, with every section it cites
    and none of the built-in pack's files."""
    text = (RULES / "ma-baccarat.yaml").read_text(encoding="utf-8")
    text = text.replace("ruleset: ma-baccarat\n", f"ruleset: {ruleset}\n")
    text = re.sub(r"  (texts|sections|traceability): regulations/.*\n", "", text)
    cited = sorted(set(re.findall(r'cite: "([^"]+)"', text)))
    return text + "\nsections:\n" + "".join(f'  "{c}": "The words of {c}."\n' for c in cited)


def changed(old: str, new: str, ruleset: str = OWN) -> str:
    text = own_pack(ruleset)
    assert old in text, old
    return text.replace(old, new, 1)


def versioned(when: str) -> str:
    return own_pack().replace(f"ruleset: {OWN}\n", f"ruleset: {OWN}\neffective_from: {when}\n")


def folder_of(tmp_path: Path, files: dict[str, str]) -> Path:
    folder = tmp_path / "packs"
    folder.mkdir()
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def line_of(text: str, fragment: str) -> int:
    return text[: text.index(fragment)].count("\n") + 1


def lint(folder: Path, *options: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["rules", "lint", str(folder), *options])
    return result.exit_code, result.output


def audit(folder: Path, tmp_path: Path, *options: str) -> tuple[int, str]:
    out = tmp_path / f"out{len(list(tmp_path.glob('out*')))}"
    args = ["audit", str(SAMPLE), "--out", str(out), "--rules", str(folder), *options]
    result = CliRunner().invoke(main, args)
    return result.exit_code, result.output


def run(*args: str) -> tuple[int, str]:
    """The installed command in a process of its own, as an operator runs it."""
    # The console script, not `python -m auditor`: run from the repository, `-m` would
    # import the source tree (whose rule packs live outside the package) over the wheel.
    done = subprocess.run([AUDITOR, *args], capture_output=True, text=True, timeout=600)
    return done.returncode, done.stdout + done.stderr


def refused_by_both(folder: Path, tmp_path: Path, where: str, what: str, *options: str) -> None:
    """`rules lint` and `audit` both exit 2 with `where` (file:line: key) and `what`."""
    for name, (code, output) in {
        "lint": lint(folder, *options),
        "audit": audit(folder, tmp_path, *options),
    }.items():
        assert code == 2, (name, output)
        assert where in output and what in output, (name, output)


def accepted_by_both(folder: Path, tmp_path: Path, *options: str) -> None:
    code, output = lint(folder, *options)
    assert code == 0, output
    code, output = audit(folder, tmp_path, *options)
    assert code in (0, 1), output


def test_the_own_pack_is_accepted_by_both(tmp_path):
    accepted_by_both(folder_of(tmp_path, {f"{OWN}.yaml": own_pack()}), tmp_path)


# ---- what the YAML itself may hold ------------------------------------------------------


def billion_laughs(levels: int = 10) -> str:
    rows = ['lol0: &lol0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for level in range(1, levels):
        aliases = ", ".join([f"*lol{level - 1}"] * 10)
        rows.append(f"lol{level}: &lol{level} [{aliases}]")
    return "\n".join(rows) + "\n"


@pytest.mark.e2e
def test_a_billion_laughs_is_refused_at_the_alias_past_the_bound(tmp_path):
    text = f"ruleset: {OWN}\n" + billion_laughs()
    folder = folder_of(tmp_path, {f"{OWN}.yaml": text})
    where = f"{folder / OWN}.yaml:{line_of(text, 'lol4:')}: lol4["
    for args in (
        ["rules", "lint", str(folder)],
        ["audit", str(SAMPLE), "--out", str(tmp_path / "o"), "--rules", str(folder)],
    ):
        code, output = run(*args)
        assert code == 2, output
        assert where in output and f"more than {MAX_NODES:,} values" in output


def test_an_alias_within_the_bound_is_read(tmp_path):
    # The built-in pack itself repeats its Royal 9 lines by an alias.
    assert "*royal9_lines" in own_pack()
    accepted_by_both(folder_of(tmp_path, {f"{OWN}.yaml": own_pack()}), tmp_path)


@pytest.mark.e2e
def test_nesting_3000_deep_is_refused(tmp_path):
    text = own_pack() + "nested: " + "[" * 3000 + "]" * 3000 + "\n"
    folder = folder_of(tmp_path, {f"{OWN}.yaml": text})
    where = f"{folder / OWN}.yaml:{line_of(text, 'nested:')}: nested{'[0]' * (MAX_DEPTH - 1)}:"
    for args in (
        ["rules", "lint", str(folder)],
        ["audit", str(SAMPLE), "--out", str(tmp_path / "o"), "--rules", str(folder)],
    ):
        code, output = run(*args)
        assert code == 2, output
        assert where in output and f"nested more than {MAX_DEPTH} levels deep" in output


def test_nesting_within_the_bound_reaches_the_model(tmp_path):
    text = own_pack() + "nested: " + "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1) + "\n"
    folder = folder_of(tmp_path, {f"{OWN}.yaml": text})
    refused_by_both(
        folder, tmp_path, f"{folder / OWN}.yaml:{line_of(text, 'nested:')}: nested:", "unknown key"
    )


def test_a_list_past_the_bound_on_values_is_refused(tmp_path):
    text = own_pack() + "many: [" + "0, " * MAX_NODES + "0]\n"
    assert len(text.encode()) < MAX_PACK_BYTES  # the bound on values, not on size, is met
    folder = folder_of(tmp_path, {f"{OWN}.yaml": text})
    where = f"{folder / OWN}.yaml:{line_of(text, 'many:')}: many["
    refused_by_both(folder, tmp_path, where, f"more than {MAX_NODES:,} values")


def test_a_200_mb_file_is_refused_unread(tmp_path):
    folder = folder_of(tmp_path, {f"{OWN}.yaml": own_pack()})
    with (folder / f"{OWN}.yaml").open("r+b") as pack:
        pack.truncate(200 * 1024 * 1024)  # sparse: nothing written past the pack
    where = f"{folder / OWN}.yaml:1: (whole file): 209,715,200 bytes"
    refused_by_both(folder, tmp_path, where, f"more than the {MAX_PACK_BYTES:,}")


def test_a_key_given_twice_names_both_lines(tmp_path):
    text = changed(PANDA, 'panda8: {odds: 25,\n    odds: 2500, cite: "§13(g)"}')
    folder = folder_of(tmp_path, {f"{OWN}.yaml": text})
    first = line_of(text, "odds: 25,")
    where = f"{folder / OWN}.yaml:{first + 1}: payouts.panda8.odds:"
    refused_by_both(folder, tmp_path, where, f"given twice, at lines {first} and {first + 1}")


def test_a_key_given_once_in_each_of_two_mappings_is_read(tmp_path):
    # `odds` under panda8 and under dragon7: one key per mapping, as the pack writes it.
    assert own_pack().count("odds:") > 2
    accepted_by_both(folder_of(tmp_path, {f"{OWN}.yaml": own_pack()}), tmp_path)


# ---- values the engine cannot hold -------------------------------------------------------


@pytest.mark.parametrize(
    "old, new, key, what",
    [
        (
            DECKS,
            'decks: {min: 0, max: 8, cite: "§3(a)"}',
            "limits.decks.min",
            "0 is below the minimum 1",
        ),
        (
            DECKS,
            'decks: {min: 6, max: 1000000000000, cite: "§3(a)"}',
            "limits.decks.max",
            f"above the maximum {MAX_DECKS}",
        ),
        (
            PANDA,
            'panda8: {odds: 1000000000000000000000000, cite: "§13(g)"}',
            "payouts.panda8.odds",
            f"above the maximum {MAX_ODDS}",
        ),
        (
            STEP,
            "step_cents: {5: 100000000000000000000}",
            "commission.rounding.step_cents.5",
            f"above the maximum {MAX_STEP_CENTS}",
        ),
    ],
    ids=["zero decks", "decks 1e12", "payout 1e24", "rounding step 1e20"],
)
def test_a_value_past_what_the_engine_holds_is_refused(tmp_path, old, new, key, what):
    text = changed(old, new)
    folder = folder_of(tmp_path, {f"{OWN}.yaml": text})
    where = f"{folder / OWN}.yaml:{line_of(text, new)}: {key}:"
    refused_by_both(folder, tmp_path, where, what)


def test_values_at_the_engine_bounds_are_accepted(tmp_path):
    text = own_pack()
    for old, new in (
        (DECKS, f'decks: {{min: 1, max: {MAX_DECKS}, cite: "§3(a)"}}'),
        (PANDA, f'panda8: {{odds: {MAX_ODDS}, cite: "§13(g)"}}'),
        (STEP, f"step_cents: {{5: {MAX_STEP_CENTS}}}"),
    ):
        text = text.replace(old, new, 1)
    accepted_by_both(folder_of(tmp_path, {f"{OWN}.yaml": text}), tmp_path)


# ---- dated versions ----------------------------------------------------------------------


def test_a_moment_spelled_as_midnight_is_refused_for_its_date(tmp_path):
    text = versioned("2027-01-01T00:00:00Z")
    folder = folder_of(
        tmp_path,
        {
            f"{OWN}.yaml": own_pack(),
            f"{OWN}@2027-01-01.yaml": versioned("2027-01-01"),
            f"{OWN}@2027-01-01T00:00:00Z.yaml": text,
        },
    )
    line = line_of(text, "effective_from")
    where = f"{folder / OWN}@2027-01-01T00:00:00Z.yaml:{line}: effective_from:"
    refused_by_both(folder, tmp_path, where, "is the start of 2027-01-01: write it as 2027-01-01")


def test_a_date_and_a_moment_within_a_day_are_two_versions(tmp_path):
    folder = folder_of(
        tmp_path,
        {
            f"{OWN}.yaml": own_pack(),
            f"{OWN}@2027-01-01.yaml": versioned("2027-01-01"),
            f"{OWN}@2027-01-01T06:00:00Z.yaml": versioned("2027-01-01T06:00:00Z"),
        },
    )
    accepted_by_both(folder, tmp_path)


def test_an_impossible_date_is_refused(tmp_path):
    text = versioned("2027-13-45")
    folder = folder_of(tmp_path, {f"{OWN}.yaml": own_pack(), f"{OWN}@2027-13-45.yaml": text})
    where = f"{folder / OWN}@2027-13-45.yaml:{line_of(text, 'effective_from')}: effective_from:"
    refused_by_both(folder, tmp_path, where, "'2027-13-45' is not a valid timestamp")


def test_a_version_without_its_first_is_refused_by_lint_too(tmp_path):
    text = versioned("2027-01-01")
    folder = folder_of(tmp_path, {f"{OWN}@2027-01-01.yaml": text})
    where = f"{folder / OWN}@2027-01-01.yaml:{line_of(text, 'effective_from')}: effective_from:"
    refused_by_both(folder, tmp_path, where, f"a later version of {OWN}, which no pack loaded has")


# ---- ids ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "ruleset, what",
    [
        ("MA-Baccarat", "'MA-Baccarat' reads as 'ma-baccarat'"),
        ("ma-baccarat ", "U+0020"),
        ("ma\u2010baccarat", "U+2010"),
        ("ma-bac\u200bcarat", "U+200B"),
    ],
    ids=["case", "trailing space", "U+2010 hyphen", "U+200B zero width"],
)
def test_an_id_that_passes_for_a_built_in_one_is_refused(tmp_path, ruleset, what):
    text = own_pack(f'"{ruleset}"')
    folder = folder_of(tmp_path, {f"{ruleset}.yaml": text})
    where = f"{folder / ruleset}.yaml:{line_of(text, 'ruleset:')}: ruleset:"
    refused_by_both(folder, tmp_path, where, what)
    # Replacing a built-in pack is done under its own id, not under one that looks like it.
    refused_by_both(folder, tmp_path, where, what, "--replace-builtin")


def test_a_built_in_id_is_refused_by_lint_as_by_audit_unless_replacing(tmp_path):
    text = own_pack("ma-baccarat")
    folder = folder_of(tmp_path, {"ma-baccarat.yaml": text})
    where = f"{folder}/ma-baccarat.yaml:{line_of(text, 'ruleset:')}: ruleset:"
    refused_by_both(folder, tmp_path, where, "is a built-in pack's id")
    accepted_by_both(folder, tmp_path, "--replace-builtin")


# ---- the files a pack's regulation names -------------------------------------------------


def with_texts(name: str) -> str:
    return changed("  citation_style: section\n", f"  citation_style: section\n  texts: {name}\n")


@pytest.mark.parametrize("name", ["../outside.json", "/etc/passwd", "sub/../../outside.json"])
def test_a_regulation_file_named_outside_the_folder_is_refused(tmp_path, name):
    (tmp_path / "outside.json").write_text('{"§1": "not the pack\'s"}', encoding="utf-8")
    text = with_texts(name)
    folder = folder_of(tmp_path, {f"{OWN}.yaml": text})
    where = f"{folder / OWN}.yaml:{line_of(text, 'texts:')}: regulation.texts:"
    refused_by_both(folder, tmp_path, where, "is not a file in the pack's folder")


@pytest.mark.parametrize("linked", ["file", "folder"])
def test_a_regulation_file_reached_by_a_link_is_refused(tmp_path, linked):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "texts.json").write_text('{"§1": "not the pack\'s"}', encoding="utf-8")
    text = with_texts("regulations/texts.json")
    folder = folder_of(tmp_path, {f"{OWN}.yaml": text})
    if linked == "folder":
        (folder / "regulations").symlink_to(outside)
    else:
        (folder / "regulations").mkdir()
        (folder / "regulations" / "texts.json").symlink_to(outside / "texts.json")
    where = f"{folder / OWN}.yaml:{line_of(text, 'texts:')}: regulation.texts:"
    refused_by_both(folder, tmp_path, where, "link")


def test_a_regulation_file_that_is_not_its_format_is_refused(tmp_path):
    text = with_texts("regulations/texts.json")
    folder = folder_of(tmp_path, {f"{OWN}.yaml": text})
    (folder / "regulations").mkdir()
    (folder / "regulations" / "texts.json").write_text("[" * 100_000, encoding="utf-8")
    where = f"{folder / OWN}.yaml:{line_of(text, 'texts:')}: regulation.texts:"
    refused_by_both(folder, tmp_path, where, "not valid JSON")


def test_a_regulation_file_inside_the_folder_is_read_and_quoted(tmp_path):
    text = with_texts("regulations/texts.json")
    folder = folder_of(tmp_path, {f"{OWN}.yaml": text})
    (folder / "regulations").mkdir()
    (folder / "regulations" / "texts.json").write_text('{"§1": "The words."}', encoding="utf-8")
    accepted_by_both(folder, tmp_path)


# ---- the reader's other refusals ---------------------------------------------------------


@pytest.mark.parametrize(
    "extra, key, what",
    [
        ("---\nruleset: again\n", "(top level)", "a pack is one YAML document"),
        ("? [a, b]\n: 1\n", "(top level)", "a key must be a plain value"),
        ("copied: *nowhere\n", "copied", "alias *nowhere names no anchor"),
        ("flags: !!set {a}\n", "flags", "tag tag:yaml.org,2002:set is not accepted"),
    ],
    ids=["second document", "list as a key", "undefined alias", "set tag"],
)
def test_yaml_a_pack_cannot_be_is_refused(tmp_path, extra, key, what):
    text = own_pack() + extra
    folder = folder_of(tmp_path, {f"{OWN}.yaml": text})
    where = f"{folder / OWN}.yaml:{line_of(text, extra.splitlines()[0])}: {key}:"
    refused_by_both(folder, tmp_path, where, what)


def test_a_moment_with_a_fraction_of_a_second_is_refused(tmp_path):
    text = versioned("2027-01-01T06:00:00.5Z")
    folder = folder_of(
        tmp_path, {f"{OWN}.yaml": own_pack(), f"{OWN}@2027-01-01T06:00:00Z.yaml": text}
    )
    line = line_of(text, "effective_from")
    where = f"{folder / OWN}@2027-01-01T06:00:00Z.yaml:{line}: effective_from:"
    refused_by_both(folder, tmp_path, where, "has a fraction of a second")


def test_two_packs_whose_ids_read_alike_are_refused(tmp_path):
    other = OWN.upper()
    text = own_pack()
    folder = folder_of(tmp_path, {f"{OWN}.yaml": text, f"{other}.yaml": own_pack(other)})
    # The folder is read in name order: the later of the two is the one refused.
    where = f"{folder / OWN}.yaml:{line_of(text, 'ruleset:')}: ruleset:"
    refused_by_both(folder, tmp_path, where, f"{OWN!r} reads as {other!r}")
