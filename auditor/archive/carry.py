"""Reviews follow their finding: when a run is added, each of its findings that has no
review of its own but whose identity a reviewed finding shares takes that review over.

A finding's id hashes its identity (rule, named entity, discriminator: `findings.table`),
so a night re-audited under new wording keeps its ids and its reviews without this. What
it is for is a change of id scheme: a run of scheme 1 (whose ids hashed the message) and
a re-audit of the same night under scheme 2 name the same discrepancies by other ids. The
review carried over is a new ledger record (appended, chained and signed as any other),
by `auditor archive add`, whose note names the finding and record it came from, so the
ledger keeps saying who decided what.

The identity of a reviewed finding is the one its record states, or, for a record written
before records stated it, the one the run it was read from states. A finding with a
discriminator matches the finding with the same one; a finding without (its check needs
none, or its run, of scheme 1, stated none) matches the new run's finding of the same rule
and entity when each side has exactly one such finding.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import polars as pl

from auditor.archive.ledger import (
    ReviewInput,
    append_reviews,
    ledger_bytes,
    ledger_path,
    run_identities,
)
from auditor.archive.ledger_format import IDENTITY_FIELD, IDENTITY_KEYS
from auditor.findings.words import count_text

FINDINGS = "set/findings.parquet"
CARRIED_BY = "auditor archive add"
ENTITY = IDENTITY_KEYS[:-1]  # rule and entity, without the discriminator


def carry_reviews(archive: Path, run_folder: Path, notify: Callable[[str], None]) -> list[dict]:
    """Append, for each finding of the run in `run_folder` without a review of its own,
    the latest review of the reviewed finding with its identity; returns the records
    written."""
    latest = _latest_reviews(archive)
    if latest.is_empty():
        return []
    added = run_identities(run_folder / FINDINGS)
    unreviewed = added.filter(~pl.col("finding_id").is_in(latest["finding_id"].implode()))
    if unreviewed.is_empty():
        return []
    reviewed = _reviewed_identities(archive, latest)
    carried = _matched(unreviewed, reviewed)
    if carried.is_empty():
        return []
    reviews = [
        ReviewInput(
            row["finding_id"],
            row["status"],
            f"carried over from finding {row['from_id']} (review seq {row['seq']} by "
            f"{row['by']}), the same {row['rule']} on the same entity: {row['note']}",
            CARRIED_BY,
        )
        for row in carried.sort("finding_id").iter_rows(named=True)
    ]
    records = append_reviews(archive, reviews, notify=notify)
    if records:
        notify(
            f"{count_text(len(records), 'review', 'reviews')} carried over to findings of run "
            f"{run_folder.name} "
            "that share their identity with a reviewed finding (records "
            f"{records[0]['seq']} to {records[-1]['seq']})"
        )
    return records


def _latest_reviews(archive: Path) -> pl.DataFrame:
    """Each reviewed finding's latest record (the ledger's chain is `verify`'s to check)."""
    data = ledger_bytes(ledger_path(archive))
    if not data.strip():
        return pl.DataFrame()
    records = pl.read_ndjson(data, infer_schema_length=None)
    if IDENTITY_FIELD not in records.columns:
        records = records.with_columns(pl.lit(None).alias(IDENTITY_FIELD))
    return (
        records.sort("seq")
        .group_by("finding_id", maintain_order=True)
        .last()
        .select("seq", "finding_id", "run_id", "status", "note", "by", IDENTITY_FIELD)
    )


def _reviewed_identities(archive: Path, latest: pl.DataFrame) -> pl.DataFrame:
    """Each reviewed finding's identity and latest review: the identity its record
    states, or, for a record written before records stated it, its run's."""
    frames = []
    stated = latest.filter(pl.col(IDENTITY_FIELD).is_not_null())
    if not stated.is_empty():
        frames.append(stated.unnest(IDENTITY_FIELD).select(*_REVIEW_COLUMNS, *IDENTITY_KEYS))
    for (run_id,), group in latest.filter(pl.col(IDENTITY_FIELD).is_null()).group_by("run_id"):
        path = archive / "runs" / str(run_id) / FINDINGS
        if path.is_file():
            found = run_identities(path, group["finding_id"])
            frames.append(group.select(_REVIEW_COLUMNS).join(found, on="finding_id"))
    if not frames:
        return pl.DataFrame()
    return pl.concat([f.cast({k: pl.String for k in IDENTITY_KEYS}) for f in frames])


_REVIEW_COLUMNS = ("seq", "finding_id", "status", "note", "by")


def _matched(unreviewed: pl.DataFrame, reviewed: pl.DataFrame) -> pl.DataFrame:
    """Each unreviewed finding with the latest review of a reviewed one of its identity:
    the same discriminator where the reviewed one states one; where it states none (its
    check needs none, or its run was of scheme 1), the same rule and entity when that
    names one finding on each side."""
    if reviewed.is_empty():
        return pl.DataFrame()
    reviewed = reviewed.rename({"finding_id": "from_id"})
    exact = unreviewed.join(
        reviewed.filter(pl.col("discriminator").is_not_null()), on=list(IDENTITY_KEYS)
    )
    by_entity = unreviewed.filter(pl.len().over(ENTITY) == 1).join(
        reviewed.filter(pl.col("discriminator").is_null() & (pl.len().over(ENTITY) == 1)).drop(
            "discriminator"
        ),
        on=list(ENTITY),
        nulls_equal=True,
    )
    both = pl.concat([exact, by_entity], how="diagonal_relaxed").sort("seq")
    # One review for each finding: the latest of those it matched.
    return both.group_by("finding_id", maintain_order=True).last()
