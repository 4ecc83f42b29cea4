"""`auditor rules lint DIR`: one precise line per problem of a folder's packs (file, line,
key path), exit 2; a clean folder exits 0. Each broken pack is the built-in Massachusetts
Baccarat pack, given an id of its own and its sections, with one thing broken."""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner

from auditor.cli import main
from auditor.packs.lint import lint_folder
from tests.support.paths import RULES

OWN = "yy-baccarat"
CELL_4_STANDS = (
    '  - {banker: [4], player_third: [0, 1, 8, 9], action: stand, cite: "§11(c)(2)(iii) Table 1"}\n'
)


def own_pack(sections: bool = True) -> str:
    """The Massachusetts pack as a jurisdiction of its own, with every section it cites."""
    text = (RULES / "ma-baccarat.yaml").read_text(encoding="utf-8")
    text = text.replace("ruleset: ma-baccarat\n", f"ruleset: {OWN}\n")
    # Its regulation's files are the built-in pack's, not beside this one.
    text = re.sub(r"  (texts|sections|traceability): regulations/.*\n", "", text)
    if not sections:
        return text
    cited = sorted(set(re.findall(r'cite: "([^"]+)"', text)))
    lines = [f'  "{cite}": "The words of {cite}."' for cite in cited]
    return text + "\nsections:\n" + "\n".join(lines) + "\n"


def linted(tmp_path: Path, text: str) -> tuple[int, list[str]]:
    folder = tmp_path / "packs"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{OWN}.yaml").write_text(text, encoding="utf-8")
    result = CliRunner().invoke(main, ["rules", "lint", str(folder)])
    problems = [line for line in result.output.splitlines() if line.startswith(f"{folder}/")]
    return result.exit_code, problems


def line_of(text: str, fragment: str) -> int:
    return text[: text.index(fragment)].count("\n") + 1


def test_a_pack_with_its_sections_is_clean(tmp_path):
    code, problems = linted(tmp_path, own_pack())
    assert (code, problems) == (0, [])


def test_a_missing_draw_cell(tmp_path):
    text = own_pack().replace(CELL_4_STANDS, "")
    code, problems = linted(tmp_path, text)
    assert code == 2 and len(problems) == 1
    assert problems[0].startswith(
        f"{tmp_path / 'packs' / OWN}.yaml:{line_of(text, 'banker_draw:')}: "
    )
    assert "banker_draw: the rules must cover every Banker total" in problems[0]


def test_a_doubled_draw_cell(tmp_path):
    text = own_pack().replace("[0, 1, 8, 9], action: stand", "[0, 1, 2, 8, 9], action: stand")
    code, problems = linted(tmp_path, text)
    assert code == 2 and len(problems) == 1
    assert "banker_draw" in problems[0]
    (folder,) = [p for p in (tmp_path / "packs").iterdir()]
    output = CliRunner().invoke(main, ["rules", "lint", str(folder.parent)]).output
    assert (
        "given twice, Banker 4 / Player third card 2: banker_draw[5] and banker_draw[6]" in output
    )


def test_a_bet_without_its_paytable(tmp_path):
    text = own_pack().replace('panda8: {odds: 25, cite: "§13(g)"}', "panda8: null")
    code, problems = linted(tmp_path, text)
    assert code == 2 and len(problems) == 1
    where = line_of(text, "panda8: null")
    assert problems[0].endswith(
        f".yaml:{where}: payouts.panda8: bet 'panda8' is permitted but has no payout"
    )


def test_a_dangling_citation(tmp_path):
    dangling = 'cite: "§99"'
    text = own_pack().replace('cite: "§13(g)"}', dangling + "}")
    code, problems = linted(tmp_path, text)
    assert code == 2 and len(problems) == 1
    assert problems[0].endswith(
        f".yaml:{line_of(text, dangling)}: payouts.panda8.cite: cites '§99', which is not "
        "in the pack's sections (nor under one of them)"
    )


def test_a_citation_under_a_section_resolves_and_a_longer_number_does_not(tmp_path):
    panda = 'panda8: {odds: 25, cite: "§13(g)"}'
    under = own_pack().replace(panda, 'panda8: {odds: 25, cite: "§13(g)(2) Table 9"}')
    assert linted(tmp_path / "under", under) == (0, [])
    longer = own_pack().replace(panda, 'panda8: {odds: 25, cite: "§130"}')
    assert linted(tmp_path / "longer", longer)[0] == 2


def test_a_pack_of_its_own_without_sections(tmp_path):
    code, problems = linted(tmp_path, own_pack(sections=False))
    assert code == 2 and len(problems) == 1 and "sections: none given" in problems[0]


def test_bad_yaml_names_its_line(tmp_path):
    text = own_pack().replace("naturals:\n", "naturals: [\n", 1)
    code, problems = linted(tmp_path, text)
    assert code == 2 and len(problems) == 1 and "not valid YAML" in problems[0]
    assert re.search(r"\.yaml:\d+: ", problems[0])


def test_every_problem_at_once(tmp_path):
    text = own_pack().replace(CELL_4_STANDS, "")
    text = text.replace(
        'panda8: {odds: 25, cite: "§13(g)"}', 'panda8: {odds: many, cite: "§13(g)"}'
    )
    code, problems = linted(tmp_path, text)
    assert code == 2 and len(problems) == 2
    assert "banker_draw" in problems[0] and "payouts.panda8.odds" in problems[1]


def test_the_built_in_packs_lint_clean():
    # Every citation resolves into the texts file each pack names beside it.
    assert lint_folder(RULES, replace_builtin=True) == []


def test_a_regulation_file_not_beside_the_pack_is_named(tmp_path):
    folder = tmp_path / "packs"
    folder.mkdir()
    # Edited (else it is the built-in pack itself, whose files ship with the auditor).
    copy = (RULES / "ma-baccarat.yaml").read_bytes() + b"# edited\n"
    (folder / "ma-baccarat.yaml").write_bytes(copy)
    problems = lint_folder(folder, replace_builtin=True)
    assert any("regulation.texts: names regulations/ma-baccarat.texts.json" in p for p in problems)
