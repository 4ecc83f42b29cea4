"""The rule packs as one decision table for the replay: per ruleset, Player two-card
total, Banker two-card total and the Player's third card (or `PLAYER_STOOD`), the
Player's action, the Banker's decision, the citations and the EZ announcements. The
drawing tables come from the packs' game (`auditor.packs.game`); this table adds that a
Natural in either hand stops both, and what the round announces."""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from auditor.packs.game import game
from auditor.packs.model import RulePack

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
    """Every (ruleset, two-card totals, third card) the replay can meet: the game's
    Player and Banker tables side by side, a Natural in either hand standing both."""
    played = game(packs)
    banker = played.banker.rename({"player_third": "third_key"})
    table = (
        played.player.join(banker, on="ruleset", maintain_order="left")
        .join(played.naturals, on="ruleset", maintain_order="left")
        .join(_announcements(packs), on="ruleset", maintain_order="left")
    )
    natural = pl.col("player_natural") | pl.col("banker_natural")
    return table.with_columns(
        (~natural & (pl.col("player_action") == "draw")).alias("player_must_draw"),
        (natural | (pl.col("player_action") == "stand")).alias("player_must_stand"),
        pl.when(natural)
        .then("natural_citation")
        .otherwise("player_citation")
        .alias("player_citation"),
        (~natural & pl.col("banker_draws")).alias("banker_draws"),
        pl.when(natural)
        .then("natural_citation")
        .otherwise("banker_citation")
        .alias("banker_citation"),
        pl.when(natural).then(pl.lit("high")).otherwise("banker_severity").alias("banker_severity"),
        _natural_hand().alias("natural_hand"),
    ).select(pl.col(name).cast(dtype) for name, dtype in DECISION_SCHEMA.items())


def _natural_hand() -> pl.Expr:
    player, banker = pl.col("player_natural"), pl.col("banker_natural")
    return (
        pl.when(player & banker)
        .then(pl.lit("both"))
        .when(player)
        .then(pl.lit("player"))
        .when(banker)
        .then(pl.lit("banker"))
    )


def _announcements(packs: Mapping[str, RulePack]) -> pl.DataFrame:
    """What each ruleset's round announces, and where its void means the cards ran out."""
    return pl.DataFrame(
        [
            (
                ruleset,
                pack.cite(pack.announce.totals.cite),
                pack.cite(pack.announce.outcome.cite),
                _ez_citation(pack),
                sorted(item.event for item in pack.ez.announce),
                _void_means_short(pack),
            )
            for ruleset, pack in packs.items()
        ],
        schema={
            name: DECISION_SCHEMA[name]
            for name in (
                "ruleset",
                "totals_citation",
                "outcome_citation",
                "ez_citation",
                "announces",
                "void_short",
            )
        },
        orient="row",
    )


def _void_means_short(pack: RulePack) -> bool:
    void = pack.procedures.void_ends_shoe
    return void is not None and void.value


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
    """Point value (Int8) of a `rank_code`, from the packs' card values (null: no card).

    One table for every ruleset keeps the replay a single pass: packs that counted cards
    differently would need the value joined per ruleset instead (`Game.shared_values`
    refuses them)."""
    table: list[int | None] = [None] * 36
    for rank, value in game(packs).shared_values().items():
        table[int(rank, 36)] = value
    # A gather from a 36-entry table; anything outside it (a negative code would count
    # from the end) is no card.
    position = pl.when(code.is_between(0, 35)).then(code)
    return pl.lit(pl.Series(table, dtype=pl.Int8)).gather(position)


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
