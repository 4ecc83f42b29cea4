"""Ruleset packs: each regulation's numbers and tables as data, checked on load.

A pack is one YAML file in ``rules/`` (installed as ``auditor.rules``): card values,
draw tables, EZ events, permitted wagers, payouts, commission, limits and procedures,
every value beside the reference (``cite``) it encodes. Checks read packs and never
branch on a ruleset's name, so a difference between rulesets is a difference between
two files. ``RulePack.cite(ref)`` turns a reference into the citation a finding
carries (``"md-mini-baccarat .10E(3)(a)"``).

The loader is strict on purpose: a missing or misspelt key, a draw cell left out or
given twice, an unknown bet type are refused with the file and the key, because a
silent gap in a draw table would let the audit pass rounds it never judged.

The format is declared by the pydantic models of ``auditor.packs.sections`` (and
``pack_json_schema()`` describes it for editors); this module loads a file through
them into the ``RulePack`` the engine reads: the frozen models themselves, under the
file's names, with lookups by key where the file writes a list. Conventions:
- an entry is a mapping with its data keys, ``cite`` and an optional ``note``;
- ``null`` where the ruleset has no such rule (no Panda 8 in Maryland, no Bank stake
  outside Chemin de Fer); the models hold ``None`` there;
- money in whole dollars.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from importlib.resources import files

import yaml
from pydantic import ValidationError

from auditor import contract
from auditor.errors import RulesetError
from auditor.packs import yamlload
from auditor.packs.draws import (
    BANKER_GRID,
    BankerDrawRule,
    Cell,
    Naturals,
    PlayerDrawRule,
    RankValueRule,
)
from auditor.packs.entries import Entry, Range
from auditor.packs.payouts import (
    BankerOdds,
    DragonBonusPaytableRule,
    HouseMoney,
    Odds,
    PayoutsSection,
    Royal9LineRule,
    Royal9PaytableRule,
    SeatCombinations,
    TieOdds,
)
from auditor.packs.problems import PackRefused, validation_problems
from auditor.packs.procedures import PROCEDURES, ProceduresSection
from auditor.packs.regulation import RegulationSection
from auditor.packs.sections import (
    AnnounceSection,
    AutomatedShuffler,
    BetsSection,
    Call,
    CommissionSection,
    EzEventRule,
    EzSection,
    LimitsSection,
    PackFile,
    PermittedBet,
    Reading,
    Royal9Limits,
    pack_json_schema,
    version_id,
    version_start,
)
from auditor.packs.vocabulary import (
    BANKER_ACTIONS,
    BANKER_PAYOUT_BASIS,
    CALL_AMOUNTS,
    DEALERS,
    DEFAULT_SEVERITY,
    DRAGON_BONUS_MARGINS,
    HANDS,
    NATURAL_DRAWN_SETTLEMENTS,
    PAYOUT_BETS,
    PLAYER_ACTIONS,
    ROYAL9_MATCHES,
    SEAT_COLUMNS,
    SEVERITIES,
    STOOD,
    TABLE_OPTIONS,
)

__all__ = [
    "BANKER_ACTIONS",
    "BANKER_PAYOUT_BASIS",
    "CALL_AMOUNTS",
    "DEALERS",
    "DEFAULT_SEVERITY",
    "DRAGON_BONUS_MARGINS",
    "HANDS",
    "NATURAL_DRAWN_SETTLEMENTS",
    "PAYOUT_BETS",
    "PLAYER_ACTIONS",
    "PROCEDURES",
    "ROYAL9_MATCHES",
    "SEAT_COLUMNS",
    "SEVERITIES",
    "STOOD",
    "TABLE_OPTIONS",
    "AutomatedShuffler",
    "BankerDrawRule",
    "BankerOdds",
    "Call",
    "DragonBonusPaytableRule",
    "EzEventRule",
    "HouseMoney",
    "Odds",
    "PackFile",
    "PermittedBet",
    "PlayerDrawRule",
    "Range",
    "RankValueRule",
    "Reading",
    "Royal9Limits",
    "Royal9LineRule",
    "Royal9PaytableRule",
    "RulePack",
    "SeatCombinations",
    "TieOdds",
    "available_rulesets",
    "load_all",
    "load_pack",
    "pack_json_schema",
    "parse_bytes",
    "parse_pack",
]


@dataclass(frozen=True, eq=False)
class RulePack:
    """One ruleset's pack, read-only, built by `parse_pack`: the file as parsed (`rules`,
    the frozen `PackFile`), its sections under the file's own names, and lookups by key
    where the file writes a list of rules (a rank, a draw cell, a bet). Every `cite` is a
    reference inside this ruleset. Equal and hashed by ruleset and `digest` (the SHA-256
    of its file), so what is computed from a pack (exact odds) is cached per pack,
    wherever it was read."""

    rules: PackFile
    digest: str  # SHA-256 of the pack's file
    file: str  # where it was read: rules/ID.yaml for a built-in pack, else its path
    # The line of each top-level key in the file, for the problems found across packs.
    key_lines: Mapping[str, int] = field(default_factory=dict, repr=False)

    def where(self, key: str) -> str:
        """`file:line: key` of a top-level key, as a problem of the pack names it."""
        return f"{self.file}:{self.key_lines.get(key, 1)}: {key}"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RulePack) and (self.ruleset, self.digest) == (
            other.ruleset,
            other.digest,
        )

    def __hash__(self) -> int:
        return hash((self.ruleset, self.digest))

    @functools.cached_property
    def ruleset(self) -> str:
        """The pack's id: its ruleset's, ``ID@WHEN`` for a later version."""
        return version_id(self.rules.ruleset, self.rules.effective_from)

    @property
    def effective_from(self) -> datetime | None:
        """A later version's start, in UTC (None: the ruleset's first version)."""
        return version_start(self.rules.effective_from)

    @property
    def sections(self) -> dict[str, str]:
        """The pack's own section texts, by reference (may be empty)."""
        return dict(self.rules.sections or {})

    def cite(self, ref: str) -> str:
        """The citation a finding carries: ``"ruleset ref"``."""
        return f"{self.ruleset} {ref}"

    # ---- the file's sections, as written ------------------------------------------------

    @property
    def title(self) -> str:
        """The ruleset's name in words."""
        return self.rules.title

    @property
    def source(self) -> str:
        return self.rules.source

    @property
    def regulation(self) -> RegulationSection | None:
        """What it encodes (`auditor.packs.regulation`)."""
        return self.rules.regulation

    @property
    def readings(self) -> tuple[Reading, ...]:
        return self.rules.readings

    @property
    def naturals(self) -> Naturals:
        return self.rules.naturals

    @property
    def announce(self) -> AnnounceSection:
        return self.rules.announce

    @property
    def ez(self) -> EzSection:
        return self.rules.ez

    @property
    def bets(self) -> BetsSection:
        """The permissible wagers (a bet by name: `permitted`)."""
        return self.rules.bets

    @property
    def payouts(self) -> PayoutsSection:
        return self.rules.payouts

    @property
    def commission(self) -> CommissionSection:
        return self.rules.commission

    @property
    def limits(self) -> LimitsSection:
        return self.rules.limits

    @property
    def procedures(self) -> ProceduresSection:
        """Every procedure, null where the ruleset has none (`procedure`)."""
        return self.rules.procedures

    # ---- lookups over the rules the file writes as lists --------------------------------

    @functools.cached_property
    def card_values(self) -> dict[str, RankValueRule]:
        """Rank -> the rule giving its point value (`value_of(rank)`), in rank order."""
        return _by_rank(self.rules.card_values)

    @functools.cached_property
    def burn_values(self) -> dict[str, RankValueRule]:
        """Rank -> the rule giving the cards burned after it (`value_of(rank)`)."""
        return _by_rank(self.rules.burn_values)

    @functools.cached_property
    def player_draw(self) -> dict[int, PlayerDrawRule]:
        """Player two-card total 0-7 -> its rule (`action`: draw, stand or either)."""
        rules = {total: rule for rule in self.rules.player_draw for total in rule.totals}
        return dict(sorted(rules.items()))

    @functools.cached_property
    def banker_draw(self) -> dict[Cell, BankerDrawRule]:
        """(Banker two-card total, Player third card or None: stood) -> its rule."""
        rules = {cell: rule for rule in self.rules.banker_draw for cell in rule.cells()}
        return {cell: rules[cell] for cell in BANKER_GRID}

    @functools.cached_property
    def permitted(self) -> dict[str, PermittedBet]:
        """Bet -> its entry in the list of permissible wagers (`bets.permitted`)."""
        return {item.bet: item for item in self.rules.bets.permitted}

    def banker_decision(self, banker_two_card: int, player_third: int | None) -> BankerDrawRule:
        return self.banker_draw[(banker_two_card, player_third)]

    def procedure(self, name: str) -> Entry | None:
        """The procedure, or None where the ruleset has no such rule (KeyError for a typo)."""
        if name not in PROCEDURES:
            raise KeyError(f"unknown procedure {name!r}; known: {', '.join(PROCEDURES)}")
        found: Entry | None = getattr(self.rules.procedures, name)
        return found


