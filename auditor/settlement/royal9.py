"""Royal 9: the paytable line each Royal 9 wager's first four cards qualify for.

A hand is a Royal 9 when its first two cards are a nine and a J, Q or K (never a
ten); its combination is written face card first, as `royal9_seats` writes it
("KS9H"). The seat's Personal King-9 combinations come from `royal9_seats` where the
table has rows there, else from the pack's default chairs (the curator game's §13(i) Table
2; midi has none). The pack lists each paytable's lines in priority order and names
the predicate (`match`) each needs; a wager gets the first line it meets (INDEX
Ambiguities 21-24).
"""

from __future__ import annotations

import polars as pl

from auditor.packs.model import ROYAL9_MATCHES
from auditor.packs.tables import PackTables

FACE_RANKS = ("J", "Q", "K")


def royal9_hands() -> list[pl.Expr]:
    """Per round, the first two cards of each hand: as words ("KS 9H") and as a Royal 9
    (its combination, face card first as `royal9_seats` writes it, "KS9H", or null;
    and whether it is suited)."""
    exprs = []
    for cards, prefix, hand in (("player_cards", "p", "player"), ("banker_cards", "b", "banker")):
        c1 = pl.col(cards).list.get(0, null_on_oob=True)
        c2 = pl.col(cards).list.get(1, null_on_oob=True)
        r1, r2 = c1.str.head(1), c2.str.head(1)
        combo = (
            pl.when((r2 == "9") & r1.is_in(FACE_RANKS))
            .then(pl.concat_str(c1, c2))
            .when((r1 == "9") & r2.is_in(FACE_RANKS))
            .then(pl.concat_str(c2, c1))
            .otherwise(pl.lit(None, dtype=pl.String))
        )
        suited = combo.is_not_null() & (c1.str.slice(1, 1) == c2.str.slice(1, 1))
        exprs += [
            pl.concat_str(c1, c2, separator=" ").alias(f"_{hand}_first_two"),
            combo.alias(f"_{prefix}_combo"),
            suited.alias(f"_{prefix}_suited"),
        ]
    return exprs


def _seat_combinations(
    royal9_seats: pl.LazyFrame | None, tables: PackTables
) -> tuple[pl.LazyFrame, pl.LazyFrame, pl.LazyFrame]:
    """Seats posting each combination: per table from `royal9_seats`, per ruleset from
    the pack's default chairs (the curator game's Table 2), and the tables that have rows."""
    if royal9_seats is None:
        royal9_seats = pl.LazyFrame(
            schema={"table_id": pl.String, "seat": pl.Int8, "combo": pl.String}
        )
    explicit = royal9_seats.select("table_id", pl.col("seat").cast(pl.Int64), "combo")
    by_table = explicit.group_by("table_id", "combo").agg(pl.col("seat").unique().alias("seats"))
    has_rows = explicit.select("table_id").unique().with_columns(pl.lit(True).alias("_explicit"))
    by_ruleset = (
        tables.royal9_chairs.lazy()
        .select(
            tables.ruleset_index().alias("pack_ruleset_index"),
            pl.col("royal9_chair").alias("seat"),
            pl.col("royal9_combo").alias("combo"),
        )
        .group_by("pack_ruleset_index", "combo")
        .agg(pl.col("seat").unique().alias("seats"))
    )
    return by_table, by_ruleset, has_rows


