"""Cards, dealing and settlement for the test-data simulator, exact in integer cents.

The simulator is a second, independent statement of the regulations: the auditor's
rule packs are not imported here on purpose, so that a shared misreading cannot make
generated data and audit agree by construction. Money is always an int of cents.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

RANKS = "A23456789TJQK"
SUITS = "SHDC"
# A card is an int code: rank index * 4 + suit index ("AS" = 0, "KC" = 51).
CARD_NAMES = tuple(r + s for r in RANKS for s in SUITS)
CARD_CODES = {name: code for code, name in enumerate(CARD_NAMES)}
RANK_OF = tuple(code // 4 for code in range(52))
SUIT_OF = tuple(code % 4 for code in range(52))
# Point value (§6(a)): ten and faces count zero, ace one.
POINTS = tuple(min(rank + 1, 10) % 10 for rank in RANK_OF)
# Burn value (§5(e)): ten and faces count ten, ace one.
BURN_VALUES = tuple(min(rank + 1, 10) for rank in RANK_OF)
NINE = RANKS.index("9")
FACES = frozenset(RANKS.index(r) for r in "JQK")  # a Royal 9 needs J, Q or K, never a ten

MA_BACCARAT, MIDI, MARYLAND, CHEMIN = RULESETS = (
    "ma-baccarat",
    "ma-midi-baccarat",
    "md-mini-baccarat",
    "ma-chemin-de-fer",
)

# ma-baccarat §13(e), md .12F: odds by winning margin for hands that are not Naturals.
DRAGON_PAYTABLES: dict[str, dict[int, int]] = {
    "A": {9: 30, 8: 10, 7: 6, 6: 4, 5: 2, 4: 1},
    "B": {9: 20, 8: 8, 7: 7, 6: 4, 5: 3, 4: 1},
    "C": {9: 30, 8: 10, 7: 4, 6: 4, 5: 2, 4: 2},
}
NATURAL_WINNER_ODDS = 1
DRAGON7_ODDS = 40  # §13(f)
PANDA8_ODDS = 25  # §13(g)
HOUSE_MONEY_ODDS = {2: 15, 1: 3}  # §13(h): pairs in both hands / in one hand
ROYAL9_STAKE = 500

# Royal 9 lines in printed order, highest first (INDEX Ambiguity 23: one line per wager).
# A value is a fixed payout in cents, or None for a progressive line.
ROYAL9_LINES: dict[str, tuple[tuple[str, int | None], ...]] = {
    MA_BACCARAT: (
        ("Exact Match Personal Progressive", None),
        ("Any Two Personal Progressive", None),
        ("Personal K9 on Banker Hand", None),
        ("Personal K9 on Player Hand", None),
        ("Suited Royal 9 Tie Hand", 150_000),
        ("Royal 9 Tie Hand", 25_000),
        ("Any Suited Royal 9", 5_000),
        ("Any Royal 9", 2_500),
    ),
    MIDI: (
        ("Personal King-9 vs. Personal King-9", None),
        ("Banker Personal King-9", None),
        ("Player Personal King-9", None),
        ("Other Personal King-9 vs. Identical King-9", 500_000),
        ("Suited Royal 9 vs. Suited Royal 9", 150_000),
        ("Royal 9 vs. Royal 9", 25_000),
        ("Any Suited Royal 9", 5_000),
        ("Any Royal 9", 2_500),
    ),
}
ROYAL9_FIXED = {line: pay for lines in ROYAL9_LINES.values() for line, pay in lines}
# ma-baccarat §13(i) Table 2: chair -> (face suit, nine suit), for King, Queen and Jack.
_TABLE2_SUITS = {1: "SH", 2: "SD", 3: "CH", 4: "CD", 5: "HS", 6: "HC", 7: "DS", 8: "DC", 9: "DH"}
MA_TABLE2: dict[int, frozenset[tuple[int, int]]] = {
    chair: frozenset((CARD_CODES[face + suits[0]], CARD_CODES["9" + suits[1]]) for face in "KQJ")
    for chair, suits in _TABLE2_SUITS.items()
}


@dataclass(frozen=True)
class TableOptions:
    """One `tables` row's options: what settlement and permissibility depend on."""

    ruleset: str
    seats: int
    decks: int
    automated_shuffler: bool = False
    ez_baccarat: bool = False
    tie_pays: int = 8
    commission_percent: int = 5
    commission_rounding: bool = True
    commission_collection: str = "at_payout"
    dragon_bonus_paytable: str | None = None
    house_money: bool = False
    house_money_rollover_percent: int = 100
    royal9_paytable: str | None = None
    free_hands: bool = False
    # seat -> that seat's personal King-9 combinations as (face code, nine code).
    royal9_combos: dict[int, frozenset[tuple[int, int]]] = field(default_factory=dict)

    @property
    def chemin(self) -> bool:
        return self.ruleset == CHEMIN


