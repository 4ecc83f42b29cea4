"""A rule pack file, section by section, and the checks that span sections.

``PackFile`` is the YAML of ``rules/<ruleset>.yaml`` as written, and the model the engine
reads: ``auditor.packs.model`` wraps it in a ``RulePack`` with its digest and lookups.
``pack_json_schema()`` describes the same format for editors. The schema cannot say
everything the loader checks: that the draw tables cover every case once, that the
payouts match the permitted bets, and the other checks that compare one value with
another are the loader's alone.
"""

from __future__ import annotations

import unicodedata
from datetime import UTC, date, datetime, time
from typing import Annotated, Any

from pydantic import (
    AwareDatetime,
    Field,
    StrictBool,
    StrictInt,
    ValidationInfo,
    field_validator,
    model_validator,
)

from auditor import contract
from auditor.packs.case_table import CaseTable, check_case_table
from auditor.packs.draws import (
    BankerDrawRule,
    BurnValueRule,
    CardValueRule,
    Naturals,
    PlayerDrawRule,
    RankValueRule,
    check_banker_draw,
    check_player_draw,
    check_rank_values,
)
from auditor.packs.entries import (
    NUMBERED_KEYS,
    Count,
    DeckRange,
    Decks,
    Entry,
    Flag,
    NonEmpty,
    PackModel,
    Range,
    Reference,
    Text,
    between,
    first_repeat,
    keys_named,
    refuse,
)
from auditor.packs.payouts import PayoutsSection
from auditor.packs.procedures import ProceduresSection
from auditor.packs.regulation import RegulationSection
from auditor.packs.vocabulary import (
    PAYOUT_BETS,
    BetName,
    CallAmount,
    CallName,
    CommissionCollection,
    EzEventName,
    Hand,
    TableOption,
)


class Reading(PackModel):
    """An INDEX ambiguity and the reading this pack applies."""

    ambiguity: Count
    reading: Text


class AnnounceSection(PackModel):
    """The rules announcing the final counts (`totals`) and the winner (`outcome`)."""

    totals: Reference
    outcome: Reference


# --------------------------------------------------------------------------- EZ


class CitedEvent(Entry):
    """A rule about one EZ event: its announcement, or the Banker push on it."""

    event: EzEventName


class EzEventRule(Entry):
    """Dragon 7 / Panda 8: `hand` has `total` with `cards` cards, the other hand is below."""

    hand: Hand
    total: Annotated[StrictInt, between(0, 9)]
    cards: Annotated[StrictInt, between(2, 3)]
    other_hand_below: Annotated[StrictInt, between(0, 10)]


class EzSection(PackModel):
    """EZ Baccarat: offered or not, its events, their announcements and the Banker push."""

    offered: Flag
    announce: tuple[CitedEvent, ...]
    events: dict[EzEventName, EzEventRule | None] = Field(
        json_schema_extra=keys_named(*contract.EZ_EVENTS)
    )
    banker_push_on: CitedEvent | None

    @model_validator(mode="after")
    def _consistent(self) -> EzSection:
        defined = [name for name, event in self.events.items() if event is not None]
        twice = first_repeat(item.event for item in self.announce)
        if twice is not None:
            event = self.announce[twice].event
            raise refuse(f"{event} is announced twice", "announce", twice, "event")
        for i, item in enumerate(self.announce):
            if item.event not in defined:
                message = f"{item.event} is announced but not defined under ez.events"
                raise refuse(message, "announce", i, "event")
        push = self.banker_push_on
        if push is not None and push.event not in defined:
            raise refuse(
                f"{push.event!r} is not one of the events defined under ez.events "
                f"({', '.join(defined) or 'none'})",
                "banker_push_on",
                "event",
            )
        if not self.offered.value and (self.announce or defined or push):
            raise refuse("EZ is not offered, yet announcements, events or a push are given")
        return self


# --------------------------------------------------------------------------- bets


class Call(Entry):
    """A call a wager may carry, and the amount it stakes against the Bank."""

    call: CallName
    amount: CallAmount


