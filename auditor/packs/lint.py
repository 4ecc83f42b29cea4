"""`auditor rules lint DIR`: every problem of the rule packs in a folder, one line each,
named by file, line and key path, before an audit is run under them.

First what the loader refuses (the pack model: a key missing or misspelt, a draw cell
left out or given twice, a bet offered without its payout, ...), every cause at once;
then, for a pack that loads, that each `cite` resolves into the pack's own `sections`:
the reference itself, or a section it falls under (`§11(c)(2)(iii) Table 1` under
`§11(c)(2)(iii)` or `§11(c)`), so that a finding never cites a section its pack cannot
quote. The sections are those the pack writes itself and those of the texts file its
`regulation` names beside it; every file it names must be there.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import yaml
from pydantic import ValidationError
from pydantic_core import ErrorDetails

from auditor.packs.loaded import pack_files
from auditor.packs.model import available_rulesets
from auditor.packs.problems import DICT_KEY, _consequences_dropped, _describe
from auditor.packs.sections import PackFile


def lint_folder(folder: Path) -> list[str]:
    """Every problem of the folder's packs, in file order; empty when they are clean."""
    return [problem for path in pack_files(folder) for problem in lint_file(path)]


def lint_file(path: Path) -> list[str]:
    try:
        text = path.read_bytes().decode("utf-8")
        data = yaml.safe_load(text)
        root = yaml.compose(text)
    except UnicodeDecodeError as exc:
        return [f"{path}: not UTF-8 text ({exc})"]
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        return [f"{where}: not valid YAML: {getattr(exc, 'problem', None) or exc}"]
    try:
        pack = PackFile.model_validate(data, context={"ruleset": path.stem})
    except ValidationError as exc:
        return [
            f"{path}:{_line(root, _located(detail))}: {_describe(detail, data)}"
            for detail in _consequences_dropped(exc.errors())
        ]
    return list(_unresolved_citations(path, pack, root))


def _regulation_files(path: Path, pack: PackFile) -> Iterator[str]:
    """A file the pack's `regulation` names that is not beside it."""
    regulation = pack.regulation
    for which in ("texts", "sections", "traceability"):
        name = None if regulation is None else getattr(regulation, which)
        if name is not None and not (path.parent / name).is_file():
            yield f"{path}:1: regulation.{which}: names {name}, which is not beside the pack"


def _sections(path: Path, pack: PackFile) -> dict[str, str] | None:
    """The sections the pack quotes: its texts file's, then its own; None if neither."""
    name = None if pack.regulation is None else pack.regulation.texts
    texts = path.parent / name if name is not None else None
    if texts is None or not texts.is_file():
        return pack.sections
    return {**json.loads(texts.read_text(encoding="utf-8")), **(pack.sections or {})}


def _unresolved_citations(path: Path, pack: PackFile, root: yaml.Node) -> Iterator[str]:
    yield from _regulation_files(path, pack)
    cites = list(_cites(root, ""))
    sections = _sections(path, pack)
    if sections is None:
        if pack.ruleset not in available_rulesets():
            yield (
                f"{path}:1: sections: none given, so none of the pack's {len(cites)} "
                "citations resolves: list the regulation's sections the pack cites, each "
                "with its words"
            )
        return
    for key_path, cite, line in cites:
        if not any(_falls_under(cite, section) for section in sections):
            yield (
                f"{path}:{line}: {key_path}: cites {cite!r}, which is not in the pack's "
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


def _located(detail: ErrorDetails) -> tuple[str | int, ...]:
    """Where the error is: its location, and below it the key path a pack check names."""
    return (*detail["loc"], *detail.get("ctx", {}).get("at", ()))


def _line(root: yaml.Node | None, loc: tuple[str | int, ...]) -> int:
    """The line of the deepest node of `loc` that the file has (1 for the top level);
    pydantic's names for a union's alternatives are stepped over."""
    node, line = root, 1
    for part in loc:
        if node is None or part == DICT_KEY:
            break
        if isinstance(node, yaml.MappingNode):
            found = [(k, v) for k, v in node.value if str(k.value) == str(part)]
            if found:
                key, node = found[0]
                line = key.start_mark.line + 1
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
            if part >= len(node.value):
                break
            node = node.value[part]
            line = node.start_mark.line + 1
    return line
