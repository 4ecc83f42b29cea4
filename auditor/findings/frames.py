"""The frames checks are emitted over, by name: a check declares the one its `CheckSet` is
emitted over (`Check.frame`) and the columns of it that it reads (`Check.reads`).

A frame's columns are those its rows carry when the checks' expressions are evaluated:
the stage's frame as built, and the columns its `enrich` function adds to the flagged
rows (citations, words), since the citation, message and the other texts of a finding are
evaluated after it. A check declares both kinds alike; what tells them apart is where
the stage adds them, not what the check reads. Several check sets may share a frame
(the payout, commission and permission checks are all emitted over the settled wagers).
"""

from __future__ import annotations

# Stage 3: one row per replayed round (`replay.derive.replay`).
ROUND_FRAME = "round"
# Stage 4: one row per settled main or side wager with its permission columns
# (`settlement.permit.permit_columns` over `settlement.correct.settle`).
WAGER_FRAME = "wager"
# Stage 4: one row per wager that rolls winnings over (`settlement.rollover.rollovers`).
ROLLOVER_FRAME = "rollover"

# Stage 5, shoes: one row per shoe (`procedures.shoe.shoe_frame`).
SHOE_FRAME = "shoe"
# The shoe frame with the cards each shoe's rounds took (`procedures.cards`).
COUNTED_SHOE_FRAME = "counted_shoe"
# The first card out of place in a round of a shoe whose sequence did not match.
SEQUENCE_MISMATCH_FRAME = "sequence_mismatch"
# The rounds of reader shoes whose cover card flag contradicts the card sequence.
COVER_FLAG_FRAME = "cover_flag"
# One row per shoe with the hands dealt after the cover card (`procedures.shoe_end`).
AFTER_COVER_FRAME = "after_cover"
# One row per shoe with a void round, with what was dealt after it (`procedures.shoe_end`).
AFTER_VOID_FRAME = "after_void"
# One row per void round of a reader shoe, with the cards its card sequence holds after
# the round's hands (`procedures.shoe_end`).
VOID_ROUND_FRAME = "void_round"
# One row per round with discards the ruleset counts (`procedures.discards`).
DISCARD_FRAME = "discard"

# Stage 5, tables: one row per tables row (options in effect from a moment).
TABLE_FRAME = "table"
# One row per table, Royal 9 chair and what is wrong with it (`procedures.royal9_chairs`).
CHAIR_FRAME = "chair"
# One row per commission collection with its shoe's collection mode (`procedures.table`).
COLLECTION_FRAME = "collection"
# One row per marker shoe, seat and patron: commission owed and collected
# (`procedures.marker.marker_frame`).
MARKER_FRAME = "marker"

# Stage 5, rounds: one row per round with who holds the shoe (`procedures.table`).
HOLDER_ROUND_FRAME = "holder_round"
# One row per round of a mandatory-pass table beside the round before it
# (`procedures.passing.pass_frame`).
PASS_FRAME = "pass"
# One row per Chemin de Fer round with its Bank (`procedures.bank.bank_rounds`).
BANK_ROUND_FRAME = "bank_round"
# One row per Chemin de Fer wager checked against its Bank (`procedures.bank`).
BANK_WAGER_FRAME = "bank_wager"
# One row per full call (banco) beside its round's Bank (`procedures.calls`).
WHOLE_BANK_CALL_FRAME = "whole_bank_call"
# One row per Chemin de Fer round with its Banker's wagers counted (`procedures.calls`).
BANKER_WAGER_ROUND_FRAME = "banker_wager_round"

# When a finding over each frame is final while the day is dealt (`auditor watch`). A
# check over a shoe's rows whole (its decks, burn, cut and cover card against its card
# sequence, the cards its rounds took, the hands after its cover card or a void round,
# its discards, its marker commission against the collections) waits for the shoe to
# close: its table's next shoe opens, or the day closes. Every other check reads a round,
# its wagers and the round before it, or a table's options, all logged by then: final
# at once. A finding once reported and changed by rows logged later is said again.
AT_ONCE = "at once"
WHEN_SHOE_CLOSES = "when its shoe closes"
SHOE_CLOSE_FRAMES = frozenset(
    {
        SHOE_FRAME,
        COUNTED_SHOE_FRAME,
        SEQUENCE_MISMATCH_FRAME,
        COVER_FLAG_FRAME,
        AFTER_COVER_FRAME,
        AFTER_VOID_FRAME,
        VOID_ROUND_FRAME,
        DISCARD_FRAME,
        MARKER_FRAME,
    }
)


def final_when(frame: str) -> str:
    """When a finding of a check over `frame` is final while the day is dealt."""
    return WHEN_SHOE_CLOSES if frame in SHOE_CLOSE_FRAMES else AT_ONCE