def _by_rank(rules: tuple[RankValueRule, ...]) -> dict[str, RankValueRule]:
    by_rank = {rank: rule for rule in rules for rank in rule.ranks}
    return {rank: by_rank[rank] for rank in contract.RANKS}


# --------------------------------------------------------------------------- loading


def available_rulesets() -> tuple[str, ...]:
    """The ids of the packs installed in ``auditor.rules``, sorted."""
    names = (p.name for p in files("auditor.rules").iterdir())
    return tuple(sorted(n.removesuffix(".yaml") for n in names if n.endswith(".yaml")))


@functools.cache
def load_pack(ruleset: str) -> RulePack:
    """Load and validate the installed pack for `ruleset` (cached: treat it as read-only)."""
    known = available_rulesets()
    if ruleset not in known:
        raise RulesetError(
            f"unknown ruleset {ruleset!r}: no rule pack rules/{ruleset}.yaml; "
            f"known rulesets: {', '.join(known)}"
        )
    data = (files("auditor.rules") / f"{ruleset}.yaml").read_bytes()
    return parse_bytes(data, file=f"rules/{ruleset}.yaml", ruleset=ruleset)


def load_all() -> dict[str, RulePack]:
    return {ruleset: load_pack(ruleset) for ruleset in available_rulesets()}