# -- dealing -------------------------------------------------------------------------


def point_count(cards: Sequence[int]) -> int:
    return sum(POINTS[c] for c in cards) % 10


def player_draws(total: int, chemin: bool, draw_on_5: bool) -> bool:
    """§11(b); Chemin de Fer §8(a): 0-4 draw, 5 at the Dominant Player's option."""
    if chemin and total == 5:
        return draw_on_5
    return total <= 5


def banker_draws(total: int, third: int | None) -> bool:
    """§11(c) with Table 1; `third` is the point value of the Player's third card.

    When the Player stood, draw through 5 (§11(c)(1)); Chemin de Fer uses the same
    reading for its unwritten case (INDEX Ambiguity 1).
    """
    if third is None:
        return total <= 5
    if total <= 2:
        return True
    if total == 3:
        return third != 8
    if total == 4:
        return 2 <= third <= 7
    if total == 5:
        return 4 <= third <= 7
    if total == 6:
        return third in (6, 7)
    return False


# Forced deviations from the draw rules, used by fault injection.
FORCE_PLAYER_STAND = "player_draw_missing"
FORCE_PLAYER_DRAW = "player_draw_extra"
FORCE_BANKER_STAND = "banker_draw_missing"
FORCE_BANKER_DRAW = "banker_draw_extra"


def deal(
    cards: Sequence[int], chemin: bool, draw_on_5: bool, force: str | None = None
) -> tuple[list[int], list[int]]:
    """Deal P B P B [P3] [B3] from `cards` (the shoe from the round's first card on)."""
    pc, bc = [cards[0], cards[2]], [cards[1], cards[3]]
    nxt = 4
    pt, bt = point_count(pc), point_count(bc)
    if pt >= 8 or bt >= 8:  # a Natural: nobody draws (§11(a))
        return pc, bc
    p_draw = player_draws(pt, chemin, draw_on_5)
    if force == FORCE_PLAYER_STAND:
        p_draw = False
    elif force == FORCE_PLAYER_DRAW:
        p_draw = True
    third = None
    if p_draw:
        pc.append(cards[nxt])
        third = POINTS[cards[nxt]]
        nxt += 1
    b_draw = banker_draws(bt, third)
    if force == FORCE_BANKER_STAND:
        b_draw = False
    elif force == FORCE_BANKER_DRAW:
        b_draw = True
    if b_draw:
        bc.append(cards[nxt])
    return pc, bc


def royal9_combo(two: Sequence[int]) -> tuple[tuple[int, int], bool] | None:
    """((face code, nine code), suited) when two cards are a nine and a J, Q or K."""
    a, b = two
    if RANK_OF[b] == NINE and RANK_OF[a] in FACES:
        return (a, b), SUIT_OF[a] == SUIT_OF[b]
    if RANK_OF[a] == NINE and RANK_OF[b] in FACES:
        return (b, a), SUIT_OF[a] == SUIT_OF[b]
    return None


