"""Findings: one row per discrepancy, in the contract's columns, sorted stably.

Every stage that checks something returns a frame in FINDINGS_SCHEMA; this module
concatenates and orders them so that a re-run writes the same bytes, and gives each
finding its `finding_id`: a hash of its identity (`IDENTITY`: its rule, the entity it
names and the discriminator its check declares where one entity can carry several findings
of one rule), never of its words, citation, amounts or place in the file. So the same
discrepancy has the same id in every run, whatever the partitioning, the auditor's version
or the packs' wording, and its reviews stay attached to it across re-audits.
"""

from __future__ import annotations

import hashlib

import polars as pl

from auditor.contract import MONEY

FINDINGS_SCHEMA = {
    "rule": pl.String(),
    "severity": pl.String(),
    "citation": pl.String(),
    "table_id": pl.String(),
    "shoe_id": pl.String(),
    "round_id": pl.String(),
    "wager_id": pl.String(),
    "expected": pl.String(),
    "logged": pl.String(),
    "impact": MONEY,
    "message": pl.String(),
    # What tells apart two findings of one rule on one entity (a collection of the shoe, a
    # tables row of the table, a chair's combination); null where the entity has one.
    "discriminator": pl.String(),
}

# What the auditor writes: every finding with its stable id first.
OUTPUT_SCHEMA = {"finding_id": pl.String(), **FINDINGS_SCHEMA}
SORT_KEY = ["table_id", "shoe_id", "round_id", "wager_id", "rule"]
# What makes two findings distinct: their rule, the entity they name and the check's
# discriminator. The id hashes these fields only (`with_finding_ids`); a change of scheme
# is a new FINDING_ID_SCHEME, written in each run's manifest and `runs` row.
IDENTITY = ("rule", "table_id", "shoe_id", "round_id", "wager_id", "discriminator")
FINDING_ID_SCHEME = 2
ID_SEPARATOR = "\x1f"


def empty_findings() -> pl.DataFrame:
    return pl.DataFrame(schema=FINDINGS_SCHEMA)


def combine(frames: list[pl.DataFrame]) -> pl.DataFrame:
    """All findings in one frame, in a deterministic order (table by table, shoe by shoe),
    each naming only its entity (`named_entity_only`)."""
    frames = [
        f.select(pl.col(name).cast(dtype) for name, dtype in FINDINGS_SCHEMA.items())
        for f in frames
        if f.height
    ]
    if not frames:
        return pl.DataFrame(schema=OUTPUT_SCHEMA)
    ordered = pl.concat(frames, how="vertical").sort(
        SORT_KEY, nulls_last=False, maintain_order=True
    )
    return with_finding_ids(ordered.with_columns(named_entity_only()))


def with_finding_ids(findings: pl.DataFrame) -> pl.DataFrame:
    """`findings` with `finding_id` first: the first 20 hex digits of the SHA-256 of the
    identity's fields (`IDENTITY`) joined by U+001F, a null as the empty string; in
    DuckDB, `left(sha256(concat_ws(chr(31), rule, coalesce(table_id, ''), ...,
    coalesce(discriminator, ''))), 20)` over `findings` gives every id again. SHA-256,
    not polars' hash, whose values may change between polars versions.

    Each check declares a discriminator where its frame can hold several rows of one
    entity, so two findings never share an identity. Should a check fail to, the later
    ones of a shared identity get their rank among it (by expected, logged, then message)
    appended, so that ids stay unique and a re-run still gives the same ids."""
    key = identity_text()
    ranked = findings.with_row_index("_place").sort(
        "expected", "logged", "message", "_place", nulls_last=False
    )
    repeat = pl.int_range(pl.len()).over(key)
    keyed = ranked.select(
        "_place",
        pl.when(repeat == 0).then(key).otherwise(pl.format("{}\x1f{}", key, repeat)).alias("_key"),
    ).sort("_place")["_key"]
    ids = [hashlib.sha256(text.encode()).hexdigest()[:20] for text in keyed]
    return findings.select(pl.Series("finding_id", ids, dtype=pl.String), pl.all())


def identity_text() -> pl.Expr:
    """The text a finding's id hashes: its identity's fields joined by U+001F."""
    return pl.concat_str([pl.col(c).fill_null("") for c in IDENTITY], separator=ID_SEPARATOR)


def named_entity_only() -> list[pl.Expr]:
    """The contract's rule: a finding names the most specific thing it is about, and only
    that. A wager finding keeps `wager_id` and its `round_id`, a round finding `round_id`,
    a shoe finding `shoe_id`, a table finding `table_id`; the checks carry the table and
    shoe of every finding up to here, for the order above, and this drops them."""
    no_round = pl.col("round_id").is_null()
    return [
        pl.when(no_round & pl.col("shoe_id").is_null()).then(pl.col("table_id")).alias("table_id"),
        pl.when(no_round).then(pl.col("shoe_id")).alias("shoe_id"),
    ]


ID_COLUMNS = ("table_id", "shoe_id", "round_id", "wager_id")
NO_ID = pl.lit(None, dtype=pl.String)
