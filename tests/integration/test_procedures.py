"""Shoe (SHO) and procedure (PRC) checks beyond the YAML cases.

- On simulated data: every injected shoe and procedure fault is found on the shoe, round
  or wager the fault key names, with nothing else; clean data gives no SHO/PRC finding.
- The rulesets differ where the regulation texts differ: one log, four rulesets.
- What a case file cannot hold: a sequence longer than the decks, a whole real shoe.
"""

from __future__ import annotations

import random
import re
from decimal import Decimal
from pathlib import Path

import polars as pl
import pytest

from auditor import procedures
from auditor.casework.build import case_rows
from auditor.input.partition import partitions
from auditor.packs.model import load_all
from auditor.pipeline import hold_partition, run_validation
from auditor.simulator.simulate import simulate

# Fault kind -> (codes, what the finding names: the shoe, the round or the wager).
EXPECTED = {
    "burn_count_wrong": ("SHO005", "shoe"),
    "cut_too_shallow": ("SHO007", "shoe"),
    "cover_card_too_close": ("SHO008", "shoe"),
    "decks_out_of_range": ("SHO001|SHO002", "shoe"),
    "sequence_mismatch": ("SHO011", "round"),
    "extra_hand_after_cover": ("PRC001", "round"),
    "curator_not_passing": ("PRC003", "round"),
    "bank_not_passing": ("PRC003", "round"),
    "bank_stake_out_of_range": ("PRC004|PRC005", "wager"),
    "bank_overcovered": ("PRC007", "round"),
    "suivi_not_entitled": ("PRC008", "wager"),
    "marker_uncollected": ("PRC009", "shoe"),
    "collection_without_marker": ("COM004", "shoe"),
    "holder_not_of_game": ("PRC011", "round"),
    "holder_seat_out_of_range": ("PRC010", "round"),
    "free_hand_not_allowed": ("PRC012", "round"),
    "call_below_bank": ("PRC013", "wager"),
    "banker_wager_misplaced": ("PRC014", "round"),
    "void_with_cards_left": ("SHO013", "round"),
    "discards_too_many": ("SHO014", "round"),
    "bank_bid_missing": ("PRC015", "round"),
    "royal9_chair_suited": ("TBL004", "table"),
    "no_more_bets_late": ("TOT005", "round"),
    "table_seats_out_of_range": ("TBL001", "table"),
    "royal9_table_seats": ("TBL002", "table"),
    "collection_not_allowed": ("TBL003", "table"),
    # A foreign card is a shoe finding, and with a reader also a round out of sequence.
    "foreign_card": ("SHO009", "shoe"),
}


def stage_findings(dataset: Path) -> pl.DataFrame:
    """The procedures stage alone, as `pipeline.find` wires it."""
    validated = run_validation(dataset)
    assert validated.quarantine.height == 0, validated.quarantine.head().to_dicts()
    packs = load_all()
    (whole,) = partitions(validated.audited, 10**9)
    part, replayed, options = hold_partition(validated.audited, whole, True, packs)
    (found,) = procedures.find(part, replayed, options, packs)
    return found.collect()


def expected_findings(dataset: Path) -> set[tuple[str, str, str | None, str | None]]:
    key = pl.read_parquet(dataset / "fault_key.parquet")
    shoes = pl.read_parquet(dataset / "shoes.parquet")
    readers = set(shoes.filter(pl.col("card_sequence").is_not_null())["shoe_id"])
    expected = set()
    for fault, table, shoe, round_id, wager_id in key.select(
        "fault", "table_id", "shoe_id", "round_id", "wager_id"
    ).iter_rows():
        if fault not in EXPECTED:
            continue
        codes, level = EXPECTED[fault]
        expected.add(
            (
                codes,
                table if level == "table" else shoe,
                None if level == "shoe" else round_id,
                wager_id if level == "wager" else None,
            )
        )
        if fault == "foreign_card" and shoe in readers:
            expected.add(("SHO011", shoe, round_id, None))
    return expected