class Facts:
    """What the cards as dealt decide; settlement reads only this."""

    __slots__ = (
        "b_nat",
        "b_r9",
        "bt",
        "dragon7",
        "outcome",
        "p_nat",
        "p_r9",
        "pairs",
        "panda8",
        "pt",
    )

    def __init__(self, pc: Sequence[int], bc: Sequence[int]):
        self.pt, self.bt = point_count(pc), point_count(bc)
        self.p_nat = point_count(pc[:2]) >= 8
        self.b_nat = point_count(bc[:2]) >= 8
        if self.pt > self.bt:
            self.outcome = "player"
        elif self.bt > self.pt:
            self.outcome = "banker"
        else:
            self.outcome = "tie"
        # §1 definitions: three cards in the hand concerned, other hand under 7 / 8.
        self.dragon7 = len(bc) == 3 and self.bt == 7 and self.pt < 7
        self.panda8 = len(pc) == 3 and self.pt == 8 and self.bt < 8
        self.pairs = (RANK_OF[pc[0]] == RANK_OF[pc[1]]) + (RANK_OF[bc[0]] == RANK_OF[bc[1]])
        self.p_r9 = royal9_combo(pc[:2])
        self.b_r9 = royal9_combo(bc[:2])


def natural_drew(pc: Sequence[int], bc: Sequence[int]) -> bool:
    """A hand whose first two cards are a Natural holds a third card (§11(a): no card may
    be dealt to either hand after a Natural)."""
    return any(len(hand) == 3 and point_count(hand[:2]) >= 8 for hand in (pc, bc))


def settled_facts(pc: Sequence[int], bc: Sequence[int]) -> Facts:
    """What the wagers are settled on: the cards as dealt, except where a Natural was
    wrongly given a third card, where every wager is settled on the round as it should
    have been dealt, each hand's first two cards (INDEX Ambiguity 28)."""
    if natural_drew(pc, bc):
        return Facts(pc[:2], bc[:2])
    return Facts(pc, bc)


def ez_event(facts: Facts, opts: TableOptions) -> str | None:
    """The announcement due (§12(a)); Maryland announces Dragon 7 only (.11A(2))."""
    if not opts.ez_baccarat:
        return None
    if facts.dragon7:
        return "dragon7"
    if facts.panda8 and opts.ruleset != MARYLAND:
        return "panda8"
    return None


# -- money ---------------------------------------------------------------------------


def commission_unit(percent: int) -> int:
    """Round-up step in cents: 25 at 5%, 20 at 4% (Chemin de Fer §9(c))."""
    return 20 if percent == 4 else 25


