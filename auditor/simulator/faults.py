"""Fault injection for the simulator: each fault breaks exactly one regulation.

A fault is applied to a round that has already been dealt and settled cleanly. Faults
that change what happened at the table (a misdraw, a swapped card, a Bank that did not
pass) replay the round, so totals, outcome and settlement follow the cards as dealt;
faults that change only what was logged (a total, a payout) edit the logged field.
`impact` is the patron's logged net result minus the correct one, in cents, for the
faults about money owed, and None otherwise.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

from auditor.simulator.settle import (
    CARD_NAMES,
    CHEMIN,
    DRAGON_PAYTABLES,
    MA_BACCARAT,
    MARYLAND,
    MIDI,
    POINTS,
    ROYAL9_FIXED,
    ROYAL9_STAKE,
    Round,
    Wager,
    commission,
    commission_unit,
    dragon_bonus,
    dragon_margin,
    main_wager_at,
    net_result,
    point_count,
    settle_wager,
    usd,
)

T = TypeVar("T")

DRW, TOT, PAY, COM, WAG, SHO, PRC, TBL = "DRW", "TOT", "PAY", "COM", "WAG", "SHO", "PRC", "TBL"
FAMILIES: dict[str, str] = {
    "player_draw_missing": DRW,
    "player_draw_extra": DRW,
    "banker_draw_missing": DRW,
    "banker_draw_extra": DRW,
    "wrong_player_total": TOT,
    "wrong_banker_total": TOT,
    "wrong_outcome": TOT,
    "played_out_void": TOT,
    "ez_event_missing": TOT,
    "ez_event_wrong": TOT,
    "no_more_bets_late": TOT,
    "overpayment": PAY,
    "underpayment": PAY,
    "wrong_paytable": PAY,
    "wrong_result": PAY,
    "commission_missing": COM,
    "commission_misrounded": COM,
    "marker_uncollected": COM,
    "collection_without_marker": COM,
    "late_wager": WAG,
    "impermissible_bet": WAG,
    "wager_on_free_round": WAG,
    "seat_out_of_range": WAG,
    "rollover_excess": WAG,
    "bank_stake_out_of_range": WAG,
    "bank_overcovered": WAG,
    "suivi_not_entitled": WAG,
    "burn_count_wrong": SHO,
    "cut_too_shallow": SHO,
    "cover_card_too_close": SHO,
    "decks_out_of_range": SHO,
    "foreign_card": SHO,
    "sequence_mismatch": SHO,
    "discards_too_many": SHO,
    "void_with_cards_left": SHO,
    "extra_hand_after_cover": PRC,
    "curator_not_passing": PRC,
    "bank_not_passing": PRC,
    "holder_seat_out_of_range": PRC,
    "call_below_bank": PRC,
    "banker_wager_misplaced": PRC,
    "bank_bid_missing": PRC,
    "holder_not_of_game": PRC,
    "free_hand_not_allowed": PRC,
    "table_seats_out_of_range": TBL,
    "royal9_table_seats": TBL,
    "collection_not_allowed": TBL,
    "royal9_chair_suited": TBL,
}
FAULT_KINDS = tuple(FAMILIES)
# Decided once per shoe when it opens; the rest are decided per round.
SHOE_FAULTS = (
    "burn_count_wrong",
    "cut_too_shallow",
    "cover_card_too_close",
    "decks_out_of_range",
    "marker_uncollected",
    "extra_hand_after_cover",
    "collection_without_marker",
    "void_with_cards_left",
    "played_out_void",
)
# Decided once per table: an options row that breaks a limit, superseded before any shoe.
TABLE_FAULTS = ("table_seats_out_of_range", "royal9_table_seats", "collection_not_allowed")
MONEY_FAULTS = frozenset(
    {
        "overpayment",
        "underpayment",
        "wrong_paytable",
        "wrong_result",
        "commission_missing",
        "commission_misrounded",
        "marker_uncollected",
    }
)
SIDE_AMOUNTS = (500, 1000, 1500, 2000, 2500, 5000)
SAME_POINTS = {v: tuple(c for c in range(52) if POINTS[c] == v) for v in range(10)}


class Rng(Protocol):
    def u(self) -> float: ...
    def below(self, n: int) -> int: ...
    def pick(self, items: Sequence[T]) -> T: ...


@dataclass
class Fault:
    """One fault-key row in the making (ids are resolved when the round is written)."""

    kind: str
    detail: str
    impact: int | None = None
    wager: Wager | None = None


@dataclass
class RoundContext:
    """What the injector may read about the table, and the table-state changes it may make."""

    rs: Rng
    reader: bool  # the shoe logs its card_sequence
    decks: int
    hand_counts: list[int]  # copies of each card dealt to hands earlier in this shoe
    seats: list[tuple[int, str | None]]  # occupied seats and their patrons
    placed_at: Callable[[], int]  # a placement time before "no more bets"
    keep_curator: Callable[[], None] | None = None  # set when a curator had to pass
    keep_bank: Callable[[], None] | None = None  # set when a losing Bank was replaced
    first_of_bank: bool = False
    prev_bank_amount: int | None = None
    suivi_seat: int | None = None


# -- applicability ---------------------------------------------------------------------


def applicable(rd: Round, ctx: RoundContext) -> list[str]:
    """The round faults that can be injected into this cleanly played round."""
    kinds = [*draw_faults(rd), "wrong_player_total", "wrong_banker_total"]
    if outcome_alternatives(rd):
        kinds.append("wrong_outcome")
    if rd.opts.ez_baccarat:
        kinds.append("ez_event_missing" if rd.ez_event else "ez_event_wrong")
    if ctx.reader and swap_positions(rd):
        kinds.append("sequence_mismatch")
    if foreign_candidates(rd, ctx):
        kinds.append("foreign_card")
    if rd.kind == "simulated" and not (rd.opts.ruleset == MIDI and rd.opts.free_hands):
        kinds.append("free_hand_not_allowed")
    if rd.kind != "regular":
        return [*kinds, "wager_on_free_round"]
    if ctx.seats:
        kinds.append("holder_not_of_game")
    if not rd.opts.chemin:  # Chemin de Fer has no rule for the announcement itself
        kinds.append("no_more_bets_late")
    if rd.opts.ruleset == MA_BACCARAT and rd.curator is not None:
        kinds.append("holder_seat_out_of_range")
    return kinds + wager_faults(rd, ctx)


def wager_faults(rd: Round, ctx: RoundContext) -> list[str]:
    checks: dict[str, object] = {
        "late_wager": rd.wagers,
        "seat_out_of_range": movable_wagers(rd),
        "wrong_result": result_candidates(rd),
        "overpayment": paid_wagers(rd),
        "underpayment": paid_wagers(rd),
        "commission_missing": [w for w in rd.wagers if w.commission > 0],
        "commission_misrounded": [w for w in rd.wagers if misrounded(w, rd) is not None],
        "wrong_paytable": paytable_candidates(rd),
        "rollover_excess": rollover_candidates(rd),
        "impermissible_bet": impermissible_options(rd),
        "curator_not_passing": ctx.keep_curator,
        "bank_not_passing": ctx.keep_bank,
    }
    if rd.opts.chemin:
        checks["bank_stake_out_of_range"] = True
        checks["bank_overcovered"] = overcover_room(rd)
        checks["suivi_not_entitled"] = [
            w for w in rd.wagers if w.call == "banco" and w.seat != ctx.suivi_seat
        ]
        checks["call_below_bank"] = [w for w in rd.wagers if w.call in ("suivi", "banco")]
        checks["bank_bid_missing"] = rd.banker_bid is not None
        # Only where the Bank then passes anyway (its hand lost): a Bank without its wager
        # would otherwise also break the next round's stake ladder.
        checks["banker_wager_misplaced"] = rd.facts.outcome == "player" and len(ctx.seats) > 1
    return [kind for kind, found in checks.items() if found]


def draw_faults(rd: Round) -> list[str]:
    f = rd.facts
    if f.p_nat or f.b_nat:
        return []  # nobody may draw on a Natural; a draw there would also change "Natural"
    chemin = rd.opts.chemin
    p2, b2 = point_count(rd.pc[:2]), point_count(rd.bc[:2])
    p_drew, b_drew = len(rd.pc) == 3, len(rd.bc) == 3
    # Chemin de Fer Banker 4-6 after a Player who stayed is INDEX Ambiguity 1: keep clear.
    unclear = chemin and not p_drew and b2 in (4, 5, 6)
    kinds = []
    if p_drew and (not chemin or p2 <= 4):
        kinds.append("player_draw_missing")
    if p2 >= 6:
        kinds.append("player_draw_extra")
    if not unclear:
        kinds.append("banker_draw_missing" if b_drew else "banker_draw_extra")
    return kinds


def outcome_alternatives(rd: Round) -> list[str]:
    # Where a Banker's loss forces a pass, a mislabelled "player" would make the pass
    # look wrong too; keep the fault to one regulation by never touching that label.
    passing = rd.opts.ruleset in (MA_BACCARAT, CHEMIN)
    if passing and rd.outcome == "player":
        return []
    return [
        o
        for o in ("player", "banker", "tie")
        if o != rd.outcome and not (passing and o == "player")
    ]


def swap_positions(rd: Round) -> list[int]:
    # Swaps inside the first four cards only: both cards stay in this round's hands.
    s = rd.seq
    return [k for k in range(3) if s[rd.start + k] != s[rd.start + k + 1]]


def foreign_candidates(rd: Round, ctx: RoundContext) -> list[tuple[str, int, int]]:
    """(hand, index, card) replacements by a card of equal points (so draws, totals and
    outcome stay right) of which every copy in the shoe has already reached a hand."""
    out = []
    for hand, cards in (("P", rd.pc), ("B", rd.bc)):
        for i, card in enumerate(cards):
            for other in SAME_POINTS[POINTS[card]]:
                if other != card and ctx.hand_counts[other] >= ctx.decks:
                    out.append((hand, i, other))
    return out


def movable_wagers(rd: Round) -> list[Wager]:
    # Wagers whose seat nothing else depends on: not a rollover, a personal Royal 9,
    # the Bank, a Suivi or Banco caller (who may call Suivi next), or a commission that
    # a marker collection must find at that seat.
    marker = rd.opts.commission_collection == "marker"
    return [
        w
        for w in rd.wagers
        if w.bet not in ("royal9", "house_money", "banker" if rd.opts.chemin else "")
        and w.rollover is None
        and w.call in (None, "partial")
        and not (marker and w.commission)
    ]


def result_candidates(rd: Round) -> list[Wager]:
    return [w for w in rd.wagers if w.bet in ("banker", "player", "tie")]


def paid_wagers(rd: Round) -> list[Wager]:
    # Progressive Royal 9 amounts cannot be checked, so they cannot be wrong; a House
    # Money payout that was rolled over also sets the rollover, a second rule.
    rolled = {w.seat for w in rd.wagers if w.rollover is not None}
    return [
        w
        for w in rd.wagers
        if w.result == "win"
        and w.payout > 0
        and not (w.award and ROYAL9_FIXED[w.award] is None)
        and not (w.bet == "house_money" and w.seat in rolled)
    ]


def paytable_candidates(rd: Round) -> list[tuple[Wager, int, str]]:
    table = rd.opts.dragon_bonus_paytable
    out = []
    for w in rd.wagers:
        if table is None or w.result != "win" or not w.bet.startswith("dragon_bonus"):
            continue
        margin = dragon_margin(w.bet, rd.settled)
        if margin is None:
            continue
        for other, odds in DRAGON_PAYTABLES.items():
            if odds[margin] != DRAGON_PAYTABLES[table][margin]:
                out.append((w, margin, other))
    return out


def rollover_candidates(rd: Round) -> list[tuple[Wager, Wager]]:
    out = []
    for w in rd.wagers:
        if w.bet == "house_money" and w.result == "win":
            target = main_wager_at(rd.wagers, w.seat)
            if target is not None:
                out.append((w, target))
    return out


def misrounded(w: Wager, rd: Round) -> int | None:
    """A commission rounded the wrong way that differs from the correct one, if any."""
    if w.commission <= 0:
        return None
    pct, rounding = rd.opts.commission_percent, rd.opts.commission_rounding
    unit = commission_unit(pct)
    exact = w.payout * pct  # hundredths of a cent
    if rounding:  # rounded to the nearest step, or not rounded at all
        alternatives = ((exact + unit * 50) // (unit * 100) * unit, (exact + 50) // 100)
    else:  # rounded up to the step, or truncated
        alternatives = (commission(w.payout, pct, True), exact // 100)
    return next((alt for alt in alternatives if alt != w.commission), None)


def impermissible_options(rd: Round) -> list[tuple[str, int]]:
    """(bet, amount) pairs the table's ruleset or options do not permit."""
    o = rd.opts
    if o.chemin:  # no side wagers at all; on a tie Chemin voids everything, so skip ties
        return [] if rd.outcome == "tie" else [("house_money", 1000)]
    out = []
    if not o.ez_baccarat:
        out += [("dragon7", 1000), ("panda8", 1000)]
    elif o.ruleset == MARYLAND:
        out.append(("panda8", 1000))
    if o.dragon_bonus_paytable is None:
        out += [(bet, 2500) for bet in dragon_sides_all_tables_agree(rd)]
    if not o.house_money:
        out.append(("house_money", 1000))
    if o.royal9_paytable is not None:
        out.append(("royal9", 1000))  # a Royal 9 wager other than the fixed $5
    elif o.ruleset in (MA_BACCARAT, MIDI):
        out.append(("royal9", ROYAL9_STAKE))
    return out


