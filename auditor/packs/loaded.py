"""The rule packs a run audits under: the built-in ones (`rules/`, installed as
`auditor.rules`) and those of a folder given with `--rules DIR`.

Loaded once per command and passed down to every stage: no stage reads packs through a
global. A pack from DIR may name a ruleset of its own (the contract's `ruleset` column
then accepts its id); one whose id is a built-in pack's is refused unless the caller
asks to replace the built-in pack (`--replace-builtin`), for an auditor must not swap
the law it audits under without saying so, and one whose id only reads as another's
(`MA-Baccarat`, a zero-width space) is refused always. Each pack keeps its file and the
SHA-256 of its bytes, which the run's record names. `auditor rules lint` runs this
loading too, so that a folder it calls clean is one an audit accepts.
"""

from __future__ import annotations

import stat
from collections.abc import Iterator, Mapping
from datetime import datetime
from pathlib import Path

from auditor.errors import RulesetError
from auditor.packs.model import RulePack, available_rulesets, load_pack, parse_bytes
from auditor.packs.problems import PackRefused
from auditor.packs.regulation_files import companion_problems
from auditor.packs.sections import id_key
from auditor.packs.yamlload import MAX_PACK_BYTES
from auditor.regular_files import NotRegularFile, read_regular

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
    (RulesetError, exit 2): a folder that is not one or holds no pack; and, each named by
    file, line and key (PackRefused, every problem at once), a pack that is not a regular
    file or does not load, an id of a built-in pack unless `replace_builtin`, an id that
    looks like another's, and a later version without its first."""
    builtin = builtin_packs()
    if rules_dir is None:
        return builtin
    added, problems = folder_packs(Path(rules_dir), builtin, replace_builtin)
    if problems:
        raise PackRefused(problems, path=problems[0].partition(":")[0])
    return LoadedPacks({**dict(builtin), **added}, frozenset(added))


def folder_packs(
    folder: Path, builtin: LoadedPacks, replace_builtin: bool
) -> tuple[dict[str, RulePack], list[str]]:
    """The packs of `folder` that load, and every problem of the folder's packs, in file
    order: what `load_packs` refuses, and so what `auditor rules lint` reports first."""
    added: dict[str, RulePack] = {}
    problems: list[str] = []
    for path in pack_files(folder):
        try:
            pack = load_pack_file(path)
        except PackRefused as refused:
            problems.extend(refused.problems)
            continue
        refused_id = _id_problem(pack, builtin, added, replace_builtin)
        if refused_id is not None:
            problems.append(refused_id)
            continue
        unreadable = companion_problems(pack)
        problems.extend(unreadable)
        if not unreadable:
            added[pack.ruleset] = pack
    for ruleset, pack in added.items():
        first = ruleset.partition("@")[0]
        if first not in added and first not in builtin:
            problems.append(
                f"{pack.where('effective_from')}: a later version of {first}, which no pack "
                f"loaded has: give {first}{PACK_SUFFIX} too, the version in force before this one"
            )
    return added, problems


def _id_problem(
    pack: RulePack, builtin: LoadedPacks, added: Mapping[str, RulePack], replace_builtin: bool
) -> str | None:
    """Why the pack's id is refused beside the packs loaded so far, or None."""
    first = pack.rules.ruleset
    if first in builtin and not replace_builtin:
        return (
            f"{pack.where('ruleset')}: {first!r} is a built-in pack's id; an audit does not "
            "replace the built-in rules silently: give the pack an id of its own, or "
            "--replace-builtin to audit that ruleset under this file"
        )
    for other in (*builtin.rulesets(), *(p.rules.ruleset for p in added.values())):
        if other != first and id_key(other) == id_key(first):
            return (
                f"{pack.where('ruleset')}: {first!r} reads as {other!r}, the id of a pack "
                "loaded: a finding citing it would pass for that pack's; give an id of its own"
            )
    return None


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
    try:
        data = read_regular(path, MAX_PACK_BYTES)
    except NotRegularFile as exc:
        problem = str(exc).removeprefix(f"{path}: ")
        raise PackRefused([f"{path}:1: (whole file): {problem}"], path=str(path)) from None
    except OSError as exc:
        problem = f"{path}:1: (whole file): cannot be read ({exc.strerror})"
        raise PackRefused([problem], path=str(path)) from None
    return parse_bytes(data, file=str(path), ruleset=path.stem)


def pack_files(folder: Path) -> list[Path]:
    """The `*.yaml` files of `folder`, sorted; each a regular file (`load_pack_file`
    reads one without following a link)."""
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
