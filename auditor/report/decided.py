"""What the replay decided for the rounds a page shows, and those decisions step by step
for a person: a finding's evidence explains the very decision the finding was based on.

The audit writes findings, not the replay's decision columns; so they are derived again
here by the replay itself (`auditor.replay.derive.replay`): the same expressions over
the same packs' game (`auditor.packs.game`), run over the few rounds a page shows
instead of a night's. No rule is read a second way.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import polars as pl

from auditor.contract import OUTCOMES
from auditor.packs.game import PLAYER_STOOD, game
from auditor.packs.model import RulePack
from auditor.replay.derive import ordered_decisions, replay

# The replay's columns a page shows: card values, counts, decisions and their rules.
DECIDED = (
    "round_id",
    *(f"{hand}{i}" for hand in "pb" for i in (1, 2, 3)),
    "player_two",
    "banker_two",
    "third_key",
    "player_final",
    "banker_final",
    "player_natural",
    "banker_natural",
    "natural_hand",
    "player_must_draw",
    "player_must_stand",
    "player_citation",
    "banker_draws",
    "banker_citation",
    "banker_rule",
    "totals_citation",
    "outcome_citation",
    "player_value_citation",
    "banker_value_citation",
    "expected_outcome",
)
DECISION_TEXTS = (
    "natural_hand",
    "player_citation",
    "banker_citation",
    "totals_citation",
    "outcome_citation",
)
ROUND_COLUMNS = ("round_id", "shoe_id", "player_cards", "banker_cards")
OPTION_COLUMNS = ("shoe_id", "ruleset", "ez_baccarat")


def replayed(rounds: pl.DataFrame, packs: Mapping[str, RulePack]) -> dict[str, dict[str, Any]]:
    """The replay's decisions for each of `rounds` (with their shoe's `ruleset` and
    `ez_baccarat`) by round id; a round under a ruleset none of `packs` gives has none."""
    known = rounds.filter(pl.col("ruleset").is_in(list(packs)))
    if known.is_empty():
        return {}
    options = known.select(OPTION_COLUMNS).unique("shoe_id", keep="first", maintain_order=True)
    decided = replay(known.select(ROUND_COLUMNS).lazy(), options.lazy(), packs).collect()
    texts = ordered_decisions(packs).select("decision_key", *DECISION_TEXTS)
    banker_rules = game(packs).banker.select(
        "ruleset", "banker_two", pl.col("player_third").alias("third_key"), "banker_rule"
    )
    first_ranks = (
        pl.col(f"{hand}_cards").list.first().str.slice(0, 1).alias(f"_{hand}_rank")
        for hand in ("player", "banker")
    )
    shown = (
        decided.with_columns(first_ranks)
        .join(texts, on="decision_key", how="left", maintain_order="left")
        .join(banker_rules, on=["ruleset", "banker_two", "third_key"], how="left")
        .join(_value_citations(packs, "player"), on=["ruleset", "_player_rank"], how="left")
        .join(_value_citations(packs, "banker"), on=["ruleset", "_banker_rank"], how="left")
        .with_columns(
            pl.col("expected_outcome_code")
            .replace_strict(dict(enumerate(OUTCOMES)), return_dtype=pl.String)
            .alias("expected_outcome")
        )
    )
    return {row["round_id"]: row for row in shown.select(DECIDED).iter_rows(named=True)}


def _value_citations(packs: Mapping[str, RulePack], hand: str) -> pl.DataFrame:
    """The rule giving the point value of each rank, keyed by the rank of the hand's
    first card (`_player_rank`, `_banker_rank`): the rule a page cites for the count."""
    return game(packs).card_values.select(
        "ruleset",
        pl.col("rank").alias(f"_{hand}_rank"),
        pl.col("card_value_citation").alias(f"{hand}_value_citation"),
    )


# ---- the drawing rules, step by step ----------------------------------------------------


@dataclass(frozen=True)
class Step:
    text: str
    cite: str | None = None
    ok: bool | None = None  # False: the log departs from the rule here


def draw_steps(r: Mapping[str, Any], decided: Mapping[str, Any] | None) -> list[Step]:
    """The replay's decisions for the round (`decided`: a row of `replayed`), each
    with the rule it follows and whether the log agrees."""
    player, banker = list(r.get("player_cards") or []), list(r.get("banker_cards") or [])
    if decided is None:
        return [Step("The ruleset of this round's shoe is not known: no rule to replay.")]
    if len(player) < 2 or len(banker) < 2 or len(player) > 3 or len(banker) > 3:
        return [
            Step(
                f"{len(player)} Player and {len(banker)} Banker card(s) logged "
                f"({r.get('kind')} round): the drawing rules need two or three each."
            )
        ]
    pv = [decided[f"p{i + 1}"] for i in range(len(player))]
    bv = [decided[f"b{i + 1}"] for i in range(len(banker))]
    if None in pv or None in bv:
        return [Step("A card of this round is not a card of the deck: no rule to replay.")]
    p2, b2 = decided["player_two"], decided["banker_two"]
    steps = [
        Step(
            f"Player's first two cards {player[0]} {player[1]}: {pv[0]} + {pv[1]} counts {p2}",
            decided["player_value_citation"],
        ),
        Step(
            f"Banker's first two cards {banker[0]} {banker[1]}: {bv[0]} + {bv[1]} counts {b2}",
            decided["banker_value_citation"],
        ),
    ]
    player_drew, banker_drew = len(player) == 3, len(banker) == 3
    if decided["natural_hand"] is not None:
        steps.append(_natural_step(decided, player_drew or banker_drew))
    else:
        steps += _draw_steps(decided, player, banker)
    steps += _result_steps(r, decided)
    return steps


def _natural_step(decided: Mapping[str, Any], drew: bool) -> Step:
    hands = (("Player", "player_two", "player_natural"), ("Banker", "banker_two", "banker_natural"))
    who = " and ".join(
        f"{hand} {decided[total]}" for hand, total, natural in hands if decided[natural]
    )
    logged = "; yet a third card was dealt" if drew else ""
    # A Natural stands both hands, citing the Naturals' rule for each.
    return Step(
        f"A Natural ({who}): neither hand draws{logged}", decided["player_citation"], not drew
    )


def _draw_steps(decided: Mapping[str, Any], player: list[str], banker: list[str]) -> list[Step]:
    """The Player's decision, then the Banker's given the Player's third card or stand."""
    must_draw, must_stand = decided["player_must_draw"], decided["player_must_stand"]
    says = "draw" if must_draw else "stand" if must_stand else "draw or stand"
    player_drew, banker_drew = len(player) == 3, len(banker) == 3
    did = f"the Player drew {player[2]}" if player_drew else "the Player stood"
    either = not must_draw and not must_stand
    player_step = Step(
        f"Player {decided['player_two']}: the rules say {says}; {did}",
        decided["player_citation"],
        either or must_draw == player_drew,
    )
    third = decided["third_key"]
    after = "Player stood" if third == PLAYER_STOOD else f"Player's third card {third}"
    says = "draw" if decided["banker_draws"] else "stand"
    did = f"the Banker drew {banker[2]}" if banker_drew else "the Banker stood"
    banker_step = Step(
        f"Banker {decided['banker_two']}, {after}: {decided['banker_rule']} says {says}; {did}",
        decided["banker_citation"],
        decided["banker_draws"] == banker_drew,
    )
    return [player_step, banker_step]


def _result_steps(r: Mapping[str, Any], decided: Mapping[str, Any]) -> list[Step]:
    """The final counts and the outcome, the replay's beside the log's."""
    pf, bf = decided["player_final"], decided["banker_final"]
    counts = Step(
        f"Final counts: Player {pf}, Banker {bf}; logged Player "
        f"{r.get('player_total')}, Banker {r.get('banker_total')}",
        decided["totals_citation"],
        pf == r.get("player_total") and bf == r.get("banker_total"),
    )
    if r.get("kind") == "void":
        return [counts, Step("The round is logged void: every wager is returned", None, None)]
    winner = decided["expected_outcome"]
    said = "a tie" if winner == "tie" else f"the {winner.title()} wins"
    outcome = Step(
        f"By the cards {said}; logged outcome: {r.get('outcome')}",
        decided["outcome_citation"],
        winner == r.get("outcome"),
    )
    return [counts, outcome]