def dragon_sides_all_tables_agree(rd: Round) -> list[str]:
    # A Dragon Bonus at a table without a paytable has no stated odds; only place one
    # where paytables A, B and C would settle it alike.
    f = rd.settled
    out = []
    for bet, args in (
        ("dragon_bonus_banker", (f.bt, f.b_nat, f.pt, f.p_nat)),
        ("dragon_bonus_player", (f.pt, f.p_nat, f.bt, f.b_nat)),
    ):
        if len({dragon_bonus(*args, t) for t in DRAGON_PAYTABLES}) == 1:
            out.append(bet)
    return out


def overcover_room(rd: Round) -> list[int]:
    if not any(w.call == "partial" for w in rd.wagers):
        return []
    used = {w.seat for w in rd.wagers}
    return [s for s in range(1, rd.opts.seats + 1) if s not in used]


# -- injection ---------------------------------------------------------------------------


def inject(kind: str, rd: Round, ctx: RoundContext) -> Fault:
    return INJECTORS[kind](rd, ctx)


def _redraw(kind: str) -> Callable[[Round, RoundContext], Fault]:
    def apply(rd: Round, ctx: RoundContext) -> Fault:
        rules = f"P {_names(rd.pc)} B {_names(rd.bc)}"
        rd.force = kind
        rd.play()
        dealt = f"P {_names(rd.pc)} B {_names(rd.bc)}"
        return Fault(kind, f"{kind.replace('_', ' ')}: dealt {dealt}, the rules give {rules}")

    return apply


