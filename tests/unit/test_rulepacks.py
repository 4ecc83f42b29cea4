"""The ruleset packs against the regulations they encode.

The references below are written straight from each regulation's text, separately
from the packs: Massachusetts by Banker total (Table 1 / Table 3), Maryland by the
Player's third card (.10E(3)(a)-(j)). A pack that drifts from its text fails here.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import re
from collections.abc import Callable
from decimal import Decimal
from importlib.resources import files
from pathlib import Path
from typing import Any

import polars as pl
import pytest
import yaml
from click.testing import CliRunner

from auditor import contract
from auditor.cli import main
from auditor.errors import RulesetError
from auditor.packs.loaded import load_pack_file
from auditor.packs.model import (
    RulePack,
    available_rulesets,
    load_all,
    load_pack,
    pack_json_schema,
)
from auditor.packs.tables import pack_tables
from tests.support.paths import regulations

MA, MIDI, MD, CDF = "ma-baccarat", "ma-midi-baccarat", "md-mini-baccarat", "ma-chemin-de-fer"
RULESETS = (MA, MIDI, MD, CDF)
CELLS = [(b, t) for b in range(8) for t in (*range(10), None)]  # None: the Player stood
HEADER = ("ruleset", "title", "source", "regulation", "readings")


def raw(ruleset: str) -> dict:
    return yaml.safe_load((files("auditor.rules") / f"{ruleset}.yaml").read_text("utf-8"))


# --------------------------------------------------------------------------- references


def ma_table_1(banker: int, third: int | None) -> bool:
    """ma-baccarat §11(c) with Table 1 (midi §10(c) is word for word the same)."""
    if third is None:  # (c)(1): Player stayed
        return banker <= 5
    if banker < 3:  # (c)(2)(i)
        return True
    if banker == 7:  # (c)(2)(ii)
        return False
    # Table 1: "3: draws unless Player's third card is 8", "4: 2-7", "5: 4-7", "6: 6-7"
    if banker == 3:
        return third != 8
    low = {4: 2, 5: 4, 6: 6}[banker]
    return low <= third <= 7


def ma_cite(section: int) -> Callable[[int, int | None], str]:
    def cite(banker: int, third: int | None) -> str:
        if third is None:
            return f"§{section}(c)(1)"
        if banker < 3:
            return f"§{section}(c)(2)(i)"
        if banker == 7:
            return f"§{section}(c)(2)(ii)"
        return f"§{section}(c)(2)(iii) Table 1"

    return cite


# .10E(3)(a)-(j), transcribed item by item: Player's third card -> Banker totals 3-6 that draw.
MD_LONG_HAND = {
    0: {3},  # (a)
    1: {3},  # (b)
    2: {3, 4},  # (c)
    3: {3, 4},  # (d)
    4: {3, 4, 5},  # (e), cases numbered (1)-(4)
    5: {3, 4, 5},  # (f)
    6: {3, 4, 5, 6},  # (g)
    7: {3, 4, 5, 6},  # (h)
    8: set(),  # (i)
    9: {3},  # (j)
}


def md_long_hand(banker: int, third: int | None) -> bool:
    if third is None:  # .10D
        return banker <= 5
    if banker < 3:  # .10E(1)
        return True
    if banker == 7:  # .10E(2)
        return False
    return banker in MD_LONG_HAND[third]  # .10E(3)


def md_cite(banker: int, third: int | None) -> str:
    if third is None:
        return ".10D"
    if banker < 3:
        return ".10E(1)"
    if banker == 7:
        return ".10E(2)"
    return f".10E(3)({'abcdefghij'[third]})"


def cdf_table_3(banker: int, third: int | None) -> bool:
    """§8(c) Table 3 after a Player draw; after a stay, INDEX Ambiguity 1's reading."""
    if third is None:
        # 0-2 "always draws", 3 draws (no third card to be an 8), 7 "stands";
        # 4, 5 draw and 6 stands as ma-baccarat §11(c)(1).
        return banker <= 5
    rows = {
        0: range(10),
        1: range(10),
        2: range(10),
        3: [0, 1, 2, 3, 4, 5, 6, 7, 9],
        4: range(2, 8),
        5: range(4, 8),
        6: range(6, 8),
        7: [],
    }
    return third in rows[banker]


