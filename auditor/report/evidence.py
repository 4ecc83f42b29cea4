"""Each finding's evidence, for a person: the round's cards in dealing order, both point
counts, the drawing rules step by step as the audit's replay decided them (`decided`),
the wagers logged against correct (a wager's correct net is its logged net less its
findings' impacts, which add up to its whole error: CONTRACT), and for shoe checks the
shoe's sequence reconciled around the cards the finding names (its round's first card
out of place, its discards, the burn, cut or cover card, the card seen too often), never
around another finding's; with the regulation's own words for the citation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import polars as pl

from auditor.output.sandboxed_query import Catalog
from auditor.packs.model import RulePack
from auditor.report import data
from auditor.report.decided import Step, draw_steps, replayed
from auditor.report.sections import SectionText, cited_section

SUITS = {"S": ("♠", False), "H": ("♥", True), "D": ("♦", True), "C": ("♣", False)}
RANK_NAMES = {"T": "10"}
WINDOW_BEFORE, WINDOW_AFTER = 6, 10


@dataclass(frozen=True)
class Card:
    code: str
    rank: str
    suit: str
    red: bool
    order: int | None = None  # 1.. in dealing order
    hand: str = ""  # "Player", "Banker"


@dataclass(frozen=True)
class WagerLine:
    wager: dict[str, Any]
    result: tuple[Any, Any]  # (logged, correct)
    payout: tuple[Any, Any]
    commission: tuple[Any, Any]
    net: tuple[Any, Any]
    rules: tuple[str, ...]
    focus: bool  # the finding's own wager


@dataclass(frozen=True)
class RecoLine:
    position: int  # 1-based, as the messages count
    sequence: str | None
    logged: str | None
    where: str
    mismatch: bool


@dataclass
class Evidence:
    finding: dict[str, Any]
    check: dict[str, Any] | None
    section: SectionText | None
    round: dict[str, Any] | None = None
    dealt: list[Card] = field(default_factory=list)
    player: list[Card] = field(default_factory=list)
    banker: list[Card] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    wagers: list[WagerLine] = field(default_factory=list)
    shoe: dict[str, Any] | None = None
    reconciliation: list[RecoLine] | None = None
    reconciliation_note: str | None = None
    options: list[dict[str, Any]] = field(default_factory=list)


def anchor(finding_id: str) -> str:
    """The finding's anchor in a page: its id is hex, so it is safe in a URL as it is."""
    return "f-" + str(finding_id)[:20]


def card(code: str | None, order: int | None = None, hand: str = "") -> Card:
    text = str(code) if code is not None else "?"
    rank, suit = text[:1], text[1:2]
    symbol, red = SUITS.get(suit, (suit, False))
    return Card(text, RANK_NAMES.get(rank, rank), symbol, red, order, hand)


def dealt_cards(player: Sequence[str], banker: Sequence[str]) -> list[Card]:
    """The cards in the order they left the shoe: P1 B1 P2 B2, then P3, then B3."""
    slots = [("Player", player, 0), ("Banker", banker, 0), ("Player", player, 1)]
    slots += [("Banker", banker, 1), ("Player", player, 2), ("Banker", banker, 2)]
    out: list[Card] = []
    for hand, cards, i in slots:
        if i < len(cards):
            out.append(card(cards[i], len(out) + 1, hand))
    # A hand of more than three cards is quarantined; shown as logged all the same.
    for hand, cards in (("Player", player), ("Banker", banker)):
        out += [card(c, len(out) + 1, hand) for c in cards[3:]]
    return out


# ---- wagers: logged against correct -------------------------------------------------------


def _money(text: str | None) -> Decimal | None:
    if not text:
        return None
    cleaned = str(text).replace("$", "").replace(",", "").strip()
    try:
        return Decimal(cleaned)
    except ArithmeticError:
        return None


