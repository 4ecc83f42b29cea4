"""Each wager priced on the enumerated outcomes, settled as the auditor settles it.

A wager is a function from an outcome `State` to its net result per unit wagered
(a win at 8 to 1 is +8, a push 0, a loss -1); its expected value is that net
averaged over the enumeration, exactly, and its house edge is minus that. The nets
follow `auditor/settlement/correct.py` and the packs, read here rather than imported
(the settlement works on frames of logged wagers, not on outcomes):

- Player and Banker pay the pack's odds and push on equal counts; the Banker pays the
  commission percent of its win; the EZ Banker pushes on the pack's push event
  (Dragon 7) and pays no commission where the pack says so (`none_at_ez`). A Chemin de
  Fer Bank wins or loses only what is covered: its figures are per unit covered.
- Tie pays the table's odds; Dragon 7 and Panda 8 their odds on the pack's event.
- Dragon Bonus on a hand: a Natural winner (a Natural 9 over a Natural 8 too) pays
  the paytable's Natural odds, equal Naturals push, a non-Natural win by a margin of
  the paytable pays its odds, anything else loses.
- House Money: the pack's `one` odds for a pair of the same rank in the first two
  cards of one hand, `both` for pairs in both.
- House Money with rollover (the curator game's §9(e)(1)a, Midi Baccarat's §8(c)(3)(i)a; INDEX
  Ambiguity 20): a winning House Money payout X has the share r (the table's
  `house_money_rollover_percent`) added to the patron's Player or Banker wager, which
  then settles on the hand like the rest of that wager (the Banker's commission taken
  on it too). Per unit of House Money the combined action nets X + r X m, m the hand
  wager's net per unit; a loss nets -1. The patron's own Player or Banker stake is
  priced by its own row and left out of this one.

Commission is taken at the exact percent: rounding up to the pack's step
(`commission_rounding`) depends on the bet size, which odds per unit do not model.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

from auditor.odds.shoe import Outcomes, State
from auditor.odds.table_options import TableOptions
from auditor.packs.model import DragonBonusPaytableRule, EzEventRule, RulePack

Net = Callable[[State], Fraction | int]


@dataclass(frozen=True)
class Priced:
    """One wager's figures: the chance it wins, pushes or loses and its value per unit."""

    bet: str  # the contract's bet name (banker, player, tie, dragon7, ...)
    variant: str  # what distinguishes this row: the commission, a paytable, a line
    pays: str
    win: Fraction
    push: Fraction
    lose: Fraction
    ev: Fraction | None  # per unit wagered; None where a progressive meter decides it
    cite: str
    note: str | None = None

    @property
    def house_edge(self) -> Fraction | None:
        return None if self.ev is None else -self.ev


def price(
    outcomes: Outcomes,
    net: Net,
    *,
    bet: str,
    variant: str,
    pays: str,
    cite: str,
    note: str | None = None,
) -> Priced:
    distribution = outcomes.distribution(net)
    return Priced(
        bet=bet,
        variant=variant,
        pays=pays,
        win=sum((p for v, p in distribution.items() if v > 0), Fraction(0)),
        push=distribution.get(Fraction(0), Fraction(0)),
        lose=sum((p for v, p in distribution.items() if v < 0), Fraction(0)),
        ev=sum((v * p for v, p in distribution.items()), Fraction(0)),
        cite=cite,
        note=note,
    )


# ---- the hand wagers ------------------------------------------------------------------


def banker_won(state: State) -> bool:
    return state.banker > state.player


def player_won(state: State) -> bool:
    return state.player > state.banker


def event_occurred(event: EzEventRule) -> Callable[[State], bool]:
    """The pack's EZ event (Dragon 7, Panda 8): `hand` has `total` with `cards` cards and
    the other hand is below `other_hand_below`."""

    def occurred(state: State) -> bool:
        own, other = (
            (state.banker, state.player) if event.hand == "banker" else (state.player, state.banker)
        )
        cards = state.banker_cards if event.hand == "banker" else state.player_cards
        return own == event.total and cards == event.cards and other < event.other_hand_below

    return occurred


def player_net(pack: RulePack) -> Net:
    odds = pack.payouts.player.odds
    commission = _commission_on(pack, "player")

    def net(state: State) -> Fraction | int:
        if player_won(state):
            return odds * (1 - commission)
        return -1 if banker_won(state) else 0

    return net


