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

Conventions of the format (see the packs for examples):
- an entry is a mapping with its data keys, ``cite`` and an optional ``note``;
- ``null`` where the ruleset has no such rule (no Panda 8 in Maryland, no Bank stake
  outside Chemin de Fer); the typed accessors return ``None`` there;
- money in whole dollars, turned into ``Decimal`` here.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from importlib.resources import files
from pathlib import Path
from typing import Any, Generic, NoReturn, TypeVar

import polars as pl
import yaml

from auditor import contract
from auditor.errors import RulesetError, summarize

T = TypeVar("T")

STOOD = "stood"  # player_third of a Banker draw rule that applies when the Player stayed
PLAYER_ACTIONS = ("draw", "stand", "either")
BANKER_ACTIONS = ("draw", "stand")
SEVERITIES = ("high", "medium", "low")
DEFAULT_SEVERITY = "high"
TABLE_OPTIONS = ("dragon_bonus_paytable", "ez_baccarat", "house_money", "royal9_paytable")
HANDS = ("banker", "player")
CALL_AMOUNTS = ("equal_to_bank", "part_of_bank")
DEALERS = ("curator", "dealer", "banker")
SEAT_COLUMNS = ("curator_seat", "banker_seat")
BANKER_PAYOUT_BASIS = ("stake", "covered")

# What a Royal 9 paytable line requires of the first two cards of each hand. The
# engine implements these predicates once; a pack only names them, in priority order.
ROYAL9_MATCHES = {
    "personal_both_same": "both hands hold the same combination posted at the wagering chair",
    "personal_both_different": "both hands hold combinations posted at the chair, not the same",
    "personal_banker": "the Banker's Hand holds a combination posted at the chair",
    "personal_player": "the Player's Hand holds a combination posted at the chair",
    "other_seat_both_same": "both hands hold the same combination, posted at another seat",
    "suited_royal9_both": "both hands are suited Royal 9s",
    "royal9_both": "both hands are Royal 9s",
    "suited_royal9_any": "either hand is a suited Royal 9",
    "royal9_any": "either hand is a Royal 9",
}

# procedure name -> its parameters (all required when the procedure is given).
PROCEDURES: dict[str, tuple[str, ...]] = {
    "deals": ("by", "seat_column", "dealer_may_deal"),
    "deal_order": ("value",),
    "burn": ("value",),
    "no_wager_after_no_more_bets": ("value",),
    "last_hand_after_cover": ("value", "hands_after", "counted_kinds"),
    "void_ends_shoe": ("value",),
    "pass_on_banker_loss": ("seat_column",),
    "marker_collected_before_next_shoe": ("value",),
    "house_money_rollover": ("onto",),
    "free_hands": ("value",),
    "no_wagers_on_simulated": ("value",),
    "bank_stake": ("first_at_least_bid", "min_multiple", "max_multiple", "tied_rounds_count"),
    "wagers_against_bank": ("each_at_most_bank", "total_at_most_bank"),
    "suivi": ("qualifying_calls", "skip_ties", "new_bank_resets"),
}

# The optional payouts and the bets that need them: a pack must give one iff it permits the other.
PAYOUT_BETS = {
    "tie": ("tie",),
    "dragon7": ("dragon7",),
    "panda8": ("panda8",),
    "house_money": ("house_money",),
    "dragon_bonus": ("dragon_bonus_banker", "dragon_bonus_player"),
    "royal9": ("royal9",),
}
DRAGON_BONUS_MARGINS = (4, 5, 6, 7, 8, 9)

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
    "bets": {
        "ruleset": pl.String,
        "bet": pl.String,
        "requires": pl.String,
        "citation": pl.String,
    },
}


# --------------------------------------------------------------------------- model


@dataclass(frozen=True)
class Cited(Generic[T]):
    """One value with the reference it encodes."""

    value: T
    cite: str
    note: str | None = None


@dataclass(frozen=True)
class Range:
    """Inclusive bounds; ``None`` where the text states no bound."""

    min: int | None
    max: int | None
    cite: str
    note: str | None = None

    def contains(self, value: int) -> bool:
        return (self.min is None or value >= self.min) and (self.max is None or value <= self.max)


@dataclass(frozen=True)
class Reading:
    """An INDEX ambiguity and the reading this pack applies."""

    ambiguity: int
    reading: str


@dataclass(frozen=True)
class BankerDrawCell:
    """The Banker's decision for one two-card total and Player third card (None: stood)."""

    banker_two_card: int
    player_third: int | None
    draws: bool
    cite: str
    severity: str = DEFAULT_SEVERITY
    note: str | None = None


@dataclass(frozen=True)
class EzEvent:
    """Dragon 7 / Panda 8: `hand` has `total` with `cards` cards, the other hand is below."""

    name: str
    hand: str
    total: int
    cards: int
    other_hand_below: int
    cite: str
    note: str | None = None


