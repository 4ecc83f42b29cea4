"""A small, independent plain-Python statement of the regulations (`Checker`), written
from the regulation texts and INDEX.md and not from the simulator's code nor the packs:
on clean simulated data it finds nothing, on faulted data something in exactly the
rounds and shoes the fault key names (`SYMPTOMS`: what it reports for each fault)."""

from __future__ import annotations

import itertools
import math
from collections import Counter, defaultdict
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import polars as pl

from auditor.contract import TABLES

RANKS = "A23456789TJQK"
POINT = {r: (i + 1) % 10 if i < 9 else 0 for i, r in enumerate(RANKS)}  # tens, faces: 0
BURN = {r: min(i + 1, 10) for i, r in enumerate(RANKS)}  # tens, faces: 10 (§5(e))
FILES = (*TABLES, "fault_key")  # a simulated night's files, its fault key among them

DB_ODDS = {  # ma-baccarat §13(e): margin -> odds
    "A": {9: 30, 8: 10, 7: 6, 6: 4, 5: 2, 4: 1},
    "B": {9: 20, 8: 8, 7: 7, 6: 4, 5: 3, 4: 1},
    "C": {9: 30, 8: 10, 7: 4, 6: 4, 5: 2, 4: 2},
}
TABLE2 = {  # ma-baccarat §13(i) Table 2, chairs 1-9: face suit, nine suit
    chair: {(face + fs, "9" + ns) for face in "KQJ"}
    for chair, (fs, ns) in enumerate(
        ["SH", "SD", "CH", "CD", "HS", "HC", "DS", "DC", "DH"], start=1
    )
}
MA_LINES = {
    "Suited Royal 9 Tie Hand": 150_000,
    "Royal 9 Tie Hand": 25_000,
    "Any Suited Royal 9": 5_000,
    "Any Royal 9": 2_500,
}
MIDI_LINES = {
    "Other Personal King-9 vs. Identical King-9": 500_000,
    "Suited Royal 9 vs. Suited Royal 9": 150_000,
    "Royal 9 vs. Royal 9": 25_000,
    "Any Suited Royal 9": 5_000,
    "Any Royal 9": 2_500,
}


def pts(cards: list[str]) -> int:
    return sum(POINT[c[0]] for c in cards) % 10


def outcome_of(pc: list[str], bc: list[str]) -> str:
    pt, bt = pts(pc), pts(bc)
    return "player" if pt > bt else "banker" if bt > pt else "tie"


def cents(value: Decimal | None) -> int | None:
    return None if value is None else int(value * 100)


def banker_should_draw(b2: int, third: str | None) -> bool:
    """ma-baccarat §11(c); Chemin de Fer, Player stood: INDEX Ambiguity 1 (same)."""
    if third is None:
        return b2 <= 5
    t = POINT[third[0]]
    rules = {3: t != 8, 4: 2 <= t <= 7, 5: 4 <= t <= 7, 6: t in (6, 7), 7: False}
    return b2 <= 2 or rules.get(b2, False)


def expected_vig(won: int, pct: int, rounding: bool) -> int:
    exact = Fraction(won * pct, 100)
    if rounding:
        unit = 20 if pct == 4 else 25
        return math.ceil(exact / unit) * unit
    return math.floor(exact + Fraction(1, 2))


def royal9(two: list[str]) -> tuple[tuple[str, str], bool] | None:
    ranks = {two[0][0], two[1][0]}
    if "9" in ranks and ranks - {"9"} and (ranks - {"9"}) <= set("JQK"):
        face = two[0] if two[0][0] != "9" else two[1]
        nine = two[1] if face is two[0] else two[0]
        return (face, nine), face[1] == nine[1]
    return None


