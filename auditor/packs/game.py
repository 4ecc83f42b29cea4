"""The game as the packs define it, built once per set of packs: each rank's point value,
the Naturals, the Player's drawing table and the Banker's, as plain frames keyed by
`ruleset`. The replay, the exact odds, the catalog's SQL macros and the evidence page
read them here; none of them builds a table of its own, so none can draw differently.

`player`: ruleset x the Player's two-card total 0-9, with `player_natural` and
`player_action` (draw, stand, either). `banker`: ruleset x the Banker's two-card total
0-9 x the Player's third card 0-9 or `PLAYER_STOOD`, with `banker_natural` and
`banker_draws`. Each decision carries its citation (`banker_rule`: the reference alone,
for a sentence that already names the ruleset). A Natural total stands, citing the
Naturals' rule; that a Natural in either hand stops both is the caller's to apply (the
SQL macros leave it to `is_natural`).

`PLAYER_STOOD` is the Player's third card where he did not draw: one past the card
values, so the Banker's table is a 10 x 11 grid that every reader indexes the same way.
Only the edges keep their medium's spelling of it: ``stood`` in a pack's YAML, None in
the pack model's cells and NULL in SQL (`banker_draws(ruleset, banker_total, NULL)`).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass

import polars as pl

from auditor.packs import rows
from auditor.packs.model import RulePack
from auditor.packs.tables import pack_tables

PLAYER_STOOD = 10
THIRD_CARDS = (*range(10), PLAYER_STOOD)  # the Banker table's columns, in order
TOTALS = tuple(range(10))  # two-card totals, the tables' rows
CELL = ["ruleset", "banker_two", "player_third"]  # a Banker cell's key


@dataclass(frozen=True, eq=False)
class Game:
    """The packs' game (see the module): frames by ruleset, with plain lookups of them."""

    card_values: pl.DataFrame  # ruleset x rank: card_value, card_value_citation
    naturals: pl.DataFrame  # ruleset: natural_totals, natural_citation
    player: pl.DataFrame
    banker: pl.DataFrame

    @functools.cached_property
    def rulesets(self) -> tuple[str, ...]:
        return tuple(self.naturals["ruleset"])

    def values_of(self, ruleset: str) -> dict[str, int]:
        """The point value of each rank under `ruleset`."""
        return dict(self._values[ruleset])

    def shared_values(self) -> dict[str, int]:
        """The point value of each rank, where every ruleset counts cards alike: one
        expression (or one macro) then serves every ruleset without a ruleset argument."""
        distinct = {tuple(sorted(values.items())) for values in self._values.values()}
        if len(distinct) != 1:
            raise ValueError(f"rule packs disagree on card values: {sorted(self._values)}")
        return self.values_of(self.rulesets[0])

    def natural_totals(self, ruleset: str) -> tuple[int, ...]:
        return self._naturals[ruleset]

    def player_actions(self, ruleset: str) -> tuple[str, ...]:
        """The Player's action on each two-card total 0-9 (a Natural stands)."""
        return self._player[ruleset]

    def banker_draws(self, ruleset: str) -> tuple[tuple[bool, ...], ...]:
        """Whether the Banker draws: rows his two-card total 0-9, columns `THIRD_CARDS`
        (a Natural stands)."""
        return self._banker[ruleset]

    @functools.cached_property
    def _values(self) -> dict[str, dict[str, int]]:
        values: dict[str, dict[str, int]] = {r: {} for r in self.rulesets}
        for ruleset, rank, value in self.card_values.select("ruleset", "rank", "card_value").rows():
            values[ruleset][rank] = value
        return values

    @functools.cached_property
    def _naturals(self) -> dict[str, tuple[int, ...]]:
        return {r: tuple(t) for r, t in self.naturals.select("ruleset", "natural_totals").rows()}

    @functools.cached_property
    def _player(self) -> dict[str, tuple[str, ...]]:
        ordered = self.player.sort("ruleset", "player_two")
        return {
            r: tuple(group["player_action"])
            for (r,), group in ordered.group_by("ruleset", maintain_order=True)
        }

    @functools.cached_property
    def _banker(self) -> dict[str, tuple[tuple[bool, ...], ...]]:
        ordered = self.banker.sort("ruleset", "banker_two", "player_third")
        width = len(THIRD_CARDS)
        grids = {}
        for (r,), group in ordered.group_by("ruleset", maintain_order=True):
            cells = group["banker_draws"].to_list()
            grids[r] = tuple(tuple(cells[i : i + width]) for i in range(0, len(cells), width))
        return grids


