"""The exact odds are computed once per run, not per partition nor per chair: the shipped
enumerations equal the enumeration, the shoes packs deal alike share one, the Royal 9
lines sum integers as the Fractions did, and a real partitioned audit enumerates each
shoe and builds the replay's decision table once."""

from __future__ import annotations

import dataclasses
from collections import Counter
from fractions import Fraction

import pytest

from auditor.odds import royal9, shipped
from auditor.odds.shoe import enumerate_rounds, state_key, state_of
from auditor.odds.table_options import TableOptions
from auditor.packs.model import load_all, load_pack
from auditor.pipeline import run_audit
from auditor.replay import derive
from auditor.surveillance import expected
from tests.support.paths import SAMPLE


def test_every_shipped_enumeration_equals_the_enumeration() -> None:
    packs = list(load_all().values())
    keys = set()
    for pack in packs:
        for either_draws in (True, False):
            rules = shipped.ShoeRules.of(pack, either_draws)
            for decks in range(1, shipped.SHIPPED_DECKS + 1):
                key = rules.key(decks, False)
                assert key in shipped.shipped(), (pack.ruleset, either_draws, decks)
                if key in keys:
                    continue
                keys.add(key)
                # Read from the data (the cache bypassed), then enumerated afresh.
                from_data = shipped._outcomes.__wrapped__(rules, decks)
                assert from_data == enumerate_rounds(pack, decks, either_draws=either_draws)
    # Nothing shipped that no built-in pack reads: a stale entry would go untested.
    assert keys == set(shipped.shipped())


def test_packs_that_deal_alike_share_one_enumeration() -> None:
    packs = load_all()
    baccarat = shipped.ShoeRules.of(packs["ma-baccarat"], True)
    assert baccarat == shipped.ShoeRules.of(packs["md-mini-baccarat"], True)
    assert baccarat != shipped.ShoeRules.of(packs["ma-chemin-de-fer"], False)


def test_a_shoe_not_shipped_is_enumerated() -> None:
    pack = load_pack("ma-baccarat")
    decks = shipped.SHIPPED_DECKS + 1
    assert shipped.ShoeRules.of(pack, True).key(decks, False) not in shipped.shipped()
    assert shipped.outcomes(pack, decks) == enumerate_rounds(pack, decks)


def test_state_keys_read_back() -> None:
    shoe = enumerate_rounds(load_pack("ma-baccarat"), 1)
    assert all(state_of(state_key(state)) == state for state in shoe.weights)


def test_royal9_lines_equal_the_sum_of_their_pairs_chances() -> None:
    for pack in load_all().values():
        terms = pack.payouts.royal9
        if terms is None:
            continue
        for table in terms.paytables.values():
            for seat in (1, 2, 12):
                mine, other, _ = royal9.posted(pack, TableOptions(seat=seat))
                expected_chances = dict.fromkeys((line.name for line in table.lines), Fraction(0))
                for (p, b), chance in royal9.hand_pairs(6).items():
                    met = royal9._matches(p, b, mine, other)
                    first = next((line for line in table.lines if met[line.match]), None)
                    if first is not None:
                        expected_chances[first.name] += chance
                assert royal9.line_chances(table, 6, mine, other) == expected_chances


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> dict[str, Counter]:
    """Counts of the real enumeration and decision table, every cache emptied first."""
    for cached in (
        shipped._outcomes,
        expected.round_chances,
        expected.wager_price,
        royal9.pair_counts,
        derive._ordered_decisions,
    ):
        cached.cache_clear()
    calls: dict[str, Counter] = {"enumerate": Counter(), "decisions": Counter()}
    enumerate_real, decisions_real = shipped.enumerate_rounds, derive.decision_table

    def enumerate_counted(pack, decks, *, either_draws=True, by_rank=False):
        rules = shipped.ShoeRules.of(pack, either_draws)
        calls["enumerate"][(rules.key(decks, by_rank), pack.ruleset, decks)] += 1
        return enumerate_real(pack, decks, either_draws=either_draws, by_rank=by_rank)

    def decisions_counted(packs):
        calls["decisions"][tuple(packs)] += 1
        return decisions_real(packs)

    monkeypatch.setattr(shipped, "enumerate_rounds", enumerate_counted)
    monkeypatch.setattr(derive, "decision_table", decisions_counted)
    yield calls
    for cached in (shipped._outcomes, expected.round_chances, expected.wager_price):
        cached.cache_clear()


def test_a_partitioned_run_computes_each_shoe_and_table_once(tmp_path, counted) -> None:
    results = run_audit(SAMPLE, tmp_path / "out", partition_rounds=400, report=False)
    assert results.findings.height > 0
    # The sample holds 9-deck Mini shoes, past the shipped 8: enumerated, once, however
    # many partitions price them; the shipped shoes are not enumerated at all.
    enumerated = counted["enumerate"]
    assert enumerated, "the sample's 9-deck shoes are enumerated"
    assert all(decks > shipped.SHIPPED_DECKS for _, _, decks in enumerated)
    assert set(Counter(key for key, _, _ in enumerated).values()) == {1}
    # The replay's decision table: once for the run's packs, not per partition.
    assert list(counted["decisions"].values()) == [1]


def test_shoe_rules_ignore_what_the_enumeration_does_not_read() -> None:
    pack = load_pack("ma-baccarat")
    renamed = pack.rules.model_copy(update={"title": "another title"})
    retitled = dataclasses.replace(pack, rules=renamed, digest="0" * 64)
    assert retitled.title == "another title" and retitled != pack
    assert shipped.ShoeRules.of(retitled, True) == shipped.ShoeRules.of(pack, True)
