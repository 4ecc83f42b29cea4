"""The packs' table form: one row per ruleset (and per ruleset x bet, call, size, percent,
paytable key), one naming rule, and keys that decode to what they encode."""

from __future__ import annotations

import polars as pl
import pytest

from auditor.contract import BETS, CALLS, DRAGON_BONUS_PAYTABLES
from auditor.packs.loaded import builtin_packs
from auditor.packs.procedures import PROCEDURES
from auditor.packs.tables import (
    CALL_SLOTS,
    NB,
    ODDS_KEYS,
    PERCENTS,
    SIZES,
    pack_tables,
    requires_code,
    requires_option,
)

PACKS = builtin_packs()
TABLES = pack_tables(PACKS)
RULESETS = tuple(PACKS)


def test_built_once_per_set_of_packs():
    assert pack_tables(builtin_packs()) is TABLES


@pytest.mark.parametrize("ruleset", RULESETS)
def test_one_pack_alone_has_the_same_rows_as_among_all(ruleset):
    # A rule no pack of the set gives (Royal 9's limits where one pack offers no Royal 9)
    # is a typed column of nulls, not a second column of text.
    alone = pack_tables({ruleset: PACKS[ruleset]}).rulesets
    among = TABLES.rulesets.filter(pl.col("ruleset") == ruleset)
    assert alone.schema["royal9_limits_seats"] == pl.List(pl.Int32)
    assert alone.schema["cover_card_min_from_back"] == pl.Int32
    common = [c for c in among.columns if c in alone.columns and c != "pack_ruleset_index"]
    assert len(common) > 50
    among = among.select(common)
    assert alone.select(common).cast(dict(among.schema)).equals(among)


def test_frames_are_dense_and_keyed_by_ruleset():
    n = len(RULESETS)
    sizes = {
        "rulesets": n,
        "bets": n * NB,
        "calls": n * NB * CALL_SLOTS,
        "sizes": n * SIZES,
        "steps": n * PERCENTS,
        "paytables": n * len(DRAGON_BONUS_PAYTABLES) * ODDS_KEYS,
        # the Banker's grid: two-card total 0-7 x Player third card 0-9 or stood
        "draw_cells": n * 8 * 11,
        "player_cells": n * 8,
    }
    for name, height in sizes.items():
        frame = getattr(TABLES, name)
        assert frame.height == height, name
        assert frame.columns[0] == "ruleset", name
        assert tuple(frame["ruleset"].unique(maintain_order=True)) == RULESETS, name
    assert TABLES.ids == RULESETS
    # Royal 9: a row per paytable (its lines in priority order) and per default chair.
    for ruleset, pack in PACKS.items():
        royal9 = pack.payouts.royal9
        rows = TABLES.royal9_paytables.filter(pl.col("ruleset") == ruleset)
        assert rows["paytable"].to_list() == list(royal9.paytables if royal9 else [])
        for row in rows.iter_rows(named=True):
            lines = royal9.paytables[row["paytable"]].lines
            assert [line["name"] for line in row["royal9_paytable_lines"]] == [
                line.name for line in lines
            ]
        chairs = TABLES.royal9_chairs.filter(pl.col("ruleset") == ruleset)
        expected = royal9.seat_combinations.chairs if royal9 else None
        assert chairs.height == sum(len(c) for c in (expected or {}).values())


def test_one_naming_rule():
    columns = set(TABLES.rulesets.columns)
    # Every procedure under its own name: its citation, and each of its parameters
    # (but a table of its own, the discards by rank).
    for name, params in PROCEDURES.items():
        assert f"{name}_citation" in columns
        for param in params:
            assert f"{name}_{param}" in columns or param == "plus_card_value"
    frames = (TABLES.rulesets, TABLES.bets, TABLES.paytables)
    for column in (c for frame in frames for c in frame.columns):
        assert "cite" not in column or column.endswith("_citation"), column
    # The citations are "ruleset ref", of the ruleset of their row.
    for frame in frames:
        for column in (c for c in frame.columns if c.endswith("_citation")):
            rows = frame.filter(pl.col(column).is_not_null())
            pairs = zip(rows["ruleset"], rows[column], strict=True)
            assert all(c.startswith(f"{r} ") for r, c in pairs), column