def game(packs: Mapping[str, RulePack]) -> Game:
    """The game of `packs` (in their order), built once per set of packs."""
    return _game(tuple(packs.items()))


def game_of(pack: RulePack) -> Game:
    """The game of one pack, keyed by its ruleset."""
    return game({pack.ruleset: pack})


@functools.lru_cache(maxsize=16)
def _game(packs: rows.Packs) -> Game:
    tables = pack_tables(dict(packs))
    naturals = _naturals(packs)
    return Game(
        card_values=tables.ranks.select("ruleset", "rank", "card_value", "card_value_citation"),
        naturals=naturals,
        player=_player_table(tables.player_cells, naturals),
        banker=_banker_table(tables.draw_cells, _banker_refs(packs), naturals),
    )


def _naturals(packs: rows.Packs) -> pl.DataFrame:
    return rows.frame(
        [
            (r, sorted(pack.naturals.totals), pack.cite(pack.naturals.cite), pack.naturals.cite)
            for r, pack in packs
        ],
        ruleset=pl.String,
        natural_totals=pl.List(pl.Int8),
        natural_citation=pl.String,
        natural_rule=pl.String,
    )


def _banker_refs(packs: rows.Packs) -> pl.DataFrame:
    """Each Banker cell's rule as its pack writes it, without the ruleset: what a page
    quotes in a sentence that already names the ruleset."""
    return rows.frame(
        [
            (r, banker, PLAYER_STOOD if third is None else third, rule.cite)
            for r, pack in packs
            for (banker, third), rule in pack.banker_draw.items()
        ],
        ruleset=pl.String,
        banker_two=pl.Int8,
        player_third=pl.Int8,
        rule=pl.String,
    )


def _by_total(naturals: pl.DataFrame, total: str) -> pl.DataFrame:
    """Every ruleset x two-card total 0-9, whether it is a Natural and the Naturals' rule."""
    totals = pl.DataFrame({total: TOTALS}, schema={total: pl.Int8})
    return naturals.join(totals, how="cross").select(
        "ruleset",
        total,
        pl.col("natural_totals").list.contains(pl.col(total)).alias("natural"),
        "natural_citation",
        "natural_rule",
    )


def _player_table(cells: pl.DataFrame, naturals: pl.DataFrame) -> pl.DataFrame:
    rules = cells.rename({"player_two_card": "player_two", "action": "player_action"})
    table = _by_total(naturals, "player_two").join(
        rules, on=["ruleset", "player_two"], how="left", maintain_order="left"
    )
    natural = pl.col("natural")
    table = table.select(
        "ruleset",
        "player_two",
        natural.alias("player_natural"),
        pl.when(natural).then(pl.lit("stand")).otherwise("player_action").alias("player_action"),
        pl.when(natural).then("natural_citation").otherwise("citation").alias("player_citation"),
    )
    _refuse_gaps(table, "player_action", "no Player rule for a two-card total")
    return table


def _banker_table(cells: pl.DataFrame, refs: pl.DataFrame, naturals: pl.DataFrame) -> pl.DataFrame:
    rules = (
        cells.rename({"banker_two_card": "banker_two"})
        .with_columns(pl.col("player_third").fill_null(PLAYER_STOOD))
        .join(refs, on=CELL)
    )
    thirds = pl.DataFrame({"player_third": THIRD_CARDS}, schema={"player_third": pl.Int8})
    table = (
        _by_total(naturals, "banker_two")
        .join(thirds, how="cross")
        .join(
            rules, on=["ruleset", "banker_two", "player_third"], how="left", maintain_order="left"
        )
    )
    natural = pl.col("natural")
    table = table.select(
        "ruleset",
        "banker_two",
        "player_third",
        natural.alias("banker_natural"),
        (~natural & pl.col("banker_draws")).alias("banker_draws"),
        pl.when(natural).then("natural_citation").otherwise("citation").alias("banker_citation"),
        pl.when(natural).then(pl.lit("high")).otherwise("severity").alias("banker_severity"),
        pl.when(natural).then("natural_rule").otherwise("rule").alias("banker_rule"),
    )
    _refuse_gaps(table, "banker_draws", "no Banker cell for a two-card total")
    return table


def _refuse_gaps(table: pl.DataFrame, column: str, what: str) -> None:
    # A pack's rules cover totals 0-7; a total above that must then be a Natural.
    gaps = table.filter(pl.col(column).is_null())
    if gaps.height:
        first = gaps.row(0, named=True)
        raise ValueError(f"{first['ruleset']}: {what}: {first}")