def _wrong_total(which: str) -> Callable[[Round, RoundContext], Fault]:
    def apply(rd: Round, ctx: RoundContext) -> Fault:
        attr = f"{which}_total"
        true = getattr(rd, attr)
        logged = (true + 1 + ctx.rs.below(9)) % 10
        setattr(rd, attr, logged)
        return Fault(f"wrong_{which}_total", f"{which} total logged {logged}, cards give {true}")

    return apply


def _wrong_outcome(rd: Round, ctx: RoundContext) -> Fault:
    true = rd.outcome
    rd.outcome = ctx.rs.pick(outcome_alternatives(rd))
    return Fault("wrong_outcome", f"outcome logged {rd.outcome}, cards give {true}")


def _ez_missing(rd: Round, ctx: RoundContext) -> Fault:
    true, rd.ez_event = rd.ez_event, None
    return Fault("ez_event_missing", f"{true} not announced")


def _ez_wrong(rd: Round, ctx: RoundContext) -> Fault:
    rd.ez_event = "dragon7" if rd.opts.ruleset == MARYLAND else ctx.rs.pick(("dragon7", "panda8"))
    return Fault("ez_event_wrong", f"{rd.ez_event} announced without one")


def _sequence_mismatch(rd: Round, ctx: RoundContext) -> Fault:
    rd.swap = k = ctx.rs.pick(swap_positions(rd))
    a, b = rd.seq[rd.start + k], rd.seq[rd.start + k + 1]
    rd.play()
    return Fault(
        "sequence_mismatch",
        f"cards {k + 1} and {k + 2} of the round dealt as {CARD_NAMES[b]} {CARD_NAMES[a]}, "
        f"card_sequence reads {CARD_NAMES[a]} {CARD_NAMES[b]}",
    )