def banker_net(pack: RulePack, percent: int, *, ez: bool = False) -> Net:
    """The Banker's net per unit; `ez`: at an EZ table (push event, `none_at_ez`)."""
    odds = pack.payouts.banker.odds
    commission = Fraction(percent, 100) if "banker" in pack.commission.bets.bets else Fraction(0)
    none_at_ez = pack.commission.none_at_ez
    if ez and none_at_ez is not None and none_at_ez.value:
        commission = Fraction(0)
    push_on = pack.ez.banker_push_on
    push_event = pack.ez.events[push_on.event] if ez and push_on else None
    pushes = event_occurred(push_event) if push_event is not None else None

    def net(state: State) -> Fraction | int:
        if banker_won(state):
            return 0 if pushes is not None and pushes(state) else odds * (1 - commission)
        return -1 if player_won(state) else 0

    return net


def _commission_on(pack: RulePack, bet: str) -> Fraction:
    """Commission on a wager other than the Banker's, at the pack's least percent.

    No pack charges one (the Player is paid even money everywhere); this keeps a pack
    that did from being priced without it."""
    if bet not in pack.commission.bets.bets:
        return Fraction(0)
    return Fraction(min(pack.commission.percents.values), 100)


def ez_offered(pack: RulePack) -> bool:
    return pack.ez.offered.value and pack.ez.banker_push_on is not None


def commission_percents(pack: RulePack, options: TableOptions) -> tuple[list[int], str | None]:
    """The percents to price the Banker at, and a note when the table's is not allowed."""
    allowed = list(pack.commission.percents.values)
    if options.commission_percent is None:
        return allowed, None
    note = None
    if options.commission_percent not in allowed:
        note = (
            f"{options.commission_percent}% is not a percent {pack.ruleset} allows "
            f"({', '.join(f'{p}%' for p in allowed)}, {pack.cite(pack.commission.percents.cite)})"
        )
    return [options.commission_percent], note


def hand_wagers(
    pack: RulePack, outcomes: Outcomes, options: TableOptions, strategy: str = ""
) -> list[Priced]:
    """Banker (each commission percent, and EZ), Player and Tie."""
    rows: list[Priced] = []
    pay = pack.payouts
    suffix = f"; {strategy}" if strategy else ""
    covered = pay.banker.basis == "covered"
    per = "per unit covered; " if covered else ""
    standard = options.ez_baccarat is not True or not ez_offered(pack)
    if "banker" in pack.permitted and standard:
        percents, note = commission_percents(pack, options)
        for percent in percents:
            rows.append(
                price(
                    outcomes,
                    banker_net(pack, percent),
                    bet="banker",
                    variant=f"{per}{percent}% commission{suffix}",
                    pays=f"{pay.banker.odds} to 1 less {percent}%",
                    cite=pack.cite(pay.banker.cite),
                    note=note,
                )
            )
    if "banker" in pack.permitted and ez_offered(pack) and options.ez_baccarat is not False:
        push = pack.ez.banker_push_on
        assert push is not None
        rows.append(
            price(
                outcomes,
                banker_net(pack, 0, ez=True),
                bet="banker",
                variant=f"EZ Banker, push on {_event_name(push.event)}{suffix}",
                pays=f"{pay.banker.odds} to 1, no commission",
                cite=pack.cite(push.cite),
            )
        )
    if "player" in pack.permitted:
        rows.append(
            price(
                outcomes,
                player_net(pack),
                bet="player",
                variant=f"{strategy or 'hand'}",
                pays=f"{pay.player.odds} to 1",
                cite=pack.cite(pay.player.cite),
            )
        )
    if "tie" in pack.permitted and pay.tie is not None:
        odds = pay.tie.min_odds if options.tie_pays is None else options.tie_pays
        note = None
        if odds < pay.tie.min_odds:
            note = f"below the least Tie odds {pay.tie.min_odds} to 1 ({pack.cite(pay.tie.cite)})"

        def tie_net(state: State, odds: int = odds) -> int:
            return odds if state.player == state.banker else -1

        rows.append(
            price(
                outcomes,
                tie_net,
                bet="tie",
                variant=f"{odds} to 1{suffix}",
                pays=f"{odds} to 1",
                cite=pack.cite(pay.tie.cite),
                note=note,
            )
        )
    return rows


def _event_name(event: str) -> str:
    return {"dragon7": "Dragon 7", "panda8": "Panda 8"}.get(event, event)


# ---- the side wagers ------------------------------------------------------------------