class PermittedBet(Entry):
    """A permitted bet; `requires`: the `tables` option that must be set (null: always)."""

    bet: BetName
    requires: TableOption | None
    calls: tuple[Call, ...] = ()  # empty: `wagers.call` must be null

    @model_validator(mode="after")
    def _calls_once(self) -> PermittedBet:
        twice = first_repeat(call.call for call in self.calls)
        if twice is not None:
            call = self.calls[twice].call
            raise refuse(f"call {call!r} is listed twice", "calls", twice, "call")
        return self


class BetsSection(Entry):
    """The permissible wagers; `cite` is cited for a wager on any other bet."""

    permitted: NonEmpty[PermittedBet]

    @model_validator(mode="after")
    def _bets_once(self) -> BetsSection:
        twice = first_repeat(item.bet for item in self.permitted)
        if twice is not None:
            bet = self.permitted[twice].bet
            raise refuse(f"bet {bet!r} is listed twice", "permitted", twice, "bet")
        return self


# --------------------------------------------------------------------------- commission


# A commission rounded up to a step past $100 is no rounding any text writes; the bound
# keeps the rounded commission of any stake inside Int64 cents.
MAX_STEP_CENTS = 10_000


class Percents(Entry):
    values: NonEmpty[Annotated[StrictInt, between(1, 100)]]


class Rounding(Entry):
    """The step, in cents, commission is rounded up to at each percent."""

    step_cents: dict[StrictInt, Annotated[StrictInt, between(1, MAX_STEP_CENTS)]] = Field(
        json_schema_extra=NUMBERED_KEYS
    )


class BetList(Entry):
    bets: NonEmpty[BetName]


class CollectionModes(Entry):
    modes: NonEmpty[CommissionCollection]


class CommissionSection(PackModel):
    """Vig: percents, rounding, the bets that pay it or are exempt, how it is collected."""

    percents: Percents
    rounding: Rounding
    bets: BetList
    exempt: BetList | None
    none_at_ez: Flag | None
    collection: CollectionModes

    @model_validator(mode="after")
    def _a_step_per_percent(self) -> CommissionSection:
        if set(self.rounding.step_cents) != set(self.percents.values):
            raise refuse(
                f"needs one step for each percent {list(self.percents.values)}",
                "rounding",
                "step_cents",
            )
        return self


# --------------------------------------------------------------------------- limits


class Royal9Limits(Entry):
    """The deck counts (and seat counts; null: any) at which Royal 9 may be offered."""

    decks: NonEmpty[Decks]
    seats: NonEmpty[Annotated[StrictInt, between(1, 127)]] | None


class AutomatedShuffler(Entry):
    """Two alternating batches with an automated shuffler: `total_decks` together, and
    whether they must be equal. `two_batches: false`: every shoe follows `limits.decks`."""

    two_batches: StrictBool
    total_decks: DeckRange | None = None
    equal_batches: StrictBool = False

    @model_validator(mode="after")
    def _batches_described_when_used(self) -> AutomatedShuffler:
        described = {"total_decks", "equal_batches"} & self.model_fields_set
        if self.two_batches and (len(described) < 2 or self.total_decks is None):
            raise refuse("two_batches needs total_decks and equal_batches")
        if not self.two_batches and described:
            raise refuse(f"{' and '.join(sorted(described))} given, but two_batches is false")
        return self


class Cut(Entry):
    min_from_either_end: Count


class CoverCard(Entry):
    min_from_back: Count | None


class LimitsSection(PackModel):
    """Table limits: seats and decks (null: no bound), the cut and the cover card."""

    seats: Range | None
    decks: DeckRange
    royal9: Royal9Limits | None
    automated_shuffler: AutomatedShuffler
    cut: Cut
    cover_card: CoverCard
    cards_per_hand: Range


# --------------------------------------------------------------------------- the pack


