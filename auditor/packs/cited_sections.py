"""The sections of a pack's regulation that a check's findings cite: the references its
rules hold (`packs.cited.rule_refs`), each read as the rows of the pack's sections file
(`regulation.sections`) it names.

A reference and a row rarely match letter for letter: "§11(c)(2)(iii) Table 1" cites the
row "§11(c)(2)(iii)"; ".09B(1)" lies in the row ".09B(1)–(2)"; "§13(i)" names no row of
its own but the rows written under it ("§13(i) decks", "§13(i) Table 2", ...). So a
reference cites the most specific row that holds it, or, where none does, every row it
holds.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from auditor.packs.cited import rule_refs
from auditor.packs.model import RulePack
from auditor.packs.regulation_files import section_rows

# "X(1)–(3)" or "X(a)-(c)": a row that covers a run of items under one section.
_RANGE = re.compile(r"^(?P<stem>.*)\((?P<first>[a-z]|\d+)\)[–-]\((?P<last>[a-z]|\d+)\)$")


def _items(row: str) -> tuple[str, ...]:
    """The references a row stands for: itself, or each item of its range."""
    found = _RANGE.match(row)
    if found is None:
        return (row,)
    first, last = found["first"], found["last"]
    if first.isdigit() != last.isdigit():
        return (row,)
    if first.isdigit():
        labels = [str(n) for n in range(int(first), int(last) + 1)]
    else:
        labels = [chr(c) for c in range(ord(first), ord(last) + 1)]
    return tuple(f"{found['stem']}({label})" for label in labels) or (row,)


def _within(inner: str, outer: str) -> bool:
    """Whether reference `inner` is `outer` or a part of it (a subsection, a table)."""
    return inner == outer or inner.startswith((outer + " ", outer + "("))


def sections_of_ref(ref: str, rows: Sequence[str]) -> list[str]:
    """The rows of `rows` that reference `ref` cites (see the module's docstring)."""
    holding = [row for row in rows if any(_within(ref, item) for item in _items(row))]
    if holding:
        return [max(holding, key=len)]
    return [row for row in rows if any(_within(item, ref) for item in _items(row))]


def cited_sections(pack: RulePack, rules: Iterable[str]) -> list[str]:
    """The rows of the pack's sections file that a check applying `rules` cites, in the
    file's order; none where the pack has no such rule or ships no sections."""
    rows = [row["ref"] for row in section_rows(pack)]
    refs = [ref for key in rules for ref in rule_refs(pack, key)]
    cited = {section for ref in refs for section in sections_of_ref(ref, rows)}
    return [row for row in rows if row in cited]


def citing_checks(
    packs: Mapping[str, RulePack], checks: Iterable[tuple[str, Sequence[str]]]
) -> dict[tuple[str, str], set[str]]:
    """(ruleset, section) -> the codes of the checks (code, rules) whose findings cite it."""
    found: dict[tuple[str, str], set[str]] = {}
    for code, rules in checks:
        for ruleset, pack in packs.items():
            for section in cited_sections(pack, rules):
                found.setdefault((ruleset, section), set()).add(code)
    return found