def _royal9_line_exprs(tables: PackTables) -> dict[str, pl.Expr]:
    """The highest line the hands qualify for, its fixed amount in cents (null for a
    progressive line), whether the table's paytable is known, its citation, and the
    citation of the random award it allows with no line (null: none)."""
    p, b = pl.col("_p_combo"), pl.col("_b_combo")
    p_r9, b_r9 = p.is_not_null(), b.is_not_null()
    same = (p == b).fill_null(False)
    matches = {
        "personal_both_same": same & pl.col("_p_mine"),
        "personal_both_different": pl.col("_p_mine") & pl.col("_b_mine") & ~same,
        "personal_banker": pl.col("_b_mine"),
        "personal_player": pl.col("_p_mine"),
        "other_seat_both_same": same & pl.col("_p_other"),
        "suited_royal9_both": pl.col("_p_suited") & pl.col("_b_suited"),
        "royal9_both": p_r9 & b_r9,
        "suited_royal9_any": pl.col("_p_suited") | pl.col("_b_suited"),
        "royal9_any": p_r9 | b_r9,
    }
    assert set(matches) == set(ROYAL9_MATCHES)
    none_s, none_i = pl.lit(None, dtype=pl.String), pl.lit(None, dtype=pl.Int64)
    line, amount, known = none_s, none_i, pl.lit(False)
    random, cite = none_s, none_s
    for row in tables.royal9_paytables.iter_rows(named=True):
        index = tables.ids.index(row["ruleset"])
        here = (pl.col("pack_ruleset_index") == index) & (
            pl.col("royal9_paytable") == row["paytable"]
        )
        line_of, amount_of = none_s, none_i
        for item in reversed(row["royal9_paytable_lines"]):
            hit = matches[item["match"]].fill_null(False)
            line_of = pl.when(hit).then(pl.lit(item["name"])).otherwise(line_of)
            fixed = pl.lit(item["amount_cents"], dtype=pl.Int64)
            amount_of = pl.when(hit).then(fixed).otherwise(amount_of)
        line = pl.when(here).then(line_of).otherwise(line)
        amount = pl.when(here).then(amount_of).otherwise(amount)
        known = pl.when(here).then(pl.lit(True)).otherwise(known)
        ra_cite = row["royal9_paytable_random_award_citation"]
        random = pl.when(here).then(pl.lit(ra_cite, dtype=pl.String)).otherwise(random)
        cite = pl.when(here).then(pl.lit(row["royal9_paytable_citation"])).otherwise(cite)
    return {
        "royal9_line": line,
        "royal9_amount_c": amount,
        "royal9_known": known,
        "royal9_random": random,
        "royal9_citation": cite,
    }


def royal9_lines(
    r9: pl.LazyFrame, royal9_seats: pl.LazyFrame | None, tables: PackTables
) -> pl.LazyFrame:
    """`r9` (wagers with their round's `royal9_hands`) with the line each qualifies for."""
    by_table, by_ruleset, has_rows = _seat_combinations(royal9_seats, tables)
    r9 = r9.join(has_rows, on="table_id", how="left")
    seat = pl.col("seat").cast(pl.Int64)
    for hand in ("p", "b"):
        combo = f"_{hand}_combo"
        r9 = (
            r9.join(
                by_table.rename({"combo": combo, "seats": "_table_combo_seats"}),
                on=["table_id", combo],
                how="left",
            )
            .join(
                by_ruleset.rename({"combo": combo, "seats": "_ruleset_combo_seats"}),
                on=["pack_ruleset_index", combo],
                how="left",
            )
            .with_columns(
                pl.when(pl.col("_explicit").fill_null(False))
                .then(pl.col("_table_combo_seats"))
                .otherwise(pl.col("_ruleset_combo_seats"))
                .alias("_seats")
            )
            .with_columns(
                pl.col("_seats").list.contains(seat).fill_null(False).alias(f"_{hand}_mine")
            )
            .with_columns(
                (
                    pl.col("_seats").list.len().fill_null(0)
                    > pl.col(f"_{hand}_mine").cast(pl.UInt32)
                ).alias(f"_{hand}_other")
            )
            .drop("_table_combo_seats", "_ruleset_combo_seats", "_seats")
        )
    lines = _royal9_line_exprs(tables)
    return r9.with_columns(**lines).drop(
        "_explicit", *(f"_{h}_{k}" for h in "pb" for k in ("combo", "suited", "mine", "other"))
    )
