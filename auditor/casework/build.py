"""A case's rows: what the case writes, and the rest as the rules of its pack deal it.

Nothing here knows a ruleset by name: the table a case is dealt at (seats, decks,
commission percent) is its pack's `case_table`; who holds the shoe, whether it passes
after the Banker's Hand lost, and whether the Bank stakes its own wager and logs its bid
are the pack's procedures (`deals`, `pass_on_banker_loss`, `bank_stake`,
`bank_bid_logged`).
"""

from __future__ import annotations

from collections import Counter
from copy import deepcopy
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

from auditor.packs.model import RulePack, load_pack

Row = dict[str, Any]  # a contract table's row: its columns' values by name
Rows = dict[str, list[Row]]

T0 = datetime(2026, 11, 24, 18, 0, tzinfo=UTC)
CARDS_PER_DECK = 52
DECK = [rank + suit for suit in "SHDC" for rank in "A23456789TJQK"]
# A void round's cards where the case gives none: the Player's 2 must draw, so the round
# was not played out (a played-out round logged void is TOT003).
VOID_CARDS = {"player_cards": ["KS", "2H"], "banker_cards": ["4C", "3D"]}
# The Bank's stake where a new Bank names no bid: a round figure, well inside any limit.
DEFAULT_BANK = Decimal("1000.00")
MONEY_FIELDS = ("amount", "rollover", "payout", "commission", "banker_bid")
# What the case table gives the `tables` row, from the pack's `case_table`.
CASE_TABLE_FIELDS = ("seats", "decks", "commission_percent")

TABLE: Row = {
    "table_id": "T1",
    "property_id": "P1",
    "effective_from": T0 - timedelta(days=30),
    "automated_shuffler": False,
    "ez_baccarat": False,
    "tie_pays": 8,
    "commission_rounding": True,
    "commission_collection": "at_payout",
    "dragon_bonus_paytable": None,
    "house_money": False,
    "house_money_rollover_percent": 100,
    "royal9_paytable": None,
    "free_hands": False,
}
SHOE: Row = {
    "shoe_id": "S1",
    "table_id": "T1",
    "opened_at": T0,
    "card_sequence": None,
    "cut_index": 100,
    "cover_from_back": 16,
    "burn_card": "5S",
    "burn_count": 5,
}
# A Player natural 9 against a Banker 5: the cards of a round that gives none.
ROUND: Row = {
    "shoe_id": "S1",
    "table_id": "T1",
    "kind": "regular",
    "ez_event": None,
    "cover_card_drawn": False,
    "discarded_after": None,
    "dealer_id": "D7",
    "curator_seat": None,
    "banker_seat": None,
    "banker_bid": None,
    "player_cards": ["9H", "KS"],
    "banker_cards": ["2C", "3D"],
}


class CaseTableMissing(ValueError):
    """The case's pack declares no `case_table` and the case's `table` does not fill it."""


def point(cards: list[str]) -> int:
    """Reference point count: the last digit of the card values (tens and faces 0, ace 1)."""
    value = {"A": 1, "T": 0, "J": 0, "Q": 0, "K": 0}
    return sum(value.get(c[0], int(c[0]) if c[0].isdigit() else 0) for c in cards) % 10


def winner(row: dict) -> str:
    """The hand the cards as dealt give the round to: "player", "banker" or "tie"."""
    player, banker = point(row["player_cards"]), point(row["banker_cards"])
    return "player" if player > banker else "banker" if banker > player else "tie"


def case_table(case: dict, pack: RulePack) -> dict[str, Any]:
    """The case's `tables` row: the template, the pack's case table, the case's own."""
    table = {**deepcopy(TABLE), "ruleset": case["ruleset"]}
    declared = pack.rules.case_table
    if declared is not None:
        table.update({key: getattr(declared, key) for key in CASE_TABLE_FIELDS})
    table.update(case.get("table", {}))
    missing = [key for key in CASE_TABLE_FIELDS if key not in table]
    if missing:
        raise CaseTableMissing(
            f"pack {pack.ruleset} declares no case_table, and the case's table gives no "
            f"{', '.join(missing)}"
        )
    return table


def case_rows(case: dict, pack: RulePack | None = None) -> Rows:
    """Every row of the case's dataset, by contract table; under `pack`, or the built-in
    pack of the case's ruleset."""
    pack = pack if pack is not None else load_pack(case["ruleset"])
    table = case_table(case, pack)
    rows: Rows = {"tables": [table]}
    rows["tables"] += [{**table, **extra} for extra in case.get("tables_rows", [])]
    shoe = {**deepcopy(SHOE), "decks": table["decks"], **case.get("shoe", {})}
    rows["shoes"] = [shoe, *({**shoe, **extra} for extra in case.get("shoes_rows", []))]
    if not case.get("sequence_ends"):
        for row in rows["shoes"]:
            if row["card_sequence"] is not None:
                row["card_sequence"] = completed(row["card_sequence"], row["decks"])
    procedures = pack.procedures
    holder = procedures.deals.seat_column if procedures.deals else None
    template = deepcopy(ROUND)
    if holder is not None:
        template[holder] = 1
    specs = case.get("rounds") or [case["round"]]
    rows["rounds"] = [round_row(template, spec, i) for i, spec in enumerate(specs)]
    passing = procedures.pass_on_banker_loss
    if passing is not None and passing.seat_column is not None:
        pass_the_shoe(rows["rounds"], specs, passing.seat_column, table["seats"])
    first = rows["rounds"][0]
    rows["wagers"] = [wager_row(first, spec, i) for i, spec in enumerate(case.get("wagers", []))]
    if procedures.bank_stake is not None:
        logs_bid = procedures.bank_bid_logged is not None and procedures.bank_bid_logged.value
        hold_the_banks(rows, specs, table, logs_bid)
    for optional in ("commission_collections", "royal9_seats"):
        if optional in case:
            rows[optional] = [money_fields(r) for r in case[optional]]
    return rows