def cdf_cite(banker: int, third: int | None) -> str:
    return "§8(c)" if third is None and banker in (4, 5, 6) else "§8(c) Table 3"


def cdf_severity(banker: int, third: int | None) -> str:
    return "low" if third is None and banker in (4, 5, 6) else "high"


REFERENCES: dict[str, tuple[Callable, Callable, Callable]] = {
    MA: (ma_table_1, ma_cite(11), lambda b, t: "high"),
    MIDI: (ma_table_1, ma_cite(10), lambda b, t: "high"),
    MD: (md_long_hand, md_cite, lambda b, t: "high"),
    CDF: (cdf_table_3, cdf_cite, cdf_severity),
}

PLAYER_REFERENCES = {
    # ma §11(b), midi §10(b), md .10B: draw under 6, stay on 6 or more
    MA: lambda t: ("draw", "§11(b)(1)") if t < 6 else ("stand", "§11(b)(2)"),
    MIDI: lambda t: ("draw", "§10(b)(1)") if t < 6 else ("stand", "§10(b)(2)"),
    MD: lambda t: ("draw", ".10B(1)") if t < 6 else ("stand", ".10B(2)"),
    # chemin de fer §8(a): 0-4 card, 5 option, 6-7 stay
    CDF: lambda t: (
        ("draw", "§8(a)(1)")
        if t <= 4
        else ("either", "§8(a)(2)")
        if t == 5
        else ("stand", "§8(a)(3)")
    ),
}


# --------------------------------------------------------------------------- loading


def test_the_built_in_packs_are_exactly_the_contract_rulesets():
    # CONTRACT.md's table of ruleset ids: the packs shipped with the auditor.
    assert set(available_rulesets()) == set(RULESETS)
    assert set(load_all()) == set(RULESETS)


@pytest.mark.parametrize("ruleset", RULESETS)
def test_pack_loads_and_names_itself(ruleset):
    pack = load_pack(ruleset)
    assert isinstance(pack, RulePack)
    assert pack.ruleset == ruleset
    assert pack.source == f"{ruleset}.md"
    assert pack.readings, "every pack applies at least one INDEX reading"
    assert pack.cite("§1") == f"{ruleset} §1"


def _uncited_leaves(node: Any, path: str, cited: bool) -> list[str]:
    if isinstance(node, dict):
        cited = cited or "cite" in node
        return [
            leaf
            for key, value in node.items()
            if key not in ("cite", "note")
            for leaf in _uncited_leaves(value, f"{path}.{key}", cited)
        ]
    if isinstance(node, list):
        return [
            leaf for i, v in enumerate(node) for leaf in _uncited_leaves(v, f"{path}[{i}]", cited)
        ]
    # null is the absence of a rule, not a value
    return [] if node is None or cited else [path]


@pytest.mark.parametrize("ruleset", RULESETS)
def test_every_value_has_a_cite(ruleset):
    data = raw(ruleset)
    body = {k: v for k, v in data.items() if k not in HEADER}
    assert _uncited_leaves(body, ruleset, cited=False) == []


MA_REF = re.compile(r"^§\d+(\([0-9a-z]+\))*[a-z]?( Table \d)?$")
MD_REF = re.compile(r"^\.\d\d[A-Z]?(\([0-9a-z]+\))*$")


def _cites(node: Any) -> list[str]:
    if isinstance(node, dict):
        own = [node["cite"]] if "cite" in node else []
        return own + [c for k, v in node.items() if k != "cite" for c in _cites(v)]
    if isinstance(node, list):
        return [c for v in node for c in _cites(v)]
    return []


def _ref_parts(ref: str) -> tuple[str, ...]:
    """'§9(e)(1)a' -> ('§9', 'e', '1', 'a'); '.12F(1)–(3)' -> ('.12', 'F')."""
    ref = ref.split(" ")[0]
    if "–" in ref:  # an INDEX range such as .04C(1)–(3): keep what all its items share
        ref = ref[: ref.rindex("(", 0, ref.index("–"))]
    head = re.match(r"(§\d+|\.\d\d)([A-Z]?)", ref)
    assert head, ref
    parts = [head[1], *([head[2]] if head[2] else [])]
    parts += re.findall(r"\(([^)]+)\)", ref)
    tail = re.search(r"\)([a-z])$", ref)
    return tuple(parts + ([tail[1]] if tail else []))