@dataclass(frozen=True)
class Ez:
    offered: Cited[bool]
    announce: dict[str, str]  # event -> ref of the announcement rule
    events: dict[str, EzEvent]
    banker_push_on: Cited[str] | None


@dataclass(frozen=True)
class Announce:
    """Refs of the rules announcing the final counts (`totals`) and the winner (`outcome`)."""

    totals: str
    outcome: str


@dataclass(frozen=True)
class Call:
    call: str
    amount: str  # equal_to_bank | part_of_bank
    cite: str
    note: str | None = None


@dataclass(frozen=True)
class Bet:
    bet: str
    requires: str | None  # the tables option that must be set, None: always permitted
    cite: str
    calls: dict[str, Call]  # empty: `wagers.call` must be null
    note: str | None = None


@dataclass(frozen=True)
class BankerOdds:
    odds: int
    basis: str  # stake: amount + rollover; covered: only what the wagers against it cover
    cite: str
    note: str | None = None


@dataclass(frozen=True)
class TieOdds:
    min_odds: int
    table_option: str  # the `tables` column holding the odds in force
    cite: str
    note: str | None = None


@dataclass(frozen=True)
class HouseMoney:
    both: int
    one: int
    cite: str
    note: str | None = None


@dataclass(frozen=True)
class DragonBonusPaytable:
    name: str
    win_by: dict[int, int]  # margin (non-Natural) -> odds
    natural_winner: int
    natural_tie: str  # push
    cite: str
    note: str | None = None


@dataclass(frozen=True)
class Royal9Line:
    name: str  # exactly as printed: `wagers.award` must use it
    amount: Decimal | None  # dollars; None for a progressive line
    meter: str | None
    match: str  # a key of ROYAL9_MATCHES

    @property
    def progressive(self) -> bool:
        return self.amount is None


@dataclass(frozen=True)
class Royal9Paytable:
    name: str
    lines: tuple[Royal9Line, ...]  # priority order: a wager gets the first line it meets
    cite: str
    note: str | None = None
    # ref of a random award the paytable allows with no qualifying hand and no line name
    # (midi §12(j) Stax, INDEX Ambiguity 25); None: every payout needs a line.
    random_award: Cited[bool] | None = None


@dataclass(frozen=True)
class SeatCombinations:
    chairs: dict[int, tuple[str, ...]] | None  # default combinations; None: royal9_seats only
    per_seat: int | None
    suited: bool
    unique: bool
    cite: str
    note: str | None = None


@dataclass(frozen=True)
class Royal9:
    wager: Cited[Decimal]
    paytables: dict[str, Royal9Paytable]
    seat_combinations: SeatCombinations


@dataclass(frozen=True)
class Payouts:
    player: Cited[int]
    banker: BankerOdds
    tie: TieOdds | None
    dragon7: Cited[int] | None
    panda8: Cited[int] | None
    house_money: HouseMoney | None
    dragon_bonus: dict[str, DragonBonusPaytable]  # empty: not in this ruleset
    royal9: Royal9 | None


@dataclass(frozen=True)
class Commission:
    percents: Cited[tuple[int, ...]]
    rounding_step_cents: Cited[dict[int, int]]  # percent -> step when rounding is on
    bets: Cited[tuple[str, ...]]
    exempt: Cited[tuple[str, ...]] | None
    none_at_ez: Cited[bool] | None
    collection: Cited[tuple[str, ...]]


@dataclass(frozen=True)
class Royal9Limits:
    decks: tuple[int, ...]
    seats: tuple[int, ...] | None
    cite: str
    note: str | None = None


@dataclass(frozen=True)
class AutomatedShuffler:
    two_batches: bool  # False: the text has no two-batch rule, every shoe follows `decks`
    total_decks: Range | None  # both batches together
    equal_batches: bool
    cite: str
    note: str | None = None


@dataclass(frozen=True)
class Limits:
    seats: Range | None
    decks: Range
    royal9: Royal9Limits | None
    automated_shuffler: AutomatedShuffler
    cut_min_from_either_end: Cited[int]
    cover_min_from_back: Cited[int | None]
    cards_per_hand: Range


@dataclass(frozen=True)
class Procedure:
    name: str
    params: dict[str, Any]
    cite: str
    note: str | None = None

    def __getitem__(self, key: str) -> Any:
        return self.params[key]


@dataclass(frozen=True)
class RulePack:
    """One ruleset's rules, read-only. Every `cite` is a reference inside this ruleset."""

    ruleset: str
    title: str
    source: str
    readings: tuple[Reading, ...]
    card_values: dict[str, Cited[int]]  # rank -> point value
    burn_values: dict[str, Cited[int]]  # rank -> cards burned after it
    naturals: Cited[tuple[int, ...]]
    player_draw: dict[int, Cited[str]]  # two-card total 0-7 -> draw | stand | either
    banker_draw: dict[tuple[int, int | None], BankerDrawCell]  # (total, third or None)
    announce: Announce
    ez: Ez
    bets_cite: str  # the list of permissible wagers, cited for an impermissible one
    bets: dict[str, Bet]
    payouts: Payouts
    commission: Commission
    limits: Limits
    procedures: dict[str, Procedure | None]

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
    root = files("auditor.rules")
    return tuple(
        sorted(p.name[: -len(".yaml")] for p in root.iterdir() if p.name.endswith(".yaml"))
    )


