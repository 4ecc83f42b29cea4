"""A check's documentation names the pack rules it applies, and the citation a reader sees
is rendered from the packs: a pack from outside is cited in its own sections."""

from __future__ import annotations

from pathlib import Path

import pytest

from auditor.cli import main
from auditor.packs.cited import cite_rules, joined, rule_refs
from auditor.packs.loaded import builtin_packs, load_packs
from auditor.pipeline import all_checks
from tests.support.packs import NEW, new_pack_text

CHECKS = {check.code: check for check in all_checks()}


@pytest.mark.parametrize("code", sorted(CHECKS))
def test_every_rule_a_check_names_is_cited_by_a_built_in_pack(code):
    packs = builtin_packs()
    check = CHECKS[code]
    assert check.rules, f"{code} names no pack rule"
    for key in check.rules:
        assert any(rule_refs(pack, key) for pack in packs.values()), f"{code}: {key}"


def test_a_rule_key_no_pack_has_is_refused():
    pack = builtin_packs()["ma-baccarat"]
    with pytest.raises(KeyError, match="commision"):
        rule_refs(pack, "commision.percents")


def test_a_rule_the_pack_does_not_have_cites_nothing_there():
    packs = builtin_packs()
    # Chemin de Fer states it has no last-hand rule: `value: false` beside its cite.
    assert rule_refs(packs["ma-chemin-de-fer"], "procedures.last_hand_after_cover") == ()
    assert rule_refs(packs["ma-chemin-de-fer"], "procedures.last_hand_after_cover.cite")
    assert rule_refs(packs["md-mini-baccarat"], "permitted.royal9") == ()
    # Midi Baccarat places no cover card: `min_from_back: null` beside its cite.
    assert rule_refs(packs["ma-midi-baccarat"], "limits.cover_card") == ()
    assert rule_refs(packs["ma-baccarat"], "limits.cover_card")


def test_references_are_ordered_and_runs_written_as_ranges():
    assert joined(["§13(e)", "§9(c)", "§13(c)"]) == "§9(c), §13(c), §13(e)"
    assert joined([f"§8(a)({n})" for n in range(1, 8)]) == "§8(a)(1)-(7)"
    assert joined([".10E(3)(a)", ".10E(3)(b)"]) == ".10E(3)(a), .10E(3)(b)"


def test_a_check_cites_each_packs_own_sections():
    cited = CHECKS["COM002"].cites(builtin_packs())
    assert cited.startswith("the vigorish and its rounding (")
    assert "ma-baccarat §13(c)" in cited and "md-mini-baccarat .12D(1)" in cited


def test_a_fifth_pack_is_cited_in_its_own_sections(tmp_path: Path, capsys):
    folder = tmp_path / "packs"
    folder.mkdir()
    (folder / f"{NEW}.yaml").write_text(new_pack_text(), encoding="utf-8")
    packs = load_packs(folder)
    check = CHECKS["COM002"]
    cited = check.cites(packs)
    assert f"{NEW} §13(c-1)" in cited
    assert cited == cite_rules(check.subject, check.rules, packs)
    with pytest.raises(SystemExit) as done:
        main(["rules", "COM002", "--rules", str(folder)])
    assert done.value.code in (0, None)
    assert f"{NEW} §13(c-1)" in capsys.readouterr().out
