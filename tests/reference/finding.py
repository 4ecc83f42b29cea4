"""The reference's finding: the contract's columns that the differential test compares."""

from __future__ import annotations

from decimal import Decimal
from typing import NamedTuple


class Finding(NamedTuple):
    """A round finding has no `wager_id`; `impact` is the patron's logged net result minus
    the correct one, in dollars, or None where the finding is not about money owed."""

    rule: str
    round_id: str
    wager_id: str | None
    impact: Decimal | None
    expected: str
    logged: str

    @property
    def key(self) -> tuple[str, str, str | None, Decimal | None]:
        return (self.rule, self.round_id, self.wager_id, self.impact)


def dollars(cents: int | None) -> Decimal | None:
    """Integer cents back to exact dollars with two places (`Decimal(150).scaleb(-2)` is
    1.50)."""
    return None if cents is None else Decimal(cents).scaleb(-2)
