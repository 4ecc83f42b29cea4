"""The table a pack's YAML cases are dealt at (`case_table`), and its check against the
pack's own limits.

A case spells out only what it gets wrong (docs/packs.md, "Test it"): the table it is
dealt at, unless it says otherwise, is one the ruleset allows. The regulation bounds
seats and decks but seldom names one number; the pack names the one its cases take,
with the section that allows it, so that the case runner knows no ruleset by name.
"""

from __future__ import annotations

from collections.abc import Collection

from auditor.packs.entries import Count, Decks, Entry, Range, refuse


class CaseTable(Entry):
    """Seats, decks and commission percent of the table a case is dealt at by default."""

    seats: Count
    decks: Decks
    commission_percent: Count


def check_case_table(
    table: CaseTable | None, seats: Range | None, decks: Range, percents: Collection[int]
) -> None:
    """Refuse a case table the pack's own limits (`seats`, `decks`) or commission
    `percents` would flag: a case that is clean by the rules must be dealt at a table
    the rules allow."""
    if table is None:
        return
    bounds: tuple[tuple[str, int, Range | None], ...] = (
        ("seats", table.seats, seats),
        ("decks", table.decks, decks),
    )
    for key, value, bound in bounds:
        if bound is None:
            continue
        if (bound.min is not None and value < bound.min) or (
            bound.max is not None and value > bound.max
        ):
            shown = f"{_shown(bound.min)} to {_shown(bound.max)}"
            raise refuse(f"{value} is outside limits.{key} ({shown})", "case_table", key)
    if table.commission_percent not in percents:
        allowed = ", ".join(str(p) for p in percents)
        raise refuse(
            f"{table.commission_percent} is not one of commission.percents ({allowed})",
            "case_table",
            "commission_percent",
        )


def _shown(bound: int | None) -> str:
    return "no bound" if bound is None else str(bound)
