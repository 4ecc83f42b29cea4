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
them and reshapes it into the ``RulePack`` the engine reads. Conventions:
- an entry is a mapping with its data keys, ``cite`` and an optional ``note``;
- ``null`` where the ruleset has no such rule (no Panda 8 in Maryland, no Bank stake
  outside Chemin de Fer); the typed accessors return ``None`` there;
- money in whole dollars, turned into ``Decimal`` here.
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from importlib.resources import files

import polars as pl
import yaml
from pydantic import ValidationError

from auditor import contract
from auditor.errors import RulesetError
from auditor.packs import yamlload
from auditor.packs.draws import BANKER_GRID, Cell, RankValueRule
from auditor.packs.entries import Range
from auditor.packs.payouts import (
    BankerOdds,
    HouseMoney,
    Odds,
    PayoutsSection,
    Royal9Section,
    SeatCombinations,
    TieOdds,
)
from auditor.packs.problems import ruleset_error
from auditor.packs.procedures import PROCEDURES
from auditor.packs.regulation import RegulationSection
from auditor.packs.sections import (
    AutomatedShuffler,
    BetList,
    BetsSection,
    Call,
    CommissionSection,
    EzSection,
    LimitsSection,
    PackFile,
    Reading,
    Royal9Limits,
    pack_json_schema,
    version_id,
    version_start,
)
from auditor.packs.values import (
    Announce,
    BankerDrawCell,
    Bet,
    Cited,
    Commission,
    DragonBonusPaytable,
    Ez,
    EzEvent,
    Limits,
    Payouts,
    Procedure,
    Royal9,
    Royal9Line,
    Royal9Paytable,
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
    "Announce",
    "AutomatedShuffler",
    "BankerDrawCell",
    "BankerOdds",
    "Bet",
    "Call",
    "Cited",
    "Commission",
    "DragonBonusPaytable",
    "Ez",
    "EzEvent",
    "HouseMoney",
    "Limits",
    "Payouts",
    "Procedure",
    "Range",
    "Reading",
    "Royal9",
    "Royal9Limits",
    "Royal9Line",
    "Royal9Paytable",
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

_FRAME_SCHEMAS = {
    "banker_draw": {
        "ruleset": pl.String,
        "banker_two_card": pl.Int8,
        "player_third": pl.Int8,
        "banker_draws": pl.Boolean,
        "citation": pl.String,
        "severity": pl.String,
    },
    "player_draw": {
        "ruleset": pl.String,
        "player_two_card": pl.Int8,
        "action": pl.String,
        "citation": pl.String,
    },
    "bets": {"ruleset": pl.String, "bet": pl.String, "requires": pl.String, "citation": pl.String},
}


@dataclass(frozen=True, eq=False)
class RulePack:
    """One ruleset's rules, read-only, built by `parse_pack`. Every `cite` is a reference
    inside this ruleset. Equal and hashed by ruleset and `digest` (the SHA-256 of its file),
    so what is computed from a pack (exact odds) is cached per pack, wherever it was read."""

    ruleset: str
    title: str
    source: str
    readings: tuple[Reading, ...]
    card_values: dict[str, Cited[int]]  # rank -> point value
    burn_values: dict[str, Cited[int]]  # rank -> cards burned after it
    naturals: Cited[tuple[int, ...]]
    # What a round's wagers are settled on where a Natural was given a third card.
    natural_drawn: Cited[str]
    player_draw: dict[int, Cited[str]]  # two-card total 0-7 -> draw | stand | either
    banker_draw: dict[Cell, BankerDrawCell]  # (total, third or None)
    announce: Announce
    ez: Ez
    bets_cite: str  # the list of permissible wagers, cited for an impermissible one
    bets: dict[str, Bet]
    payouts: Payouts
    commission: Commission
    limits: Limits
    procedures: dict[str, Procedure | None]
    digest: str  # SHA-256 of the pack's file
    file: str  # where it was read: rules/ID.yaml for a built-in pack, else its path
    sections: dict[str, str]  # the pack's own section texts, by reference (may be empty)
    effective_from: datetime | None  # a later version's start (ruleset is then ID@WHEN)
    regulation: RegulationSection | None = None  # what it encodes (`auditor.packs.regulation`)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RulePack) and (self.ruleset, self.digest) == (
            other.ruleset,
            other.digest,
        )

    def __hash__(self) -> int:
        return hash((self.ruleset, self.digest))

    def cite(self, ref: str) -> str:
        """The citation a finding carries: ``"ruleset ref"``."""
        return f"{self.ruleset} {ref}"

    def banker_decision(self, banker_two_card: int, player_third: int | None) -> BankerDrawCell:
        return self.banker_draw[(banker_two_card, player_third)]

    def procedure(self, name: str) -> Procedure | None:
        """The procedure, or None where the ruleset has no such rule (KeyError for a typo)."""
        if name not in PROCEDURES:
            raise KeyError(f"unknown procedure {name!r}; known: {', '.join(PROCEDURES)}")
        return self.procedures[name]

    def banker_draw_frame(self) -> pl.DataFrame:
        """One row per (Banker two-card total 0-7, Player third 0-9 or null when he stood).

        Join on ``banker_two_card, player_third`` with ``nulls_equal=True``: polars does
        not match null keys by default, and null is how a stood Player is keyed.
        """
        cells = list(self.banker_draw.values())
        return pl.DataFrame(
            {
                "ruleset": [self.ruleset] * len(cells),
                "banker_two_card": [c.banker_two_card for c in cells],
                "player_third": [c.player_third for c in cells],
                "banker_draws": [c.draws for c in cells],
                "citation": [self.cite(c.cite) for c in cells],
                "severity": [c.severity for c in cells],
            },
            schema=_FRAME_SCHEMAS["banker_draw"],
        )

    def player_draw_frame(self) -> pl.DataFrame:
        totals = sorted(self.player_draw)
        return pl.DataFrame(
            {
                "ruleset": [self.ruleset] * len(totals),
                "player_two_card": totals,
                "action": [self.player_draw[t].value for t in totals],
                "citation": [self.cite(self.player_draw[t].cite) for t in totals],
            },
            schema=_FRAME_SCHEMAS["player_draw"],
        )

    def bets_frame(self) -> pl.DataFrame:
        """Permitted bet types; a wager whose bet has no row here is impermissible."""
        bets = list(self.bets.values())
        return pl.DataFrame(
            {
                "ruleset": [self.ruleset] * len(bets),
                "bet": [b.bet for b in bets],
                "requires": [b.requires for b in bets],
                "citation": [self.cite(b.cite) for b in bets],
            },
            schema=_FRAME_SCHEMAS["bets"],
        )


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
        raise RulesetError(f"{file}: not UTF-8 text ({exc})", path=file) from exc
    return parse_pack(text, file=file, ruleset=ruleset, digest=hashlib.sha256(data).hexdigest())


