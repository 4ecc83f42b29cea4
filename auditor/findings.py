"""Findings: one row per discrepancy, in the contract's columns, sorted stably.

Every stage that checks something returns a frame in FINDINGS_SCHEMA; this module
concatenates and orders them so that a re-run writes the same bytes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import polars as pl

from auditor.checks import Check, register
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
}

SORT_KEY = ["table_id", "shoe_id", "round_id", "wager_id", "rule"]


def empty_findings() -> pl.DataFrame:
    return pl.DataFrame(schema=FINDINGS_SCHEMA)


def combine(frames: list[pl.DataFrame]) -> pl.DataFrame:
    """All findings in one frame, in a deterministic order (table by table, shoe by shoe),
    each naming only its entity (`named_entity_only`)."""
    frames = [f.select(list(FINDINGS_SCHEMA)).cast(FINDINGS_SCHEMA) for f in frames if f.height]
    if not frames:
        return empty_findings()
    ordered = pl.concat(frames, how="vertical").sort(
        SORT_KEY, nulls_last=False, maintain_order=True
    )
    return ordered.with_columns(named_entity_only())


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


@dataclass(frozen=True)
class Violation:
    """A check as expressions over a stage's frame: when it is broken, and what to say."""

    when: pl.Expr
    citation: pl.Expr
    expected: pl.Expr
    logged: pl.Expr
    message: pl.Expr
    severity: pl.Expr | None = None  # default: the check's severity
    impact: pl.Expr | None = None  # dollars, Decimal(18,2); null where no money is owed


class CheckSet:
    """The checks of one stage, registered by code, emitted together over one frame."""

    def __init__(self) -> None:
        self.checks: list[tuple[Check, Callable[[], Violation]]] = []

    def check(self, check: Check) -> Callable[[Callable[[], Violation]], Callable[[], Violation]]:
        register(check)

        def add(build: Callable[[], Violation]) -> Callable[[], Violation]:
            self.checks.append((check, build))
            return build

        return add

    def emit(
        self,
        frame: pl.LazyFrame,
        ids: dict[str, pl.Expr],
        enrich: Callable[[pl.LazyFrame], pl.LazyFrame] | None = None,
    ) -> pl.LazyFrame:
        """Findings of every check over `frame`, with the id columns given by `ids`.

        One pass: cheap flags over the whole frame keep the rows that broke anything;
        only those rows get their findings formatted (a struct per broken check,
        exploded to rows). Filtering the frame once per check instead would make
        polars recompute the whole upstream plan once per check. `enrich` adds columns
        that only the messages need (citations, say) to the few flagged rows.
        """
        built = [(check, build()) for check, build in self.checks]
        if not built:
            return empty_findings().lazy()
        names = [f"_flag_{check.code}" for check, _ in built]
        flags = [v.when.fill_null(False).alias(n) for (_, v), n in zip(built, names, strict=True)]
        structs = [
            pl.when(pl.col(name)).then(
                pl.struct(
                    pl.lit(check.code).alias("rule"),
                    (v.severity if v.severity is not None else pl.lit(check.severity))
                    .cast(pl.String)
                    .alias("severity"),
                    v.citation.cast(pl.String).alias("citation"),
                    v.expected.cast(pl.String).alias("expected"),
                    v.logged.cast(pl.String).alias("logged"),
                    (v.impact if v.impact is not None else pl.lit(None))
                    .cast(MONEY)
                    .alias("impact"),
                    v.message.cast(pl.String).alias("message"),
                )
            )
            for (check, v), name in zip(built, names, strict=True)
        ]
        flagged = frame.with_columns(flags).filter(pl.any_horizontal(names))
        if enrich is not None:
            flagged = enrich(flagged)
        return (
            flagged.select(
                *(ids[c].cast(pl.String).alias(c) for c in ID_COLUMNS),
                pl.concat_list(structs).list.drop_nulls().alias("_found"),
            )
            .explode("_found")
            .unnest("_found")
            .select(list(FINDINGS_SCHEMA))
        )


ID_COLUMNS = ("table_id", "shoe_id", "round_id", "wager_id")
NO_ID = pl.lit(None, dtype=pl.String)