def test_a_rule_off_keeps_its_citation_and_in_force_says_so():
    rows, in_force = TABLES.rulesets, TABLES.rulesets_in_force()
    assert in_force.columns == rows.columns
    for ruleset, pack in PACKS.items():
        r = RULESETS.index(ruleset)
        for name in PROCEDURES:
            procedure = pack.procedure(name)
            given = pack.cite(procedure.cite) if procedure else None
            assert rows.row(r, named=True)[f"{name}_citation"] == given
            on = procedure is not None and getattr(procedure, "value", True)
            assert in_force.row(r, named=True)[f"{name}_citation"] == (given if on else None)
    # Every switched-off rule's parameters go with its citation.
    last = in_force.filter(~pl.col("last_hand_after_cover_value"))
    assert last["last_hand_after_cover_hands_after"].is_null().all()
    # A rule without a switch is in force wherever the pack gives it.
    frame = pl.DataFrame({"pack_ruleset_index": list(range(len(RULESETS)))})
    suivi = frame.select(TABLES.r_in_force("suivi"))["suivi_citation"].to_list()
    assert suivi == rows["suivi_citation"].to_list()


@pytest.mark.parametrize("ruleset", RULESETS)
def test_bet_rows_match_the_pack(ruleset):
    pack, r = PACKS[ruleset], RULESETS.index(ruleset)
    for b, bet in enumerate(BETS):
        key = r * NB + b
        assert TABLES.decode_bet_key(key) == (ruleset, bet)
        row = TABLES.bets.row(key, named=True)
        entry = pack.permitted.get(bet)
        assert (row["ruleset"], row["bet"]) == (ruleset, bet)
        assert row["bet_in_ruleset"] == (entry is not None)
        if entry is not None:
            assert requires_option(row["bet_requires"]) == entry.requires
            assert row["bet_citation"] == pack.cite(entry.cite)


def test_keys_round_trip():
    frame = pl.DataFrame(
        {
            "ruleset": [RULESETS[-1], RULESETS[0]],
            "bet": ["tie", "banker"],
            "call": [None, CALLS[0]],
            "_paytable": [len(DRAGON_BONUS_PAYTABLES) - 1, 0],
        }
    )
    coded = frame.with_columns(TABLES.ruleset_index().alias("pack_ruleset_index")).with_columns(
        TABLES.bet_key(b=pl.col("bet").cast(pl.Enum(BETS)).to_physical().cast(pl.Int32)).alias(
            "pack_bet_row"
        ),
        TABLES.paytable_key(pl.col("_paytable")).alias("_table"),
    )
    coded = coded.with_columns(TABLES.call_slot().alias("_slot"))
    for row in coded.iter_rows(named=True):
        assert TABLES.ruleset_of(row["pack_ruleset_index"]) == row["ruleset"]
        assert TABLES.decode_bet_key(row["pack_bet_row"]) == (row["ruleset"], row["bet"])
        assert TABLES.decode_call_slot(row["_slot"]) == (row["ruleset"], row["bet"], row["call"])
        assert TABLES.decode_paytable_key(row["_table"]) == (
            row["ruleset"],
            DRAGON_BONUS_PAYTABLES[row["_paytable"]],
        )
        call_row = TABLES.calls.row(row["_slot"], named=True)
        assert (call_row["ruleset"], call_row["bet"], call_row["call"]) == (
            row["ruleset"],
            row["bet"],
            row["call"],
        )
    for option in (None, "ez_baccarat", "royal9_paytable"):
        assert requires_option(requires_code(option)) == option


def test_lookups_read_the_rows_they_encode():
    r = RULESETS.index("ma-baccarat")
    pack = PACKS["ma-baccarat"]
    frame = pl.DataFrame(
        {"pack_ruleset_index": [r], "pack_bet_row": [r * NB + BETS.index("banker")]}
    )
    got = frame.select(
        TABLES.r("commission_percents_min").alias("low"),
        TABLES.rb("payout_odds").alias("odds"),
        TABLES.commission_step(pl.lit(5)).alias("step"),
    ).row(0, named=True)
    assert got == {
        "low": min(pack.commission.percents.values),
        "odds": pack.payouts.banker.odds,
        "step": pack.commission.rounding.step_cents.get(5),
    }