@functools.cache
def load_pack(ruleset: str) -> RulePack:
    """Load and validate the installed pack for `ruleset` (cached: treat it as read-only)."""
    known = available_rulesets()
    if ruleset not in known:
        raise RulesetError(
            f"unknown ruleset {ruleset!r}: no rule pack rules/{ruleset}.yaml; "
            f"known rulesets: {', '.join(known)}"
        )
    text = (files("auditor.rules") / f"{ruleset}.yaml").read_text(encoding="utf-8")
    return parse_pack(text, file=f"rules/{ruleset}.yaml", ruleset=ruleset)


def load_all() -> dict[str, RulePack]:
    return {ruleset: load_pack(ruleset) for ruleset in available_rulesets()}


def load_pack_file(path: str | Path) -> RulePack:
    """Load a pack from any file; its `ruleset` must match the file name."""
    path = Path(path)
    return parse_pack(path.read_text(encoding="utf-8"), file=str(path), ruleset=path.stem)


def parse_pack(text: str, *, file: str, ruleset: str | None = None) -> RulePack:
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise RulesetError(f"{file}: not valid YAML: {exc}", path=file) from exc
    return _Parser(file).pack(data, ruleset)


# --------------------------------------------------------------------------- parser


def _kind(value: object) -> str:
    return "null" if value is None else type(value).__name__


def _join(path: str, key: object) -> str:
    return f"{path}.{key}" if path else str(key)