class PackFile(PackModel):
    """A ruleset's rules as data: every value beside the reference (`cite`) it encodes.

    null where the ruleset has no such rule; money in whole dollars.
    """

    ruleset: Text
    title: Text
    source: Text
    # The regulation the pack encodes: jurisdiction, citation style, and the files beside
    # the pack with its section texts and traceability rows (`auditor.packs.regulation`).
    # Optional: a pack without it still audits, its findings citing its own `sections`
    # (the reports quote those; no traceability rows are listed for it).
    regulation: RegulationSection | None = None
    readings: tuple[Reading, ...]
    card_values: NonEmpty[CardValueRule]
    burn_values: NonEmpty[BurnValueRule]
    naturals: Naturals
    player_draw: NonEmpty[PlayerDrawRule]
    banker_draw: NonEmpty[BankerDrawRule]
    announce: AnnounceSection
    ez: EzSection
    bets: BetsSection
    payouts: PayoutsSection
    commission: CommissionSection
    limits: LimitsSection
    procedures: ProceduresSection
    # The regulation's words for the sections the pack cites, by reference ("§11(c)"): a
    # pack from outside brings its own, which the reports quote and `auditor rules lint`
    # resolves every `cite` into; the built-in packs' texts ship with the auditor.
    sections: dict[Text, Text] | None = None
    # A later version of the ruleset, in force for shoes opened from then on (a date: from
    # its start, UTC). Its file is RULESET@WHEN.yaml, WHEN written as `version_label` does.
    effective_from: date | AwareDatetime | None = None
    # The table the pack's YAML cases are dealt at unless a case sets its own.
    case_table: CaseTable | None = None

    @field_validator("ruleset")
    @classmethod
    def _named_as_its_file(cls, ruleset: str, info: ValidationInfo) -> str:
        hidden = hidden_characters(ruleset)
        if hidden:
            raise refuse(
                f"{ruleset!r} holds {', '.join(hidden)}: an id is written in plain letters, "
                "digits and '-', so that no id can pass for another"
            )
        expected = (info.context or {}).get("ruleset")
        if expected is not None and ruleset != expected.partition("@")[0]:
            raise refuse(f"{ruleset!r} does not match the file name {expected!r}")
        return ruleset

    @model_validator(mode="after")
    def _version_named_as_its_file(self, info: ValidationInfo) -> PackFile:
        expected = (info.context or {}).get("ruleset")
        label = None if self.effective_from is None else version_label(self.effective_from)
        if expected is not None and (expected.partition("@")[2] or None) != label:
            named = self.ruleset if label is None else f"{self.ruleset}@{label}"
            raise refuse(f"a pack with this effective_from is named {named}.yaml", "effective_from")
        return self

    @field_validator("effective_from")
    @classmethod
    def _one_spelling_per_moment(cls, when: date | datetime | None) -> date | datetime | None:
        # Two spellings of one moment would be two versions in force from the same start.
        if isinstance(when, datetime) and when.microsecond:
            raise refuse(f"{when.isoformat()} has a fraction of a second; give whole seconds")
        if isinstance(when, datetime) and when.astimezone(UTC).time() == time(0):
            day = when.astimezone(UTC).date().isoformat()
            raise refuse(f"{version_label(when)} is the start of {day}: write it as {day}")
        return when

    @field_validator("readings")
    @classmethod
    def _ambiguities_once(cls, readings: tuple[Reading, ...]) -> tuple[Reading, ...]:
        twice = first_repeat(item.ambiguity for item in readings)
        if twice is not None:
            number = readings[twice].ambiguity
            raise refuse(f"ambiguity {number} listed twice", twice, "ambiguity")
        return readings

    @field_validator("card_values", "burn_values")
    @classmethod
    def _every_rank_once(cls, rules: tuple[RankValueRule, ...]) -> tuple[RankValueRule, ...]:
        check_rank_values(rules)
        return rules

    @field_validator("player_draw")
    @classmethod
    def _every_player_total_once(
        cls, rules: tuple[PlayerDrawRule, ...]
    ) -> tuple[PlayerDrawRule, ...]:
        check_player_draw(rules)
        return rules

    @field_validator("banker_draw")
    @classmethod
    def _every_banker_cell_once(
        cls, rules: tuple[BankerDrawRule, ...]
    ) -> tuple[BankerDrawRule, ...]:
        check_banker_draw(rules)
        return rules

    @model_validator(mode="after")
    def _sections_agree(self) -> PackFile:
        self._ez_bets_agree()
        self._payouts_match_bets()
        self._commission_names_permitted_bets()
        self._bank_covered_by_permitted_bets()
        check_case_table(
            self.case_table,
            self.limits.seats,
            self.limits.decks,
            self.commission.percents.values,
        )
        return self

    def _ez_bets_agree(self) -> None:
        for i, item in enumerate(self.bets.permitted):
            where = ("bets", "permitted", i)
            if item.requires == "ez_baccarat" and not self.ez.offered.value:
                message = f"{item.bet} requires ez_baccarat, but EZ is not offered"
                raise refuse(message, *where, "requires")
            if item.bet in contract.EZ_EVENTS and self.ez.events.get(item.bet) is None:
                message = f"{item.bet} is permitted, but ez.events has no {item.bet}"
                raise refuse(message, *where, "bet")

    def _payouts_match_bets(self) -> None:
        permitted = {item.bet for item in self.bets.permitted}
        for key, needs in PAYOUT_BETS.items():
            given = getattr(self.payouts, key) is not None
            if given and not permitted & set(needs):
                raise refuse(f"given, but bet {needs[0]!r} is not permitted", "payouts", key)
            if not given and permitted & set(needs):
                raise refuse(f"bet {needs[0]!r} is permitted but has no payout", "payouts", key)

    def _commission_names_permitted_bets(self) -> None:
        permitted = [item.bet for item in self.bets.permitted]
        for key in ("bets", "exempt"):
            listed = getattr(self.commission, key)
            for i, bet in enumerate(listed.bets if listed else ()):
                if bet not in permitted:
                    raise refuse(
                        f"{bet!r} is not one of the permitted bets {', '.join(permitted)}",
                        "commission",
                        key,
                        "bets",
                        i,
                    )

    def _bank_covered_by_permitted_bets(self) -> None:
        permitted = [item.bet for item in self.bets.permitted]
        for i, bet in enumerate(self.payouts.banker.covered_by or ()):
            if bet not in permitted or bet == "banker":
                raise refuse(
                    f"{bet!r} is not one of the permitted bets against the Bank "
                    f"({', '.join(b for b in permitted if b != 'banker')})",
                    "payouts",
                    "banker",
                    "covered_by",
                    i,
                )


