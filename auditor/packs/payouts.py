"""Payouts: the odds of each wager, the Dragon Bonus paytables and Royal 9.

Which of these a pack must give depends on the bets it permits; that check spans
sections and lives with the whole pack (``auditor.packs.sections.PackFile``).
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
    Tag,
    WithJsonSchema,
    model_validator,
)

from auditor import contract
from auditor.packs.entries import (
    NUMBERED_KEYS,
    Count,
    Entry,
    Flag,
    NonEmpty,
    NonNegative,
    PackModel,
    Text,
    between,
    first_repeat,
    keys_named,
    refuse,
    word_or_number,
)
from auditor.packs.vocabulary import (
    DRAGON_BONUS_MARGINS,
    BankerPayoutBasis,
    BetName,
    DragonBonusPaytableName,
    Margin,
    Royal9Match,
    Royal9PaytableName,
)

# No wager a casino offers pays more than 10,000 to 1; with the bound, any stake up to
# $9 trillion is paid in Int64 cents.
MAX_ODDS = 10_000
PayoutOdds = Annotated[StrictInt, between(1, MAX_ODDS)]


class Odds(Entry):
    """A wager paid at `odds` to 1."""

    odds: PayoutOdds


class BankerOdds(Entry):
    """The Banker wager's odds; `basis` is what wins: the stake (amount and rollover) or
    only what the wagers against the Bank cover, min(the Bank's stake, their stakes
    together). `covered_by`: the bets whose wagers are against the Bank, each counted
    whatever its call (given with `basis: covered` only)."""

    odds: PayoutOdds
    basis: BankerPayoutBasis
    covered_by: NonEmpty[BetName] | None = None

    @model_validator(mode="after")
    def _covered_by_with_covered_basis(self) -> BankerOdds:
        if self.basis == "covered" and self.covered_by is None:
            raise refuse("basis covered needs covered_by: the bets against the Bank")
        if self.basis != "covered" and self.covered_by is not None:
            raise refuse(f"covered_by given, but basis is {self.basis}", "covered_by")
        return self


class TieOdds(Entry):
    """The least Tie odds the text allows; the odds in force are the `tables` column
    named by `table_option`."""

    min_odds: PayoutOdds
    table_option: Literal["tie_pays"]


class HouseMoney(Entry):
    """House Money odds when both hands qualify and when one does."""

    both: PayoutOdds
    one: PayoutOdds


class DragonBonusPaytableRule(Entry):
    """Odds by winning margin (non-Natural, 4-9 points), and for a Natural."""

    win_by: dict[Margin, PayoutOdds] = Field(
        json_schema_extra=keys_named(*DRAGON_BONUS_MARGINS, every=True)
    )
    natural_winner: PayoutOdds
    natural_tie: Literal["push"]

    @model_validator(mode="after")
    def _every_margin(self) -> DragonBonusPaytableRule:
        for margin in DRAGON_BONUS_MARGINS:
            if margin not in self.win_by:
                raise refuse("missing key", "win_by", str(margin))
        return self

    def odds_by_margin(self) -> dict[int, int]:
        return {margin: self.win_by[margin] for margin in DRAGON_BONUS_MARGINS}


class Royal9LineRule(PackModel):
    """A paytable line. `name` exactly as printed, since `wagers.award` names the line
    paid; `pays` whole dollars or ``progressive`` (then `meter` says which meter)."""

    name: Text
    pays: Annotated[
        Annotated[Literal["progressive"], Tag("word")] | Annotated[NonNegative, Tag("number")],
        word_or_number("progressive"),
    ]
    match: Royal9Match
    meter: Text | None = None

    @property
    def amount(self) -> int | None:
        """Whole dollars; None for a progressive line."""
        return None if self.pays == "progressive" else self.pays

    @property
    def progressive(self) -> bool:
        return self.pays == "progressive"


class Royal9PaytableRule(Entry):
    """Lines in priority order: a wager gets the first line it meets. `random_award`: the
    paytable allows an award with no qualifying hand and no line name."""

    lines: NonEmpty[Royal9LineRule]
    random_award: Flag | None = None

    @model_validator(mode="after")
    def _lines_named_once(self) -> Royal9PaytableRule:
        twice = first_repeat(line.name for line in self.lines)
        if twice is not None:
            name = self.lines[twice].name
            raise refuse(f"{name!r} is listed twice", "lines", twice, "name")
        return self


class Royal9Wager(Entry):
    """The Royal 9 wager, in whole dollars."""

    amount: NonNegative


COMBO_PATTERN = f"^[JQK][{contract.SUITS}]9[{contract.SUITS}]$"


def _combo(text: str) -> str:
    if not re.fullmatch(COMBO_PATTERN, text):
        raise refuse(f"{text!r} is not a face card then a nine, such as 'KS9H'")
    return text


# A King-9 combination as the contract writes it: face card first, e.g. KS9H.
Combo = Annotated[
    StrictStr,
    AfterValidator(_combo),
    WithJsonSchema({"type": "string", "pattern": COMBO_PATTERN}),
]


class SeatCombinations(Entry):
    """The combinations posted at each chair: `chairs` the default list (null: only the
    `royal9_seats` table supplies them), `per_seat` how many each chair holds."""

    chairs: dict[Count, NonEmpty[Combo]] | None = Field(json_schema_extra=NUMBERED_KEYS)
    per_seat: Count | None
    suited: StrictBool
    unique: StrictBool

    @model_validator(mode="after")
    def _combinations_fit(self) -> SeatCombinations:
        chair_of: dict[str, int] = {}
        for chair, combos in (self.chairs or {}).items():
            where = ("chairs", str(chair))
            if self.per_seat is not None and len(combos) != self.per_seat:
                raise refuse(f"{len(combos)} combinations, per_seat says {self.per_seat}", *where)
            for combo in combos:
                if self.suited != (combo[1] == combo[3]):
                    raise refuse(f"{combo} is {'not ' if self.suited else ''}suited", *where)
                if self.unique and chair_of.setdefault(combo, chair) != chair:
                    raise refuse(f"{combo} is also posted at chair {chair_of[combo]}", *where)
        return self


class Royal9Section(PackModel):
    wager: Royal9Wager
    paytables: dict[Royal9PaytableName, Royal9PaytableRule] = Field(
        min_length=1, json_schema_extra=keys_named(*contract.ROYAL9_PAYTABLES)
    )
    seat_combinations: SeatCombinations


class PayoutsSection(PackModel):
    """Odds per wager; null where the ruleset has no such wager."""

    player: Odds
    banker: BankerOdds
    tie: TieOdds | None
    dragon7: Odds | None
    panda8: Odds | None
    house_money: HouseMoney | None
    dragon_bonus: dict[DragonBonusPaytableName, DragonBonusPaytableRule] | None = Field(
        json_schema_extra=keys_named(*contract.DRAGON_BONUS_PAYTABLES, every=True)
    )
    royal9: Royal9Section | None

    @model_validator(mode="after")
    def _every_dragon_bonus_paytable(self) -> PayoutsSection:
        for name in contract.DRAGON_BONUS_PAYTABLES:
            if self.dragon_bonus is not None and name not in self.dragon_bonus:
                raise refuse("missing key", "dragon_bonus", name)
        return self