def wager_lines(
    wagers: pl.DataFrame, findings: Sequence[Mapping[str, Any]], focus_wager: str | None
) -> list[WagerLine]:
    """The round's wagers, each logged and as the audit says it should have been;
    `findings`: the round's wager findings."""
    by_wager: dict[str, list[Mapping[str, Any]]] = {}
    for f in findings:
        by_wager.setdefault(f["wager_id"], []).append(f)
    lines = []
    for w in wagers.iter_rows(named=True):
        found = by_wager.get(w["wager_id"], [])
        rules = {f["rule"]: f for f in found}
        stake = (w["amount"] or Decimal(0)) + (w["rollover"] or Decimal(0))
        net = {"win": (w["payout"] or 0) - (w["commission"] or 0), "lose": -stake}
        logged_net = net.get(w["result"], Decimal(0))
        impacts = [f["impact"] for f in found if f["impact"] is not None]
        correct_net = logged_net - sum(impacts, Decimal(0)) if impacts else logged_net
        result = rules["PAY001"]["expected"] if "PAY001" in rules else w["result"]
        # What the audit does not correct it found right; after a wrong result only a
        # losing or returned wager's payout and commission follow from it (both nil).
        payout = _money(rules["PAY002"]["expected"]) if "PAY002" in rules else None
        commission = next(
            (_money(f["expected"]) for c, f in rules.items() if c in ("COM001", "COM002")),
            Decimal(0) if "COM003" in rules else None,
        )
        if result in ("lose", "push"):
            payout, commission = Decimal(0), Decimal(0)
        if "PAY001" not in rules:
            payout = w["payout"] if payout is None else payout
            commission = w["commission"] if commission is None else commission
        lines.append(
            WagerLine(
                wager=w,
                result=(w["result"], result),
                payout=(w["payout"], payout),
                commission=(w["commission"], commission),
                net=(logged_net, correct_net),
                rules=tuple(sorted(rules)),
                focus=w["wager_id"] == focus_wager,
            )
        )
    return lines


# ---- a card-reading shoe, reconciled --------------------------------------------------------

_SLOT_NAMES = (
    "Player's first card",
    "Banker's first card",
    "Player's second card",
    "Banker's second card",
)


def _round_slots(r: Mapping[str, Any]) -> list[tuple[str, str]]:
    player, banker = list(r["player_cards"] or []), list(r["banker_cards"] or [])
    slots = []
    for i, (cards, j) in enumerate(((player, 0), (banker, 0), (player, 1), (banker, 1))):
        if j < len(cards):
            slots.append((cards[j], _SLOT_NAMES[i]))
    if len(player) > 2:
        slots.append((player[2], "Player's third card"))
    if len(banker) > 2:
        slots.append((banker[2], "Banker's third card"))
    slots += [(c, "discarded card") for c in (r["discarded_after"] or [])]
    return [(c, f"round {r['round_no']}, {what}") for c, what in slots]


@dataclass(frozen=True)
class Focus:
    """The cards of a shoe a finding names: those of one round (its first card out of
    place, else its discards, else its last card), one position of the sequence, or
    every copy of one card. None of them: the shoe's first card out of place."""

    round_id: str | None = None
    position: int | None = None  # 1-based
    card: str | None = None
    what: str = ""  # how the note names it


# Shoe findings about the shoe's make-up, not a card: no sequence to reconcile for them.
DECK_RULES = ("SHO001", "SHO002", "SHO003", "SHO004")


def focus_of(finding: Mapping[str, Any], shoe: Mapping[str, Any]) -> Focus | None:
    """The cards a shoe finding names; None for a finding about the decks alone."""
    rule = str(finding.get("rule"))
    if finding.get("round_id"):
        return Focus(round_id=finding["round_id"])
    if rule in DECK_RULES:
        return None
    sequence = shoe.get("card_sequence") or []
    if rule in ("SHO005", "SHO006"):
        return Focus(position=1, what="the burn card")
    if rule == "SHO007" and shoe.get("cut_index") is not None:
        return Focus(position=int(shoe["cut_index"]), what="the cut card")
    if rule in ("SHO008", "SHO012") and shoe.get("cover_from_back") is not None and sequence:
        position = max(1, len(sequence) - int(shoe["cover_from_back"]))
        return Focus(position=position, what="the cover card")
    if rule == "SHO009":
        card = str(finding.get("logged") or "").split(" ", 1)[0]
        return Focus(card=card, what=f"every {card}") if card else Focus()
    return Focus()


def _sentence(words: str) -> str:  # only the first letter: "every KS" -> "Every KS"
    return words[:1].upper() + words[1:]


# Each card the logs say left a shoe: (card, where, round id).
Logged = list[tuple[str | None, str, str | None]]


def _logged_cards(shoe: Mapping[str, Any], rounds: pl.DataFrame) -> Logged:
    """Each card the logs say left the shoe, in order: (card, where, round id)."""
    logged: Logged = [(shoe.get("burn_card"), "burn card", None)]
    logged += [(None, "burned face down", None)] * max(0, int(shoe.get("burn_count") or 0))
    for r in rounds.iter_rows(named=True):
        logged += [(c, where, r["round_id"]) for c, where in _round_slots(r)]
    return logged