class _Parser:
    """Walks one pack's YAML; every error names the file and the dotted key."""

    def __init__(self, file: str):
        self.file = file

    def fail(self, path: str, message: str) -> NoReturn:
        raise RulesetError(f"{self.file}: {path}: {message}", path=self.file)

    # -- shapes

    def mapping(
        self, node: Any, path: str, required: tuple[str, ...], optional: tuple[str, ...] = ()
    ) -> dict:
        if not isinstance(node, dict):
            self.fail(path or "(top level)", f"expected a mapping, found {_kind(node)}")
        # Unknown keys first: a misspelt key is the likelier cause of a "missing" one.
        unknown = [str(k) for k in node if k not in required and k not in optional]
        if unknown:
            self.fail(
                _join(path, unknown[0]),
                f"unknown key; expected one of {', '.join(required + optional)}",
            )
        for key in required:
            if key not in node:
                self.fail(_join(path, key), "missing key")
        return node

    def entry(
        self, node: Any, path: str, required: tuple[str, ...], optional: tuple[str, ...] = ()
    ) -> tuple[dict, str, str | None]:
        """A mapping that carries data keys, its `cite` and an optional `note`."""
        node = self.mapping(node, path, (*required, "cite"), (*optional, "note"))
        cite = self.text(node["cite"], _join(path, "cite"))
        note = node.get("note")
        if note is not None:
            note = self.text(note, _join(path, "note"))
        return node, cite, note

    def items(self, node: Any, path: str, *, allow_empty: bool = False) -> list:
        if not isinstance(node, list) or (not node and not allow_empty):
            self.fail(
                path, f"expected a{'' if allow_empty else ' non-empty'} list, found {_kind(node)}"
            )
        return node

    # -- scalars

    def text(self, value: Any, path: str) -> str:
        if not isinstance(value, str) or not value.strip():
            self.fail(path, f"expected a non-empty string, found {_kind(value)}")
        return value

    def flag(self, value: Any, path: str) -> bool:
        if not isinstance(value, bool):
            self.fail(path, f"expected true or false, found {_kind(value)}")
        return value

    def integer(self, value: Any, path: str, lo: int | None = None, hi: int | None = None) -> int:
        # bool is an int in Python; `true` where a number belongs is a mistake.
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(path, f"expected an integer, found {_kind(value)} {value!r}")
        if lo is not None and value < lo:
            self.fail(path, f"{value} is below the minimum {lo}")
        if hi is not None and value > hi:
            self.fail(path, f"{value} is above the maximum {hi}")
        return value

    def maybe_int(self, value: Any, path: str, lo: int | None = None) -> int | None:
        return None if value is None else self.integer(value, path, lo)

    def integers(self, value: Any, path: str, lo: int, hi: int) -> tuple[int, ...]:
        return tuple(
            self.integer(v, f"{path}[{i}]", lo, hi) for i, v in enumerate(self.items(value, path))
        )

    def choice(self, value: Any, path: str, choices: tuple[str, ...] | Mapping[str, Any]) -> str:
        if not isinstance(value, str) or value not in choices:
            self.fail(path, f"{value!r} is not one of {', '.join(choices)}")
        return value

    def choices(
        self, value: Any, path: str, choices: tuple[str, ...], *, allow_empty: bool = False
    ) -> tuple[str, ...]:
        items = self.items(value, path, allow_empty=allow_empty)
        return tuple(self.choice(v, f"{path}[{i}]", choices) for i, v in enumerate(items))

    def money(self, value: Any, path: str) -> Decimal:
        return Decimal(self.integer(value, path, 0))

    # -- the pack

    def pack(self, data: Any, ruleset: str | None) -> RulePack:
        top = self.mapping(
            data,
            "",
            (
                "ruleset", "title", "source", "readings", "card_values", "burn_values",
                "naturals", "player_draw", "banker_draw", "announce", "ez", "bets", "payouts",
                "commission", "limits", "procedures",
            ),
        )  # fmt: skip
        name = self.text(top["ruleset"], "ruleset")
        if ruleset is not None and name != ruleset:
            self.fail("ruleset", f"{name!r} does not match the file name {ruleset!r}")
        bets_cite, bets = self.bets(top["bets"])
        ez = self.ez(top["ez"])
        self.check_ez_bets(ez, bets)
        payouts = self.payouts(top["payouts"], bets)
        return RulePack(
            ruleset=name,
            title=self.text(top["title"], "title"),
            source=self.text(top["source"], "source"),
            readings=self.readings(top["readings"]),
            card_values=self.rank_values(top["card_values"], "card_values", 0, 9),
            burn_values=self.rank_values(top["burn_values"], "burn_values", 1, 10),
            naturals=self.naturals(top["naturals"]),
            player_draw=self.player_draw(top["player_draw"]),
            banker_draw=self.banker_draw(top["banker_draw"]),
            announce=self.announce(top["announce"]),
            ez=ez,
            bets_cite=bets_cite,
            bets=bets,
            payouts=payouts,
            commission=self.commission(top["commission"], bets),
            limits=self.limits(top["limits"]),
            procedures=self.procedures(top["procedures"]),
        )

    def readings(self, node: Any) -> tuple[Reading, ...]:
        out: list[Reading] = []
        for i, item in enumerate(self.items(node, "readings", allow_empty=True)):
            path = f"readings[{i}]"
            item = self.mapping(item, path, ("ambiguity", "reading"))
            number = self.integer(item["ambiguity"], f"{path}.ambiguity", 1)
            if any(r.ambiguity == number for r in out):
                self.fail(f"{path}.ambiguity", f"ambiguity {number} listed twice")
            out.append(Reading(number, self.text(item["reading"], f"{path}.reading")))
        return tuple(out)

    def rank_values(self, node: Any, path: str, lo: int, hi: int) -> dict[str, Cited[int]]:
        """Ranks -> values; `face` means the rank's own number (2-9)."""
        out: dict[str, Cited[int]] = {}
        for i, item in enumerate(self.items(node, path)):
            where = f"{path}[{i}]"
            item, cite, note = self.entry(item, where, ("ranks", "value"))
            ranks = self.text(str(item["ranks"]), f"{where}.ranks")
            for rank in ranks:
                self.choice(rank, f"{where}.ranks", tuple(contract.RANKS))
                if rank in out:
                    self.fail(f"{where}.ranks", f"rank {rank} is given a value twice")
                if item["value"] == "face":
                    if not rank.isdigit():
                        self.fail(f"{where}.value", f"'face' has no meaning for rank {rank}")
                    value = int(rank)
                else:
                    value = self.integer(item["value"], f"{where}.value", lo, hi)
                out[rank] = Cited(value, cite, note)
        missing = [r for r in contract.RANKS if r not in out]
        if missing:
            self.fail(path, f"no value for rank(s) {', '.join(missing)}")
        return {rank: out[rank] for rank in contract.RANKS}

    def naturals(self, node: Any) -> Cited[tuple[int, ...]]:
        node, cite, note = self.entry(node, "naturals", ("totals",))
        return Cited(self.integers(node["totals"], "naturals.totals", 0, 9), cite, note)

    def player_draw(self, node: Any) -> dict[int, Cited[str]]:
        out: dict[int, Cited[str]] = {}
        for i, item in enumerate(self.items(node, "player_draw")):
            path = f"player_draw[{i}]"
            item, cite, note = self.entry(item, path, ("totals", "action"))
            action = self.choice(item["action"], f"{path}.action", PLAYER_ACTIONS)
            for total in self.integers(item["totals"], f"{path}.totals", 0, 7):
                if total in out:
                    self.fail(f"{path}.totals", f"Player total {total} is given twice")
                out[total] = Cited(action, cite, note)
        missing = [str(t) for t in range(8) if t not in out]
        if missing:
            self.fail("player_draw", f"no action for Player total(s) {', '.join(missing)}")
        return dict(sorted(out.items()))

    def banker_draw(self, node: Any) -> dict[tuple[int, int | None], BankerDrawCell]:
        """Expand the rules into cells; every cell of the grid exactly once."""
        found: dict[tuple[int, int | None], tuple[BankerDrawCell, str]] = {}
        twice: list[str] = []
        for i, item in enumerate(self.items(node, "banker_draw")):
            path = f"banker_draw[{i}]"
            item, cite, note = self.entry(
                item, path, ("banker", "player_third", "action"), ("severity",)
            )
            bankers = self.integers(item["banker"], f"{path}.banker", 0, 7)
            third = item["player_third"]
            thirds: tuple[int | None, ...] = (
                (None,) if third == STOOD else self.integers(third, f"{path}.player_third", 0, 9)
            )
            draws = self.choice(item["action"], f"{path}.action", BANKER_ACTIONS) == "draw"
            severity = self.choice(
                item.get("severity", DEFAULT_SEVERITY), f"{path}.severity", SEVERITIES
            )
            for banker in bankers:
                for t in thirds:
                    if (banker, t) in found:
                        twice.append(f"{_cell(banker, t)}: {found[banker, t][1]} and {path}")
                    cell = BankerDrawCell(banker, t, draws, cite, severity, note)
                    found[banker, t] = (cell, path)
        grid = [(b, t) for b in range(8) for t in (*range(10), None)]
        problems = [f"{_cell(b, t)}: no rule" for b, t in grid if (b, t) not in found]
        problems += [f"given twice, {text}" for text in twice]
        if problems:
            self.fail(
                "banker_draw",
                "the rules must cover every Banker total 0-7 x Player third card 0-9 or "
                f"'{STOOD}' exactly once:\n" + summarize(problems),
            )
        return {key: found[key][0] for key in grid}

    def announce(self, node: Any) -> Announce:
        node = self.mapping(node, "announce", ("totals", "outcome"))
        return Announce(
            totals=self.entry(node["totals"], "announce.totals", ())[1],
            outcome=self.entry(node["outcome"], "announce.outcome", ())[1],
        )

    def ez(self, node: Any) -> Ez:
        node = self.mapping(node, "ez", ("offered", "announce", "events", "banker_push_on"))
        offered_node, cite, note = self.entry(node["offered"], "ez.offered", ("value",))
        offered = Cited(self.flag(offered_node["value"], "ez.offered.value"), cite, note)
        announce: dict[str, str] = {}
        for i, item in enumerate(self.items(node["announce"], "ez.announce", allow_empty=True)):
            path = f"ez.announce[{i}]"
            item, cite, _ = self.entry(item, path, ("event",))
            event = self.choice(item["event"], f"{path}.event", contract.EZ_EVENTS)
            if event in announce:
                self.fail(f"{path}.event", f"{event} is announced twice")
            announce[event] = cite
        events: dict[str, EzEvent] = {}
        for name, item in self.mapping(node["events"], "ez.events", (), contract.EZ_EVENTS).items():
            if item is None:
                continue
            path = f"ez.events.{name}"
            item, cite, note = self.entry(
                item, path, ("hand", "total", "cards", "other_hand_below")
            )
            events[name] = EzEvent(
                name=name,
                hand=self.choice(item["hand"], f"{path}.hand", HANDS),
                total=self.integer(item["total"], f"{path}.total", 0, 9),
                cards=self.integer(item["cards"], f"{path}.cards", 2, 3),
                other_hand_below=self.integer(
                    item["other_hand_below"], f"{path}.other_hand_below", 0, 10
                ),
                cite=cite,
                note=note,
            )
        for name in announce:
            if name not in events:
                self.fail(f"ez.announce.{name}", "announced but not defined under ez.events")
        push = None
        if node["banker_push_on"] is not None:
            item, cite, note = self.entry(node["banker_push_on"], "ez.banker_push_on", ("event",))
            push = Cited(self.choice(item["event"], "ez.banker_push_on.event", events), cite, note)
        if not offered.value and (announce or events or push):
            self.fail("ez", "EZ is not offered, yet announcements, events or a push are given")
        return Ez(offered, announce, events, push)

    def bets(self, node: Any) -> tuple[str, dict[str, Bet]]:
        node, cite, _ = self.entry(node, "bets", ("permitted",))
        out: dict[str, Bet] = {}
        for i, item in enumerate(self.items(node["permitted"], "bets.permitted")):
            path = f"bets.permitted[{i}]"
            item, bet_cite, note = self.entry(item, path, ("bet", "requires"), ("calls",))
            bet = self.choice(item["bet"], f"{path}.bet", contract.BETS)
            if bet in out:
                self.fail(f"{path}.bet", f"bet {bet!r} is listed twice")
            requires = item["requires"]
            if requires is not None:
                self.choice(requires, f"{path}.requires", TABLE_OPTIONS)
            calls: dict[str, Call] = {}
            for j, call in enumerate(
                self.items(item.get("calls", []), f"{path}.calls", allow_empty=True)
            ):
                where = f"{path}.calls[{j}]"
                call, call_cite, call_note = self.entry(call, where, ("call", "amount"))
                name = self.choice(call["call"], f"{where}.call", contract.CALLS)
                amount = self.choice(call["amount"], f"{where}.amount", CALL_AMOUNTS)
                calls[name] = Call(name, amount, call_cite, call_note)
            out[bet] = Bet(bet, requires, bet_cite, calls, note)
        return cite, out

    def check_ez_bets(self, ez: Ez, bets: dict[str, Bet]) -> None:
        for bet in bets.values():
            if bet.requires == "ez_baccarat" and not ez.offered.value:
                self.fail(
                    "bets.permitted", f"{bet.bet} requires ez_baccarat, but EZ is not offered"
                )
            if bet.bet in contract.EZ_EVENTS and bet.bet not in ez.events:
                self.fail(
                    "bets.permitted", f"{bet.bet} is permitted, but ez.events has no {bet.bet}"
                )

    def payouts(self, node: Any, bets: dict[str, Bet]) -> Payouts:
        node = self.mapping(node, "payouts", ("player", "banker", *PAYOUT_BETS))
        for key, needs in PAYOUT_BETS.items():
            permitted = any(b in bets for b in needs)
            if permitted and node[key] is None:
                self.fail(f"payouts.{key}", f"bet {needs[0]!r} is permitted but has no payout")
            if not permitted and node[key] is not None:
                self.fail(f"payouts.{key}", f"given, but bet {needs[0]!r} is not permitted")

        def odds(key: str) -> Cited[int]:
            item, cite, note = self.entry(node[key], f"payouts.{key}", ("odds",))
            return Cited(self.integer(item["odds"], f"payouts.{key}.odds", 1), cite, note)

        banker, cite, note = self.entry(node["banker"], "payouts.banker", ("odds", "basis"))
        tie = None
        if node["tie"] is not None:
            item, tie_cite, tie_note = self.entry(
                node["tie"], "payouts.tie", ("min_odds", "table_option")
            )
            tie = TieOdds(
                self.integer(item["min_odds"], "payouts.tie.min_odds", 1),
                self.choice(item["table_option"], "payouts.tie.table_option", ("tie_pays",)),
                tie_cite,
                tie_note,
            )
        house = None
        if node["house_money"] is not None:
            item, hm_cite, hm_note = self.entry(
                node["house_money"], "payouts.house_money", ("both", "one")
            )
            house = HouseMoney(
                self.integer(item["both"], "payouts.house_money.both", 1),
                self.integer(item["one"], "payouts.house_money.one", 1),
                hm_cite,
                hm_note,
            )
        return Payouts(
            player=odds("player"),
            banker=BankerOdds(
                self.integer(banker["odds"], "payouts.banker.odds", 1),
                self.choice(banker["basis"], "payouts.banker.basis", BANKER_PAYOUT_BASIS),
                cite,
                note,
            ),
            tie=tie,
            dragon7=None if node["dragon7"] is None else odds("dragon7"),
            panda8=None if node["panda8"] is None else odds("panda8"),
            house_money=house,
            dragon_bonus=self.dragon_bonus(node["dragon_bonus"]),
            royal9=None if node["royal9"] is None else self.royal9(node["royal9"]),
        )

    def dragon_bonus(self, node: Any) -> dict[str, DragonBonusPaytable]:
        if node is None:
            return {}
        out = {}
        names = contract.DRAGON_BONUS_PAYTABLES
        for name, item in self.mapping(node, "payouts.dragon_bonus", names).items():
            path = f"payouts.dragon_bonus.{name}"
            item, cite, note = self.entry(item, path, ("win_by", "natural_winner", "natural_tie"))
            win_by = self.mapping(item["win_by"], f"{path}.win_by", DRAGON_BONUS_MARGINS)
            out[name] = DragonBonusPaytable(
                name=name,
                win_by={
                    m: self.integer(win_by[m], f"{path}.win_by.{m}", 1)
                    for m in DRAGON_BONUS_MARGINS
                },
                natural_winner=self.integer(item["natural_winner"], f"{path}.natural_winner", 1),
                natural_tie=self.choice(item["natural_tie"], f"{path}.natural_tie", ("push",)),
                cite=cite,
                note=note,
            )
        return out

    def royal9(self, node: Any) -> Royal9:
        node = self.mapping(node, "payouts.royal9", ("wager", "paytables", "seat_combinations"))
        wager, cite, note = self.entry(node["wager"], "payouts.royal9.wager", ("amount",))
        paytables: dict[str, Royal9Paytable] = {}
        tables = self.mapping(
            node["paytables"], "payouts.royal9.paytables", (), contract.ROYAL9_PAYTABLES
        )
        if not tables:
            self.fail("payouts.royal9.paytables", "no paytable given")
        for name, item in tables.items():
            path = f"payouts.royal9.paytables.{name}"
            item, table_cite, table_note = self.entry(item, path, ("lines",), ("random_award",))
            lines = []
            for i, line in enumerate(self.items(item["lines"], f"{path}.lines")):
                where = f"{path}.lines[{i}]"
                line = self.mapping(line, where, ("name", "pays", "match"), ("meter",))
                pays, meter = line["pays"], line.get("meter")
                printed = self.text(line["name"], f"{where}.name")
                # `wagers.award` names a line, so a name must say which line it is.
                if any(known.name == printed for known in lines):
                    self.fail(f"{where}.name", f"{printed!r} is listed twice")
                lines.append(
                    Royal9Line(
                        name=printed,
                        amount=None if pays == "progressive" else self.money(pays, f"{where}.pays"),
                        meter=None if meter is None else self.text(meter, f"{where}.meter"),
                        match=self.choice(line["match"], f"{where}.match", ROYAL9_MATCHES),
                    )
                )
            random_award = None
            if item.get("random_award") is not None:
                node_ra, ra_cite, ra_note = self.entry(
                    item["random_award"], f"{path}.random_award", ("value",)
                )
                flag = self.flag(node_ra["value"], f"{path}.random_award.value")
                random_award = Cited(flag, ra_cite, ra_note)
            paytables[name] = Royal9Paytable(
                name, tuple(lines), table_cite, table_note, random_award
            )
        return Royal9(
            wager=Cited(self.money(wager["amount"], "payouts.royal9.wager.amount"), cite, note),
            paytables=paytables,
            seat_combinations=self.seat_combinations(node["seat_combinations"]),
        )

    def seat_combinations(self, node: Any) -> SeatCombinations:
        path = "payouts.royal9.seat_combinations"
        node, cite, note = self.entry(node, path, ("chairs", "per_seat", "suited", "unique"))
        combos = SeatCombinations(
            chairs=None,
            per_seat=self.maybe_int(node["per_seat"], f"{path}.per_seat", 1),
            suited=self.flag(node["suited"], f"{path}.suited"),
            unique=self.flag(node["unique"], f"{path}.unique"),
            cite=cite,
            note=note,
        )
        if node["chairs"] is None:
            return combos
        if not isinstance(node["chairs"], dict):
            self.fail(
                f"{path}.chairs", f"expected chair: [combinations], found {_kind(node['chairs'])}"
            )
        chairs: dict[int, tuple[str, ...]] = {}
        seen: dict[str, int] = {}
        for chair, items in node["chairs"].items():
            where = f"{path}.chairs.{chair}"
            chair = self.integer(chair, where, 1)
            listed = self.items(items, where)
            if combos.per_seat is not None and len(listed) != combos.per_seat:
                self.fail(where, f"{len(listed)} combinations, per_seat says {combos.per_seat}")
            chairs[chair] = tuple(self.combo(c, f"{where}[{i}]") for i, c in enumerate(listed))
            for combo in chairs[chair]:
                if combos.suited != (combo[1] == combo[3]):
                    self.fail(where, f"{combo} is {'not ' if combos.suited else ''}suited")
                if combos.unique and seen.setdefault(combo, chair) != chair:
                    self.fail(where, f"{combo} is also posted at chair {seen[combo]}")
        return SeatCombinations(chairs, combos.per_seat, combos.suited, combos.unique, cite, note)

    def combo(self, value: Any, path: str) -> str:
        """A King-9 combination as the contract writes it: face card first, e.g. KS9H."""
        text = self.text(value, path)
        if (
            len(text) != 4
            or text[0] not in "JQK"
            or text[2] != "9"
            or text[1] not in contract.SUITS
            or text[3] not in contract.SUITS
        ):
            self.fail(path, f"{text!r} is not a face card then a nine, such as 'KS9H'")
        return text

    def commission(self, node: Any, bets: dict[str, Bet]) -> Commission:
        node = self.mapping(
            node,
            "commission",
            ("percents", "rounding", "bets", "exempt", "none_at_ez", "collection"),
        )
        item, cite, note = self.entry(node["percents"], "commission.percents", ("values",))
        percents = Cited(
            self.integers(item["values"], "commission.percents.values", 1, 100), cite, note
        )
        item, cite, note = self.entry(node["rounding"], "commission.rounding", ("step_cents",))
        steps = item["step_cents"]
        if not isinstance(steps, dict) or set(steps) != set(percents.value):
            self.fail(
                "commission.rounding.step_cents",
                f"needs one step for each percent {list(percents.value)}",
            )
        rounding = Cited(
            {
                p: self.integer(steps[p], f"commission.rounding.step_cents.{p}", 1)
                for p in percents.value
            },
            cite,
            note,
        )
        permitted = tuple(bets)

        def bet_list(key: str) -> Cited[tuple[str, ...]] | None:
            if node[key] is None:
                return None
            item, cite, note = self.entry(node[key], f"commission.{key}", ("bets",))
            return Cited(
                self.choices(item["bets"], f"commission.{key}.bets", permitted), cite, note
            )

        ez = None
        if node["none_at_ez"] is not None:
            item, cite, note = self.entry(node["none_at_ez"], "commission.none_at_ez", ("value",))
            ez = Cited(self.flag(item["value"], "commission.none_at_ez.value"), cite, note)
        item, cite, note = self.entry(node["collection"], "commission.collection", ("modes",))
        modes = self.choices(
            item["modes"], "commission.collection.modes", contract.COMMISSION_COLLECTIONS
        )
        if node["bets"] is None:
            self.fail("commission.bets", "missing: which bets pay commission")
        return Commission(
            percents=percents,
            rounding_step_cents=rounding,
            bets=bet_list("bets"),  # type: ignore[arg-type]  # checked just above
            exempt=bet_list("exempt"),
            none_at_ez=ez,
            collection=Cited(modes, cite, note),
        )

    def range_(self, node: Any, path: str) -> Range:
        node, cite, note = self.entry(node, path, ("min", "max"))
        low = self.maybe_int(node["min"], f"{path}.min", 0)
        high = self.maybe_int(node["max"], f"{path}.max", 0)
        if low is not None and high is not None and low > high:
            self.fail(path, f"min {low} is above max {high}")
        return Range(low, high, cite, note)

    def limits(self, node: Any) -> Limits:
        node = self.mapping(
            node,
            "limits",
            (
                "seats",
                "decks",
                "royal9",
                "automated_shuffler",
                "cut",
                "cover_card",
                "cards_per_hand",
            ),
        )
        royal9 = None
        if node["royal9"] is not None:
            item, cite, note = self.entry(node["royal9"], "limits.royal9", ("decks", "seats"))
            seats = item["seats"]
            royal9 = Royal9Limits(
                decks=self.integers(item["decks"], "limits.royal9.decks", 1, 127),
                seats=None
                if seats is None
                else self.integers(seats, "limits.royal9.seats", 1, 127),
                cite=cite,
                note=note,
            )
        path = "limits.automated_shuffler"
        item, cite, note = self.entry(
            node["automated_shuffler"], path, ("two_batches",), ("total_decks", "equal_batches")
        )
        two = self.flag(item["two_batches"], f"{path}.two_batches")
        if two and ("total_decks" not in item or "equal_batches" not in item):
            self.fail(path, "two_batches needs total_decks and equal_batches")
        shuffler = AutomatedShuffler(
            two_batches=two,
            total_decks=self.range_(item["total_decks"], f"{path}.total_decks") if two else None,
            equal_batches=self.flag(item["equal_batches"], f"{path}.equal_batches")
            if two
            else False,
            cite=cite,
            note=note,
        )
        cut, cut_cite, cut_note = self.entry(node["cut"], "limits.cut", ("min_from_either_end",))
        cover, cover_cite, cover_note = self.entry(
            node["cover_card"], "limits.cover_card", ("min_from_back",)
        )
        return Limits(
            seats=None if node["seats"] is None else self.range_(node["seats"], "limits.seats"),
            decks=self.range_(node["decks"], "limits.decks"),
            royal9=royal9,
            automated_shuffler=shuffler,
            cut_min_from_either_end=Cited(
                self.integer(cut["min_from_either_end"], "limits.cut.min_from_either_end", 1),
                cut_cite,
                cut_note,
            ),
            cover_min_from_back=Cited(
                self.maybe_int(cover["min_from_back"], "limits.cover_card.min_from_back", 1),
                cover_cite,
                cover_note,
            ),
            cards_per_hand=self.range_(node["cards_per_hand"], "limits.cards_per_hand"),
        )

    def procedures(self, node: Any) -> dict[str, Procedure | None]:
        node = self.mapping(node, "procedures", tuple(PROCEDURES))
        out: dict[str, Procedure | None] = {}
        for name, params in PROCEDURES.items():
            if node[name] is None:
                out[name] = None
                continue
            path = f"procedures.{name}"
            item, cite, note = self.entry(node[name], path, params)
            out[name] = Procedure(
                name, {p: self.param(p, item[p], f"{path}.{p}") for p in params}, cite, note
            )
        return out

    def param(self, key: str, value: Any, path: str) -> Any:
        """Procedure parameters: a few are constrained by what the engine can look up."""
        if key == "by":
            return self.choice(value, path, DEALERS)
        if key == "seat_column":
            return None if value is None else self.choice(value, path, SEAT_COLUMNS)
        if key == "counted_kinds":
            return self.choices(value, path, contract.ROUND_KINDS, allow_empty=True)
        if key == "onto":
            return self.choices(value, path, HANDS)
        if key == "qualifying_calls":
            return self.choices(value, path, contract.CALLS)
        if key in ("hands_after", "min_multiple", "max_multiple"):
            return self.maybe_int(value, path, 0)
        return self.flag(value, path)


def _cell(banker: int, third: int | None) -> str:
    return f"Banker {banker} / Player {'stood' if third is None else f'third card {third}'}"
