"""The files a pack's `regulation` names beside it: the section texts the reports quote,
the regulation's sections (INDEX.md's rows) and the checks that audit each.

The files are named relative to the pack's own file: beside `rules/ID.yaml` for a
built-in pack (installed with it), beside `DIR/ID.yaml` for a pack given with `--rules`.
A pack from a folder names only files inside that folder (the model refuses an absolute
name and `..`), and each is read without following a link at any of its parts, as a
regular file of bounded size: else a pack could have a report quote any file of the
machine. `companion_problems` is run when a pack is loaded, so what an audit would choke
on later is refused up front.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path, PurePosixPath
from typing import Any

import yaml

from auditor.errors import InputError, RulesetError
from auditor.packs import yamlload
from auditor.packs.kept import per_packs
from auditor.packs.model import RulePack, available_rulesets, load_pack
from auditor.regular_files import read_regular_text

# The built-in packs' largest file is 34 KB of section texts.
COMPANION_LIMIT = 8 * 1024 * 1024
REGULATION_FILES = ("texts", "sections", "traceability")


def pack_folder(pack: RulePack) -> Traversable:
    """Where the pack's own files lie: the installed packs' folder for a built-in pack
    (the same bytes as the installed file), else the folder of the file it was read from."""
    ruleset = pack.ruleset.partition("@")[0]
    if ruleset in available_rulesets() and load_pack(ruleset).digest == pack.digest:
        return files("auditor.rules")
    return Path(pack.file).parent


def companion(pack: RulePack, name: str) -> Traversable:
    """A file the pack names, relative to its own folder."""
    node = pack_folder(pack)
    for part in PurePosixPath(name).parts:
        node = node / part
    return node


def _read(pack: RulePack, which: str) -> str | None:
    """The text of a file the pack names; None where it names none, or the file is not
    there (a pack copied without its files: `auditor rules lint` names the file)."""
    regulation = pack.regulation
    name = None if regulation is None else getattr(regulation, which)
    if name is None:
        return None
    found = companion(pack, name)
    if not isinstance(found, Path):
        return found.read_text(encoding="utf-8") if found.is_file() else None
    linked = _linked_folder(pack_folder(pack), name)
    if linked is not None:
        raise RulesetError(f"{found}: {linked} is a link; a pack's files lie in its folder")
    try:
        return read_regular_text(found, COMPANION_LIMIT)
    except FileNotFoundError:
        return None


def _linked_folder(folder: Traversable, name: str) -> Path | None:
    """The first folder on the way from the pack's folder to `name` that is a link."""
    if not isinstance(folder, Path):
        return None
    here = folder
    for part in PurePosixPath(name).parts[:-1]:
        here = here / part
        if here.is_symlink():
            return here
    return None


def _parsed(pack: RulePack, which: str) -> Any:
    """The data of a file the pack names, None where there is none; RulesetError when it
    is not what the pack says it is."""
    text = _read(pack, which)
    if text is None:
        return None
    try:
        data = yamlload.safe_load(text) if which == "traceability" else json.loads(text)
    except (ValueError, RecursionError, yaml.YAMLError) as exc:
        raise RulesetError(f"not valid {_FORMATS[which]}: {exc}") from None
    if not _SHAPES[which](data):
        raise RulesetError(f"not {_DESCRIBED[which]}")
    return data


_FORMATS = {"texts": "JSON", "sections": "JSON", "traceability": "YAML"}
_DESCRIBED = {
    "texts": "a JSON object of section texts by reference",
    "sections": "a JSON list of rows (ref, requires, verdict, evidence)",
    "traceability": "a YAML mapping of references",
}
_SHAPES = {
    "texts": lambda data: isinstance(data, dict) and all(isinstance(v, str) for v in data.values()),
    "sections": lambda data: isinstance(data, list) and all(isinstance(r, dict) for r in data),
    "traceability": lambda data: data is None or isinstance(data, dict),
}


def companion_problems(pack: RulePack) -> list[str]:
    """Why a file the pack names cannot be read as what it is, each problem naming the
    pack, the line and the key that names the file; a missing file is no problem here."""
    problems = []
    for which in REGULATION_FILES:
        try:
            _parsed(pack, which)
        except InputError as exc:
            where = pack.where(f"regulation.{which}")
            problems.append(f"{where}: names {getattr(pack.regulation, which)}: {exc}")
    return problems


@functools.cache
def section_texts(pack: RulePack) -> dict[str, str]:
    """The words of the pack's regulation by reference: its texts file, then the
    `sections` written in the pack itself."""
    return {**(_parsed(pack, "texts") or {}), **pack.sections}


@per_packs
def regulation_texts(packs: Mapping[str, RulePack]) -> dict[str, str]:
    """Every pack's section texts, keyed as a finding cites them ("ruleset ref"): built
    once per set of packs (each finding's evidence looks its section up in them)."""
    return {
        pack.cite(ref): words
        for pack in packs.values()
        for ref, words in section_texts(pack).items()
    }


@functools.cache
def section_rows(pack: RulePack) -> tuple[dict[str, str], ...]:
    """The regulation's sections (ref, requires, verdict, evidence), in its order."""
    return tuple(_parsed(pack, "sections") or ())


@functools.cache
def traced_rows(pack: RulePack) -> dict[str, Any]:
    """The checks that audit each section, or the reason none does: ref -> entry."""
    return _parsed(pack, "traceability") or {}
