"""Royal 9: the chance of each paytable line, from the suits and ranks of four cards.

A Royal 9 wager is decided by the first two cards of each hand (the first four dealt):
a hand is a Royal 9 when they are a nine and a J, Q or K (never a ten), its
combination written face card first ("KS9H", as `auditor/settlement/royal9.py` writes
it), suited when both share a suit. Point values cannot tell a King from a ten nor
one suit from another, so this enumeration is by card: each hand is one of the 48
combinations (3 faces x 4 suits x 4 suits of the nine) or no Royal 9, and the chance of
each pair of hands is counted exactly without replacement from `decks` copies of
every card (the order P1 B1 P2 B2 does not change which cards each hand holds).

A wager gets the first line of its paytable it meets (INDEX Ambiguity 23), with the
line predicates of `auditor.packs.model.ROYAL9_MATCHES` evaluated on the combinations
posted at the wager's chair and at the other chairs: the pack's chairs (the curator game's
§13(i) Table 2), or where the pack lists none (midi: one unique combination per
seat, posted at the table) `seats` distinct combinations of the pack's suitedness,
taken in order; with one combination per chair every choice gives the same figures.

A progressive line pays a meter, not a fixed amount: its chance is reported and the
wager's value counts it as a win of $0 of fixed money (the stake is not lost), so the
value is a floor that each meter dollar raises by the line's chance.
"""

from __future__ import annotations

import functools
from collections import Counter
from fractions import Fraction

from auditor import contract
from auditor.odds.shoe import falling
from auditor.odds.table_options import TableOptions
from auditor.odds.wagers import Priced
from auditor.packs.model import ROYAL9_MATCHES, Royal9PaytableRule, RulePack

FACE_RANKS = "KQJ"
COMBOS = tuple(f"{f}{s}9{t}" for f in FACE_RANKS for s in contract.SUITS for t in contract.SUITS)
Hand = str | None  # a combination, or None: not a Royal 9


def suited(combo: Hand) -> bool:
    return combo is not None and combo[1] == combo[3]


def hand_pairs(decks: int) -> dict[tuple[Hand, Hand], Fraction]:
    """The chance of each (Player combination, Banker combination), None: no Royal 9."""
    counts, total = pair_counts(decks)
    return {key: Fraction(n, total) for key, n in counts}


@functools.cache
def pair_counts(decks: int) -> tuple[tuple[tuple[tuple[Hand, Hand], int], ...], int]:
    """`hand_pairs` as integer ways over their common total: ((pair, ways), ...), total.

    Computed once per deck count (every chair and paytable of a run reads it), and kept
    in integers so that summing lines is integer addition, not a reduction of Fractions.
    """
    cards = len(contract.RANKS) * len(contract.SUITS) * decks
    total = falling(cards, 4)
    counts: dict[tuple[Hand, Hand], int] = {}
    one_hand = 2 * decks * decks * falling(cards - 2, 2)
    for p in COMBOS:
        for b in COMBOS:
            copies = Counter((p[:2], p[2:], b[:2], b[2:]))
            ways = 1
            for used in copies.values():
                ways *= falling(decks, used)
            counts[(p, b)] = 4 * ways  # each hand's two cards in either order
    for c in COMBOS:
        counts[(c, None)] = one_hand - sum(counts[(c, b)] for b in COMBOS)
        counts[(None, c)] = one_hand - sum(counts[(p, c)] for p in COMBOS)
    counts[(None, None)] = total - sum(counts.values())
    return tuple(counts.items()), total


def posted(pack: RulePack, options: TableOptions) -> tuple[frozenset, frozenset, list[str]]:
    """Combinations posted at the wager's chair and at the other chairs, and notes."""
    royal9 = pack.payouts.royal9
    assert royal9 is not None
    chosen = royal9.seat_combinations
    notes: list[str] = []
    seat = options.seat
    if chosen.chairs:
        chairs = {chair: set(combos) for chair, combos in chosen.chairs.items()}
        source = f"the pack's chairs ({pack.cite(chosen.cite)})"
    else:
        limits = pack.limits.royal9
        allowed = limits.seats if limits and limits.seats else None
        # A pack may state no seat limit at all (`seats: null`), as it may state no maximum.
        most = pack.limits.seats.max if pack.limits.seats is not None else None
        seats = options.seats or (max(allowed) if allowed else most or 1)
        if allowed and seats not in allowed:
            notes.append(f"Royal 9 is offered at {', '.join(map(str, allowed))} seats only")
        per_seat = chosen.per_seat or 1
        pool = [c for c in COMBOS if suited(c) == chosen.suited]
        chairs = {
            chair + 1: set(pool[chair * per_seat : (chair + 1) * per_seat])
            for chair in range(seats)
        }
        source = f"{seats} chairs, {per_seat} distinct combination(s) each, taken in order"
    mine = frozenset(chairs.get(seat, set()))
    other = frozenset(c for chair, combos in chairs.items() if chair != seat for c in combos)
    if not mine:
        notes.append(f"chair {seat} posts no combination: the personal lines cannot win there")
    notes.insert(0, f"chair {seat}; combinations posted: {source}")
    return mine, other, notes