def parse_pack(
    text: str, *, file: str, ruleset: str | None = None, digest: str | None = None
) -> RulePack:
    """Validate pack YAML `text`; errors name `file`, and `ruleset` (if given) must match.
    `digest`: the SHA-256 of the file's bytes (of `text` in UTF-8 if None)."""
    try:
        data = yamlload.safe_load(text)
    except yaml.YAMLError as exc:
        raise RulesetError(f"{file}: not valid YAML: {exc}", path=file) from exc
    try:
        pack = PackFile.model_validate(data, context={"ruleset": ruleset})
    except ValidationError as exc:
        raise ruleset_error(file, exc, data) from None
    if digest is None:
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return _rule_pack(pack, digest, file)


# --------------------------------------------------------------------------- reshaping


def _rule_pack(pack: PackFile, digest: str, file: str) -> RulePack:
    return RulePack(
        digest=digest,
        file=file,
        sections=dict(pack.sections or {}),
        effective_from=version_start(pack.effective_from),
        regulation=pack.regulation,
        ruleset=version_id(pack.ruleset, pack.effective_from),
        title=pack.title,
        source=pack.source,
        readings=pack.readings,
        card_values=_by_rank(pack.card_values),
        burn_values=_by_rank(pack.burn_values),
        naturals=Cited(pack.naturals.totals, pack.naturals.cite, pack.naturals.note),
        natural_drawn=Cited(
            pack.naturals.drawn_in_error.settle_on,
            pack.naturals.drawn_in_error.cite,
            pack.naturals.drawn_in_error.note,
        ),
        player_draw=dict(
            sorted(
                (total, Cited(rule.action, rule.cite, rule.note))
                for rule in pack.player_draw
                for total in rule.totals
            )
        ),
        banker_draw=_banker_cells(pack),
        announce=Announce(pack.announce.totals.cite, pack.announce.outcome.cite),
        ez=_ez(pack.ez),
        bets_cite=pack.bets.cite,
        bets=_bets(pack.bets),
        payouts=_payouts(pack.payouts),
        commission=_commission(pack.commission),
        limits=_limits(pack.limits),
        procedures={
            name: None
            if given is None
            else Procedure(
                name, {p: getattr(given, p) for p in PROCEDURES[name]}, given.cite, given.note
            )
            for name, given in pack.procedures
        },
    )


