"""The rule packs a run audits under: the built-in ones (`rules/`, installed as
`auditor.rules`) and those of a folder given with `--rules DIR`.

Loaded once per command and passed down to every stage: no stage reads packs through a
global. A pack from DIR may name a ruleset of its own (the contract's `ruleset` column
then accepts its id); one whose id is a built-in pack's is refused unless the caller
asks to replace the built-in pack (`--replace-builtin`), for an auditor must not swap
the law it audits under without saying so. Each pack keeps its file and the SHA-256 of
its bytes, which the run's record names.
"""

from __future__ import annotations

import stat
from collections.abc import Iterator, Mapping
from datetime import datetime
from pathlib import Path

from auditor.errors import RulesetError
from auditor.packs.model import RulePack, available_rulesets, load_pack, parse_bytes

PACK_SUFFIX = ".yaml"


class LoadedPacks(Mapping[str, RulePack]):
    """The packs by ruleset id, with which of them came from outside."""

    def __init__(self, packs: Mapping[str, RulePack], added: frozenset[str] = frozenset()):
        self._packs = dict(sorted(packs.items()))
        self.added = added  # ids of the packs read from --rules DIR

    def __getitem__(self, ruleset: str) -> RulePack:
        return self._packs[ruleset]

    def __iter__(self) -> Iterator[str]:
        return iter(self._packs)

    def __len__(self) -> int:
        return len(self._packs)

    def __repr__(self) -> str:
        return f"LoadedPacks({self.described()})"

    def rulesets(self) -> set[str]:
        """The ids a table's `ruleset` may hold: each ruleset once, whatever its versions."""
        return {ruleset.partition("@")[0] for ruleset in self._packs}

    def described(self) -> str:
        """The ids, each pack from outside with its file: for messages."""
        return ", ".join(
            f"{ruleset} ({pack.file})" if ruleset in self.added else ruleset
            for ruleset, pack in self._packs.items()
        )


def builtin_packs() -> LoadedPacks:
    """The packs installed with the auditor."""
    return LoadedPacks({ruleset: load_pack(ruleset) for ruleset in available_rulesets()})


def load_packs(rules_dir: Path | str | None = None, replace_builtin: bool = False) -> LoadedPacks:
    """The built-in packs and every `*.yaml` pack of `rules_dir` beside them. Refused
    (RulesetError, exit 2): a folder that is not one or holds no pack, a pack that is not
    a regular file or does not load, and an id of a built-in pack unless
    `replace_builtin`."""
    builtin = builtin_packs()
    if rules_dir is None:
        return builtin
    added = {}
    for path in pack_files(Path(rules_dir)):
        pack = load_pack_file(path)
        if pack.ruleset.partition("@")[0] in builtin and not replace_builtin:
            raise RulesetError(
                f"{path}: ruleset {pack.ruleset!r} is a built-in pack's id; an audit does not "
                "replace the built-in rules silently: give the pack an id of its own, or "
                "--replace-builtin to audit that ruleset under this file",
                path=str(path),
            )
        added[pack.ruleset] = pack
    packs = {**dict(builtin), **added}
    for ruleset, pack in added.items():
        first = ruleset.partition("@")[0]
        if first not in packs:
            raise RulesetError(
                f"{pack.file}: a later version of {first}, which no pack loaded has: give "
                f"{first}{PACK_SUFFIX} too, the version in force before this one",
                path=pack.file,
            )
    return LoadedPacks(packs, frozenset(added))


def versions(packs: Mapping[str, RulePack]) -> list[tuple[str, datetime, str]]:
    """(ruleset, start, pack id) of every later version among `packs`, by start: a shoe
    opened from its start is audited under it, until the next."""
    return sorted(
        (ruleset.partition("@")[0], pack.effective_from, ruleset)
        for ruleset, pack in packs.items()
        if pack.effective_from is not None
    )


def load_pack_file(path: str | Path) -> RulePack:
    """Load a pack from any file; its `ruleset` must match the file name (ID.yaml, or
    ID@WHEN.yaml for a later version)."""
    path = Path(path)
    return parse_bytes(path.read_bytes(), file=str(path), ruleset=path.stem)


def pack_files(folder: Path) -> list[Path]:
    """The `*.yaml` files of `folder`, sorted; each a regular file (a link is followed:
    packs are only read)."""
    try:
        status = folder.stat()
    except OSError as exc:
        raise RulesetError(f"{folder}: no such folder of rule packs ({exc.strerror})") from exc
    if not stat.S_ISDIR(status.st_mode):
        raise RulesetError(f"{folder}: not a folder; --rules names a folder of *.yaml packs")
    found = sorted(p for p in folder.iterdir() if p.name.endswith(PACK_SUFFIX))
    if not found:
        raise RulesetError(f"{folder}: holds no rule pack (*{PACK_SUFFIX})")
    for path in found:
        try:
            regular = stat.S_ISREG(path.stat().st_mode)
        except OSError as exc:
            raise RulesetError(f"{path}: cannot be read ({exc.strerror})", path=str(path)) from exc
        if not regular:
            raise RulesetError(f"{path}: not a regular file", path=str(path))
    return found
