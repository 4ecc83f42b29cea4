"""Every combination of the six card values (P1 P2 B1 B2 P3 B3), for every pack.

The vectorized replay must agree with a plain reference written separately from each
regulation's text: rounds dealt the reference's way give no draw finding, and each
round with one hand's draw flipped gives exactly the finding the reference expects.
"""

from __future__ import annotations

import functools

import numpy as np
import polars as pl
import pytest

from auditor.packs.model import load_all
from auditor.replay.checks import ROUND_CHECKS
from auditor.replay.derive import replay

# At volume: every ordered six-card deal of each ruleset, a million rounds each
# (`pytest -m "not e2e"` leaves it out).
pytestmark = pytest.mark.e2e

RULESETS = ("ma-baccarat", "ma-midi-baccarat", "md-mini-baccarat", "ma-chemin-de-fer")
RANK_OF_VALUE = ["K", "A", "2", "3", "4", "5", "6", "7", "8", "9"]


# ---- the reference, from the regulation texts ----------------------------------------


def player_rule(ruleset: str, player: int, banker: int) -> str:
    if player >= 8 or banker >= 8:  # a Natural: no more cards (§11(a), .10A, CdF §8(a)(4), (b))
        return "stand"
    if ruleset == "ma-chemin-de-fer":  # §8(a)(1)-(3): 0-4 draw, 5 option, 6-7 stay
        return "draw" if player <= 4 else "either" if player == 5 else "stand"
    return "draw" if player <= 5 else "stand"  # §11(b), §10(b), .10B


def table_1(banker: int, third: int) -> bool:
    """ma-baccarat §11(c)(2) with Table 1 (midi §10(c)(2), Chemin de Fer Table 3)."""
    if banker <= 2:
        return True
    if banker == 3:
        return third != 8
    if banker == 4:
        return 2 <= third <= 7
    if banker == 5:
        return 4 <= third <= 7
    if banker == 6:
        return third in (6, 7)
    return False


def maryland_long_hand(banker: int, third: int) -> bool:
    """COMAR 36.05.17.10E, item by item, keyed on the Player's third card."""
    if banker < 3:  # .10E(1)
        return True
    if banker == 7:  # .10E(2)
        return False
    draws_on = {  # .10E(3)(a)-(j): the Banker totals that draw
        0: {3},
        1: {3},
        2: {3, 4},
        3: {3, 4},
        4: {3, 4, 5},
        5: {3, 4, 5},
        6: {3, 4, 5, 6},
        7: {3, 4, 5, 6},
        8: set(),
        9: {3},
    }
    return banker in draws_on[third]


@functools.cache
def banker_rule(ruleset: str, player: int, banker: int, third: int | None) -> bool:
    if player >= 8 or banker >= 8:
        return False
    if third is None:  # Player stood: draw 0-5, stand 6-7 (§11(c)(1), .10D; CdF reading 1)
        return banker <= 5
    if ruleset == "md-mini-baccarat":
        return maryland_long_hand(banker, third)
    return table_1(banker, third)


# ---- the combinations ----------------------------------------------------------------


def all_combinations() -> dict[str, np.ndarray]:
    grid = np.indices((10,) * 6).reshape(6, -1).astype(np.int8)
    return dict(zip(("p1", "p2", "b1", "b2", "p3", "b3"), grid, strict=True))


