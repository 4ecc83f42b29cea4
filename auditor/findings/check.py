"""How a check is declared: one stable code per violation, with its documentation, and
its condition as polars expressions (`Violation`), gathered per stage in a `CheckSet`.

A check is named after the violation (`BankerDrewOnStand`, not `CheckBankerDraw`).
Codes are grouped by family (DRW draws, TOT totals and announcements, PAY payouts,
COM commission, WAG wager permissibility, SHO shoe, PRC procedures) and are never
reused. A check names the pack rules it applies (`rules`), never a ruleset: the citation
a reader sees is rendered from the packs loaded, each in its own sections. The `what`,
`why` and `example` texts are the user documentation that `auditor rules` prints; a
meta-test refuses a check without them or without YAML pass and fail cases.

A check also declares the frame it is evaluated over (`frame`, one of `findings.frames`)
and the columns of that frame its expressions read (`reads`), the columns its stage's
`enrich` adds included; a test holds every check to exactly those (`misdeclared_reads`),
so that a frame's builder knows what its checks need.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, fields

import polars as pl

from auditor.contract import MONEY
from auditor.findings.frames import final_when
from auditor.findings.table import FINDINGS_SCHEMA, ID_COLUMNS, empty_findings
from auditor.packs.cited import cite_rules
from auditor.packs.loaded import builtin_packs
from auditor.packs.model import RulePack

FAMILIES = {
    "DRW": "third-card draws",
    "TOT": "totals, outcome and announcements",
    "PAY": "wager results and payouts",
    "COM": "commission",
    "WAG": "wager permissibility",
    "SHO": "shoe",
    "TBL": "table options",
    "PRC": "table procedures",
}


@dataclass(frozen=True)
class Check:
    code: str
    name: str
    title: str
    severity: str
    subject: str  # what it cites, in words ("the vigorish")
    rules: tuple[str, ...]  # the pack rules it applies, by key (`auditor.packs.cited`)
    what: str
    why: str
    example: str
    frame: str  # the frame its check set is emitted over (`findings.frames`)
    reads: tuple[str, ...]  # the columns of that frame its `Violation` reads

    @property
    def family(self) -> str:
        return self.code[:3]

    def cites(self, packs: Mapping[str, RulePack]) -> str:
        """The citation a reader sees: the subject, then each pack's own sections for the
        rules (each finding carries the exact one)."""
        return cite_rules(self.subject, self.rules, packs)

    @property
    def final(self) -> str:
        """When its finding is final while the day is dealt (`auditor watch`): at once, or
        when its shoe closes (`findings.frames.final_when`)."""
        return final_when(self.frame)

    @property
    def citation(self) -> str:
        """The citation under the built-in packs."""
        return self.cites(builtin_packs())


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
    # Where the frame holds several rows of one entity (a shoe's collections, a table's
    # options rows), what tells them apart: part of the finding's identity, never words.
    discriminator: pl.Expr | None = None


def column_names(names: str) -> tuple[str, ...]:
    """Column names written as one string, separated by spaces: a check's `reads`, which
    would otherwise take a line per column."""
    return tuple(names.split())


def read_columns(violation: Violation) -> frozenset[str]:
    """The columns the violation's expressions read from their frame."""
    expressions = (getattr(violation, field.name) for field in fields(violation))
    return frozenset(
        column
        for expression in expressions
        if expression is not None
        for column in expression.meta.root_names()
    )


@dataclass(frozen=True)
class MisdeclaredReads:
    """How a check's declared columns differ from those its `Violation` reads."""

    undeclared: frozenset[str]  # read but not declared
    unread: frozenset[str]  # declared but not read

    def __bool__(self) -> bool:
        return bool(self.undeclared or self.unread)


def misdeclared_reads(check: Check, violation: Violation) -> MisdeclaredReads:
    """The columns `violation` reads that `check` does not declare, and the reverse."""
    read = read_columns(violation)
    declared = frozenset(check.reads)
    return MisdeclaredReads(undeclared=read - declared, unread=declared - read)


class CheckSet:
    """The checks of one stage, emitted together over one frame. No registry: the pipeline
    lists every stage's check sets (`pipeline.all_checks`)."""

    def __init__(self) -> None:
        self.checks: list[tuple[Check, Callable[[], Violation]]] = []

    def check(self, check: Check) -> Callable[[Callable[[], Violation]], Callable[[], Violation]]:
        if check.family not in FAMILIES:
            raise ValueError(f"check code {check.code} is in no known family")

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
                    (v.discriminator if v.discriminator is not None else pl.lit(None))
                    .cast(pl.String)
                    .alias("discriminator"),
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


def discriminated(**parts: pl.Expr) -> pl.Expr:
    """A discriminator from named parts, `name=value` joined by `;` in the order given (a
    null value as the empty string): `discriminated(seat=..., patron=...)` gives
    `seat=3;patron=P12`. Values only, never words, so that a rewording keeps the id."""
    return pl.concat_str(
        [
            pl.format("{}={}", pl.lit(name), value.cast(pl.String).fill_null(""))
            for name, value in parts.items()
        ],
        separator=";",
    )


def instant_text(moment: pl.Expr) -> pl.Expr:
    """A UTC timestamp as ISO 8601 to the microsecond, for a discriminator."""
    return moment.dt.convert_time_zone("UTC").dt.to_string("%Y-%m-%dT%H:%M:%S%.6fZ")


def documented(check_sets: Iterable[CheckSet]) -> list[Check]:
    """Every check of the sets, by code; a code declared twice is refused."""
    found: dict[str, Check] = {}
    for check_set in check_sets:
        for check, _ in check_set.checks:
            if found.setdefault(check.code, check) is not check:
                raise ValueError(f"check code {check.code} declared twice")
    return [found[code] for code in sorted(found)]
