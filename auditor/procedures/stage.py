"""Stage 5, procedures: the shoe checks (SHO, in `shoe` and `cards`) and the table
procedures (PRC): the end of a shoe (`shoe_end`), curator and Bank passing (`passing`),
marker commission (`marker`), the Chemin de Fer Bank (`bank`) and its calls (`calls`),
the table's own options
and who holds the shoe (`table`), the Royal 9 chairs (`royal9_chairs`),
the discards of an irregularity (`discards`). This module wires them.

Each check is a query over a whole frame; nothing loops over shoes or rounds. Sequential
rules (a pass after a loss, a stake against the previous one, who may call Suivi) sort
the rounds of each table into dealing order once and read the previous row with `shift`,
guarded by "same table". The pack of each round's ruleset is joined as a small table
(the packs' table form as its rules are in force, `PackTables.rulesets_in_force`): a
ruleset without the procedure, or that switches it off, has nulls there.

A few intermediate frames are collected as the stage is built, each once, in two waves
of independent frames: the rounds of curator and Bank tables in dealing order with the
Banker's Hand result, and the Bank tables' wagers; then the shoe frame (each shoe with
its card sequence and its rounds folded) and the Bank's rounds. Each feeds several
check sets, and polars does not reliably share a subplan that its consumers read
through different filters and projections: left lazy, each consumer would redo the
work over a million rounds (measured). The rest stays lazy and runs in the final
collect with the other stages.
"""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from auditor.findings.table import FINDINGS_SCHEMA, SORT_KEY
from auditor.input.partition import ROUND_ROW, round_bound
from auditor.packs.model import RulePack
from auditor.packs.tables import pack_tables
from auditor.procedures.bank import (
    BANK_ROUND_CHECKS,
    BANK_WAGER_CHECKS,
    bank_findings,
    bank_rounds,
    bank_wagers,
)
from auditor.procedures.calls import (
    BANKER_WAGER_CHECKS,
    BID_CHECKS,
    CALL_CHECKS,
    banker_wager_findings,
    bid_findings,
    call_findings,
)
from auditor.procedures.cards import (
    CARD_COUNT_CHECKS,
    COVER_FLAG_CHECKS,
    SEQUENCE_CHECKS,
    card_findings,
    shoe_rounds,
)
from auditor.procedures.discards import DISCARD_CHECKS, discard_findings
from auditor.procedures.frames import (
    citations,
    holder_rounds,
    holder_words,
    ids,
    in_deal_order,
    materialize,
)
from auditor.procedures.marker import MARKER_CHECKS, marker_frame
from auditor.procedures.passing import PASS_CHECKS, pass_frame
from auditor.procedures.royal9_chairs import CHAIR_CHECKS, chair_findings
from auditor.procedures.shoe import SHOE_CHECKS, shoe_findings, shoe_frame, shoe_sequences
from auditor.procedures.shoe_end import (
    LAST_HAND_CHECKS,
    VOID_CARDS_CHECKS,
    VOID_CHECKS,
    after_cover,
    after_void,
    void_cards_left,
)
from auditor.procedures.table import (
    COLLECTION_CHECKS,
    HOLDER_CHECKS,
    TABLE_CHECKS,
    collection_findings,
    holder_findings,
    table_findings,
)