def parse_bytes(data: bytes, *, file: str, ruleset: str | None = None) -> RulePack:
    """A pack file's bytes, decoded (UTF-8) and validated; its digest is of these bytes."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        problem = f"{file}:{line}: (top level): not UTF-8 text ({exc.reason})"
        raise PackRefused([problem], path=file) from None
    return parse_pack(text, file=file, ruleset=ruleset, digest=hashlib.sha256(data).hexdigest())


def parse_pack(
    text: str, *, file: str, ruleset: str | None = None, digest: str | None = None
) -> RulePack:
    """Validate pack YAML `text`; errors name `file`, and `ruleset` (if given) must match.
    `digest`: the SHA-256 of the file's bytes (of `text` in UTF-8 if None). Refused
    (PackRefused): every problem, each with its line and key path."""
    try:
        data, root = yamlload.load(text)
    except yamlload.PackYamlError as exc:
        problem = f"{file}:{exc.line}: {exc.key_path or '(top level)'}: {exc.problem}"
        raise PackRefused([problem], path=file) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{file}:{mark.line + 1}" if mark is not None else file
        problem = f"{where}: not valid YAML: {getattr(exc, 'problem', None) or exc}"
        raise PackRefused([problem], path=file) from None
    try:
        pack = PackFile.model_validate(data, context={"ruleset": ruleset})
    except ValidationError as exc:
        raise PackRefused(validation_problems(file, exc, data, root), path=file) from None
    if digest is None:
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return RulePack(pack, digest, file, _key_lines(root))


def _key_lines(node: yaml.Node | None, prefix: str = "", levels: int = 2) -> dict[str, int]:
    """The line of each key of the top `levels` levels, by key path ("regulation.texts")."""
    if not isinstance(node, yaml.MappingNode) or levels == 0:
        return {}
    lines = {}
    for key, value in node.value:
        path = f"{prefix}{key.value}"
        lines[path] = key.start_mark.line + 1
        lines.update(_key_lines(value, f"{path}.", levels - 1))
    return lines
