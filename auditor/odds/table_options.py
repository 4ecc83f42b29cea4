"""The table options an odds report is priced at, parsed from ``key=value`` words.

The keys are the `tables` columns of the contract that change a wager's odds, plus
`seat` (the chair of a Royal 9 wager, whose posted combinations it pays on). An
option left out means: every choice the ruleset permits (each commission percent,
each Dragon Bonus and Royal 9 paytable, the EZ and the standard Banker), and the
pack's least Tie odds. A value the ruleset does not permit is priced as asked, with a
note naming the rule; a malformed value or an unknown key is an `OddsError` (exit 2).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from auditor.contract import DRAGON_BONUS_PAYTABLES, ROYAL9_PAYTABLES
from auditor.errors import AuditorError


class OddsError(AuditorError):
    """A bad argument to the odds report: an unknown option, a malformed value."""


TRUE_WORDS = ("true", "yes", "1", "on")
FALSE_WORDS = ("false", "no", "0", "off")

OPTION_HELP = {
    "tie_pays": "Tie odds to 1 (default: the ruleset's least, e.g. 8)",
    "commission_percent": "Banker commission percent (default: each the ruleset allows)",
    "commission_rounding": "true/false; recorded only: edges use the exact percent",
    "ez_baccarat": "true: only the EZ Banker and the EZ wagers; false: no EZ wagers",
    "dragon_bonus_paytable": "A, B or C (default: all three)",
    "house_money": "false: leave House Money out",
    "house_money_rollover_percent": "share of a House Money win rolled onto the hand (100)",
    "royal9_paytable": "a Royal 9 paytable of the ruleset (default: each)",
    "seats": "chairs posting Royal 9 combinations when the pack lists none (default: most)",
    "seat": "the chair of the Royal 9 wager (default 1)",
}


@dataclass(frozen=True)
class TableOptions:
    """What the caller fixed; None where every permitted choice is reported."""

    tie_pays: int | None = None
    commission_percent: int | None = None
    commission_rounding: bool | None = None
    ez_baccarat: bool | None = None
    dragon_bonus_paytable: str | None = None
    house_money: bool | None = None
    house_money_rollover_percent: int = 100
    royal9_paytable: str | None = None
    seats: int | None = None
    seat: int = 1

    def given(self) -> dict[str, object]:
        """The options the caller set, for the report's record."""
        defaults = TableOptions()
        return {
            name: getattr(self, name)
            for name in OPTION_HELP
            if getattr(self, name) != getattr(defaults, name)
        }


def parse_table_options(words: Iterable[str]) -> TableOptions:
    """``["tie_pays=9", "commission_percent=4 commission_rounding=false"]`` -> options.

    Each word may hold several ``key=value`` pairs separated by spaces or commas.
    """
    pairs: dict[str, str] = {}
    for word in words:
        for item in word.replace(",", " ").split():
            key, sep, value = item.partition("=")
            key = key.strip().replace("-", "_")
            if not sep or not key or not value:
                raise OddsError(f"table option {item!r}: expected key=value, e.g. tie_pays=9")
            if key not in OPTION_HELP:
                raise OddsError(
                    f"unknown table option {key!r}; known: {', '.join(sorted(OPTION_HELP))}"
                )
            if key in pairs and pairs[key] != value:
                raise OddsError(f"table option {key!r} given twice ({pairs[key]}, {value})")
            pairs[key] = value
    parsed: dict[str, object] = {}
    for key, value in pairs.items():
        parsed[key] = _value(key, value)
    return TableOptions(**parsed)  # type: ignore[arg-type]


def _value(key: str, text: str) -> object:
    if key in ("commission_rounding", "ez_baccarat", "house_money"):
        word = text.lower()
        if word in TRUE_WORDS:
            return True
        if word in FALSE_WORDS:
            return False
        raise OddsError(f"table option {key}={text}: expected true or false")
    if key == "dragon_bonus_paytable":
        if text.upper() not in DRAGON_BONUS_PAYTABLES:
            raise OddsError(
                f"table option {key}={text}: expected one of {', '.join(DRAGON_BONUS_PAYTABLES)}"
            )
        return text.upper()
    if key == "royal9_paytable":
        if text not in ROYAL9_PAYTABLES:
            raise OddsError(
                f"table option {key}={text}: expected one of {', '.join(ROYAL9_PAYTABLES)}"
            )
        return text
    try:
        number = int(text)
    except ValueError:
        raise OddsError(f"table option {key}={text}: expected a whole number") from None
    low, high = {
        "tie_pays": (1, 1000),
        "commission_percent": (0, 100),
        "house_money_rollover_percent": (0, 100),
        "seats": (1, 99),
        "seat": (1, 99),
    }[key]
    if not low <= number <= high:
        raise OddsError(f"table option {key}={text}: expected {low} to {high}")
    return number