@pytest.fixture(scope="module")
def faulty(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, pl.DataFrame]:
    out = tmp_path_factory.mktemp("faulty_shoes")
    simulate(out, 20_000, seed=7, fault_rate=0.06, shoe_fault_rate=0.4)
    return out, stage_findings(out)


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("clean_shoes")
    simulate(out, 20_000, seed=8)
    return out


def test_every_shoe_and_procedure_fault_kind_is_injected(faulty) -> None:
    dataset, _ = faulty
    kinds = set(pl.read_parquet(dataset / "fault_key.parquet")["fault"])
    assert set(EXPECTED) <= kinds, set(EXPECTED) - kinds


def test_each_fault_is_found_where_keyed_and_nothing_else(faulty) -> None:
    dataset, findings = faulty
    expected = expected_findings(dataset)
    # A table finding names its table where the others name their shoe.
    found = {
        (rule, shoe or table, round_id, wager_id)
        for rule, table, shoe, round_id, wager_id in findings.select(
            "rule", "table_id", "shoe_id", "round_id", "wager_id"
        ).iter_rows()
    }

    def matches(want: tuple, got: tuple) -> bool:
        return bool(re.fullmatch(want[0], got[0])) and want[1:] == got[1:]

    missing = [w for w in expected if not any(matches(w, g) for g in found)]
    extra = [g for g in found if not any(matches(w, g) for w in expected)]
    assert not missing, missing[:10]
    assert not extra, extra[:10]
    assert findings.height == len(found), "one finding per rule and place"


def test_marker_findings_carry_the_uncollected_amount(faulty) -> None:
    dataset, findings = faulty
    key = pl.read_parquet(dataset / "fault_key.parquet").filter(
        pl.col("fault") == "marker_uncollected"
    )
    marker = findings.filter(pl.col("rule") == "PRC009")
    assert sorted(marker["impact"].to_list()) == sorted(key["impact"].to_list())
    assert (marker["impact"] > 0).all()


def test_findings_are_deterministic(faulty) -> None:
    dataset, findings = faulty
    assert stage_findings(dataset).equals(findings)


def test_clean_simulated_data_gives_no_shoe_or_procedure_finding(clean) -> None:
    findings = stage_findings(clean)
    assert findings.height == 0, findings.head(10).to_dicts()


# ---- the rulesets differ where the texts differ -----------------------------------------

RULESETS = ("ma-baccarat", "ma-midi-baccarat", "md-mini-baccarat", "ma-chemin-de-fer")
SAME_LOG = {
    # One shoe, one log; the rule codes found under each ruleset, in RULESETS order.
    "cover card 10 from the back": (
        {"shoe": {"cover_from_back": 10}, "round": {}},
        "SHO008",
        (True, False, True, True),
    ),
    "cut 20 cards from the top": (
        {"shoe": {"cut_index": 20}, "round": {}},
        "SHO007",
        (True, True, False, True),
    ),
    "cut 9 cards from the top": (
        {"shoe": {"cut_index": 9}, "round": {}},
        "SHO007",
        (True, True, True, True),
    ),
    "ten decks": ({"table": {"decks": 10}, "round": {}}, "SHO001", (True, False, True, False)),
    "two hands after the cover card": (
        {"rounds": [{}, *[{"cover_card_drawn": True}] * 3]},
        "PRC001",
        (True, True, True, False),
    ),
    "a round after a void round": (
        {"rounds": [{"kind": "void", "outcome": "void"}, {}]},
        "PRC002",
        (True, True, True, False),
    ),
}


@pytest.mark.parametrize("aspect", list(SAME_LOG))
def test_rulesets_differ_where_the_texts_differ(aspect: str, write_dataset) -> None:
    case, code, found_at = SAME_LOG[aspect]
    got = []
    for ruleset in RULESETS:
        findings = stage_findings(write_dataset(case_rows({"ruleset": ruleset, **case})))
        got.append(code in set(findings["rule"]))
    assert tuple(got) == found_at


