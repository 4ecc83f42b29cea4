"""The game kernel (`auditor.packs.game`): built from the packs once, and what the replay,
the exact odds, the SQL macros and the evidence page read, with one number for a Player
who stood."""

from __future__ import annotations

import duckdb
import numpy as np
import polars as pl
import pytest

from auditor.odds.shoe import banker_table, player_table
from auditor.output.macros import macro_statements
from auditor.packs.game import PLAYER_STOOD, THIRD_CARDS, game, game_of
from auditor.packs.model import load_all
from auditor.replay.decisions import decision_table
from auditor.report.decided import replayed
from auditor.report.evidence import draw_steps

PACKS = load_all()
RULESETS = tuple(PACKS)


@pytest.mark.parametrize("ruleset", RULESETS)
def test_the_banker_table_is_the_packs_cells_with_stood_last(ruleset: str) -> None:
    pack = PACKS[ruleset]
    grid = game(PACKS).banker_draws(ruleset)
    assert THIRD_CARDS[-1] == PLAYER_STOOD == len(THIRD_CARDS) - 1
    for total, row in enumerate(grid):
        for third, draws in zip(THIRD_CARDS, row, strict=True):
            if total in pack.naturals.totals:
                assert draws is False
            else:
                cell = pack.banker_decision(total, None if third == PLAYER_STOOD else third)
                assert draws == cell.draws, (total, third)


@pytest.mark.parametrize("ruleset", RULESETS)
def test_the_player_table_is_the_packs_rule_and_a_natural_stands(ruleset: str) -> None:
    pack = PACKS[ruleset]
    actions = game(PACKS).player_actions(ruleset)
    for total, action in enumerate(actions):
        natural = total in pack.naturals.totals
        assert action == ("stand" if natural else pack.player_draw[total].action)


@pytest.mark.parametrize("ruleset", RULESETS)
def test_the_odds_read_the_kernel(ruleset: str) -> None:
    pack = PACKS[ruleset]
    assert (banker_table(pack) == np.array(game_of(pack).banker_draws(ruleset))).all()
    either = [a == "either" for a in game_of(pack).player_actions(ruleset)]
    assert (player_table(pack, True) & ~player_table(pack, False) == np.array(either)).all()


def test_the_replay_keys_a_stood_player_as_the_kernel_does() -> None:
    table = decision_table(PACKS)
    assert set(table["third_key"]) == set(THIRD_CARDS)
    stood = table.filter(
        pl.col("third_key") == PLAYER_STOOD, ~pl.col("player_natural"), ~pl.col("banker_natural")
    )
    for ruleset, banker, draws in stood.select("ruleset", "banker_two", "banker_draws").rows():
        assert draws == PACKS[ruleset].banker_decision(banker, None).draws


def test_the_macros_take_null_for_a_stood_player() -> None:
    with duckdb.connect() as con:
        for statement in macro_statements(PACKS):
            con.execute(statement)
        for ruleset in RULESETS:
            grid = game(PACKS).banker_draws(ruleset)
            for total in range(10):
                got = con.execute("SELECT banker_draws($r, $t, NULL)", {"r": ruleset, "t": total})
                assert got.fetchone()[0] == grid[total][PLAYER_STOOD], (ruleset, total)


def test_the_evidence_shows_the_replays_decision_for_a_stood_player() -> None:
    round_ = {
        "round_id": "R1",
        "shoe_id": "S1",
        "ruleset": "ma-baccarat",
        "ez_baccarat": False,
        "player_cards": ["3S", "4H"],
        "banker_cards": ["2D", "3C"],
        "player_total": 7,
        "banker_total": 5,
        "outcome": "player",
        "kind": "regular",
    }
    decided = replayed(pl.DataFrame([round_]), PACKS)["R1"]
    assert decided["third_key"] == PLAYER_STOOD
    texts = [step.text for step in draw_steps(round_, decided)]
    assert "Player 7: the rules say stand; the Player stood" in texts
    banker = next(t for t in texts if t.startswith("Banker 5, Player stood"))
    assert banker.endswith("says draw; the Banker stood")
    # A ruleset no pack gives: nothing replayed, and the page says so.
    unknown = replayed(pl.DataFrame([{**round_, "ruleset": "no-such-ruleset"}]), PACKS)
    assert unknown == {}
    assert draw_steps(round_, None)[0].text.startswith("The ruleset of this round's shoe")