def _index_refs() -> dict[str, set[tuple[str, ...]]]:
    sections = {"1": MA, "2": MIDI, "3": MD, "4": CDF}
    refs: dict[str, set[tuple[str, ...]]] = {r: set() for r in RULESETS}
    current = None
    for line in (regulations() / "INDEX.md").read_text("utf-8").splitlines():
        heading = re.match(r"## (\d)\. ", line)
        if heading:
            current = sections.get(heading[1])
        elif line.startswith("## "):
            current = None
        elif current and re.match(r"\| (§|\.\d)", line):
            refs[current].add(_ref_parts(line.split("|")[1].strip()))
    # Definitions have no table row of their own (INDEX: "Definitions (§1 …)").
    refs[MA].add(("§1",))
    refs[MIDI].add(("§1",))
    refs[MD].add((".01",))
    return refs


@pytest.mark.parametrize("ruleset", RULESETS)
def test_every_cite_is_a_reference_of_its_own_regulation(ruleset):
    pattern = MD_REF if ruleset == MD else MA_REF
    cites = _cites(raw(ruleset))
    assert [c for c in cites if not pattern.match(c)] == []
    known = _index_refs()[ruleset]

    def related(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
        n = min(len(a), len(b))
        return a[:n] == b[:n]

    unknown = [c for c in cites if not any(related(_ref_parts(c), k) for k in known)]
    assert unknown == [], f"cites that name no section the INDEX maps: {unknown}"


# --------------------------------------------------------------------------- draws


def _rows(ruleset: str, frame: str) -> pl.DataFrame:
    """`ruleset`'s rows of a frame of the packs' table form (draw_cells, player_cells)."""
    return getattr(pack_tables(load_all()), frame).filter(pl.col("ruleset") == ruleset)


@pytest.mark.parametrize("ruleset", RULESETS)
def test_banker_grid_is_complete(ruleset):
    frame = _rows(ruleset, "draw_cells")
    assert frame.schema == pl.Schema(
        {
            "ruleset": pl.String,
            "banker_two_card": pl.Int8,
            "player_third": pl.Int8,
            "banker_draws": pl.Boolean,
            "citation": pl.String,
            "severity": pl.String,
        }
    )
    assert frame.height == 8 * 11
    keys = set(
        zip(frame["banker_two_card"].to_list(), frame["player_third"].to_list(), strict=True)
    )
    assert keys == set(CELLS)
    assert frame["ruleset"].unique().to_list() == [ruleset]
    assert frame["citation"].str.starts_with(f"{ruleset} ").all()


@pytest.mark.parametrize("ruleset", RULESETS)
def test_banker_draw_equals_the_text(ruleset):
    """Every (Banker two-card total, Player third card or stood) against the reference."""
    draws, cite, severity = REFERENCES[ruleset]
    pack = load_pack(ruleset)
    wrong = []
    for banker, third in CELLS:
        cell = pack.banker_decision(banker, third)
        expected = (draws(banker, third), cite(banker, third), severity(banker, third))
        if (cell.draws, cell.cite, cell.severity) != expected:
            wrong.append(((banker, third), (cell.draws, cell.cite, cell.severity), expected))
    assert wrong == []


@pytest.mark.parametrize("ruleset", RULESETS)
def test_banker_draw_frame_matches_the_cells(ruleset):
    pack = load_pack(ruleset)
    for row in _rows(ruleset, "draw_cells").iter_rows(named=True):
        cell = pack.banker_decision(row["banker_two_card"], row["player_third"])
        assert row["banker_draws"] == cell.draws
        assert row["citation"] == pack.cite(cell.cite)
        assert row["severity"] == cell.severity


@pytest.mark.parametrize("ruleset", RULESETS)
def test_player_draw_equals_the_text(ruleset):
    frame = _rows(ruleset, "player_cells")
    assert frame.schema == pl.Schema(
        {
            "ruleset": pl.String,
            "player_two_card": pl.Int8,
            "action": pl.String,
            "citation": pl.String,
        }
    )
    got = {r["player_two_card"]: (r["action"], r["citation"]) for r in frame.iter_rows(named=True)}
    expected = {}
    for total in range(8):
        action, ref = PLAYER_REFERENCES[ruleset](total)
        expected[total] = (action, f"{ruleset} {ref}")
    assert got == expected


def test_chemin_de_fer_stood_gap_is_noted():
    pack = load_pack(CDF)
    for banker in (4, 5, 6):
        cell = pack.banker_decision(banker, None)
        assert cell.severity == "low"
        assert "Ambiguity 1" in (cell.note or "")


def test_maryland_long_hand_is_its_own_table():
    """Each .10E(3) item decides its own third card: ten distinct lettered citations."""
    frame = _rows(MD, "draw_cells").filter(pl.col("banker_two_card").is_between(3, 6))
    by_third = (
        frame.filter(pl.col("player_third").is_not_null())
        .group_by("player_third")
        .agg(pl.col("citation").unique())
    )
    cites = {r["player_third"]: r["citation"] for r in by_third.iter_rows(named=True)}
    assert cites == {t: [f"md-mini-baccarat .10E(3)({'abcdefghij'[t]})"] for t in range(10)}


# --------------------------------------------------------------------------- agreement


def test_banker_draws_after_a_player_draw_agree_everywhere():
    packs = load_all()
    for banker in range(8):
        for third in range(10):
            decisions = {r: p.banker_decision(banker, third).draws for r, p in packs.items()}
            assert len(set(decisions.values())) == 1, (banker, third, decisions)


def test_card_values_burns_naturals_and_hand_sizes_agree():
    packs = list(load_all().values())
    for pack in packs:
        assert {r: c.value_of(r) for r, c in pack.card_values.items()} == {
            **{str(n): n for n in range(2, 10)},
            "A": 1,
            **dict.fromkeys("TJQK", 0),
        }
        assert {r: c.value_of(r) for r, c in pack.burn_values.items()} == {
            **{str(n): n for n in range(2, 10)},
            "A": 1,
            **dict.fromkeys("TJQK", 10),
        }
        assert pack.naturals.totals == (8, 9)
        assert (pack.limits.cards_per_hand.min, pack.limits.cards_per_hand.max) == (2, 3)


def _event(pack: RulePack, name: str) -> tuple | None:
    event = pack.ez.events.get(name)
    return event and (event.hand, event.total, event.cards, event.other_hand_below)


def _shared(getter: Callable[[RulePack], Any]) -> list[Any]:
    return [v for v in (getter(p) for p in load_all().values()) if v is not None]


@pytest.mark.parametrize(
    ("name", "getter"),
    [
        ("player", lambda p: p.payouts.player.odds),
        ("banker", lambda p: p.payouts.banker.odds),
        ("tie", lambda p: p.payouts.tie and p.payouts.tie.min_odds),
        ("dragon7", lambda p: p.payouts.dragon7 and p.payouts.dragon7.odds),
        ("panda8", lambda p: p.payouts.panda8 and p.payouts.panda8.odds),
        (
            "house_money",
            lambda p: (
                p.payouts.house_money and (p.payouts.house_money.both, p.payouts.house_money.one)
            ),
        ),
        (
            "dragon_bonus",
            lambda p: (
                {
                    n: (t.win_by, t.natural_winner, t.natural_tie)
                    for n, t in (p.payouts.dragon_bonus or {}).items()
                }
                or None
            ),
        ),
        ("royal9 wager", lambda p: p.payouts.royal9 and p.payouts.royal9.wager.amount),
        (
            "royal9 fixed lines both texts print",
            lambda p: (
                p.payouts.royal9
                and {
                    line.name: line.amount
                    for t in p.payouts.royal9.paytables.values()
                    for line in t.lines
                    if line.name in ("Any Suited Royal 9", "Any Royal 9")
                }
            ),
        ),
        ("dragon7 definition", lambda p: _event(p, "dragon7")),
        ("panda8 definition", lambda p: _event(p, "panda8")),
    ],
)
def test_shared_payouts_agree(name, getter):
    values = _shared(getter)
    assert values, name
    assert all(v == values[0] for v in values), (name, values)


def test_shared_payout_values_are_the_texts():
    ma = load_pack(MA).payouts
    assert (ma.player.odds, ma.banker.odds, ma.tie.min_odds) == (1, 1, 8)
    assert (ma.dragon7.odds, ma.panda8.odds) == (40, 25)
    assert (ma.house_money.both, ma.house_money.one) == (15, 3)
    # §13(e), win by 9, 8, 7, 6, 5, 4 points
    margins = (9, 8, 7, 6, 5, 4)
    assert {n: [t.win_by[m] for m in margins] for n, t in ma.dragon_bonus.items()} == {
        "A": [30, 10, 6, 4, 2, 1],
        "B": [20, 8, 7, 4, 3, 1],
        "C": [30, 10, 4, 4, 2, 2],
    }
    assert _event(load_pack(MA), "dragon7") == ("banker", 7, 3, 7)
    assert _event(load_pack(MA), "panda8") == ("player", 8, 3, 8)
    assert all(t.natural_winner == 1 and t.natural_tie == "push" for t in ma.dragon_bonus.values())


# --------------------------------------------------------------------------- differences


def _seats(p: RulePack):
    return p.limits.seats and (p.limits.seats.min, p.limits.seats.max)


def _royal9_limits(p: RulePack):
    return p.limits.royal9 and (p.limits.royal9.decks, p.limits.royal9.seats)


def _shuffler(p: RulePack):
    s = p.limits.automated_shuffler
    return s.two_batches and (s.total_decks.min, s.total_decks.max, s.equal_batches)


def _proc(name: str, key: str):
    return lambda p: p.procedure(name) and getattr(p.procedure(name), key)


ALL_BETS = set(contract.BETS)

# INDEX "Where the rulesets differ", row by row: (ma-baccarat, midi, md-mini, chemin de fer).
DIFFERENCES: dict[str, tuple[Callable[[RulePack], Any], tuple[Any, Any, Any, Any]]] = {
    "seats": (_seats, ((10, 14), (None, 9), (None, 9), None)),
    "decks": (
        lambda p: (p.limits.decks.min, p.limits.decks.max),
        ((6, 8), (6, None), (6, 8), (6, None)),
    ),
    "royal9 decks and seats": (_royal9_limits, (((8,), None), ((6, 8), (6, 7)), None, None)),
    "automated shuffler batches": (_shuffler, (False, False, (12, 16, True), False)),
    "cut depth": (lambda p: p.limits.cut.min_from_either_end, (52, 52, 10, 52)),
    "cover card": (lambda p: p.limits.cover_card.min_from_back, (14, None, 14, 14)),
    "ez offered": (lambda p: p.ez.offered.value, (True, True, True, False)),
    "ez announcements": (
        lambda p: {item.event for item in p.ez.announce},
        ({"dragon7", "panda8"}, {"dragon7", "panda8"}, {"dragon7"}, set()),
    ),
    "permitted bets": (
        lambda p: set(p.permitted),
        (ALL_BETS, ALL_BETS, ALL_BETS - {"panda8", "house_money", "royal9"}, {"banker", "player"}),
    ),
    "calls": (
        lambda p: {b: {c.call for c in bet.calls} for b, bet in p.permitted.items() if bet.calls},
        ({}, {}, {}, {"player": {"suivi", "banco", "partial"}}),
    ),
    "royal9 paytables": (
        lambda p: p.payouts.royal9 and set(p.payouts.royal9.paytables),
        ({"1", "2"}, {"midi"}, None, None),
    ),
    "commission percents": (lambda p: p.commission.percents.values, ((5,), (5,), (5,), (4, 5))),
    "commission rounding": (
        lambda p: p.commission.rounding.step_cents,
        ({5: 25}, {5: 25}, {5: 25}, {4: 20, 5: 25}),
    ),
    "commission collection": (
        lambda p: p.commission.collection.modes,
        (("at_payout", "marker"),) * 3 + (("at_payout",),),
    ),
    "no commission at EZ": (
        lambda p: p.commission.none_at_ez and p.commission.none_at_ez.value,
        (True, True, True, None),
    ),
    "banker wins on": (lambda p: p.payouts.banker.basis, ("stake", "stake", "stake", "covered")),
    "who deals": (_proc("deals", "by"), ("curator", "dealer", "dealer", "banker")),
    "last hand after the cover card": (
        _proc("last_hand_after_cover", "value"),
        (True, True, True, False),
    ),
    "hands counted after the cover card": (
        _proc("last_hand_after_cover", "counted_kinds"),
        (("regular",), ("regular", "free"), ("regular",), ()),
    ),
    "void ends the shoe": (_proc("void_ends_shoe", "value"), (True, True, True, False)),
    "mandatory pass": (
        _proc("pass_on_banker_loss", "seat_column"),
        ("curator_seat", None, None, "banker_seat"),
    ),
    "player on 5": (lambda p: p.player_draw[5].action, ("draw", "draw", "draw", "either")),
    "free hands": (_proc("free_hands", "value"), (None, True, None, None)),
    "house money rollover": (
        _proc("house_money_rollover", "onto"),
        (("banker", "player"), ("banker", "player"), None, None),
    ),
    "marker before the next shoe": (
        _proc("marker_collected_before_next_shoe", "value"),
        (True, True, True, None),
    ),
    "bank stake": (_proc("bank_stake", "max_multiple"), (None, None, None, 2)),
    "wagers against the bank": (
        _proc("wagers_against_bank", "total_at_most_bank"),
        (None, None, None, True),
    ),
    "suivi": (_proc("suivi", "qualifying_calls"), (None, None, None, ("banco", "suivi"))),
}


@pytest.mark.parametrize("aspect", list(DIFFERENCES))
def test_rulesets_differ_where_the_index_says(aspect):
    getter, expected = DIFFERENCES[aspect]
    got = tuple(getter(load_pack(r)) for r in RULESETS)
    assert got == expected


def test_royal9_lines_are_named_as_printed():
    ma = load_pack(MA).payouts.royal9
    midi = load_pack(MIDI).payouts.royal9
    assert [(line.name, line.amount) for line in ma.paytables["1"].lines] == [
        ("Exact Match Personal Progressive", None),
        ("Any Two Personal Progressive", None),
        ("Personal K9 on Banker Hand", None),
        ("Personal K9 on Player Hand", None),
        ("Suited Royal 9 Tie Hand", Decimal(1500)),
        ("Royal 9 Tie Hand", Decimal(250)),
        ("Any Suited Royal 9", Decimal(50)),
        ("Any Royal 9", Decimal(25)),
    ]
    assert ma.paytables["2"].lines == ma.paytables["1"].lines
    assert [(line.name, line.amount) for line in midi.paytables["midi"].lines] == [
        ("Personal King-9 vs. Personal King-9", None),
        ("Banker Personal King-9", None),
        ("Player Personal King-9", None),
        ("Other Personal King-9 vs. Identical King-9", Decimal(5000)),
        ("Suited Royal 9 vs. Suited Royal 9", Decimal(1500)),
        ("Royal 9 vs. Royal 9", Decimal(250)),
        ("Any Suited Royal 9", Decimal(50)),
        ("Any Royal 9", Decimal(25)),
    ]


def test_ma_baccarat_table_2_seat_combinations():
    combos = load_pack(MA).payouts.royal9.seat_combinations
    assert sorted(combos.chairs) == list(range(1, 10))
    # Table 2 pairs each chair with one face-card suit and one nine suit.
    suits = {1: "SH", 2: "SD", 3: "CH", 4: "CD", 5: "HS", 6: "HC", 7: "DS", 8: "DC", 9: "DH"}
    for chair, (face, nine) in suits.items():
        assert combos.chairs[chair] == (f"K{face}9{nine}", f"Q{face}9{nine}", f"J{face}9{nine}")
    assert load_pack(MIDI).payouts.royal9.seat_combinations.chairs is None


def test_permitted_bets():
    cdf = load_pack(CDF)
    assert [(b, e.requires, cdf.cite(e.cite)) for b, e in sorted(cdf.permitted.items())] == [
        ("banker", None, f"{CDF} §5(a)"),
        ("player", None, f"{CDF} §6(a)"),
    ]
    requires = {b: e.requires for b, e in load_pack(MA).permitted.items()}
    assert requires["dragon7"] == "ez_baccarat"
    assert requires["royal9"] == "royal9_paytable"
    assert requires["tie"] is None


# --------------------------------------------------------------------------- errors


def test_unknown_ruleset_lists_the_known_ones():
    with pytest.raises(RulesetError) as err:
        load_pack("nj-baccarat")
    message = str(err.value)
    assert "'nj-baccarat'" in message
    for ruleset in RULESETS:
        assert ruleset in message


def _write(tmp_path: Path, data: dict, name: str = MA) -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), "utf-8")
    return path