def ez_wagers(pack: RulePack, outcomes: Outcomes, options: TableOptions) -> list[Priced]:
    """Dragon 7 and Panda 8 Insurance at their odds, on the pack's events."""
    rows: list[Priced] = []
    if options.ez_baccarat is False:
        return rows
    for bet in ("dragon7", "panda8"):
        odds = getattr(pack.payouts, bet)
        event = pack.ez.events.get(bet)
        if bet not in pack.permitted or odds is None or event is None:
            continue
        occurred = event_occurred(event)

        def net(state: State, occurred=occurred, odds: int = odds.odds) -> int:
            return odds if occurred(state) else -1

        rows.append(
            price(
                outcomes,
                net,
                bet=bet,
                variant=_event_name(bet),
                pays=f"{odds.odds} to 1",
                cite=pack.cite(odds.cite),
            )
        )
    return rows


def dragon_bonus_net(table: DragonBonusPaytableRule, hand: str) -> Net:
    odds_by_margin = table.odds_by_margin()

    def net(state: State) -> int:
        own, other = (
            (state.banker, state.player) if hand == "banker" else (state.player, state.banker)
        )
        own_natural, other_natural = (
            (state.banker_natural, state.player_natural)
            if hand == "banker"
            else (state.player_natural, state.banker_natural)
        )
        if own_natural and other_natural and own <= other:
            return 0 if own == other else -1  # equal Naturals: natural_tie, a push
        if own_natural:
            return table.natural_winner  # a Natural 9 over a Natural 8 too
        if other_natural:
            return -1
        return odds_by_margin.get(own - other, -1)  # margins outside the paytable lose

    return net


def dragon_bonus_wagers(pack: RulePack, outcomes: Outcomes, options: TableOptions) -> list[Priced]:
    rows = []
    for name, table in (pack.payouts.dragon_bonus or {}).items():
        if options.dragon_bonus_paytable not in (None, name):
            continue
        for hand in ("banker", "player"):
            bet = f"dragon_bonus_{hand}"
            if bet not in pack.permitted:
                continue
            rows.append(
                price(
                    outcomes,
                    dragon_bonus_net(table, hand),
                    bet=bet,
                    variant=f"{hand.title()} hand, paytable {name}",
                    pays=" ".join(f"{m}:{o}" for m, o in sorted(table.win_by.items(), reverse=True))
                    + f" N:{table.natural_winner}",
                    cite=pack.cite(table.cite),
                )
            )
    return rows


def house_money_wagers(
    pack: RulePack, by_rank: Outcomes, options: TableOptions, percent: int | None
) -> list[Priced]:
    """House Money, and House Money rolled onto each hand wager the pack allows.

    `by_rank` must be enumerated by rank (pairs); `percent` the Banker commission the
    rollover onto the Banker is priced at.
    """
    terms = pack.payouts.house_money
    if "house_money" not in pack.permitted or terms is None or options.house_money is False:
        return []
    if not by_rank.by_rank:
        raise ValueError("House Money needs outcomes enumerated by rank (pairs)")

    def payout(state: State) -> int:
        pairs = state.player_pair + state.banker_pair
        return terms.both if pairs == 2 else terms.one if pairs == 1 else 0

    def alone(state: State) -> int:
        return payout(state) or -1

    rows = [
        price(
            by_rank,
            alone,
            bet="house_money",
            variant="payout taken",
            pays=f"{terms.one} to 1 one pair, {terms.both} to 1 both",
            cite=pack.cite(terms.cite),
        )
    ]
    rollover = pack.procedures.house_money_rollover
    if rollover is None:
        return rows
    share = Fraction(options.house_money_rollover_percent, 100)
    targets: list[tuple[str, Net]] = []
    for onto in rollover.onto:
        if onto == "player":
            targets.append(("Player", player_net(pack)))
        elif onto == "banker" and options.ez_baccarat is not True:
            pct = percent if percent is not None else min(pack.commission.percents.values)
            targets.append((f"Banker at {pct}%", banker_net(pack, pct)))
    if "banker" in rollover.onto and ez_offered(pack) and options.ez_baccarat is not False:
        targets.append(("EZ Banker", banker_net(pack, 0, ez=True)))
    for label, hand in targets:

        def combined(state: State, hand: Net = hand) -> Fraction | int:
            won = payout(state)
            return won + share * won * hand(state) if won else -1

        rows.append(
            price(
                by_rank,
                combined,
                bet="house_money",
                variant=f"{options.house_money_rollover_percent}% rolled onto {label}",
                pays="payout share settled on the hand",
                cite=pack.cite(rollover.cite),
                note="per unit of House Money; the hand wager's own stake is priced apart",
            )
        )
    return rows