class Checker:
    """Independent statement of the rules; `violations` holds (code, shoe, round, wager)."""

    def __init__(self, folder: Path):
        self.d = {name: pl.read_parquet(folder / f"{name}.parquet") for name in FILES}
        self.violations: list[tuple[str, str, str | None, str | None]] = []
        self.options = self._shoe_options()
        self.combos: dict[str, dict[int, set]] = defaultdict(dict)
        for r in self.d["royal9_seats"].iter_rows(named=True):
            self.combos[r["table_id"]][r["seat"]] = {(r["combo"][:2], r["combo"][2:])}
        self.wagers: dict[str, list[dict]] = defaultdict(list)
        for w in self.d["wagers"].iter_rows(named=True):
            self.wagers[w["round_id"]].append(w)

    def flag(self, code: str, shoe: str, rnd: str | None = None, wager: str | None = None):
        self.violations.append((code, shoe, rnd, wager))

    def _shoe_options(self) -> dict[str, dict]:
        rows = defaultdict(list)
        for t in self.d["tables"].sort("effective_from").iter_rows(named=True):
            rows[t["table_id"]].append(t)
        out = {}
        for s in self.d["shoes"].iter_rows(named=True):
            applicable = [t for t in rows[s["table_id"]] if t["effective_from"] <= s["opened_at"]]
            out[s["shoe_id"]] = applicable[-1]
        return out

    def run(self) -> list[tuple[str, str, str | None, str | None]]:
        self.check_tables()
        rounds = defaultdict(list)
        for r in self.d["rounds"].sort("table_id", "dealt_at").iter_rows(named=True):
            rounds[r["shoe_id"]].append(r)
        by_table = defaultdict(list)
        for s in self.d["shoes"].sort("table_id", "opened_at").iter_rows(named=True):
            by_table[s["table_id"]].append(s)
        for shoes in by_table.values():
            for i, shoe in enumerate(shoes):
                nxt = shoes[i + 1]["opened_at"] if i + 1 < len(shoes) else None
                self.check_shoe(shoe, rounds[shoe["shoe_id"]], nxt)
            table_rounds = [r for s in shoes for r in rounds[s["shoe_id"]]]
            opts = self.options[shoes[0]["shoe_id"]]
            if opts["ruleset"] == "ma-baccarat":
                self.check_curator(table_rounds)
            if opts["ruleset"] == "ma-chemin-de-fer":
                self.check_banks(table_rounds)
        return self.violations

    # -- tables -----------------------------------------------------------------------

    def check_tables(self) -> None:
        """Every options row: seats (ma-baccarat §2(a) 10-14; midi §2(a), Maryland .02A(1)
        at most nine; Royal 9 at midi §12(i) six or seven), Chemin de Fer collects at payout
        (§9(c)). A table's violations are keyed by the table id."""
        for t in self.d["tables"].iter_rows(named=True):
            ruleset, seats = t["ruleset"], t["seats"]
            limits = {"ma-baccarat": (10, 14), "ma-midi-baccarat": (1, 9)}
            low, high = limits.get(ruleset, (1, 9) if ruleset == "md-mini-baccarat" else (1, 99))
            if not low <= seats <= high:
                self.flag("table_seats", t["table_id"])
            if ruleset == "ma-midi-baccarat" and t["royal9_paytable"] and seats not in (6, 7):
                self.flag("royal9_seats", t["table_id"])
            if ruleset == "ma-chemin-de-fer" and t["commission_collection"] != "at_payout":
                self.flag("collection_mode", t["table_id"])
        self.check_royal9_chairs()

    def check_royal9_chairs(self) -> None:
        """ma-baccarat §13(i) Table 2, midi §12(i): a combination at one chair only; at midi
        one combination per chair, of two suits."""
        ruleset_of = dict(self.d["tables"].select("table_id", "ruleset").iter_rows())
        chairs: dict[tuple[str, str], set[int]] = defaultdict(set)
        per_chair: Counter = Counter()
        for r in self.d["royal9_seats"].iter_rows(named=True):
            table, combo = r["table_id"], r["combo"]
            chairs[(table, combo)].add(r["seat"])
            per_chair[(table, r["seat"])] += 1
            if ruleset_of[table] == "ma-midi-baccarat" and combo[1] == combo[3]:
                self.flag("royal9_chairs", table)
        if any(len(seats) > 1 for seats in chairs.values()):
            self.flag("royal9_chairs", next(t for (t, _), s in chairs.items() if len(s) > 1))
        for (table, _), n in per_chair.items():
            if ruleset_of[table] == "ma-midi-baccarat" and n > 1:
                self.flag("royal9_chairs", table)

    # -- shoes ------------------------------------------------------------------------

    def check_shoe(self, shoe: dict, rounds: list[dict], next_open) -> None:
        o, sid = self.options[shoe["shoe_id"]], shoe["shoe_id"]
        ruleset, decks, n = o["ruleset"], shoe["decks"], 52 * shoe["decks"]
        low, high = (6, 8) if ruleset in ("ma-baccarat", "md-mini-baccarat") else (6, 99)
        if o["royal9_paytable"] in ("1", "2"):
            low = high = 8
        ok_decks = low <= decks <= high and (o["royal9_paytable"] != "midi" or decks in (6, 8))
        margin = 10 if ruleset == "md-mini-baccarat" else 52
        cover_ok = ruleset == "ma-midi-baccarat" or shoe["cover_from_back"] >= 14
        for code, ok in (
            ("decks", ok_decks),
            ("cut", margin <= shoe["cut_index"] <= n - margin),
            ("cover", cover_ok),
            ("burn", shoe["burn_count"] == BURN[shoe["burn_card"][0]]),
        ):
            if not ok:
                self.flag(code, sid)
        seq = shoe["card_sequence"]
        if seq is not None and (seq[0] != shoe["burn_card"] or len(seq) != n):
            self.flag("sequence_shape", sid)
        self.walk(shoe, rounds, seq, n)
        self.check_collections(shoe, rounds, next_open)

    def walk(self, shoe: dict, rounds: list[dict], seq: list[str] | None, n: int) -> None:
        """Card order, cover card, last hand, card counts and times through one shoe."""
        sid, pos, counts = shoe["shoe_id"], 1 + shoe["burn_count"], Counter()
        cover_pos, after, seen = n - shoe["cover_from_back"], -1, False
        chemin = self.options[sid]["ruleset"] == "ma-chemin-de-fer"
        last = shoe["opened_at"]
        for no, r in enumerate(rounds, start=1):
            rid, pc, bc = r["round_id"], r["player_cards"], r["banker_cards"]
            # P B P B, then the third cards; a void round's hands stop where the shoe ran out.
            dealt = [c for pair in itertools.zip_longest(pc[:2], bc[:2]) for c in pair if c]
            dealt += [*pc[2:], *bc[2:]]
            if seq is not None and seq[pos : pos + len(dealt)] != dealt:
                self.flag("sequence", sid, rid)
            pos += len(dealt)
            if r["kind"] == "void" and (no != len(rounds) or (seq is not None and pos != n)):
                self.flag("void", sid, rid)  # §15(e), §11(k): the cards ran out, the shoe ends
            counts.update(dealt)
            nmb = r["no_more_bets_at"]
            if r["round_no"] != no or not last < r["dealt_at"] or (nmb and not last < nmb):
                self.flag("order", sid, rid)
            # ma-baccarat §9(b), midi §8(b), Maryland .08B: "no more bets" before "cards".
            if r["kind"] == "regular" and not chemin and (nmb is None or nmb > r["dealt_at"]):
                self.flag("no_more_bets", sid, rid)
            last = r["dealt_at"]
            if after >= 0 and r["kind"] not in ("simulated", "void"):
                after += 1
                # Chemin de Fer has no last-hand rule (INDEX Ambiguity 5).
                if not chemin and after > 1:
                    self.flag("hand_after_cover", sid, rid)
            seen = seen or pos > cover_pos
            if r["cover_card_drawn"] != seen:
                self.flag("cover_flag", sid, rid)
            if seen and after < 0:
                after = 0
            if r["discarded_after"] is not None:
                got = r["discarded_after"]
                if len(got) != 2 or (seq is not None and seq[pos : pos + 2] != got):
                    self.flag("discard", sid, rid)
                pos += len(got)
            self.check_round(r, sid)
        if any(c > shoe["decks"] for c in counts.values()):
            self.flag("card_count", sid)

    def check_collections(self, shoe: dict, rounds: list[dict], next_open) -> None:
        """§13(d)(2)(i): marked vig collected after the shoe, before the next one."""
        sid, owed = shoe["shoe_id"], Counter()
        if self.options[sid]["commission_collection"] != "marker":
            if self.d["commission_collections"].filter(shoe_id=sid).height:
                self.flag("collection_without_marker", sid)
            return
        for r in rounds:
            for w in self.wagers[r["round_id"]]:
                if w["commission"]:
                    owed[(w["seat"], w["patron_id"])] += cents(w["commission"])
        got = Counter()
        for c in self.d["commission_collections"].filter(shoe_id=sid).iter_rows(named=True):
            got[(c["seat"], c["patron_id"])] += cents(c["amount"])
            late = next_open is not None and c["collected_at"] >= next_open
            if c["collected_at"] <= rounds[-1]["dealt_at"] or late:
                self.flag("collection_time", sid)
        if got != owed:
            self.flag("marker", sid)

    # -- rounds -----------------------------------------------------------------------

    def check_round(self, r: dict, sid: str) -> None:
        o, rid = self.options[sid], r["round_id"]
        pc, bc = r["player_cards"], r["banker_cards"]
        chemin = o["ruleset"] == "ma-chemin-de-fer"
        if r["kind"] == "void":  # every wager returned (§15(e) and twins)
            p2, b2 = pts(pc[:2]), pts(bc[:2])
            natural = p2 >= 8 or b2 >= 8
            p_full = len(pc) == 3 or (len(pc) == 2 and (natural or p2 >= 6))
            third = pc[2] if len(pc) == 3 else None
            b_full = len(bc) == 3 or (
                len(bc) == 2 and (natural or not banker_should_draw(b2, third))
            )
            if p_full and b_full and not chemin:  # played out: not short of cards
                self.flag("void_played", sid, rid)
            for w in self.wagers[rid]:
                if (w["result"], cents(w["payout"]), cents(w["commission"])) != ("push", 0, 0):
                    self.flag("settlement", sid, rid, w["wager_id"])
            return
        p2, b2 = pts(pc[:2]), pts(bc[:2])
        if p2 >= 8 or b2 >= 8:
            draws_ok = len(pc) == len(bc) == 2
        else:
            p_ok = (
                len(pc) == 3 if p2 <= (4 if chemin else 5) else len(pc) == 2 or (chemin and p2 == 5)
            )
            third = pc[2] if len(pc) == 3 else None
            draws_ok = p_ok and (len(bc) == 3) == banker_should_draw(b2, third) and len(pc) <= 3
        if not draws_ok:
            self.flag("draw", sid, rid)
        pt, bt = pts(pc), pts(bc)
        if (r["player_total"], r["banker_total"]) != (pt, bt):
            self.flag("total", sid, rid)
        outcome = "player" if pt > bt else "banker" if bt > pt else "tie"
        if r["outcome"] != outcome:
            self.flag("outcome", sid, rid)
        dragon7 = len(bc) == 3 and bt == 7 and pt < 7
        panda8 = len(pc) == 3 and pt == 8 and bt < 8
        event = None
        if o["ez_baccarat"]:
            event = (
                "dragon7" if dragon7 else "panda8" if panda8 and o["ruleset"][:2] == "ma" else None
            )
        if r["ez_event"] != event:
            self.flag("ez_event", sid, rid)
        holders = (r["curator_seat"], r["banker_seat"])
        if (o["ruleset"] != "ma-baccarat" and holders[0] is not None) or (
            not chemin and holders[1] is not None
        ):
            self.flag("holder_column", sid, rid)
        elif (holders[0] or 0) > o["seats"] or (holders[1] or 0) > o["seats"]:
            self.flag("holder_seat", sid, rid)
        free_ok = o["ruleset"] == "ma-midi-baccarat" and o["free_hands"]
        if r["kind"] == "free" and not free_ok:
            self.flag("free_hand", sid, rid)
        facts = {
            **{"pt": pt, "bt": bt, "outcome": outcome, "d7": dragon7, "p8": panda8},
            **{"pc": pc, "bc": bc, "pn": p2 >= 8, "bn": b2 >= 8},
        }
        wagers = self.wagers[rid]
        if r["kind"] in ("free", "simulated") and wagers:
            self.flag("wager_on_free", sid, rid, wagers[0]["wager_id"])
        if chemin and r["kind"] == "regular":
            self.check_chemin_round(r, wagers, o, facts, sid)
        for w in wagers:
            self.check_wager(w, r, o, facts, sid)

    def check_wager(self, w: dict, r: dict, o: dict, f: dict, sid: str) -> None:
        rid, wid, bet = r["round_id"], w["wager_id"], w["bet"]
        permitted = {"banker", "player"} | (
            {"tie"} if o["ruleset"] != "ma-chemin-de-fer" else set()
        )
        if o["dragon_bonus_paytable"]:
            permitted |= {"dragon_bonus_banker", "dragon_bonus_player"}
        if o["ez_baccarat"]:
            permitted |= {"dragon7"} | ({"panda8"} if o["ruleset"][:2] == "ma" else set())
        if o["house_money"] and o["ruleset"] in ("ma-baccarat", "ma-midi-baccarat"):
            permitted.add("house_money")
        if o["royal9_paytable"]:
            permitted.add("royal9")
        if bet not in permitted or (bet == "royal9" and cents(w["amount"]) != 500):
            self.flag("impermissible", sid, rid, wid)
        if not 1 <= w["seat"] <= o["seats"]:
            self.flag("seat", sid, rid, wid)
        nmb = r["no_more_bets_at"]
        if w["placed_at"] is not None and nmb is not None and w["placed_at"] > nmb:
            self.flag("late", sid, rid, wid)
        if o["ruleset"] == "ma-chemin-de-fer" and bet in ("banker", "player"):
            return  # settled by check_chemin_round
        if w["call"] is not None:
            self.flag("call", sid, rid, wid)
        want = self.settle(w, r, o, f)
        got = (w["result"], cents(w["payout"]), cents(w["commission"]))
        progressive = bet == "royal9" and want[0] == "win" and want[1] is None
        if (progressive and (got[0] != "win" or got[1] <= 0)) or (not progressive and got != want):
            self.flag("settlement", sid, rid, wid)
        if bet == "royal9" and w["award"] != self.royal9_award(w, r, o, f):
            self.flag("award", sid, rid, wid)
        if w["rollover"] is not None:
            self.check_rollover(w, r, o, sid)

    def check_rollover(self, w: dict, r: dict, o: dict, sid: str) -> None:
        """§9(e)(1)a, INDEX Ambiguity 20: exactly the authorised share of a won House Money."""
        hm = [
            x
            for x in self.wagers[r["round_id"]]
            if x["bet"] == "house_money" and x["seat"] == w["seat"] and x["result"] == "win"
        ]
        share = cents(hm[0]["payout"]) * o["house_money_rollover_percent"] // 100 if hm else None
        if w["bet"] not in ("banker", "player") or cents(w["rollover"]) != share:
            self.flag("rollover", sid, r["round_id"], w["wager_id"])

    def settle(self, w: dict, r: dict, o: dict, f: dict) -> tuple[str, int | None, int]:
        bet, amount = w["bet"], cents(w["amount"])
        stake = amount + (cents(w["rollover"]) or 0)
        outcome = f["outcome"]
        if bet == "banker":
            if outcome == "tie" or (o["ez_baccarat"] and f["d7"]):
                return "push", 0, 0
            if outcome == "player":
                return "lose", 0, 0
            vig = (
                0
                if o["ez_baccarat"]
                else expected_vig(stake, o["commission_percent"], o["commission_rounding"])
            )
            return "win", stake, vig
        if bet == "player":
            return {"player": ("win", stake, 0), "banker": ("lose", 0, 0), "tie": ("push", 0, 0)}[
                outcome
            ]
        if bet == "tie":
            return ("win", amount * o["tie_pays"], 0) if outcome == "tie" else ("lose", 0, 0)
        if bet.startswith("dragon_bonus"):
            mine, theirs = ("b", "p") if bet.endswith("banker") else ("p", "b")
            return self.dragon_bonus(f, mine, theirs, o["dragon_bonus_paytable"] or "A", amount)
        if bet in ("dragon7", "panda8"):
            hit, odds = (f["d7"], 40) if bet == "dragon7" else (f["p8"], 25)
            return ("win", amount * odds, 0) if hit else ("lose", 0, 0)
        if bet == "house_money":
            pairs = sum(h[0][0] == h[1][0] for h in (f["pc"], f["bc"]))
            return ("win", amount * {1: 3, 2: 15}[pairs], 0) if pairs else ("lose", 0, 0)
        award = self.royal9_award(w, r, o, f)
        if award is None:
            return "lose", 0, 0
        return "win", {**MA_LINES, **MIDI_LINES}.get(award), 0

    @staticmethod
    def dragon_bonus(f: dict, mine: str, theirs: str, table: str, amount: int):
        own, other = f[f"{mine}t"], f[f"{theirs}t"]
        own_nat, other_nat = f[f"{mine}n"], f[f"{theirs}n"]
        if own_nat and other_nat and own == other:
            return "push", 0, 0
        if own_nat and not (other_nat and other > own):
            return "win", amount, 0  # Natural winner 1:1
        if not own_nat and not other_nat and own - other >= 4:
            return "win", amount * DB_ODDS[table][own - other], 0
        return "lose", 0, 0

    def royal9_award(self, w: dict, r: dict, o: dict, f: dict) -> str | None:
        p, b = royal9(f["pc"][:2]), royal9(f["bc"][:2])
        if p is None and b is None:
            return None
        seat, midi = w["seat"], o["ruleset"] == "ma-midi-baccarat"
        table = self.combos[r["table_id"]] if midi else TABLE2
        mine = table.get(seat, set())
        others = set().union(*(c for s, c in table.items() if s != seat)) if midi else set()
        pk, bk = p and p[0], b and b[0]
        suited = [h is not None and h[1] for h in (p, b)]
        if midi:
            lines = [
                ("Personal King-9 vs. Personal King-9", pk and pk == bk and pk in mine),
                ("Banker Personal King-9", bk in mine),
                ("Player Personal King-9", pk in mine),
                ("Other Personal King-9 vs. Identical King-9", pk and pk == bk and pk in others),
                ("Suited Royal 9 vs. Suited Royal 9", all(suited)),
                ("Royal 9 vs. Royal 9", p and b),
            ]
        else:
            lines = [
                ("Exact Match Personal Progressive", pk and pk == bk and pk in mine),
                ("Any Two Personal Progressive", pk in mine and bk in mine and pk != bk),
                ("Personal K9 on Banker Hand", bk in mine),
                ("Personal K9 on Player Hand", pk in mine),
                ("Suited Royal 9 Tie Hand", all(suited)),
                ("Royal 9 Tie Hand", p and b),
            ]
        lines += [("Any Suited Royal 9", any(suited)), ("Any Royal 9", True)]
        return next(name for name, hit in lines if hit)

    # -- Chemin de Fer and curator ---------------------------------------------------

    def check_chemin_round(self, r: dict, wagers: list[dict], o: dict, f: dict, sid: str) -> None:
        rid = r["round_id"]
        banks = [w for w in wagers if w["bet"] == "banker"]
        against = [w for w in wagers if w["bet"] == "player"]
        if len(banks) != 1 or banks[0]["seat"] != r["banker_seat"]:
            self.flag("bank_row", sid, rid)
            return
        bank = cents(banks[0]["amount"])
        calls = [w["call"] for w in against]
        full = [w for w in against if w["call"] in ("suivi", "banco")]
        if (
            sum(cents(w["amount"]) for w in against) > bank
            or any(cents(w["amount"]) != bank for w in full)
            or (full and len(against) != 1)
            or None in calls
            or not against
        ):
            self.flag("against", sid, rid)
        covered = min(bank, sum(cents(w["amount"]) for w in against))
        for w in wagers:
            if w["bet"] not in ("banker", "player"):
                continue
            won = covered if w["bet"] == "banker" else cents(w["amount"])
            vig = expected_vig(won, o["commission_percent"], o["commission_rounding"])
            if f["outcome"] == "tie":  # §5(a)(3), §6(g)(3): void, returned
                want = ("push", 0, 0)
            elif w["bet"] == f["outcome"]:  # §9(b)-(c): covered amount, vig on the Bank only
                want = ("win", won, vig if w["bet"] == "banker" else 0)
            else:
                want = ("lose", 0, 0)
            if (w["result"], cents(w["payout"]), cents(w["commission"])) != want:
                self.flag("settlement", sid, rid, w["wager_id"])

    def check_banks(self, rounds: list[dict]) -> None:
        """§5(b) stakes, §6(b) Suivi, §10(a)(1) passing, one Bank after another."""
        prev, lost_seat, suivi, first_of_shoe, seat = None, None, None, None, None
        for r in rounds:
            if r["kind"] != "regular":
                continue
            sid, rid = r["shoe_id"], r["round_id"]
            wagers = self.wagers[rid]
            bank = next((cents(w["amount"]) for w in wagers if w["bet"] == "banker"), None)
            new_shoe = first_of_shoe != sid
            first_of_shoe = sid
            if new_shoe:  # §4(b): each shoe auctions a new Bank (INDEX Ambiguity 8)
                prev, lost_seat, suivi = None, None, None
            # A Bank begins with each shoe's auction, a bid, or another Banker (§4(b)).
            new_bank = new_shoe or r["banker_bid"] is not None or r["banker_seat"] != seat
            seat = r["banker_seat"]
            if lost_seat is not None and r["banker_seat"] == lost_seat:
                self.flag("bank_pass", sid, rid)
            if new_bank:
                if r["banker_bid"] is None:  # §4(b): the Bank's first round logs its bid
                    self.flag("bank_bid", sid, rid)
                elif bank is not None and bank < cents(r["banker_bid"]):
                    self.flag("bank_stake", sid, rid)
                suivi = None
            elif bank is not None and prev is not None and not prev <= bank <= 2 * prev:
                self.flag("bank_stake", sid, rid)
            for w in wagers:
                if w["call"] == "suivi" and w["seat"] != suivi:
                    self.flag("suivi", sid, rid, w["wager_id"])
            outcome = outcome_of(r["player_cards"], r["banker_cards"])
            if outcome != "tie":  # Ambiguity 3: only a call of the whole Bank qualifies
                full = [
                    w
                    for w in wagers
                    if w["call"] in ("suivi", "banco") and cents(w["amount"]) == bank
                ]
                suivi = full[0]["seat"] if full and outcome == "banker" else None
            lost_seat = r["banker_seat"] if outcome == "player" else None
            prev = bank

    def check_curator(self, rounds: list[dict]) -> None:
        """§14(a)(1): a curator passes the shoe when the Banker's Hand loses."""
        lost, shoe = None, None
        for r in rounds:
            if r["kind"] != "regular":
                continue
            if r["shoe_id"] != shoe:  # §7(b): a new shoe is offered anew (INDEX Ambiguity 8)
                lost, shoe = None, r["shoe_id"]
            if lost is not None and r["curator_seat"] == lost:
                self.flag("curator_pass", r["shoe_id"], r["round_id"])
            outcome_player = pts(r["player_cards"]) > pts(r["banker_cards"])
            lost = r["curator_seat"] if outcome_player else None