def _centre(focus: Focus, logged: Logged, lines: list[RecoLine]) -> tuple[int | None, str]:
    """The line to centre the window on (0-based), and how the note names it."""
    mismatches = [i for i, line in enumerate(lines) if line.mismatch]
    if focus.round_id is not None:
        own = [i for i, (_, _, r) in enumerate(logged) if r == focus.round_id]
        wrong = [i for i in own if lines[i].mismatch]
        if wrong:
            return wrong[0], f"First card of the round out of place: card {wrong[0] + 1}."
        discards = [i for i in own if logged[i][1].endswith("discarded card")]
        if discards:
            return discards[0], f"The round's discarded cards: from card {discards[0] + 1}."
        if own:
            return own[-1], f"The round's last card: card {own[-1] + 1}."
        return None, "The round takes no card of this shoe's logs."
    if focus.position is not None:
        return focus.position - 1, f"{_sentence(focus.what)}: card {focus.position}."
    if mismatches:
        return mismatches[0], f"First card out of place: card {mismatches[0] + 1} of the sequence."
    return None, ""


def shoe_lines(shoe: Mapping[str, Any], rounds: pl.DataFrame) -> tuple[Logged, list[RecoLine]]:
    """The cards the logs say left the shoe, and every line of its reconciliation: the
    same for each finding of the shoe (`reconcile` shows the part around its own)."""
    sequence = shoe.get("card_sequence") or []
    logged = _logged_cards(shoe, rounds)
    lines = []
    for i in range(max(len(sequence), len(logged))):
        seq = sequence[i] if i < len(sequence) else None
        code, where, _ = logged[i] if i < len(logged) else (None, "still in the shoe", None)
        # Cards behind the last round stay in the shoe: only a logged card can differ.
        mismatch = code is not None and seq != code
        lines.append(RecoLine(i + 1, seq, code, where, mismatch))
    return logged, lines


def reconcile(
    shoe: Mapping[str, Any],
    rounds: pl.DataFrame,
    focus: Focus | str | None = None,
    lined: tuple[Logged, list[RecoLine]] | None = None,
) -> tuple[list[RecoLine] | None, str | None]:
    """The shoe's card sequence beside the cards the logs say left it, around the cards
    `focus` names (a round id names that round's cards); around the first card out of
    place without one. `lined`: the shoe's `shoe_lines`, when a caller keeps them."""
    sequence = shoe.get("card_sequence")
    if sequence is None:
        return (
            None,
            "This shoe has no card-reading sequence: the logs hold no record of "
            "the cards' order to reconcile with.",
        )
    if isinstance(focus, str):
        focus = Focus(round_id=focus)
    focus = focus or Focus()
    logged, lines = lined or shoe_lines(shoe, rounds)
    if focus.card is not None:
        copies = [line for line in lines if focus.card in (line.sequence, line.logged)]
        return copies, f"{_sentence(focus.what)} in the sequence and in the logs."
    centre, note = _centre(focus, logged, lines)
    if centre is None:
        centre = min(len(logged), len(sequence)) - 1
        note = note or (
            f"All {len(logged)} logged cards match the sequence of {len(sequence)} cards."
        )
    centre = min(max(centre, 0), len(lines) - 1)
    start = max(0, centre - WINDOW_BEFORE)
    return lines[start : centre + WINDOW_AFTER + 1], note


# ---- one finding ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Sources:
    """What evidence is built from, read once for every finding of a page."""

    wager_findings: dict[str, list[dict[str, Any]]]  # round_id -> its wagers' findings
    rounds: dict[str, dict[str, Any]]
    wagers: dict[str, pl.DataFrame]  # round_id -> its wagers
    shoes: dict[str, dict[str, Any]]
    shoe_rounds: dict[str, pl.DataFrame]
    options: dict[str, list[dict[str, Any]]]
    checks: Mapping[str, dict[str, Any]]
    packs: Mapping[str, RulePack]
    decided: dict[str, dict[str, Any]]  # round_id -> what the replay decided (`decided`)
    # shoe_id -> its `shoe_lines`, made for the shoe's first finding, read by the others
    lined: dict[str, tuple[Logged, list[RecoLine]]] = field(default_factory=dict)