def _foreign_card(rd: Round, ctx: RoundContext) -> Fault:
    hand, i, card = ctx.rs.pick(foreign_candidates(rd, ctx))
    true = (rd.pc if hand == "P" else rd.bc)[i]
    rd.replace = (hand, i, card)
    rd.play()
    who = "Player" if hand == "P" else "Banker"
    return Fault(
        "foreign_card",
        f"{who} card {i + 1} is {CARD_NAMES[card]} (all {ctx.decks} copies already dealt in "
        f"the shoe) where the sequence reads {CARD_NAMES[true]}",
    )


def _wager_on_free_round(rd: Round, ctx: RoundContext) -> Fault:
    seats = [(s, p) for s, p in ctx.seats if s != rd.banker_seat] or ctx.seats
    seat, patron = ctx.rs.pick(seats)
    bet = "player" if rd.opts.chemin else ctx.rs.pick(("banker", "player"))
    call = "partial" if rd.opts.chemin else None
    w = Wager(
        seat, patron, bet, ctx.rs.pick((2500, 5000, 10000)), ctx.placed_at(), ctx.rs.u(), call
    )
    # Chemin de Fer wagers against the Banker settle like a 1:1 Player wager.
    settle_wager(w, rd.settled, rd.opts)
    rd.wagers.append(w)
    return Fault("wager_on_free_round", f"{bet} wager on a {rd.kind} round", wager=w)