def procedure_findings(
    audited: Mapping[str, pl.LazyFrame],
    replayed: pl.LazyFrame,
    options: pl.LazyFrame,
    packs: Mapping[str, RulePack],
) -> pl.LazyFrame:
    """Findings about shoes and table procedures, in a deterministic order.

    The partition as `pipeline.hold_partition` holds it: `replayed` gives the Banker's Hand
    result of the curator and Bank tables' rounds (`frames.holder_rounds`), and
    rounds and wagers are joined on `partition.ROUND_ROW`.
    """
    tables = pack_tables(packs)
    rules = tables.rulesets_in_force()
    shoes, rounds, wagers = audited["shoes"], audited["rounds"], audited["wagers"]
    # Wagers find their round by its number among the partition's rounds.
    numbered = replayed.select(ROUND_ROW, "shoe_id", "ruleset", "banker_seat").collect()
    bound = round_bound(numbered)
    # First the rounds of curator and Bank tables and the Bank tables' wagers; then the
    # shoe frame (the shoes' card sequences, the rounds folded per shoe) beside the Bank's
    # rounds.
    held, in_rounds = materialize(
        holder_rounds(
            replayed, shoes, rules, "pass_on_banker_loss_citation", "bank_stake_citation"
        ),
        bank_wagers(numbered, wagers, rules, bound),
    )
    held = in_deal_order(held)
    frame, per_round = materialize(
        shoe_frame(shoe_sequences(shoes), options, shoe_rounds(rounds), tables),
        bank_rounds(held, in_rounds.lazy(), rules, bound),
    )
    per_shoe = (
        options.select("shoe_id", "ruleset")
        .join(shoes.select("shoe_id", "table_id"), on="shoe_id", how="inner")
        .join(
            rules.lazy().select(
                "ruleset", "last_hand_after_cover_hands_after", "void_ends_shoe_citation"
            ),
            on="ruleset",
        )
        .with_columns(pl.col("void_ends_shoe_citation").is_not_null().alias("void_ends_shoe"))
        .drop("void_ends_shoe_citation")
    )
    frames = [
        *shoe_findings(frame),
        *card_findings(frame, shoes, rounds),
        LAST_HAND_CHECKS.emit(
            after_cover(rounds, per_shoe, rules),
            ids(
                pl.col("after_cover_ids").list.get(
                    pl.col("last_hand_after_cover_hands_after"), null_on_oob=True
                )
            ),
            citations(rules, "last_hand_after_cover_citation"),
        ),
        PASS_CHECKS.emit(
            pass_frame(held, rules),
            ids(pl.col("round_id")),
            citations(rules, "pass_on_banker_loss_citation", holder_words().alias("holder")),
        ),
        *bank_findings(in_rounds.lazy(), per_round, rules),
        call_findings(in_rounds.lazy(), per_round, tables),
        banker_wager_findings(held, in_rounds.lazy(), rules, tables),
        bid_findings(per_round, rules),
        MARKER_CHECKS.emit(marker_frame(audited, numbered, bound, options, rules, tables), ids()),
        table_findings(audited["tables"], rules),
        holder_findings(rounds, options, rules),
        *collection_findings(audited.get("commission_collections"), options, rules),
        *chair_findings(audited.get("royal9_seats"), audited["tables"], tables),
        discard_findings(rounds, options, tables),
    ]
    dealt_after_void = after_void(rounds, per_shoe, frame)
    if dealt_after_void is not None:
        frames.append(
            VOID_CHECKS.emit(
                dealt_after_void,
                ids(pl.col("after_void_id")),
                citations(rules, "void_ends_shoe_citation"),
            )
        )
    left_at_void = void_cards_left(rounds, per_shoe, frame)
    if left_at_void is not None:
        frames.append(
            VOID_CARDS_CHECKS.emit(
                left_at_void,
                ids(pl.col("round_id")),
                citations(rules, "void_ends_shoe_citation"),
            )
        )
    # Several findings of one rule may name the same shoe (one per seat and patron): the
    # message breaks the tie, so a re-run writes the same order.
    return (
        pl.concat(frames, how="vertical")
        .sort([*SORT_KEY, "message"], nulls_last=False, maintain_order=True)
        .select(list(FINDINGS_SCHEMA))
    )


def find(
    part: Mapping[str, pl.LazyFrame],
    replayed: pl.LazyFrame,
    options: pl.LazyFrame,
    packs: Mapping[str, RulePack],
) -> list[pl.LazyFrame]:
    """The stage's findings frames over a partition as `pipeline.hold_partition` holds it:
    the shoes' and the table procedures' (`procedure_findings`), as one frame."""
    return [procedure_findings(part, replayed, options, packs)]


# The stage's checks, for the pipeline's list of every check (`pipeline.all_checks`).
CHECK_SETS = (
    SHOE_CHECKS,
    CARD_COUNT_CHECKS,
    SEQUENCE_CHECKS,
    COVER_FLAG_CHECKS,
    LAST_HAND_CHECKS,
    VOID_CHECKS,
    VOID_CARDS_CHECKS,
    PASS_CHECKS,
    MARKER_CHECKS,
    TABLE_CHECKS,
    HOLDER_CHECKS,
    COLLECTION_CHECKS,
    CHAIR_CHECKS,
    DISCARD_CHECKS,
    BANK_WAGER_CHECKS,
    BANK_ROUND_CHECKS,
    CALL_CHECKS,
    BANKER_WAGER_CHECKS,
    BID_CHECKS,
)