def _broken(tmp_path: Path, change: Callable[[dict], None], ruleset: str = MA) -> str:
    data = copy.deepcopy(raw(ruleset))
    change(data)
    path = _write(tmp_path, data, ruleset)
    with pytest.raises(RulesetError) as err:
        load_pack_file(path)
    message = str(err.value)
    assert re.match(rf"{re.escape(str(path))}:\d+: ", message), message
    return message


def test_an_unchanged_copy_loads(tmp_path):
    """The same rules written out again: the same pack in every rule, though another file
    (a pack is identified by its file's bytes)."""
    copy, original = load_pack_file(_write(tmp_path, raw(MA))), load_pack(MA)
    where = ("digest", "file", "key_lines")
    rules = [f.name for f in dataclasses.fields(copy) if f.name not in where]
    assert [getattr(copy, n) for n in rules] == [getattr(original, n) for n in rules]
    assert copy != original and copy.file.endswith(f"{MA}.yaml")
    exact = tmp_path / "exact" / f"{MA}.yaml"
    exact.parent.mkdir()
    exact.write_bytes((files("auditor.rules") / f"{MA}.yaml").read_bytes())
    assert load_pack_file(exact) == original and hash(load_pack_file(exact)) == hash(original)


def _drop_cell_rule(data: dict) -> None:
    data["banker_draw"] = [
        r for r in data["banker_draw"] if not (r["banker"] == [4] and r["action"] == "stand")
    ]


