"""What the replay decided for the rounds a page shows, so that a finding's evidence
explains the very decision the finding was based on.

The audit writes findings, not the replay's decision columns; so they are derived again
here by the replay itself (`auditor.replay.rounds.replay`): the same expressions over
the same packs' game (`auditor.packs.game`), run over the few rounds a page shows
instead of a night's. No rule is read a second way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import polars as pl

from auditor.contract import OUTCOMES
from auditor.packs.game import game
from auditor.packs.model import RulePack
from auditor.replay.rounds import ordered_decisions, replay

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