def build(f: Mapping[str, Any], src: Sources) -> Evidence:
    finding = dict(f)
    text = cited_section(finding["citation"] or "", src.packs)
    ev = Evidence(finding, src.checks.get(finding["rule"]), text)
    r = src.rounds.get(finding["round_id"]) if finding.get("round_id") else None
    if r is not None:
        ev.round = r
        player, banker = list(r["player_cards"] or []), list(r["banker_cards"] or [])
        ev.dealt = dealt_cards(player, banker)
        ev.player = [c for c in ev.dealt if c.hand == "Player"]
        ev.banker = [c for c in ev.dealt if c.hand == "Banker"]
        ev.steps = draw_steps(r, src.decided.get(r["round_id"]))
        wagers = src.wagers.get(r["round_id"])
        if wagers is not None and wagers.height:
            found = src.wager_findings.get(r["round_id"], [])
            ev.wagers = wager_lines(wagers, found, finding.get("wager_id"))
    shoe_id = finding.get("shoe_id")
    if shoe_id and str(finding["rule"]).startswith("SHO") and shoe_id in src.shoes:
        ev.shoe = src.shoes[shoe_id]
        focus = focus_of(finding, ev.shoe)
        if focus is not None:
            rounds = src.shoe_rounds.get(shoe_id, pl.DataFrame())
            lined = src.lined.get(shoe_id)
            if lined is None and ev.shoe.get("card_sequence") is not None:
                lined = src.lined[shoe_id] = shoe_lines(ev.shoe, rounds)
            ev.reconciliation, ev.reconciliation_note = reconcile(ev.shoe, rounds, focus, lined)
    if finding.get("table_id") and not finding.get("shoe_id") and not finding.get("round_id"):
        ev.options = src.options.get(finding["table_id"], [])
    return ev


def load_sources(
    catalog: Catalog,
    shown: pl.DataFrame,
    findings: pl.DataFrame,
    checks: Mapping[str, dict[str, Any]],
    packs: Mapping[str, RulePack],
    more_wagers: Sequence[str] = (),
) -> tuple[Sources, pl.DataFrame]:
    """Everything the evidence of the `shown` findings needs, with one read of each view:
    their rounds with the rounds of the shoes they reconcile, and the wagers of those
    rounds with `more_wagers` (for a caller that lists their patrons). `findings`: every
    located finding of the run (or of the subject), for the wagers' corrections. Returns
    the sources and the wagers read."""
    round_ids = data.ids_of(shown["round_id"])
    shoe_ids = data.ids_of(shown.filter(pl.col("rule").str.starts_with("SHO"))["shoe_id"])
    ids = {"rounds": round_ids, "shoes": shoe_ids}
    where = [data.among("round_id", "rounds", round_ids), data.among("shoe_id", "shoes", shoe_ids)]
    rounds = data.rounds_where(catalog, " OR ".join(where), ids)
    wagers = data.wagers_of_rounds(catalog, round_ids, more_wagers)
    shoes = data.shoes_by_id(catalog, shoe_ids)
    tables = shown.filter(pl.col("shoe_id").is_null() & pl.col("round_id").is_null())
    options = data.table_options(catalog, tables["table_id"])
    wanted = set(round_ids)
    shoe_rounds = rounds.filter(pl.col("shoe_id").is_in(shoe_ids)).sort(
        "shoe_id", "round_no", "round_id"
    )
    wager_findings: dict[str, list[dict[str, Any]]] = {}
    relevant = findings.filter(
        pl.col("wager_id").is_not_null() & pl.col("round_id").is_in(round_ids)
    )
    for f in relevant.iter_rows(named=True):
        wager_findings.setdefault(f["round_id"], []).append(f)
    evidence_wagers = wagers.filter(pl.col("round_id").is_in(round_ids))
    sources = Sources(
        wager_findings=wager_findings,
        rounds={r["round_id"]: r for r in rounds.iter_rows(named=True) if r["round_id"] in wanted},
        wagers={k[0]: g for k, g in evidence_wagers.group_by("round_id", maintain_order=True)},
        shoes={s["shoe_id"]: s for s in shoes.iter_rows(named=True)},
        shoe_rounds={k[0]: g for k, g in shoe_rounds.group_by("shoe_id", maintain_order=True)},
        options={
            k[0]: list(g.iter_rows(named=True))
            for k, g in options.group_by("table_id", maintain_order=True)
        },
        checks=checks,
        packs=packs,
        decided=replayed(rounds.filter(pl.col("round_id").is_in(round_ids)), packs),
    )
    return sources, wagers


def no_sources(checks: Mapping[str, dict[str, Any]], packs: Mapping[str, RulePack]) -> Sources:
    """Evidence from the findings alone: their message and citation, no hand history."""
    return Sources({}, {}, {}, {}, {}, {}, checks, packs, {})
