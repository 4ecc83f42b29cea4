"""The files a pack's `regulation` names beside it: the section texts the reports quote,
the regulation's sections (INDEX.md's rows) and the checks that audit each.

The files are named relative to the pack's own file: beside `rules/ID.yaml` for a
built-in pack (installed with it), beside `DIR/ID.yaml` for a pack given with `--rules`.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

import yaml

from auditor.packs.model import RulePack, available_rulesets, load_pack


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
    for part in Path(name).parts:
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
    return found.read_text(encoding="utf-8") if found.is_file() else None


@functools.cache
def section_texts(pack: RulePack) -> dict[str, str]:
    """The words of the pack's regulation by reference: its texts file, then the
    `sections` written in the pack itself."""
    text = _read(pack, "texts")
    return {**(json.loads(text) if text else {}), **pack.sections}


def regulation_texts(packs: Mapping[str, RulePack]) -> dict[str, str]:
    """Every pack's section texts, keyed as a finding cites them ("ruleset ref")."""
    return {
        pack.cite(ref): words
        for pack in packs.values()
        for ref, words in section_texts(pack).items()
    }


@functools.cache
def section_rows(pack: RulePack) -> tuple[dict[str, str], ...]:
    """The regulation's sections (ref, requires, verdict, evidence), in its order."""
    text = _read(pack, "sections")
    return tuple(json.loads(text)) if text else ()


@functools.cache
def traced_rows(pack: RulePack) -> dict[str, Any]:
    """The checks that audit each section, or the reason none does: ref -> entry."""
    text = _read(pack, "traceability")
    return (yaml.safe_load(text) or {}) if text else {}