def reference_draws(ruleset: str, v: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Whether the Player and the Banker draw, per the reference, for every combination."""
    player_two = (v["p1"] + v["p2"]) % 10
    banker_two = (v["b1"] + v["b2"]) % 10
    rule = np.array(
        [[player_rule(ruleset, p, b) for b in range(10)] for p in range(10)], dtype=object
    )[player_two, banker_two]
    # The Dominant Player's option on 5 is exercised both ways, split by the Banker's card.
    player_draws = (rule == "draw") | ((rule == "either") & (v["b3"] % 2 == 0))
    table = np.array(
        [
            [
                [banker_rule(ruleset, p, b, t if t < 10 else None) for t in range(11)]
                for b in range(10)
            ]
            for p in range(10)
        ]
    )
    third_index = np.where(player_draws, v["p3"], 10)
    banker_draws = table[player_two, banker_two, third_index]
    return player_draws, banker_draws


def rounds_frame(ruleset: str, v, player_draws, banker_draws) -> pl.LazyFrame:
    card_of_value = pl.Series([f"{rank}S" for rank in RANK_OF_VALUE])
    cards = {k: card_of_value.gather(a).alias(k) for k, a in v.items()}
    # Correct totals and outcome, so that only the draws are under test.
    player_total = (v["p1"] + v["p2"] + v["p3"] * player_draws) % 10
    banker_total = (v["b1"] + v["b2"] + v["b3"] * banker_draws) % 10
    outcome = np.where(
        player_total > banker_total,
        "player",
        np.where(player_total < banker_total, "banker", "tie"),
    )
    frame = pl.DataFrame(cards).with_columns(
        pl.Series("player_draws", player_draws),
        pl.Series("banker_draws_", banker_draws),
        pl.Series("player_total", player_total.astype(np.int8)),
        pl.Series("banker_total", banker_total.astype(np.int8)),
        pl.Series("outcome", outcome),
    )
    return frame.lazy().select(
        pl.lit("T").alias("table_id"),
        pl.lit(ruleset).alias("shoe_id"),
        pl.int_range(pl.len()).cast(pl.String).alias("round_id"),
        pl.lit("regular").alias("kind"),
        pl.when(pl.col("player_draws"))
        .then(pl.concat_list("p1", "p2", "p3"))
        .otherwise(pl.concat_list("p1", "p2"))
        .alias("player_cards"),
        pl.when(pl.col("banker_draws_"))
        .then(pl.concat_list("b1", "b2", "b3"))
        .otherwise(pl.concat_list("b1", "b2"))
        .alias("banker_cards"),
        pl.col("player_total"),
        pl.col("banker_total"),
        pl.col("outcome"),
        pl.lit(None, dtype=pl.String).alias("ez_event"),
    )


def draw_codes(ruleset: str, rounds: pl.LazyFrame) -> pl.DataFrame:
    """(round_id, rule) for every draw check the replay flags, by the checks' own conditions.

    The conditions are the registered checks' (`ROUND_CHECKS`); the formatting of a
    million messages is left to the YAML cases, which run the whole pipeline.
    """
    options = pl.LazyFrame({"shoe_id": [ruleset], "ruleset": [ruleset], "ez_baccarat": [False]})
    packs = load_all()
    draw_checks = [(c.code, build().when) for c, build in ROUND_CHECKS.checks if c.family == "DRW"]
    flags = replay(rounds, options, packs).select(
        pl.col("round_id").cast(pl.Int64),
        *(when.fill_null(False).alias(code) for code, when in draw_checks),
    )
    return (
        flags.unpivot(index="round_id", variable_name="rule", value_name="flagged")
        .filter(pl.col("flagged"))
        .select("round_id", "rule")
        .collect()
    )


@pytest.fixture(scope="module")
def combinations():
    return all_combinations()


@pytest.mark.parametrize("ruleset", RULESETS)
def test_rounds_dealt_by_the_reference_have_no_draw_finding(ruleset, combinations):
    player, banker = reference_draws(ruleset, combinations)
    found = draw_codes(ruleset, rounds_frame(ruleset, combinations, player, banker))
    assert found.height == 0, found.head(5).to_dicts()


@pytest.mark.parametrize("ruleset", RULESETS)
def test_every_flipped_banker_draw_is_found(ruleset, combinations):
    player, banker = reference_draws(ruleset, combinations)
    found = draw_codes(ruleset, rounds_frame(ruleset, combinations, player, ~banker))
    expected = np.where(banker, "DRW004", "DRW003")
    got = np.full(len(expected), "", dtype=object)
    got[found["round_id"].to_numpy()] = found["rule"].to_numpy()
    assert found.height == len(expected)
    assert (got == expected).all()


@pytest.mark.parametrize("ruleset", RULESETS)
def test_every_flipped_player_draw_is_found_unless_optional(ruleset, combinations):
    player, banker = reference_draws(ruleset, combinations)
    flipped = ~player
    found = draw_codes(ruleset, rounds_frame(ruleset, combinations, flipped, banker))
    player_found = found.filter(pl.col("rule").is_in(["DRW001", "DRW002"]))
    player_two = (combinations["p1"] + combinations["p2"]) % 10
    banker_two = (combinations["b1"] + combinations["b2"]) % 10
    optional = np.array(
        [[player_rule(ruleset, p, b) == "either" for b in range(10)] for p in range(10)]
    )[player_two, banker_two]
    expected = np.where(optional, "", np.where(flipped, "DRW001", "DRW002"))
    got = np.full(len(expected), "", dtype=object)
    got[player_found["round_id"].to_numpy()] = player_found["rule"].to_numpy()
    assert (got == expected).all()
    assert player_found.height == int((~optional).sum())