def commission(won: int, percent: int, rounding: bool) -> int:
    """`percent` of `won` cents: rounded up to the step, or half up to the cent."""
    if rounding:
        unit = commission_unit(percent)
        return -(-won * percent // (100 * unit)) * unit
    return (won * percent + 50) // 100


def dragon_bonus(
    own: int, own_nat: bool, other: int, other_nat: bool, paytable: str
) -> tuple[str, int]:
    """(result, odds) of a Dragon Bonus on a hand (§8(a)(4), §13(e))."""
    if own_nat:
        if other_nat and other == own:
            return "push", 0
        if other_nat and other > own:
            return "lose", 0
        return "win", NATURAL_WINNER_ODDS  # includes a Natural 9 over a Natural 8
    margin = own - other
    if other_nat or margin < 4:
        return "lose", 0
    return "win", DRAGON_PAYTABLES[paytable][margin]


def dragon_margin(w_bet: str, f: Facts) -> int | None:
    """The non-Natural winning margin a Dragon Bonus wager was paid on, if any."""
    own, other, nat = (
        (f.bt, f.pt, f.b_nat) if w_bet == "dragon_bonus_banker" else (f.pt, f.bt, f.p_nat)
    )
    if nat or f.p_nat or f.b_nat or own - other < 4:
        return None
    return own - other


def royal9_line(opts: TableOptions, seat: int, f: Facts) -> str | None:
    """The highest Royal 9 line the first two cards of each hand qualify for."""
    p, b = f.p_r9, f.b_r9
    if p is None and b is None:
        return None
    seat_combos = opts.royal9_combos or (MA_TABLE2 if opts.ruleset == MA_BACCARAT else {})
    mine = seat_combos.get(seat, frozenset())
    pk = p[0] if p else None
    bk = b[0] if b else None
    both, suited_both = p and b, p and b and p[1] and b[1]
    any_suited = (p and p[1]) or (b and b[1])
    checks: tuple[bool, ...]
    if opts.ruleset == MIDI:
        others = set().union(*(c for s, c in seat_combos.items() if s != seat))
        checks = (
            pk is not None and pk == bk and pk in mine,
            bk in mine,
            pk in mine,
            pk is not None and pk == bk and pk in others,
        )
    else:
        checks = (
            pk is not None and pk == bk and pk in mine,
            pk in mine and bk in mine and pk != bk,  # Ambiguity 21
            bk in mine,
            pk in mine,
        )
    checks += (bool(suited_both), bool(both), bool(any_suited), True)
    lines = ROYAL9_LINES[MIDI if opts.ruleset == MIDI else MA_BACCARAT]
    for (line, _), hit in zip(lines, checks, strict=True):
        if hit:
            return line
    return None  # pragma: no cover - "Any Royal 9" always matches here


def progressive_payout(line: str, opts: TableOptions, u: float) -> int:
    """A plausible meter reading in cents for a progressive line (logs cannot check it)."""
    if line == "Exact Match Personal Progressive":
        seed = 5_000_000 if opts.royal9_paytable == "1" else 2_500_000
        return seed + int(u * 4_000_000)
    if line == "Any Two Personal Progressive":
        seed = 5_000_000 if opts.royal9_paytable == "1" else 2_500_000
        return (seed + int(u * 4_000_000)) // 10
    if line == "Personal King-9 vs. Personal King-9":
        return 1_000_000 + int(u * 4_000_000)
    return 35_000 + int(u * 150_000)  # the K9 Banker / Player meters, seed $350


def usd(cents: int | None) -> str:
    """Cents as dollars for messages, e.g. -1234 -> "-$12.34"."""
    if cents is None:
        return "none"
    sign = "-" if cents < 0 else ""
    return f"{sign}${abs(cents) // 100:,}.{abs(cents) % 100:02d}"


class Wager:
    """One wager row in the making; amounts in cents, times in epoch microseconds."""

    __slots__ = (
        "amount",
        "award",
        "bet",
        "call",
        "commission",
        "patron",
        "payout",
        "placed_at",
        "result",
        "rollover",
        "seat",
        "u",
        "wager_id",
    )

    def __init__(
        self,
        seat: int,
        patron: str | None,
        bet: str,
        amount: int,
        placed_at: int | None,
        u: float,
        call: str | None = None,
    ):
        self.seat, self.patron, self.bet, self.amount = seat, patron, bet, amount
        self.placed_at, self.u, self.call = placed_at, u, call
        self.rollover: int | None = None
        self.result, self.payout, self.commission = "lose", 0, 0
        self.award: str | None = None
        self.wager_id = ""

    @property
    def stake(self) -> int:
        return self.amount + (self.rollover or 0)

    def set(self, result: str, payout: int = 0, commission_: int = 0) -> None:
        self.result, self.payout, self.commission = result, payout, commission_


def settle_wager(w: Wager, f: Facts, opts: TableOptions) -> None:
    """Settle one non-Chemin-de-Fer wager on the cards as dealt."""
    bet = w.bet
    w.award = None
    if bet == "banker":
        if f.outcome == "tie" or (opts.ez_baccarat and f.dragon7):
            w.set("push")
        elif f.outcome == "banker":
            vig = 0 if opts.ez_baccarat else commission(w.stake, *_vig(opts))
            w.set("win", w.stake, vig)
        else:
            w.set("lose")
    elif bet == "player":
        w.set(*{"player": ("win", w.stake), "banker": ("lose", 0), "tie": ("push", 0)}[f.outcome])
    elif bet == "tie":
        w.set(*(("win", w.amount * opts.tie_pays) if f.outcome == "tie" else ("lose", 0)))
    elif bet in ("dragon_bonus_banker", "dragon_bonus_player"):
        # An impermissible Dragon Bonus (no paytable) is settled on Paytable A; the
        # fault injector only places one where all paytables agree.
        table = opts.dragon_bonus_paytable or "A"
        if bet == "dragon_bonus_banker":
            result, odds = dragon_bonus(f.bt, f.b_nat, f.pt, f.p_nat, table)
        else:
            result, odds = dragon_bonus(f.pt, f.p_nat, f.bt, f.b_nat, table)
        w.set(result, w.amount * odds)
    elif bet == "dragon7":
        w.set(*(("win", w.amount * DRAGON7_ODDS) if f.dragon7 else ("lose", 0)))
    elif bet == "panda8":
        w.set(*(("win", w.amount * PANDA8_ODDS) if f.panda8 else ("lose", 0)))
    elif bet == "house_money":
        odds = HOUSE_MONEY_ODDS.get(f.pairs, 0)
        w.set(*(("win", w.amount * odds) if odds else ("lose", 0)))
    elif bet == "royal9":
        settle_royal9(w, f, opts)
    else:  # pragma: no cover - the generator only makes contract bets
        raise ValueError(bet)


def settle_royal9(w: Wager, f: Facts, opts: TableOptions) -> None:
    line = royal9_line(opts, w.seat, f)
    if line is None:
        w.set("lose")
        return
    fixed = ROYAL9_FIXED[line]
    w.set("win", fixed if fixed is not None else progressive_payout(line, opts, w.u))
    w.award = line


def _vig(opts: TableOptions) -> tuple[int, bool]:
    return opts.commission_percent, opts.commission_rounding


ROLLOVER_TAKE_RATE = 0.6  # share of winning House Money wagers whose payout is rolled over


def settle_round(wagers: list[Wager], f: Facts, opts: TableOptions) -> None:
    """Settle a non-Chemin-de-Fer round, House Money first (§9(e) settles it before
    any third card, and its payout may ride on the same seat's banker/player wager)."""
    for w in wagers:
        w.rollover = None
    for w in wagers:
        if w.bet != "house_money":
            continue
        settle_wager(w, f, opts)
        if w.result == "win" and w.u < ROLLOVER_TAKE_RATE:
            target = main_wager_at(wagers, w.seat)
            share = w.payout * opts.house_money_rollover_percent // 100
            if target is not None and share > 0:
                target.rollover = share
    for w in wagers:
        if w.bet != "house_money":
            settle_wager(w, f, opts)


def main_wager_at(wagers: list[Wager], seat: int) -> Wager | None:
    return next((w for w in wagers if w.seat == seat and w.bet in ("banker", "player")), None)


def settle_chemin(wagers: list[Wager], f: Facts, opts: TableOptions) -> None:
    """Chemin de Fer §5(a), §6(e)-(g), §9: the Banker wins or loses the covered amount."""
    covered = covered_amount(wagers)
    for w in wagers:
        if w.bet == "house_money":  # only ever an injected impermissible wager
            settle_wager(w, f, opts)
        elif f.outcome == "tie":
            w.set("push")
        elif (w.bet == "banker") == (f.outcome == "banker"):
            won = covered if w.bet == "banker" else w.stake
            vig = commission(won, *_vig(opts)) if w.bet == "banker" else 0
            w.set("win", won, vig)
        else:
            w.set("lose")


def covered_amount(wagers: list[Wager]) -> int:
    """§6(e), §9(b): what the wagers against the Bank cover, the Bank's stake at most.
    Every `player` wager is against the Bank, with a call or without (INDEX Ambiguity
    27), and a rollover counts in a wager's stake, the Bank's too (Ambiguity 30)."""
    bank = next(w for w in wagers if w.bet == "banker")
    return min(bank.stake, sum(w.stake for w in wagers if w.bet == "player"))


def net_result(w: Wager, wagers: list[Wager], chemin: bool) -> int:
    """The patron's net in cents: won payout less commission, or the stake lost."""
    if w.result == "win":
        return w.payout - w.commission
    if w.result == "push":
        return 0
    if chemin and w.bet == "banker":
        return -covered_amount(wagers)
    return -w.stake


class Round:
    """One round: its cards come from the shoe window at `start`; `play()` deals and
    settles it. Fault injection sets `force`, `swap` or `replace` and plays it again,
    or edits the logged fields after play, so the cards stay the single truth."""

    __slots__ = (
        "banker_bid",
        "banker_seat",
        "banker_total",
        "bc",
        "cover",
        "curator",
        "dealer",
        "dealt",
        "discarded",
        "draw_on_5",
        "ez_event",
        "facts",
        "force",
        "kind",
        "nmb",
        "opts",
        "outcome",
        "pc",
        "player_total",
        "replace",
        "round_id",
        "round_no",
        "seq",
        "settled",
        "start",
        "swap",
        "used",
        "wagers",
    )

    def __init__(
        self, opts: TableOptions, kind: str, seq: Sequence[int], start: int, draw_on_5: bool
    ):
        self.opts, self.kind, self.seq, self.start = opts, kind, seq, start
        self.draw_on_5 = draw_on_5
        self.force: str | None = None
        self.swap: int | None = None  # swap window cards swap and swap + 1
        self.replace: tuple[str, int, int] | None = None  # (hand "P"/"B", index, card)
        self.wagers: list[Wager] = []
        self.round_id = ""
        self.round_no = self.dealt = 0
        # When "no more bets" was logged; None where the log leaves it out (a fault).
        self.nmb: int | None = 0
        self.dealer = ""
        self.curator: int | None = None
        self.banker_seat: int | None = None
        self.banker_bid: int | None = None
        self.discarded: list[int] | None = None
        self.cover = False

    def play(self) -> None:
        window = list(self.seq[self.start : self.start + 6])
        left = len(window)
        # Past the shoe's last card the deal is completed on paper only, to learn how
        # many cards the hand needed; those cards were never dealt.
        window += [0] * (6 - left)
        if self.swap is not None:
            k = self.swap
            window[k], window[k + 1] = window[k + 1], window[k]
        self.pc, self.bc = deal(window, self.opts.chemin, self.draw_on_5, self.force)
        self.used = len(self.pc) + len(self.bc)
        if self.used > left:
            self.void(left)
            return
        if self.replace is not None:
            hand, idx, code = self.replace
            (self.pc if hand == "P" else self.bc)[idx] = code
        # The announcements follow the cards as dealt; the wagers, the round as it should
        # have been dealt (the same round unless a Natural was given a third card).
        f = self.facts = Facts(self.pc, self.bc)
        self.settled = settled_facts(self.pc, self.bc)
        self.player_total, self.banker_total, self.outcome = f.pt, f.bt, f.outcome
        self.ez_event = ez_event(f, self.opts)
        self.settle()

    def void(self, left: int) -> None:
        """Too few cards to complete the round (ma-baccarat §15(e) and twins, Chemin de
        Fer §11(k)): the hands keep the cards dealt before the shoe ran out, in dealing
        order, and every wager is returned."""
        player_slots = [0, 2, 4] if len(self.pc) == 3 else [0, 2]
        banker_slots = [1, 3] + ([len(self.pc) + 2] if len(self.bc) == 3 else [])
        self.pc = [c for c, i in zip(self.pc, player_slots, strict=True) if i < left]
        self.bc = [c for c, i in zip(self.bc, banker_slots, strict=True) if i < left]
        self.used = left
        self.kind = "void"
        self.player_total, self.banker_total = point_count(self.pc), point_count(self.bc)
        self.outcome, self.ez_event = "void", None
        for w in self.wagers:
            w.result, w.payout, w.commission = "push", 0, 0

    def settle(self) -> None:
        if not self.wagers:
            return
        if self.opts.chemin:
            settle_chemin(self.wagers, self.settled, self.opts)
        else:
            settle_round(self.wagers, self.settled, self.opts)