def _by_rank(rules: tuple[RankValueRule, ...]) -> dict[str, Cited[int]]:
    values = {
        rank: Cited(rule.value_of(rank), rule.cite, rule.note)
        for rule in rules
        for rank in rule.ranks
    }
    return {rank: values[rank] for rank in contract.RANKS}


def _banker_cells(pack: PackFile) -> dict[Cell, BankerDrawCell]:
    cells = {
        (banker, third): BankerDrawCell(
            banker, third, rule.action == "draw", rule.cite, rule.severity, rule.note
        )
        for rule in pack.banker_draw
        for banker, third in rule.cells()
    }
    return {cell: cells[cell] for cell in BANKER_GRID}


def _ez(ez: EzSection) -> Ez:
    push = ez.banker_push_on
    return Ez(
        offered=Cited.of_flag(ez.offered),
        announce={item.event: item.cite for item in ez.announce},
        events={
            name: EzEvent(
                name, rule.hand, rule.total, rule.cards, rule.other_hand_below, rule.cite, rule.note
            )
            for name, rule in ez.events.items()
            if rule is not None
        },
        banker_push_on=None if push is None else Cited(push.event, push.cite, push.note),
    )


def _bets(bets: BetsSection) -> dict[str, Bet]:
    return {
        item.bet: Bet(
            item.bet,
            item.requires,
            item.cite,
            {call.call: call for call in item.calls},
            item.note,
        )
        for item in bets.permitted
    }


def _odds(odds: Odds | None) -> Cited[int] | None:
    return None if odds is None else Cited(odds.odds, odds.cite, odds.note)


def _payouts(payouts: PayoutsSection) -> Payouts:
    return Payouts(
        player=Cited(payouts.player.odds, payouts.player.cite, payouts.player.note),
        banker=payouts.banker,
        tie=payouts.tie,
        dragon7=_odds(payouts.dragon7),
        panda8=_odds(payouts.panda8),
        house_money=payouts.house_money,
        dragon_bonus={
            name: DragonBonusPaytable(
                name,
                table.odds_by_margin(),
                table.natural_winner,
                table.natural_tie,
                table.cite,
                table.note,
            )
            for name, table in (payouts.dragon_bonus or {}).items()
        },
        royal9=None if payouts.royal9 is None else _royal9(payouts.royal9),
    )


def _royal9(royal9: Royal9Section) -> Royal9:
    paytables = {}
    for name, table in royal9.paytables.items():
        lines = tuple(
            Royal9Line(
                line.name,
                None if line.pays == "progressive" else Decimal(line.pays),
                line.meter,
                line.match,
            )
            for line in table.lines
        )
        award = table.random_award
        paytables[name] = Royal9Paytable(
            name, lines, table.cite, table.note, None if award is None else Cited.of_flag(award)
        )
    wager = royal9.wager
    return Royal9(
        wager=Cited(Decimal(wager.amount), wager.cite, wager.note),
        paytables=paytables,
        seat_combinations=royal9.seat_combinations,
    )


def _bet_list(bets: BetList | None) -> Cited[tuple[str, ...]] | None:
    return None if bets is None else Cited(bets.bets, bets.cite, bets.note)


def _commission(commission: CommissionSection) -> Commission:
    percents, rounding = commission.percents, commission.rounding
    collection, none_at_ez = commission.collection, commission.none_at_ez
    return Commission(
        percents=Cited(percents.values, percents.cite, percents.note),
        rounding_step_cents=Cited(
            {p: rounding.step_cents[p] for p in percents.values}, rounding.cite, rounding.note
        ),
        bets=Cited(commission.bets.bets, commission.bets.cite, commission.bets.note),
        exempt=_bet_list(commission.exempt),
        none_at_ez=None if none_at_ez is None else Cited.of_flag(none_at_ez),
        collection=Cited(collection.modes, collection.cite, collection.note),
    )


def _limits(limits: LimitsSection) -> Limits:
    cut, cover = limits.cut, limits.cover_card
    return Limits(
        seats=limits.seats,
        decks=limits.decks,
        royal9=limits.royal9,
        automated_shuffler=limits.automated_shuffler,
        cut_min_from_either_end=Cited(cut.min_from_either_end, cut.cite, cut.note),
        cover_min_from_back=Cited(cover.min_from_back, cover.cite, cover.note),
        cards_per_hand=limits.cards_per_hand,
    )
