"""`auditor rules CODE --by-section` lists exactly the sections the check's findings cite,
in every built-in pack: read against the citation `auditor rules CODE` prints, never
against the hand-kept traceability file (which ties checks to sections they do not cite)."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

from auditor.check_docs import check_docs
from auditor.cli import main
from auditor.packs.loaded import builtin_packs
from auditor.packs.regulation_files import section_rows

# "ma-baccarat §11(c)(1), §11(c)(2)(i)-(iii) Table 1": a pack's part of a citation.
_RANGE = re.compile(
    r"^(?P<stem>.*)\((?P<first>[a-z]|\d+)\)[-–]\((?P<last>[a-z]|\d+)\)(?P<tail>.*)$"
)


def _expanded(ref: str) -> list[str]:
    found = _RANGE.match(ref)
    if found is None:
        return [ref]
    first, last = found["first"], found["last"]
    if first.isdigit():
        labels = [str(n) for n in range(int(first), int(last) + 1)]
    else:
        labels = [chr(c) for c in range(ord(first), ord(last) + 1)]
    return [f"{found['stem']}({label}){found['tail']}" for label in labels]


def _cited_refs(citation: str) -> dict[str, set[str]]:
    """Each ruleset's references in the printed citation, ranges written out."""
    inner = citation[citation.index("(") + 1 : citation.rindex(")")] if "(" in citation else ""
    refs: dict[str, set[str]] = {}
    for part in inner.split("; "):
        ruleset, _, listed = part.partition(" ")
        if ruleset not in builtin_packs():
            continue
        refs[ruleset] = {r for ref in listed.split(", ") for r in _expanded(ref.strip())}
    return refs


def _part_of(inner: str, outer: str) -> bool:
    return inner == outer or inner.startswith((outer + " ", outer + "("))


def _related(ref: str, section: str) -> bool:
    """A reference and a section row name the same text, or one lies in the other."""
    return any(_part_of(ref, s) or _part_of(s, ref) for s in _expanded(section))


def _listed(code: str) -> dict[str, list[str]]:
    result = CliRunner().invoke(main, ["rules", code, "--by-section", "--format", "json"])
    assert result.exit_code == 0, result.output
    listed: dict[str, list[str]] = {}
    for row in json.loads(result.stdout):
        listed.setdefault(row["ruleset"], []).append(row["section"])
    return listed


@pytest.mark.parametrize("code", [c.code for c in check_docs()])
def test_by_section_lists_exactly_the_sections_the_check_cites(code: str) -> None:
    citation = next(c.citation for c in check_docs() if c.code == code)
    cited = _cited_refs(citation)
    listed = _listed(code)
    assert set(listed) <= set(cited), f"{code}: sections of a pack it does not cite"
    for ruleset, pack in builtin_packs().items():
        rows = [row["ref"] for row in section_rows(pack)]
        shown = listed.get(ruleset, [])
        assert len(shown) == len(set(shown)), f"{code} {ruleset}: a section listed twice"
        for section in shown:
            assert any(_related(ref, section) for ref in cited.get(ruleset, ())), (
                f"{code} {ruleset} {section}: listed, yet the check does not cite it"
            )
        for ref in cited.get(ruleset, ()):
            if any(_related(ref, row) for row in rows):
                assert any(_related(ref, s) for s in shown), (
                    f"{code} {ruleset} {ref}: cited, yet no section of it is listed"
                )


def test_drw003_lists_the_banker_drawing_rule_and_nothing_else() -> None:
    listed = _listed("DRW003")
    assert listed["ma-baccarat"] == ["§11(c)(1)", "§11(c)(2)(i)", "§11(c)(2)(ii)", "§11(c)(2)(iii)"]
    assert listed["ma-chemin-de-fer"] == ["§8(c)"]


def test_the_whole_matrix_names_each_check_at_every_section_it_cites() -> None:
    result = CliRunner().invoke(main, ["rules", "--by-section", "--format", "json"])
    assert result.exit_code == 0, result.output
    codes = {(r["ruleset"], r["section"]): set(r["codes"]) for r in json.loads(result.stdout)}
    for check in check_docs():
        for ruleset, sections in _listed(check.code).items():
            for section in sections:
                assert check.code in codes[(ruleset, section)], (check.code, ruleset, section)