def _rename_key(data: dict) -> None:
    rule = data["banker_draw"][0]
    rule["player_thrid"] = rule.pop("player_third")


def _repeat_royal9_line(data: dict) -> None:
    lines = data["payouts"]["royal9"]["paytables"]["1"]["lines"]
    lines[1] = dict(lines[1], name=lines[0]["name"])


def _repeat_seat_combination(data: dict) -> None:
    data["payouts"]["royal9"]["seat_combinations"]["chairs"][2][0] = "KS9H"


def _announce_ez(data: dict) -> None:
    data["ez"]["announce"] = [{"event": "dragon7", "cite": "§9(a)"}]
    data["ez"]["events"] = {
        "dragon7": {
            "hand": "banker",
            "total": 7,
            "cards": 3,
            "other_hand_below": 7,
            "cite": "§9(a)",
        }
    }


def _add_payout(data: dict) -> None:
    data["payouts"]["panda8"] = {"odds": 25, "cite": ".12G"}


@pytest.mark.parametrize(
    ("ruleset", "change", "expected"),
    [
        (MA, lambda d: d["limits"].pop("decks"), "limits.decks: missing key"),
        (MA, lambda d: d["payouts"]["player"].pop("cite"), "payouts.player.cite: missing key"),
        (MA, _rename_key, "banker_draw[0].player_thrid: unknown key"),
        (MA, _drop_cell_rule, "Banker 4 / Player third card 8: no rule"),
        (
            MA,
            lambda d: d["banker_draw"].append(
                {"banker": [6], "player_third": "stood", "action": "draw", "cite": "§11(c)(1)"}
            ),
            "given twice, Banker 6 / Player stood: banker_draw[1] and banker_draw[12]",
        ),
        (
            MA,
            lambda d: d["bets"]["permitted"].append(
                {"bet": "lucky6", "requires": None, "cite": "§8(a)"}
            ),
            "bets.permitted[9].bet: 'lucky6' is not one of",
        ),
        (
            MA,
            lambda d: d["bets"]["permitted"][5].update(requires="ez_table"),
            "bets.permitted[5].requires: 'ez_table' is not one of",
        ),
        (MA, lambda d: d["player_draw"][1].update(totals=[6]), "no action for Player total(s) 7"),
        (MA, lambda d: d["card_values"].pop(), "card_values: no value for rank(s) A"),
        (MA, lambda d: d["limits"]["seats"].update(min=15), "limits.seats: min 15 is above max 14"),
        (
            MA,
            lambda d: d.update(ruleset="ma-midi-baccarat"),
            "ruleset: 'ma-midi-baccarat' does not match",
        ),
        (MD, _add_payout, "payouts.panda8: given, but bet 'panda8' is not permitted"),
        (MD, lambda d: d["procedures"].pop("suivi"), "procedures.suivi: missing key"),
        (
            MD,
            lambda d: d["commission"]["rounding"]["step_cents"].update({4: 20}),
            "commission.rounding.step_cents: needs one step for each percent [5]",
        ),
        (
            MA,
            lambda d: d["banker_draw"][0].update(action=["draw"]),
            "banker_draw[0].action: ['draw']",
        ),
        (MA, lambda d: d["payouts"].update(player=None), "payouts.player: expected a mapping"),
        (
            MA,
            _repeat_royal9_line,
            "lines[1].name: 'Exact Match Personal Progressive' is listed twice",
        ),
        (
            MA,
            _repeat_seat_combination,
            "seat_combinations.chairs.2: KS9H is also posted at chair 1",
        ),
        (CDF, _announce_ez, "ez: EZ is not offered"),
        (
            MA,
            lambda d: d["limits"]["decks"].update(min="6"),
            "limits.decks.min: expected an integer",
        ),
        (
            MA,
            lambda d: d["banker_draw"][0].update(player_third="stod"),
            "banker_draw[0].player_third: expected 'stood' or a list",
        ),
        (
            MA,
            lambda d: d["payouts"]["dragon_bonus"]["A"]["win_by"].update({3: 1}),
            "payouts.dragon_bonus.A.win_by.3: unknown key",
        ),
        (
            CDF,
            lambda d: d["bets"]["permitted"][1]["calls"][1].update(call="suivi"),
            "bets.permitted[1].calls[1].call: call 'suivi' is listed twice",
        ),
        (
            MA,
            lambda d: d["limits"]["automated_shuffler"].update(equal_batches=True),
            "limits.automated_shuffler: equal_batches given, but two_batches is false",
        ),
    ],
    ids=[
        "missing-key",
        "missing-cite",
        "misspelt-key",
        "cell-missing",
        "cell-twice",
        "unknown-bet",
        "unknown-option",
        "player-total-missing",
        "rank-missing",
        "range-inverted",
        "ruleset-mismatch",
        "payout-without-bet",
        "procedure-missing",
        "rounding-mismatch",
        "list-for-a-name",
        "null-payout",
        "royal9-line-twice",
        "combination-at-two-chairs",
        "ez-where-not-offered",
        "text-for-a-number",
        "neither-stood-nor-cards",
        "unknown-margin",
        "call-twice",
        "batches-without-two-batches",
    ],
)
def test_a_malformed_pack_names_the_file_and_key(tmp_path, ruleset, change, expected):
    assert expected in _broken(tmp_path, change, ruleset)


