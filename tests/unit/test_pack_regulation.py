"""A pack declares the regulation it encodes (`regulation:`): its jurisdiction, citation
style and the files beside it with the section texts and traceability rows. The reports
and the traceability matrix read them from the packs loaded, a pack from outside too."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from auditor.cli import main
from auditor.errors import RulesetError
from auditor.output.traceability import matrix, traced
from auditor.packs.loaded import builtin_packs, load_packs
from auditor.packs.regulation import STYLES
from auditor.pipeline import all_checks
from auditor.report.sections import cited_section, pack_texts, section_text
from tests.support.packs import NEW, new_pack_text


def test_every_built_in_pack_declares_its_regulation():
    for pack in builtin_packs().values():
        regulation = pack.regulation
        assert regulation is not None and regulation.jurisdiction
        assert regulation.style in STYLES.values()
        assert regulation.texts and regulation.sections and regulation.traceability


def _pack_with_its_regulation(tmp_path: Path, style: str = "section") -> Path:
    folder = tmp_path / "packs"
    (folder / "regs").mkdir(parents=True)
    text = re.sub(r"regulations/ma-baccarat\.", "regs/xx.", new_pack_text())
    text = re.sub(r"jurisdiction: .*", "jurisdiction: Freedonia", text)
    text = re.sub(r"citation_style: .*", f"citation_style: {style}", text)
    (folder / f"{NEW}.yaml").write_text(text, encoding="utf-8")
    (folder / "regs" / "xx.texts.json").write_text(
        json.dumps({"§21": "21. Commission", "§21(a)": "(a) The words of §21(a)."}), "utf-8"
    )
    row = {"ref": "§21(a)", "requires": "the vigorish", "verdict": "auditable", "evidence": "-"}
    (folder / "regs" / "xx.sections.json").write_text(json.dumps([row]), "utf-8")
    (folder / "regs" / "xx.traceability.yaml").write_text('"§21(a)": [COM002]\n', "utf-8")
    return folder


def test_a_pack_from_outside_brings_its_regulation(tmp_path):
    packs = load_packs(_pack_with_its_regulation(tmp_path))
    assert packs[NEW].regulation.jurisdiction == "Freedonia"
    found = section_text(f"{NEW} §21(a)", pack_texts(packs))
    assert found is not None and found.text == ("(a) The words of §21(a).",)
    assert found.heading == "21. Commission"
    assert traced(packs)[(NEW, "§21(a)")].codes == ("COM002",)
    rows = matrix(packs).filter(citation=f"{NEW} §21(a)")
    assert rows["codes"].to_list() == [["COM002"]]


def test_an_unknown_citation_style_is_refused(tmp_path):
    with pytest.raises(RulesetError, match="citation style"):
        load_packs(_pack_with_its_regulation(tmp_path, style="roman"))


def test_rules_by_section_reads_the_packs_of_a_folder(tmp_path):
    folder = _pack_with_its_regulation(tmp_path)
    # COM002 lists the sections its findings cite: the pack's rounding rule is §21(a).
    pack = folder / f"{NEW}.yaml"
    text = pack.read_text(encoding="utf-8")
    rounding = 'rounding: {step_cents: {5: 10}, cite: "§13(c-1)"'
    assert rounding in text
    pack.write_text(text.replace(rounding, rounding.replace("§13(c-1)", "§21(a)")), "utf-8")
    result = CliRunner().invoke(main, ["rules", "COM002", "--by-section", "--rules", str(folder)])
    assert result.exit_code == 0, result.output
    assert f"{NEW}:" in result.output and "§21(a)" in result.output


def test_a_pack_without_a_regulation_block_audits_on_its_own_sections(tmp_path):
    folder = tmp_path / "packs"
    folder.mkdir()
    text = re.sub(r"(?m)^regulation:\n(?:  .*\n)+", "", new_pack_text())
    assert "regulation:" not in text
    text += '\nsections:\n  "§21(a)": "(a) The words of §21(a)."\n'
    (folder / f"{NEW}.yaml").write_text(text, encoding="utf-8")
    packs = load_packs(folder)
    assert packs[NEW].regulation is None
    found = section_text(f"{NEW} §21(a)", pack_texts(packs))
    assert found is not None and found.text == ("(a) The words of §21(a).",)
    assert not [key for key in traced(packs) if key[0] == NEW]


def test_the_matrix_is_built_once_per_set_of_packs(tmp_path):
    """The catalog of every audit holds the matrix: built once per set of packs loaded,
    and never the matrix of other packs."""
    built_in = builtin_packs()
    assert matrix(built_in) is matrix(built_in)
    assert matrix(built_in).equals(matrix())
    with_new = load_packs(_pack_with_its_regulation(tmp_path))
    assert with_new.keys() > built_in.keys()
    mine = matrix(with_new)
    assert mine is not matrix(built_in)
    assert mine.filter(citation=f"{NEW} §21(a)").height == 1
    assert matrix(built_in).filter(citation=f"{NEW} §21(a)").height == 0
    # A second load of the same folder is other pack objects: a matrix of its own, equal.
    again = load_packs(_pack_with_its_regulation(tmp_path / "again"))
    assert matrix(again) is not mine and matrix(again).equals(mine)


def test_citations_and_texts_are_kept_per_set_of_packs(tmp_path):
    """The checks' citations and the regulation's texts are worked out once per set of
    packs, and a set never reads another's: the new pack's words and sections reach its
    own set only, however often the built-in set was read before."""
    built_in = builtin_packs()
    com002 = next(c for c in all_checks() if c.code == "COM002")
    assert pack_texts(built_in) is pack_texts(built_in)
    before = com002.cites(built_in)
    assert NEW not in before
    with_new = load_packs(_pack_with_its_regulation(tmp_path))
    assert f"{NEW} §21(a)" in pack_texts(with_new)
    assert f"{NEW} §21(a)" not in pack_texts(built_in)
    assert NEW in com002.cites(with_new) and com002.cites(built_in) == before
    assert cited_section(f"{NEW} §21(a)", built_in) is None
    found = cited_section(f"{NEW} §21(a)", with_new)
    assert found is not None and found.text == ("(a) The words of §21(a).",)
    assert cited_section(f"{NEW} §21(a)", with_new) is found
    # Nine sets in turn: the first is let go (a bounded number kept), and read again,
    # built again alike.
    first = pack_texts(with_new)
    for n in range(8):
        pack_texts(load_packs(_pack_with_its_regulation(tmp_path / str(n))))
    assert pack_texts(with_new) is not first and pack_texts(with_new) == first