def _matches(p: Hand, b: Hand, mine: frozenset, other: frozenset) -> dict[str, bool]:
    same = p is not None and p == b
    return {
        "personal_both_same": same and p in mine,
        "personal_both_different": p in mine and b in mine and not same,
        "personal_banker": b in mine,
        "personal_player": p in mine,
        "other_seat_both_same": same and p in other,
        "suited_royal9_both": suited(p) and suited(b),
        "royal9_both": p is not None and b is not None,
        "suited_royal9_any": suited(p) or suited(b),
        "royal9_any": p is not None or b is not None,
    }


def line_chances(
    table: Royal9PaytableRule, decks: int, mine: frozenset, other: frozenset
) -> dict[str, Fraction]:
    """The chance of each line (the first a wager meets), in the paytable's order."""
    counts, total = pair_counts(decks)
    ways = dict.fromkeys((line.name for line in table.lines), 0)
    # Which line a pair meets depends only on which of the sets each hand is in, whether
    # both are the same and suited: decided once per such signature.
    first_line: dict[tuple, str | None] = {}
    for (p, b), n in counts:
        signature = (
            p is None,
            b is None,
            p in mine,
            b in mine,
            p in other,
            b in other,
            p is not None and p == b,
            suited(p),
            suited(b),
        )
        if signature not in first_line:
            met = _matches(p, b, mine, other)
            assert set(met) == set(ROYAL9_MATCHES)
            first_line[signature] = next((x.name for x in table.lines if met[x.match]), None)
        line = first_line[signature]
        if line is not None:
            ways[line] += n
    return {name: Fraction(n, total) for name, n in ways.items()}


def royal9_wagers(pack: RulePack, decks: int, options: TableOptions) -> list[Priced]:
    """Each line of each Royal 9 paytable (or the table's), and the wager's fixed value."""
    royal9 = pack.payouts.royal9
    if royal9 is None or "royal9" not in pack.permitted:
        return []
    tables = {
        name: table
        for name, table in royal9.paytables.items()
        if options.royal9_paytable in (None, name)
    }
    if not tables:
        return []
    mine, other, notes = posted(pack, options)
    limits = pack.limits.royal9
    if limits and decks not in limits.decks:
        notes.append(
            f"Royal 9 is offered with {', '.join(map(str, limits.decks))} decks only "
            f"({pack.cite(limits.cite)})"
        )
    stake = Fraction(royal9.wager.amount)
    rows = []
    for name, table in tables.items():
        chances = line_chances(table, decks, mine, other)
        any_line = sum(chances.values(), Fraction(0))
        for line in table.lines:
            amount = f"${line.amount:,}" if line.amount is not None else str(line.meter)
            rows.append(
                Priced(
                    bet="royal9",
                    variant=f"paytable {name}: {line.name}",
                    pays=amount,
                    win=chances[line.name],
                    push=Fraction(0),
                    lose=1 - chances[line.name],
                    ev=None,
                    cite=pack.cite(table.cite),
                    note="progressive: the meter decides its value" if line.progressive else None,
                )
            )
        fixed = sum(
            (chances[line.name] * Fraction(line.amount) for line in table.lines if line.amount),
            Fraction(0),
        )
        progressive = [line.name for line in table.lines if line.progressive]
        value_note = "; ".join(notes)
        if progressive:
            value_note += (
                f"; progressive lines counted as $0: each meter dollar adds the line's "
                f"chance / ${stake} per unit"
            )
        rows.append(
            Priced(
                bet="royal9",
                variant=f"paytable {name}, fixed lines",
                pays=f"${stake} wager",
                win=any_line,
                push=Fraction(0),
                lose=1 - any_line,
                ev=(fixed - (1 - any_line) * stake) / stake,
                cite=pack.cite(table.cite),
                note=value_note,
            )
        )
    return rows