def test_invalid_yaml_is_a_ruleset_error(tmp_path):
    path = tmp_path / f"{MA}.yaml"
    path.write_text("ruleset: [unclosed\n", "utf-8")
    with pytest.raises(RulesetError, match="not valid YAML"):
        load_pack_file(path)


# --------------------------------------------------------------------------- JSON Schema


def _as_json(data: Any) -> Any:
    """A pack as an editor's schema validation sees it: YAML's numeric keys become strings."""
    return json.loads(json.dumps(data))


OPTIONAL_KEYS = {"sections", "effective_from"}


def test_schema_cli_prints_the_pack_schema():
    result = CliRunner().invoke(main, ["rules", "--schema"])
    assert result.exit_code == 0, result.output
    schema = json.loads(result.output)
    assert schema == _as_json(pack_json_schema())
    assert set(schema["properties"]) == set(raw(MA)) | OPTIONAL_KEYS


@pytest.mark.parametrize("ruleset", RULESETS)
def test_the_schema_lists_every_top_level_key_and_no_other(ruleset):
    schema = pack_json_schema()
    # A built-in pack gives every key but those only a pack from outside needs: its own
    # section texts, and the date a later version takes effect; and its regulation and
    # the table its cases are dealt at, which a pack from outside may leave out.
    required = set(schema["required"])
    given_by_builtin = {"regulation", "case_table"}
    assert set(raw(ruleset)) == required | given_by_builtin
    assert required == set(schema["properties"]) - OPTIONAL_KEYS - given_by_builtin
    assert schema["additionalProperties"] is False
    objects = [d for d in schema["$defs"].values() if d.get("type") == "object"]
    assert objects and all(d["additionalProperties"] is False for d in objects)


@pytest.mark.parametrize("ruleset", RULESETS)
def test_every_pack_validates_against_the_schema(ruleset):
    jsonschema = pytest.importorskip("jsonschema")
    schema = pack_json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(_as_json(raw(ruleset)), schema, cls=jsonschema.Draft202012Validator)
    broken = _as_json(raw(ruleset))
    broken["limits"]["decks"]["mni"] = 6
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, schema, cls=jsonschema.Draft202012Validator)
