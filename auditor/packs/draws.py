"""Cards and draws: card values, burns, Naturals and the Player and Banker draw tables.

A table is written as rules that each cover several cases. The checks here make sure
the rules cover every rank, every Player total 0-7 and every cell of the Banker grid
(two-card total 0-7 x Player third card 0-9 or stood) exactly once: a gap would let
the audit pass rounds it never judged, an overlap would make the answer depend on
the order of the rules.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Discriminator, StrictInt, Tag, WithJsonSchema

from auditor import contract
from auditor.errors import summarize
from auditor.packs.entries import (
    EITHER_ERROR,
    Entry,
    NonEmpty,
    Text,
    between,
    refuse,
    word_or_number,
)
from auditor.packs.vocabulary import (
    DEFAULT_SEVERITY,
    STOOD,
    BankerAction,
    NaturalDrawnSettlement,
    PlayerAction,
    Severity,
    Stood,
)

Cell = tuple[int, int | None]  # (Banker two-card total, Player third card; None: he stood)
BANKER_GRID: tuple[Cell, ...] = tuple((b, t) for b in range(8) for t in (*range(10), None))


def _known_ranks(ranks: str) -> str:
    for rank in ranks:
        if rank not in contract.RANKS:
            raise refuse(f"{rank!r} is not one of {', '.join(contract.RANKS)}")
    return ranks


Ranks = Annotated[
    Text,
    AfterValidator(_known_ranks),
    WithJsonSchema({"type": "string", "pattern": f"^[{contract.RANKS}]+$"}),
]


# `face`: the rank's own number, for 2-9.
Face = Annotated[Literal["face"], Tag("word")]


class RankValueRule(Entry):
    """A value for each of `ranks` (one string of ranks, e.g. ``TJQK``)."""

    ranks: Ranks
    value: Any  # narrowed by each table; `face`: the rank's own number, for 2-9

    def value_of(self, rank: str) -> int:
        return int(rank) if self.value == "face" else self.value


class CardValueRule(RankValueRule):
    """The point value of the ranks."""

    value: Annotated[
        Face | Annotated[StrictInt, between(0, 9), Tag("number")],
        word_or_number("face"),
    ]


class BurnValueRule(RankValueRule):
    """How many cards are burned after a first card of these ranks."""

    value: Annotated[
        Face | Annotated[StrictInt, between(1, 10), Tag("number")],
        word_or_number("face"),
    ]


def check_rank_values(rules: tuple[RankValueRule, ...]) -> None:
    seen: set[str] = set()
    for i, rule in enumerate(rules):
        for rank in rule.ranks:
            if rank in seen:
                raise refuse(f"rank {rank} is given a value twice", i, "ranks")
            if rule.value == "face" and not rank.isdigit():
                raise refuse(f"'face' has no meaning for rank {rank}", i, "value")
            seen.add(rank)
    missing = [rank for rank in contract.RANKS if rank not in seen]
    if missing:
        raise refuse(f"no value for rank(s) {', '.join(missing)}")


class NaturalDrawn(Entry):
    """What a round's wagers are settled on where a hand whose first two cards are a
    Natural was given a third card: the cards `as_dealt`, or `first_two_cards`, the round
    as it should have been dealt (a Natural stops both hands). The misdeal itself is a
    draw finding either way."""

    settle_on: NaturalDrawnSettlement


class Naturals(Entry):
    """The two-card totals that are a Natural, and the settlement of a round in which a
    Natural was wrongly given a third card."""

    totals: NonEmpty[Annotated[StrictInt, between(0, 9)]]
    drawn_in_error: NaturalDrawn


class PlayerDrawRule(Entry):
    """What the Player does on each of `totals` (two-card totals 0-7)."""

    totals: NonEmpty[Annotated[StrictInt, between(0, 7)]]
    action: PlayerAction


def check_player_draw(rules: tuple[PlayerDrawRule, ...]) -> None:
    seen: set[int] = set()
    for i, rule in enumerate(rules):
        for total in rule.totals:
            if total in seen:
                raise refuse(f"Player total {total} is given twice", i, "totals")
            seen.add(total)
    missing = [str(total) for total in range(8) if total not in seen]
    if missing:
        raise refuse(f"no action for Player total(s) {', '.join(missing)}")


def _third_card_form(value: Any) -> str | None:
    if value == STOOD:
        return "stood"
    return "cards" if isinstance(value, list | tuple) else None


ThirdCards = Annotated[
    Annotated[Stood, Tag("stood")]
    | Annotated[NonEmpty[Annotated[StrictInt, between(0, 9)]], Tag("cards")],
    Discriminator(
        _third_card_form,
        custom_error_type=EITHER_ERROR,
        custom_error_message=f"expected {STOOD!r} or a list of Player third cards 0-9",
    ),
]


class BankerDrawRule(Entry):
    """The Banker's action on each `banker` total, after each Player third card or a stay.

    `severity` grades a finding against this rule: below ``high`` where the text
    leaves the cell open and the pack applies a reading.
    """

    banker: NonEmpty[Annotated[StrictInt, between(0, 7)]]
    player_third: ThirdCards
    action: BankerAction
    severity: Severity = DEFAULT_SEVERITY

    @property
    def draws(self) -> bool:
        return self.action == "draw"

    def cells(self) -> list[Cell]:
        thirds = self.player_third if isinstance(self.player_third, tuple) else (None,)
        return [(banker, third) for banker in self.banker for third in thirds]


def _cell_name(banker: int, third: int | None) -> str:
    return f"Banker {banker} / Player {'stood' if third is None else f'third card {third}'}"


def check_banker_draw(rules: tuple[BankerDrawRule, ...]) -> None:
    rule_of: dict[Cell, int] = {}
    twice: list[str] = []
    for i, rule in enumerate(rules):
        for cell in rule.cells():
            if cell in rule_of:
                where = f"banker_draw[{rule_of[cell]}] and banker_draw[{i}]"
                twice.append(f"given twice, {_cell_name(*cell)}: {where}")
            rule_of[cell] = i
    problems = [f"{_cell_name(*cell)}: no rule" for cell in BANKER_GRID if cell not in rule_of]
    if problems or twice:
        raise refuse(
            "the rules must cover every Banker total 0-7 x Player third card 0-9 or "
            f"'{STOOD}' exactly once:\n" + summarize(problems + twice)
        )
