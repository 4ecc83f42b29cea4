"""The registry of checks: one stable code per violation, with its documentation.

A check is named after the violation (`BankerDrewOnStand`, not `CheckBankerDraw`).
Codes are grouped by family (DRW draws, TOT totals and announcements, PAY payouts,
COM commission, WAG wager permissibility, SHO shoe, PRC procedures) and are never
reused. The `what`, `why` and `example` texts are the user documentation that
`auditor rules` prints; a meta-test refuses a check without them or without YAML
pass and fail cases.
"""

from __future__ import annotations

from dataclasses import dataclass

FAMILIES = {
    "DRW": "third-card draws",
    "TOT": "totals, outcome and announcements",
    "PAY": "wager results and payouts",
    "COM": "commission",
    "WAG": "wager permissibility",
    "SHO": "shoe",
    "PRC": "table procedures",
}


@dataclass(frozen=True)
class Check:
    code: str
    name: str
    title: str
    severity: str
    citation: str  # the pack entry it cites, in words; each finding carries the exact ref
    what: str
    why: str
    example: str

    @property
    def family(self) -> str:
        return self.code[:3]


CHECKS: dict[str, Check] = {}


def register(check: Check) -> Check:
    if check.code in CHECKS:
        raise ValueError(f"check code {check.code} registered twice")
    if check.family not in FAMILIES:
        raise ValueError(f"check code {check.code} is in no known family")
    CHECKS[check.code] = check
    return check


def all_checks() -> list[Check]:
    # Importing the stage modules registers their checks.
    from auditor import (  # noqa: F401
        bank_checks,
        card_checks,
        commission,
        permit,
        procedures,
        replay,
        settle,
        shoe_checks,
    )

    return [CHECKS[c] for c in sorted(CHECKS)]
