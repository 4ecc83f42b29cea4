"""One batch of the live audit: a gaming day's files so far audited by the nightly
pipeline (validation, then stages 3-5 under the same packs), its findings held until
final, and compared with those already reported.

The day's files are a dataset of links (`ARCHIVE/live/DAY/dataset/`), laid out as in the
landing folder, so that the closing audit reads the very files, under the same names,
that `auditor audit` would read in the landing folder.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from auditor.findings.frames import AT_ONCE, WHEN_SHOE_CLOSES
from auditor.findings.table import OUTPUT_SCHEMA
from auditor.packs.loaded import LoadedPacks

# What a reported finding says of itself, beside its identity: a change in any of these
# is reported as a change.
COMPARED = ("severity", "citation", "expected", "logged", "impact", "message")
FINAL_AFTER = "final"  # the JSON field that says when the finding became final
LOCATED_TABLE = "located_table_id"  # the table the finding happened at, as the catalog says


def link_files(dataset: Path, landing: Path, paths: Iterable[str]) -> None:
    """Link each landed file into the day's dataset under its own relative path."""
    for relative in paths:
        link = dataset / relative
        if os.path.lexists(link):
            continue
        link.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(landing / relative, link)


@dataclass(frozen=True)
class Audited:
    """A day's findings so far: those final, and the number still waiting for a shoe."""

    final: pl.DataFrame  # OUTPUT_SCHEMA, `final` and `located_table_id`
    waiting: int


def finals(checks: Iterable) -> dict[str, str]:
    """Each check's code and when its finding is final."""
    return {check.code: check.final for check in checks}


def audit_so_far(dataset: Path, packs: LoadedPacks | None, when: dict[str, str]) -> Audited:
    """The day's findings so far, those of checks final at once and those of shoes closed
    (their table's next shoe opened)."""
    from auditor.pipeline import find, run_validation

    validated = run_validation(dataset, packs=packs)
    findings = find(validated)
    if findings.is_empty():
        return Audited(_typed(findings), 0)
    shoes = validated.audited["shoes"].select("shoe_id", "table_id", "opened_at")
    closed = (
        shoes.with_columns(
            (pl.col("opened_at") < pl.col("opened_at").max().over("table_id")).alias("closed")
        )
        .select("shoe_id", "closed")
        .collect()
    )
    rounds = validated.audited["rounds"].select(
        "round_id", pl.col("shoe_id").alias("of_shoe"), pl.col("table_id").alias("round_table")
    )
    shoe_tables = shoes.select(pl.col("shoe_id").alias("of_shoe"), pl.col("table_id").alias("at"))
    placed = (
        findings.lazy()
        .join(rounds, on="round_id", how="left")
        .with_columns(pl.coalesce("shoe_id", "of_shoe").alias("of_shoe"))
        .join(closed.lazy().rename({"shoe_id": "of_shoe"}), on="of_shoe", how="left")
        .join(shoe_tables, on="of_shoe", how="left")
        # A finding names only its entity; the table it happened at places it for a
        # batch of some tables and for the desk.
        .with_columns(pl.coalesce("table_id", "round_table", "at").alias(LOCATED_TABLE))
        .with_columns(pl.col("rule").replace_strict(when, default=AT_ONCE).alias("when"))
        .collect()
    )
    waits = (pl.col("when") == WHEN_SHOE_CLOSES) & ~pl.col("closed").fill_null(False)
    ready = placed.filter(~waits).with_columns(
        pl.when(pl.col("when") == AT_ONCE)
        .then(pl.lit(AT_ONCE))
        .otherwise(pl.lit("its shoe closed"))
        .alias(FINAL_AFTER)
    )
    return Audited(_typed(ready), placed.filter(waits).height)


def _typed(findings: pl.DataFrame) -> pl.DataFrame:
    if FINAL_AFTER not in findings.columns:
        findings = findings.with_columns(pl.lit(AT_ONCE).alias(FINAL_AFTER))
    if LOCATED_TABLE not in findings.columns:
        findings = findings.with_columns(pl.col("table_id").alias(LOCATED_TABLE))
    return findings.select(*OUTPUT_SCHEMA, FINAL_AFTER, LOCATED_TABLE)


def as_records(findings: pl.DataFrame) -> list[dict]:
    """The findings as JSON-ready records: money as its decimal text, never a float."""
    texts = findings.with_columns(pl.col("impact").cast(pl.String))
    return texts.to_dicts()


def changes(current: list[dict], reported: dict[str, dict]) -> list[dict]:
    """What to report: each current final finding never reported (`new`) or withdrawn
    before (`again`), each whose words or amounts differ from the last report (`changed`,
    with what it `was`), and each reported one no longer found (`withdrawn`). A finding
    reported was final, and stays so: a shoe once closed stays closed."""
    out = []
    found = {record["finding_id"]: record for record in current}
    for finding_id, record in found.items():
        last = reported.get(finding_id)
        if last is None:
            out.append({**record, "change": "new"})
        elif last["change"] == "withdrawn":
            out.append({**record, "change": "again"})
        elif any(last.get(c) != record.get(c) for c in COMPARED):
            was = {c: last.get(c) for c in COMPARED if last.get(c) != record.get(c)}
            out.append({**record, "change": "changed", "was": was})
    for finding_id, last in reported.items():
        if finding_id in found or last["change"] == "withdrawn":
            continue
        kept = {k: v for k, v in last.items() if k not in ("change", "was", "found_at")}
        out.append({**kept, "change": "withdrawn"})
    return out