def completed(sequence: list[str], decks: int) -> list[str]:
    """The reader's log of a whole shoe: `sequence`, then the rest of the decks (each card
    up to `decks` times, deck by deck), at most 52 x `decks` cards in all."""
    seen = Counter(sequence)
    rest = [card for copy in range(decks) for card in DECK if seen[card] <= copy]
    return [*sequence, *rest[: max(0, CARDS_PER_DECK * decks - len(sequence))]]


def round_row(template: dict, spec: dict, index: int) -> dict:
    row = deepcopy(template)
    dealt_at = T0 + timedelta(minutes=1 + index)
    row.update(
        round_id=f"R{index + 1}",
        round_no=index + 1,
        dealt_at=dealt_at,
        no_more_bets_at=dealt_at - timedelta(seconds=5),
    )
    if spec.get("kind") == "void":
        row.update(deepcopy(VOID_CARDS))
    row.update(money_fields(spec))
    row.setdefault("player_total", point(row["player_cards"]))
    row.setdefault("banker_total", point(row["banker_cards"]))
    if "outcome" not in spec:
        row["outcome"] = "void" if row["kind"] == "void" else winner(row)
    return row


def pass_the_shoe(rounds: list[dict], specs: list[dict], column: str, seats: int) -> None:
    """Rounds that name no holder: the shoe stays with its holder, and after a regular
    round the Banker's Hand lost it passes to the next seat (within each shoe)."""
    held: dict[str, tuple[int | None, bool]] = {}  # shoe -> (holder, a pass is owed)
    for spec, row in zip(specs, rounds, strict=True):
        holder, owed = held.get(row["shoe_id"], (row[column], False))
        if column not in spec and owed and holder is not None:
            row[column] = holder % seats + 1
        elif column not in spec:
            row[column] = holder
        if row[column] != holder:
            owed = False
        if row["kind"] == "regular":
            owed = row[column] is not None and winner(row) == "player"
        held[row["shoe_id"]] = (row[column], owed)


def hold_the_banks(rows: Rows, specs: list[dict], table: dict, logs_bid: bool) -> None:
    """A covered Bank in each regular round the case gives no wager, and (`logs_bid`) the
    winning bid on each Bank's first regular round that names none."""
    wagered = {w["round_id"] for w in rows["wagers"]}
    last: dict[str, tuple[int, Decimal | None]] = {}  # shoe -> (Banker's seat, stake)
    for spec, row in zip(specs, rows["rounds"], strict=True):
        seat = row["banker_seat"]
        if row["kind"] != "regular" or seat is None:
            continue
        previous = last.get(row["shoe_id"])
        starts = previous is None or previous[0] != seat or row["banker_bid"] is not None
        if row["round_id"] not in wagered:
            carried = None if starts or previous is None else previous[1]
            stake = carried or row["banker_bid"] or DEFAULT_BANK
            rows["wagers"] += covered_bank(row, stake, table, len(rows["wagers"]))
        own = [
            w
            for w in rows["wagers"]
            if w["round_id"] == row["round_id"] and w["bet"] == "banker" and w["seat"] == seat
        ]
        stake = own[0]["amount"] if len(own) == 1 else None
        if logs_bid and starts and "banker_bid" not in spec and stake is not None:
            row["banker_bid"] = stake
        last[row["shoe_id"]] = (seat, stake)


def covered_bank(row: dict, stake: Decimal, table: dict, count: int) -> list[dict]:
    """The Bank's wager at `banker_seat` and a banco at the next seat, settled by the cards:
    the winner is paid the whole stake 1 to 1, the Bank owes its commission on it."""
    won = winner(row)
    seat = row["banker_seat"]
    commission = (stake * table["commission_percent"] / 100).quantize(Decimal("0.01"))
    result = {"banker": "win", "player": "lose", "tie": "push"}[won]
    against = {"win": "lose", "lose": "win", "push": "push"}[result]
    common = {"round_id": row["round_id"], "amount": stake}
    bank = {
        **common,
        "seat": seat,
        "bet": "banker",
        "result": result,
        "payout": stake if result == "win" else Decimal("0.00"),
        "commission": commission if result == "win" else Decimal("0.00"),
    }
    banco = {
        **common,
        "seat": seat % table["seats"] + 1,
        "bet": "player",
        "call": "banco",
        "result": against,
        "payout": stake if against == "win" else Decimal("0.00"),
    }
    return [wager_row(row, spec, count + i) for i, spec in enumerate((bank, banco))]


def wager_row(first_round: dict, spec: dict, index: int) -> dict:
    row = {
        "wager_id": f"W{index + 1}",
        "round_id": first_round["round_id"],
        "seat": 1,
        "patron_id": "PAT1",
        "call": None,
        "rollover": None,
        "placed_at": announced(first_round) - timedelta(seconds=30),
        "payout": "0.00",
        "commission": "0.00",
        "award": None,
    }
    row.update(spec)
    return money_fields(row)


def announced(row: dict) -> datetime:
    """When "no more bets" was called, or would have been where the round logs none."""
    return row["no_more_bets_at"] or row["dealt_at"] - timedelta(seconds=5)


def money_fields(row: dict) -> dict:
    """YAML numbers and strings for money become exact Decimals (never floats)."""
    return {
        k: Decimal(str(v)) if k in MONEY_FIELDS and v is not None else v for k, v in row.items()
    }