def pack_json_schema() -> dict[str, Any]:
    """JSON Schema (draft 2020-12) of a pack file, for editors and other tools.

    It describes each section and value; the checks that compare values (coverage of
    the draw tables, payouts against bets, ...) are the loader's.
    """
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        **PackFile.model_json_schema(),
    }


# Characters an id may not hold: they look like nothing, like a space or like '-'.
_HIDDEN_CATEGORIES = {"Cc", "Cf", "Cn", "Co", "Cs", "Zs", "Zl", "Zp", "Mn", "Me"}


def hidden_characters(text: str) -> list[str]:
    """The characters of `text` that would let it pass for another id: invisible, space,
    a dash other than '-', or one NFKC writes otherwise (U+FF4D for 'm'); as U+XXXX."""
    found = [
        ch
        for ch in text
        if unicodedata.category(ch) in _HIDDEN_CATEGORIES
        or (unicodedata.category(ch) == "Pd" and ch != "-")
        or unicodedata.normalize("NFKC", ch) != ch
    ]
    return [f"U+{ord(ch):04X}" for ch in dict.fromkeys(found)]


def id_key(ruleset: str) -> str:
    """What an id reads as: NFKC, without invisible characters, every dash '-', case
    folded, stripped. Two ids that read the same are one id to a reader of a finding."""
    text = unicodedata.normalize("NFKC", ruleset)
    text = "".join(
        "-" if unicodedata.category(ch) == "Pd" else ch
        for ch in text
        if unicodedata.category(ch) not in _HIDDEN_CATEGORIES or ch == " "
    )
    return text.casefold().strip()


def version_label(when: date | datetime) -> str:
    """How a version's start is written in its id and file name: 2027-01-01, or
    2027-01-01T06:00:00Z for a moment (UTC)."""
    if isinstance(when, datetime):
        return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return when.isoformat()


def version_start(when: date | datetime | None) -> datetime | None:
    """The moment a version takes effect, in UTC (a date: its start)."""
    if when is None or isinstance(when, datetime):
        return None if when is None else when.astimezone(UTC)
    return datetime(when.year, when.month, when.day, tzinfo=UTC)


def version_id(ruleset: str, when: date | datetime | None) -> str:
    """A pack's id: its ruleset's, and for a later version `@` and when it takes effect."""
    return ruleset if when is None else f"{ruleset}@{version_label(when)}"
