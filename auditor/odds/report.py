"""One ruleset's odds at N decks, gathered from the enumeration, and how it is printed.

Figures stay `Fraction`s until they are printed: as 9-place decimals (house edges as
percents to 7 places, the same 9 significant places of the fraction) in the table, and
in JSON as the exact fraction (``"p/q"``) beside that decimal.

Where the Player's rule leaves a total to his choice (Chemin de Fer's 5, ``either``)
every figure is given for both choices, and the notes say which serves the Player
better; the Banker after a Player's stay follows the pack's cells either way.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal, localcontext
from fractions import Fraction
from typing import Any

from auditor.errors import RulesetError
from auditor.findings.words import count_text
from auditor.odds.royal9 import royal9_wagers
from auditor.odds.shoe import MAX_DECKS, Outcomes, enumerate_rounds, has_either
from auditor.odds.table_options import OddsError, TableOptions
from auditor.odds.wagers import (
    Priced,
    banker_won,
    dragon_bonus_wagers,
    ez_wagers,
    hand_wagers,
    house_money_wagers,
    player_won,
)
from auditor.packs.model import RulePack, available_rulesets, load_pack

PLACES = 9


@dataclass(frozen=True)
class RulesetOdds:
    ruleset: str
    title: str
    decks: int
    outcomes: dict[str, dict[str, Fraction]]  # strategy ("" if none) -> banker/player/tie
    wagers: list[Priced]
    notes: list[str]


def strategies(pack: RulePack) -> list[tuple[str, bool]]:
    """(label, whether the Player draws on an ``either`` total) to price the game at."""
    if not has_either(pack):
        return [("", True)]
    totals = ", ".join(str(t) for t, rule in pack.player_draw.items() if rule.action == "either")
    return [(f"Player draws on {totals}", True), (f"Player stands on {totals}", False)]


def ruleset_odds(pack: RulePack, decks: int, options: TableOptions) -> RulesetOdds:
    """Every wager `pack` permits, priced for a fresh shoe of `decks` decks."""
    if not 1 <= decks <= MAX_DECKS:
        raise OddsError(f"--decks must be 1 to {MAX_DECKS}, not {decks}")
    notes: list[str] = []
    if not pack.limits.decks.contains(decks):
        notes.append(
            f"{count_text(decks, 'deck', 'decks')} is outside {pack.ruleset}'s deck limits "
            f"({pack.cite(pack.limits.decks.cite)}); priced as asked"
        )
    _check_paytables(pack, options)
    # Pairs need the first four cards by rank; the enumeration by value is enough (and
    # faster) for every other wager, so ranks are used only where House Money is priced.
    by_rank = (
        "house_money" in pack.permitted
        and pack.payouts.house_money is not None
        and options.house_money is not False
    )
    outcomes: dict[str, dict[str, Fraction]] = {}
    wagers: list[Priced] = []
    player_values: dict[str, Fraction] = {}
    for label, either_draws in strategies(pack):
        shoe = enumerate_rounds(pack, decks, either_draws=either_draws, by_rank=by_rank)
        outcomes[label] = _outcome_chances(shoe)
        hands = hand_wagers(pack, shoe, options, label)
        for wager in hands:
            if wager.bet == "player" and wager.ev is not None:
                player_values[label] = wager.ev
        wagers += hands
        wagers += ez_wagers(pack, shoe, options)
        wagers += dragon_bonus_wagers(pack, shoe, options)
        if by_rank:
            wagers += house_money_wagers(pack, shoe, options, options.commission_percent)
    wagers += royal9_wagers(pack, decks, options)
    if len(player_values) > 1:
        best = max(player_values, key=lambda k: player_values[k])
        notes.append(f"optimal for the Player (the higher Player EV): {best}")
    if pack.commission.percents.values and "banker" in pack.permitted:
        notes.append(
            "Banker commission at the exact percent: rounding up to the "
            f"{pack.cite(pack.commission.rounding.cite)} step depends on the bet "
            "size and is not modelled"
            + (
                f" (commission_rounding={str(options.commission_rounding).lower()} noted)"
                if options.commission_rounding is not None
                else ""
            )
        )
    if pack.payouts.banker.basis == "covered":
        notes.append(
            "the Bank wins or loses only what is covered: its figures are per unit covered"
        )
    return RulesetOdds(pack.ruleset, pack.title, decks, outcomes, wagers, notes)


def _check_paytables(pack: RulePack, options: TableOptions) -> None:
    chosen = options.royal9_paytable
    royal9 = pack.payouts.royal9
    if chosen is not None and royal9 is not None and chosen not in royal9.paytables:
        raise OddsError(
            f"royal9_paytable={chosen}: {pack.ruleset} has paytable(s) "
            f"{', '.join(royal9.paytables)}"
        )


def _outcome_chances(shoe: Outcomes) -> dict[str, Fraction]:
    return {
        "banker": shoe.probability(banker_won),
        "player": shoe.probability(player_won),
        "tie": shoe.probability(lambda s: s.banker == s.player),
    }


def odds_report(
    rulesets: Sequence[str] | None,
    decks: int,
    options: TableOptions,
    packs: Mapping[str, RulePack] | None = None,
) -> list[RulesetOdds]:
    """The odds of every wager of each ruleset of `packs` (the installed ones if None),
    or of those named."""
    packs = {name: load_pack(name) for name in available_rulesets()} if packs is None else packs
    names = list(rulesets) if rulesets else list(packs)
    unknown = [name for name in names if name not in packs]
    if unknown:
        raise RulesetError(
            f"unknown ruleset {unknown[0]!r}; the rule packs loaded are {', '.join(packs)}"
        )
    return [ruleset_odds(packs[name], decks, options) for name in names]


# ---- printing --------------------------------------------------------------------------


def decimal(value: Fraction, places: int = PLACES) -> str:
    """`value` rounded half-even to `places` decimal places, from the exact fraction."""
    with localcontext() as context:
        context.prec = 60
        exact = Decimal(value.numerator) / Decimal(value.denominator)
        return format(exact.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_EVEN), "f")


def percent(value: Fraction) -> str:
    return decimal(value * 100, PLACES - 2) + "%"


def _number(value: Fraction | None) -> dict[str, str] | None:
    if value is None:
        return None
    return {"fraction": f"{value.numerator}/{value.denominator}", "decimal": decimal(value)}


def to_json(reports: Sequence[RulesetOdds], options: TableOptions) -> dict[str, Any]:
    """Machine-readable: exact fractions as strings, with their 9-place decimals."""
    return {
        "decks": reports[0].decks if reports else None,
        "table_options": options.given(),
        "rulesets": [
            {
                "ruleset": r.ruleset,
                "title": r.title,
                "decks": r.decks,
                "outcomes": [
                    {"strategy": label or None, **{k: _number(v) for k, v in chances.items()}}
                    for label, chances in r.outcomes.items()
                ],
                "wagers": [
                    {
                        "bet": w.bet,
                        "variant": w.variant,
                        "pays": w.pays,
                        "win": _number(w.win),
                        "push": _number(w.push),
                        "lose": _number(w.lose),
                        "expected_value": _number(w.ev),
                        "house_edge": _number(w.house_edge),
                        "cite": w.cite,
                        "note": w.note,
                    }
                    for w in r.wagers
                ],
                "notes": r.notes,
            }
            for r in reports
        ],
    }


def render(report: RulesetOdds) -> list[Any]:
    """Rich renderables for one ruleset: the outcome chances, the wagers, the notes."""
    from rich.table import Table
    from rich.text import Text

    title = f"{report.ruleset}: {report.title}, {count_text(report.decks, 'deck', 'decks')}"
    chances = Table(title=title, title_justify="left")
    for name in ("", "Banker wins", "Player wins", "Tie"):
        chances.add_column(name, justify="left" if not name else "right")
    for label, row in report.outcomes.items():
        chances.add_row(label or "outcome", *(decimal(row[k]) for k in ("banker", "player", "tie")))
    wagers = Table(title_justify="left", show_lines=False)
    for name in ("wager", "variant", "pays", "win", "push", "EV / unit", "house edge", "cites"):
        number = name in ("win", "push", "EV / unit", "house edge")
        wagers.add_column(name, justify="right" if number else "left", no_wrap=number)
    for w in report.wagers:
        wagers.add_row(
            w.bet,
            w.variant,
            w.pays,
            decimal(w.win),
            decimal(w.push),
            "-" if w.ev is None else decimal(w.ev),
            "-" if w.house_edge is None else percent(w.house_edge),
            w.cite,
        )
    notes = sorted({w.note for w in report.wagers if w.note} | set(report.notes))
    return [chances, wagers, *(Text(f"note: {n}") for n in notes), Text("")]
