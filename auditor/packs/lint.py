"""`auditor rules lint DIR`: every problem of the rule packs in a folder, one line each,
named by file, line and key path, before an audit is run under them.

First, everything `audit --rules DIR` refuses, found by the very loading an audit runs
(`auditor.packs.loaded.folder_packs`), so that a clean folder is one an audit accepts:
text that is not a bounded YAML mapping, the pack model (a key missing or misspelt, a draw
cell left out or given twice, a bet offered without its payout, ...), an id that is a
built-in pack's or reads as another's, a file the pack names that is not readable inside
its folder, a later version without its first; every cause at once. Then, what an audit
does not need but a report does: that every file the pack's `regulation` names is there,
and that each `cite` resolves into the pack's own `sections`: the reference itself, or a
section it falls under (`§11(c)(2)(iii) Table 1` under `§11(c)(2)(iii)` or `§11(c)`), so
that a finding never cites a section its pack cannot quote. The sections are those the
pack writes itself and those of the texts file its `regulation` names beside it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import yaml

from auditor.packs.loaded import builtin_packs, folder_packs
from auditor.packs.model import RulePack
from auditor.packs.regulation_files import REGULATION_FILES, companion, section_texts
from auditor.packs.yamlload import MAX_PACK_BYTES, load
from auditor.regular_files import read_regular_text


def lint_folder(folder: Path, replace_builtin: bool = False) -> list[str]:
    """Every problem of the folder's packs; empty when they are clean. `replace_builtin`:
    as the audit the packs are meant for is run."""
    builtin = builtin_packs()
    added, problems = folder_packs(folder, builtin, replace_builtin)
    for pack in added.values():
        problems.extend(_unresolved_citations(pack, pack.ruleset in builtin))
    return problems


def _missing_files(pack: RulePack) -> Iterator[str]:
    """A file the pack's `regulation` names that is not beside it."""
    for which in REGULATION_FILES:
        name = None if pack.regulation is None else getattr(pack.regulation, which)
        if name is not None and not companion(pack, name).is_file():
            yield f"{pack.where(f'regulation.{which}')}: names {name}, which is not beside the pack"


def _unresolved_citations(pack: RulePack, replaces_builtin: bool) -> Iterator[str]:
    yield from _missing_files(pack)
    root = load(read_regular_text(Path(pack.file), MAX_PACK_BYTES))[1]
    cites = [] if root is None else list(_cites(root, ""))
    sections = section_texts(pack)
    if not sections:
        if not replaces_builtin:
            yield (
                f"{pack.file}:1: sections: none given, so none of the pack's {len(cites)} "
                "citations resolves: list the regulation's sections the pack cites, each "
                "with its words"
            )
        return
    for key_path, cite, line in cites:
        if not any(_falls_under(cite, section) for section in sections):
            yield (
                f"{pack.file}:{line}: {key_path}: cites {cite!r}, which is not in the pack's "
                "sections (nor under one of them)"
            )


def _falls_under(cite: str, section: str) -> bool:
    """`cite` is `section` or a part of it: "§11(c)(2)" under "§11(c)", "§13(i) Table 1"
    under "§13(i)"; not "§110" under "§11"."""
    cite, section = cite.strip(), section.strip()
    return cite == section or (cite.startswith(section) and cite[len(section)] in "( ,;-–")


def _cites(node: yaml.Node, key_path: str) -> Iterator[tuple[str, str, int]]:
    """(key path, cite, line) of every `cite` in the composed YAML."""
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            here = f"{key_path}.{key.value}" if key_path else str(key.value)
            if key.value == "cite" and isinstance(value, yaml.ScalarNode):
                yield here, str(value.value), value.start_mark.line + 1
            else:
                yield from _cites(value, here)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            yield from _cites(item, f"{key_path}[{index}]")