def test_royal9_decks_differ_between_ma_baccarat_and_midi(write_dataset) -> None:
    got = {}
    for ruleset, paytable in (("ma-baccarat", "1"), ("ma-midi-baccarat", "midi")):
        spec = {"ruleset": ruleset, "table": {"decks": 6, "royal9_paytable": paytable}}
        findings = stage_findings(write_dataset(case_rows({**spec, "round": {}})))
        got[ruleset] = set(findings["rule"])
    assert "SHO002" in got["ma-baccarat"]
    assert "SHO002" not in got["ma-midi-baccarat"]


# ---- what a case file cannot hold ----------------------------------------------------------


def _shuffled(decks: int, seed: int) -> list[str]:
    cards = [rank + suit for rank in "A23456789TJQK" for suit in "SHDC"] * decks
    random.Random(seed).shuffle(cards)
    return cards


def test_a_sequence_longer_than_the_decks(write_dataset) -> None:
    sequence = [*_shuffled(6, seed=1), "AS"]
    burn = sequence[0]
    value = {"A": 1, "T": 10, "J": 10, "Q": 10, "K": 10}.get(burn[0]) or int(burn[0])
    start = 1 + value
    player = [sequence[start], sequence[start + 2]]
    banker = [sequence[start + 1], sequence[start + 3]]
    spec = {
        "ruleset": "ma-chemin-de-fer",
        "table": {"decks": 6},
        "shoe": {"card_sequence": sequence, "burn_card": burn, "burn_count": value},
        # Whatever the draw rules say of these cards, the sequence is what is checked.
        "round": {"player_cards": player, "banker_cards": banker},
    }
    findings = stage_findings(write_dataset(case_rows(spec)))
    sho010 = findings.filter(pl.col("rule") == "SHO010")
    assert sho010.height == 1
    assert "313 cards" in sho010["message"][0]
    assert "SHO011" not in set(findings["rule"])


def test_burn_count_moves_where_the_rounds_start(write_dataset) -> None:
    """The first round starts after the burn card and `burn_count` cards, as logged."""
    sequence = ["KS", *["2H"] * 10, "9H", "2C", "KD", "3D"]
    base = {
        "ruleset": "ma-baccarat",
        "round": {"player_cards": ["9H", "KD"], "banker_cards": ["2C", "3D"]},
    }
    right = {**base, "shoe": {"card_sequence": sequence, "burn_card": "KS", "burn_count": 10}}
    wrong = {**base, "shoe": {"card_sequence": sequence, "burn_card": "KS", "burn_count": 9}}
    right_rules = set(stage_findings(write_dataset(case_rows(right)))["rule"])
    wrong_rules = set(stage_findings(write_dataset(case_rows(wrong)))["rule"])
    assert not {"SHO005", "SHO011"} & right_rules
    assert {"SHO005", "SHO011"} <= wrong_rules


def test_uncollected_marker_names_seat_and_patron(write_dataset) -> None:
    spec = {
        "ruleset": "ma-baccarat",
        "table": {"commission_collection": "marker"},
        "round": {"player_cards": ["KH", "7C"], "banker_cards": ["9D", "KC"]},
        "wagers": [
            {"seat": 4, "patron_id": "P44", "bet": "banker", "amount": 200, "result": "win",
             "payout": 200, "commission": 10},
            {"seat": 5, "patron_id": None, "bet": "banker", "amount": 100, "result": "win",
             "payout": 100, "commission": 5},
        ],
    }  # fmt: skip
    findings = stage_findings(write_dataset(case_rows(spec))).filter(pl.col("rule") == "PRC009")
    assert findings["impact"].to_list() == [Decimal("10.00"), Decimal("5.00")]
    first, second = findings["message"].to_list()
    assert first.startswith("seat 4, patron P44: $10.00 marker commission owed")
    assert second.startswith("seat 5, an unrated patron: $5.00")
    assert findings["round_id"].is_null().all() and findings["wager_id"].is_null().all()