def _free_hand_not_allowed(rd: Round, ctx: RoundContext) -> Fault:
    rd.kind = "free"
    return Fault(
        "free_hand_not_allowed", f"a simulated round logged as a Free Hand at {rd.opts.ruleset}"
    )


def _holder_not_of_game(rd: Round, ctx: RoundContext) -> Fault:
    """A seat logged in the holder column the game does not use (ma-baccarat's Banker,
    Chemin de Fer's curator, any holder where the dealer deals)."""
    seat, _ = ctx.rs.pick(ctx.seats)
    if rd.opts.ruleset == MA_BACCARAT:
        rd.banker_seat, column = seat, "banker_seat"
    else:
        rd.curator, column = seat, "curator_seat"
    return Fault("holder_not_of_game", f"{column} {seat} logged at {rd.opts.ruleset}")


def _holder_seat_out_of_range(rd: Round, ctx: RoundContext) -> Fault:
    rd.curator = rd.opts.seats + 1 + ctx.rs.below(3)
    return Fault(
        "holder_seat_out_of_range", f"curator_seat {rd.curator} at a table of {rd.opts.seats}"
    )


def _late_wager(rd: Round, ctx: RoundContext) -> Fault:
    w = ctx.rs.pick(rd.wagers)
    # A round takes one fault: "no more bets" is still logged (no_more_bets_late unlogs it).
    assert rd.nmb is not None
    gap_ms = max(1, (rd.dealt - rd.nmb) // 1000)
    placed = rd.nmb + (1 + ctx.rs.below(gap_ms)) * 1000
    w.placed_at = placed
    late = (placed - rd.nmb) / 1e6
    return Fault("late_wager", f"{w.bet} wager placed {late:.3f}s after no more bets", wager=w)


def _seat_out_of_range(rd: Round, ctx: RoundContext) -> Fault:
    w = ctx.rs.pick(movable_wagers(rd))
    w.seat = rd.opts.seats + 1 + ctx.rs.below(2)
    return Fault("seat_out_of_range", f"{w.bet} wager at seat {w.seat} of {rd.opts.seats}", wager=w)


def _impermissible_bet(rd: Round, ctx: RoundContext) -> Fault:
    bet, amount = ctx.rs.pick(impermissible_options(rd))
    seats = [(s, p) for s, p in ctx.seats if s != rd.banker_seat] or ctx.seats
    seat, patron = ctx.rs.pick(seats)
    w = Wager(seat, patron, bet, amount, ctx.placed_at(), ctx.rs.u())
    settle_wager(w, rd.settled, rd.opts)
    rd.wagers.append(w)
    why = "royal9 wager other than $5.00" if bet == "royal9" and amount != ROYAL9_STAKE else bet
    return Fault("impermissible_bet", f"{why} not permitted at this table", wager=w)


def _money(kind: str, rd: Round, w: Wager, change: Callable[[], None], what: str) -> Fault:
    chemin = rd.opts.chemin
    before = net_result(w, rd.wagers, chemin)
    change()
    return Fault(kind, what, net_result(w, rd.wagers, chemin) - before, w)


def _overpayment(rd: Round, ctx: RoundContext) -> Fault:
    w = ctx.rs.pick(paid_wagers(rd))
    delta = w.payout if ctx.rs.u() < 0.4 else max(1, w.payout * (10 + ctx.rs.below(60)) // 100)
    correct = w.payout

    def change() -> None:
        w.payout += delta

    return _money(
        "overpayment", rd, w, change, f"{w.bet} paid {usd(correct + delta)}, owed {usd(correct)}"
    )


def _underpayment(rd: Round, ctx: RoundContext) -> Fault:
    w = ctx.rs.pick(paid_wagers(rd))
    delta = max(1, w.payout * (10 + ctx.rs.below(50)) // 100)
    correct = w.payout

    def change() -> None:
        w.payout -= delta

    return _money(
        "underpayment", rd, w, change, f"{w.bet} paid {usd(correct - delta)}, owed {usd(correct)}"
    )


def _wrong_paytable(rd: Round, ctx: RoundContext) -> Fault:
    w, margin, other = ctx.rs.pick(paytable_candidates(rd))

    def change() -> None:
        w.payout = w.amount * DRAGON_PAYTABLES[other][margin]

    what = (
        f"{w.bet} win by {margin} paid on Paytable {other}, table uses "
        f"Paytable {rd.opts.dragon_bonus_paytable}"
    )
    return _money("wrong_paytable", rd, w, change, what)


def _wrong_result(rd: Round, ctx: RoundContext) -> Fault:
    w = ctx.rs.pick(result_candidates(rd))
    correct = w.result
    logged = ctx.rs.pick([r for r in ("win", "lose", "push") if r != correct])
    return _money(
        "wrong_result",
        rd,
        w,
        lambda: settle_as(w, logged, rd),
        f"{w.bet} settled {logged}, cards give {correct}",
    )


def settle_as(w: Wager, result: str, rd: Round) -> None:
    """Settle `w` consistently as `result`, whatever the cards say."""
    if result != "win":
        w.set(result)
        return
    o = rd.opts
    pct, rounding = o.commission_percent, o.commission_rounding
    if o.chemin:
        bank = next(x for x in rd.wagers if x.bet == "banker")
        covered = min(bank.amount, sum(x.amount for x in rd.wagers if x.bet == "player"))
        won = covered if w.bet == "banker" else w.amount
        w.set("win", won, commission(won, pct, rounding) if w.bet == "banker" else 0)
    elif w.bet == "tie":
        w.set("win", w.amount * o.tie_pays)
    else:
        vig = commission(w.stake, pct, rounding) if w.bet == "banker" and not o.ez_baccarat else 0
        w.set("win", w.stake, vig)


def _commission_missing(rd: Round, ctx: RoundContext) -> Fault:
    w = ctx.rs.pick([w for w in rd.wagers if w.commission > 0])
    owed = w.commission

    def change() -> None:
        w.commission = 0

    return _money("commission_missing", rd, w, change, f"commission {usd(owed)} not charged")


def _commission_misrounded(rd: Round, ctx: RoundContext) -> Fault:
    w, logged = ctx.rs.pick(
        [(w, logged) for w in rd.wagers if (logged := misrounded(w, rd)) is not None]
    )
    owed = w.commission

    def change() -> None:
        w.commission = logged

    what = f"commission {usd(logged)} on {usd(w.payout)} won, owed {usd(owed)}"
    return _money("commission_misrounded", rd, w, change, what)


def _rollover_excess(rd: Round, ctx: RoundContext) -> Fault:
    hm, target = ctx.rs.pick(rollover_candidates(rd))
    share = hm.payout * rd.opts.house_money_rollover_percent // 100
    target.rollover = hm.payout if share < hm.payout else hm.payout + 500
    settle_wager(target, rd.settled, rd.opts)
    what = f"rollover {usd(target.rollover)} exceeds the authorised share {usd(share)}"
    return Fault("rollover_excess", what, wager=target)


def _bank_stake(rd: Round, ctx: RoundContext) -> Fault:
    bank = next(w for w in rd.wagers if w.bet == "banker")
    step = (1 + ctx.rs.below(20)) * 2500
    if ctx.first_of_bank:
        rd.banker_bid = bank.amount + step
        what = f"Bank's first stake {usd(bank.amount)} below its bid {usd(rd.banker_bid)}"
    else:
        prev = ctx.prev_bank_amount or bank.amount
        new = 2 * prev + step
        for w in rd.wagers:
            if w is bank or w.call in ("suivi", "banco"):
                w.amount = new  # Suivi and Banco stay equal to the Bank (§6(b)-(c))
        rd.settle()
        what = f"Bank stake {usd(new)} above twice the previous {usd(prev)}"
    return Fault("bank_stake_out_of_range", what, wager=bank)


def _bank_overcovered(rd: Round, ctx: RoundContext) -> Fault:
    bank = next(w for w in rd.wagers if w.bet == "banker")
    against = sum(w.amount for w in rd.wagers if w.bet == "player")
    low, high = bank.amount - against + 1, bank.amount - 1  # each stays under the Bank
    amount = low + ctx.rs.below(high - low + 1)
    if -(-amount // 100) * 100 <= high:
        amount = -(-amount // 100) * 100
    seat = ctx.rs.pick(overcover_room(rd))
    patron = next((p for s, p in ctx.seats if s == seat), None)
    rd.wagers.append(Wager(seat, patron, "player", amount, ctx.placed_at(), ctx.rs.u(), "partial"))
    rd.settle()
    what = f"wagers against the Bank total {usd(against + amount)}, Bank {usd(bank.amount)}"
    return Fault("bank_overcovered", what)


def _suivi_not_entitled(rd: Round, ctx: RoundContext) -> Fault:
    w = ctx.rs.pick([w for w in rd.wagers if w.call == "banco" and w.seat != ctx.suivi_seat])
    w.call = "suivi"
    entitled = "nobody" if ctx.suivi_seat is None else f"seat {ctx.suivi_seat}"
    return Fault(
        "suivi_not_entitled", f"suivi called at seat {w.seat}; entitled: {entitled}", wager=w
    )


def _no_more_bets_late(rd: Round, ctx: RoundContext) -> Fault:
    # After the cards, or never logged; every wager was still placed before the cards.
    if ctx.rs.u() < 0.5:
        rd.nmb = None
        return Fault("no_more_bets_late", '"no more bets" not logged')
    rd.nmb = rd.dealt + (1 + ctx.rs.below(5)) * 1_000_000
    return Fault("no_more_bets_late", '"no more bets" logged after "cards"')


def _bank_bid_missing(rd: Round, ctx: RoundContext) -> Fault:
    rd.banker_bid = None
    return Fault(
        "bank_bid_missing", f"first round of the Bank at seat {rd.banker_seat} without its bid"
    )


def _call_below_bank(rd: Round, ctx: RoundContext) -> Fault:
    w = ctx.rs.pick([w for w in rd.wagers if w.call in ("suivi", "banco")])
    bank = next(b for b in rd.wagers if b.bet == "banker")
    w.amount = max(100, (bank.amount * (1 + ctx.rs.below(9)) // 10) // 100 * 100)
    rd.settle()
    return Fault(
        "call_below_bank",
        f"{w.call} of {usd(w.amount)} against a Bank of {usd(bank.amount)}",
        wager=w,
    )


def _banker_wager_misplaced(rd: Round, ctx: RoundContext) -> Fault:
    bank = next(b for b in rd.wagers if b.bet == "banker")
    bank.seat, bank.patron = ctx.rs.pick([sp for sp in ctx.seats if sp[0] != rd.banker_seat])
    return Fault(
        "banker_wager_misplaced",
        f"Banker's wager logged at seat {bank.seat}, Banker at {rd.banker_seat}",
    )


def _keep_curator(rd: Round, ctx: RoundContext) -> Fault:
    assert ctx.keep_curator is not None
    ctx.keep_curator()
    return Fault(
        "curator_not_passing", f"curator at seat {rd.curator} kept the shoe after a Banker loss"
    )


def _keep_bank(rd: Round, ctx: RoundContext) -> Fault:
    assert ctx.keep_bank is not None
    ctx.keep_bank()
    return Fault("bank_not_passing", f"Banker at seat {rd.banker_seat} kept the Bank after a loss")


INJECTORS: dict[str, Callable[[Round, RoundContext], Fault]] = {
    "player_draw_missing": _redraw("player_draw_missing"),
    "player_draw_extra": _redraw("player_draw_extra"),
    "banker_draw_missing": _redraw("banker_draw_missing"),
    "banker_draw_extra": _redraw("banker_draw_extra"),
    "wrong_player_total": _wrong_total("player"),
    "wrong_banker_total": _wrong_total("banker"),
    "wrong_outcome": _wrong_outcome,
    "ez_event_missing": _ez_missing,
    "ez_event_wrong": _ez_wrong,
    "sequence_mismatch": _sequence_mismatch,
    "foreign_card": _foreign_card,
    "wager_on_free_round": _wager_on_free_round,
    "late_wager": _late_wager,
    "seat_out_of_range": _seat_out_of_range,
    "impermissible_bet": _impermissible_bet,
    "overpayment": _overpayment,
    "underpayment": _underpayment,
    "wrong_paytable": _wrong_paytable,
    "wrong_result": _wrong_result,
    "commission_missing": _commission_missing,
    "commission_misrounded": _commission_misrounded,
    "rollover_excess": _rollover_excess,
    "bank_stake_out_of_range": _bank_stake,
    "bank_overcovered": _bank_overcovered,
    "suivi_not_entitled": _suivi_not_entitled,
    "curator_not_passing": _keep_curator,
    "bank_not_passing": _keep_bank,
    "free_hand_not_allowed": _free_hand_not_allowed,
    "holder_not_of_game": _holder_not_of_game,
    "holder_seat_out_of_range": _holder_seat_out_of_range,
    "call_below_bank": _call_below_bank,
    "no_more_bets_late": _no_more_bets_late,
    "bank_bid_missing": _bank_bid_missing,
    "banker_wager_misplaced": _banker_wager_misplaced,
}


def _names(cards: Sequence[int]) -> str:
    return "-".join(CARD_NAMES[c] for c in cards)
