"""The rule packs as one decision table for the replay: per ruleset, Player two-card
total, Banker two-card total and the Player's third card (or -1 when the Player stood),
the Player's action, the Banker's decision, the citations and the EZ announcements."""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from auditor.packs.model import RulePack
from auditor.packs.tables import pack_tables

STOOD = -1  # the decision table's key for "the Player did not draw"
CARD_SLOTS = (("player_cards", "p"), ("banker_cards", "b"))

DECISION_SCHEMA = {
    "ruleset": pl.String(),
    "player_two": pl.Int8(),
    "banker_two": pl.Int8(),
    "third_key": pl.Int8(),
    "player_must_draw": pl.Boolean(),
    "player_must_stand": pl.Boolean(),
    "player_citation": pl.String(),
    "banker_draws": pl.Boolean(),
    "banker_citation": pl.String(),
    "banker_severity": pl.String(),
    "player_natural": pl.Boolean(),
    "banker_natural": pl.Boolean(),
    "natural_hand": pl.String(),
    "totals_citation": pl.String(),
    "outcome_citation": pl.String(),
    "ez_citation": pl.String(),
    "announces": pl.List(pl.String()),
    # The ruleset's void round is one the cards ran out on (not an annulled hand).
    "void_short": pl.Boolean(),
}


# ---- the packs as one decision table ------------------------------------------------


def decision_table(packs: Mapping[str, RulePack]) -> pl.DataFrame:
    """Every (ruleset, two-card totals, third card) the replay can meet, decided by its pack;
    the Banker's cells are read from the packs' table form (`PackTables.draw_cells`)."""
    cells = {
        (r, banker, STOOD if third is None else third): (draws, citation, severity)
        for r, banker, third, draws, citation, severity in pack_tables(packs)
        .draw_cells.select(
            "ruleset", "banker_two_card", "player_third", "banker_draws", "citation", "severity"
        )
        .iter_rows()
    }
    rows = []
    for r, pack in packs.items():
        naturals = set(pack.naturals.totals)
        announce = pack.announce
        for player_two in range(10):
            for banker_two in range(10):
                natural_hand = _natural_hand(player_two, banker_two, naturals)
                for third in (STOOD, *range(10)):
                    rows.append(
                        (
                            pack.ruleset,
                            player_two,
                            banker_two,
                            third,
                            *_player_decision(pack, player_two, natural_hand),
                            *(
                                (False, pack.cite(pack.naturals.cite), "high")
                                if natural_hand
                                else cells[r, banker_two, third]
                            ),
                            player_two in naturals,
                            banker_two in naturals,
                            natural_hand,
                            pack.cite(announce.totals.cite),
                            pack.cite(announce.outcome.cite),
                            _ez_citation(pack),
                            sorted(item.event for item in pack.ez.announce),
                            _void_means_short(pack),
                        )
                    )
    return pl.DataFrame(rows, schema=DECISION_SCHEMA, orient="row")


def _natural_hand(player_two: int, banker_two: int, naturals: set[int]) -> str | None:
    if player_two in naturals and banker_two in naturals:
        return "both"
    if player_two in naturals:
        return "player"
    if banker_two in naturals:
        return "banker"
    return None


def _player_decision(pack: RulePack, player_two: int, natural_hand: str | None) -> tuple:
    """(must draw, must stand, citation); at Chemin de Fer's 5 the Player may do either."""
    if natural_hand:
        return False, True, pack.cite(pack.naturals.cite)
    rule = pack.player_draw[player_two]
    return rule.action == "draw", rule.action == "stand", pack.cite(rule.cite)


def _void_means_short(pack: RulePack) -> bool:
    void = pack.procedure("void_ends_shoe")
    return bool(void and void.value)


def _ez_citation(pack: RulePack) -> str:
    refs = sorted({item.cite for item in pack.ez.announce})
    return pack.cite(refs[0]) if refs else pack.cite(pack.announce.outcome.cite)


def rank_code(card: pl.Expr) -> pl.Expr:
    """A card's rank as a base-36 digit (Int8): '2'..'9' themselves, 'A' 10, 'K' 20 ...

    Cards are validated as two characters, rank then suit, so the whole card read as a
    base-36 number, divided by 36, is its rank: plain integer arithmetic, which is also
    what runs fastest inside `list.eval` over every card of a hand.
    """
    return (card.str.to_integer(base=36, strict=False) // 36).cast(pl.Int8, strict=False)


def rank_value(code: pl.Expr, packs: Mapping[str, RulePack]) -> pl.Expr:
    """Point value (Int8) of a `rank_code`, from the packs' card values (null: no card)."""
    table: list[int | None] = [None] * 36
    for rank, value in _shared_card_values(packs).items():
        table[int(rank, 36)] = value
    # A gather from a 36-entry table; anything outside it (a negative code would count
    # from the end) is no card.
    position = pl.when(code.is_between(0, 35)).then(code)
    return pl.lit(pl.Series(table, dtype=pl.Int8)).gather(position)


def _shared_card_values(packs: Mapping[str, RulePack]) -> dict[str, int]:
    tables = {
        r: {rank: rule.value_of(rank) for rank, rule in p.card_values.items()}
        for r, p in packs.items()
    }
    distinct = {tuple(sorted(t.items())) for t in tables.values()}
    if len(distinct) != 1:
        # One expression for all rulesets keeps the replay a single pass; a pack that
        # counts cards differently would need the value joined per ruleset instead.
        raise ValueError(f"rule packs disagree on card values: {sorted(tables)}")
    return next(iter(tables.values()))


def event_exprs(
    packs: Mapping[str, RulePack],
    final: Mapping[str, pl.Expr] | None = None,
    count: Mapping[str, pl.Expr] | None = None,
) -> dict[str, pl.Expr]:
    """Whether each EZ event (Dragon 7, Panda 8) occurred, by the definition in the pack:
    of the hands as dealt, or of the hands whose point counts (`final`) and numbers of
    cards (`count`) are given, by hand."""
    final = final or {"player": pl.col("player_final"), "banker": pl.col("banker_final")}
    count = count or {"player": pl.col("player_count"), "banker": pl.col("banker_count")}
    other = {"player": "banker", "banker": "player"}
    occurred: dict[str, pl.Expr] = {}
    for index, pack in enumerate(packs.values()):
        for name, event in pack.ez.events.items():
            if event is None:
                continue
            condition = (
                (final[event.hand] == event.total)
                & (count[event.hand] == event.cards)
                & (final[other[event.hand]] < event.other_hand_below)
            )
            occurred[name] = (
                pl.when(pl.col("ruleset_index") == index)
                .then(condition)
                .otherwise(occurred.get(name, pl.lit(False)))
            )
    return occurred