# What the independent checker reports for each kind of fault: one rule each.
SYMPTOMS = {
    **dict.fromkeys(
        ["player_draw_missing", "player_draw_extra", "banker_draw_missing", "banker_draw_extra"],
        "draw",
    ),
    **dict.fromkeys(["wrong_player_total", "wrong_banker_total"], "total"),
    **dict.fromkeys(["ez_event_missing", "ez_event_wrong"], "ez_event"),
    **dict.fromkeys(
        ["overpayment", "underpayment", "wrong_paytable", "wrong_result"], "settlement"
    ),
    **dict.fromkeys(["commission_missing", "commission_misrounded"], "settlement"),
    "wrong_outcome": "outcome",
    "late_wager": "late",
    "impermissible_bet": "impermissible",
    "wager_on_free_round": "wager_on_free",
    "seat_out_of_range": "seat",
    "rollover_excess": "rollover",
    "bank_stake_out_of_range": "bank_stake",
    "bank_overcovered": "against",
    "suivi_not_entitled": "suivi",
    "curator_not_passing": "curator_pass",
    "bank_not_passing": "bank_pass",
    "extra_hand_after_cover": "hand_after_cover",
    "sequence_mismatch": "sequence",
    "foreign_card": "card_count",  # a shoe finding; also "sequence" on the round with a reader
    "burn_count_wrong": "burn",
    "cut_too_shallow": "cut",
    "cover_card_too_close": "cover",
    "decks_out_of_range": "decks",
    "marker_uncollected": "marker",
    "collection_without_marker": "collection_without_marker",
    "holder_not_of_game": "holder_column",
    "holder_seat_out_of_range": "holder_seat",
    "free_hand_not_allowed": "free_hand",
    "table_seats_out_of_range": "table_seats",
    "royal9_table_seats": "royal9_seats",
    "collection_not_allowed": "collection_mode",
    "call_below_bank": "against",
    "banker_wager_misplaced": "bank_row",
    "void_with_cards_left": "void",
    "played_out_void": "void_played",
    "no_more_bets_late": "no_more_bets",
    "discards_too_many": "discard",
    "bank_bid_missing": "bank_bid",
    "royal9_chair_suited": "royal9_chairs",
}
