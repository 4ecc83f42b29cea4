"""Every check declares the frame it is evaluated over and exactly the columns of it that
its expressions read (`Check.frame`, `Check.reads`): a column read but not declared, or
declared but no longer read, fails here."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import polars as pl
import pytest

from auditor.findings import frames
from auditor.findings.check import Check, CheckSet, Violation, misdeclared_reads, read_columns
from auditor.pipeline import all_check_sets, all_checks
from auditor.settlement.commission import COMMISSION_CHECKS
from auditor.settlement.permit import PERMIT_CHECKS
from auditor.settlement.wagers import WAGER_CHECKS

CHECK_SETS = all_check_sets()
BUILT = [(check, build) for check_set in CHECK_SETS for check, build in check_set.checks]
FRAME_NAMES = {value for name, value in vars(frames).items() if name.endswith("_FRAME")}


def test_the_check_sets_hold_every_check_once() -> None:
    assert sorted(check.code for check, _ in BUILT) == [check.code for check in all_checks()]


@pytest.mark.parametrize("check, build", BUILT, ids=[check.code for check, _ in BUILT])
def test_a_check_reads_exactly_the_columns_it_declares(
    check: Check, build: Callable[[], Violation]
) -> None:
    misdeclared = misdeclared_reads(check, build())
    assert not misdeclared.undeclared, f"{check.code} reads undeclared {misdeclared.undeclared}"
    assert not misdeclared.unread, f"{check.code} declares unread {misdeclared.unread}"


def test_a_check_declares_each_column_once() -> None:
    repeated = {check.code for check, _ in BUILT if len(set(check.reads)) != len(check.reads)}
    assert repeated == set()


def test_a_check_names_a_known_frame() -> None:
    assert {check.frame for check, _ in BUILT} <= FRAME_NAMES


def test_the_frame_names_are_distinct() -> None:
    constants = [value for name, value in vars(frames).items() if name.endswith("_FRAME")]
    assert len(constants) == len(FRAME_NAMES)


@pytest.mark.parametrize("check_set", CHECK_SETS)
def test_the_checks_of_a_set_share_its_frame(check_set: CheckSet) -> None:
    assert len({check.frame for check, _ in check_set.checks}) == 1


def test_the_wager_checks_emitted_together_share_one_frame() -> None:
    """`wagers.wager_findings` emits the PAY, COM and the permission WAG checks in one
    pass over each settled frame."""
    together = (*WAGER_CHECKS.checks, *COMMISSION_CHECKS.checks, *PERMIT_CHECKS.checks)
    assert {check.frame for check, _ in together} == {frames.WAGER_FRAME}


# ---- the check of the checks --------------------------------------------------------------

DECLARED = Check(
    code="TST001",
    name="Declared",
    title="t",
    severity="low",
    subject="s",
    rules=(),
    what="w",
    why="y",
    example="e",
    frame=frames.ROUND_FRAME,
    reads=("kind", "round_no"),
)


def _violation(message: pl.Expr) -> Violation:
    return Violation(
        when=pl.col("kind") == "void",
        citation=pl.lit("§1"),
        expected=pl.lit("a regular round"),
        logged=pl.col("kind"),
        message=message,
    )


def test_a_violation_reading_only_declared_columns_passes() -> None:
    violation = _violation(pl.format("round {} was void", pl.col("round_no")))
    assert read_columns(violation) == {"kind", "round_no"}
    assert not misdeclared_reads(DECLARED, violation)


def test_a_column_read_but_not_declared_is_reported() -> None:
    violation = _violation(pl.format("round {} at {}", pl.col("round_no"), pl.col("dealt_at")))
    misdeclared = misdeclared_reads(DECLARED, violation)
    assert misdeclared
    assert misdeclared.undeclared == {"dealt_at"}
    assert misdeclared.unread == set()


def test_a_column_read_only_in_an_optional_expression_counts() -> None:
    violation = replace(
        _violation(pl.format("round {} was void", pl.col("round_no"))),
        discriminator=pl.col("seat").cast(pl.String),
    )
    assert misdeclared_reads(DECLARED, violation).undeclared == {"seat"}


def test_a_column_declared_but_not_read_is_reported() -> None:
    violation = _violation(pl.lit("a void round"))
    misdeclared = misdeclared_reads(DECLARED, violation)
    assert misdeclared
    assert misdeclared.undeclared == set()
    assert misdeclared.unread == {"round_no"}
