"""Settlement (PAY, COM, WAG): arithmetic properties, agreement with an independent
scalar settlement, and the simulator's injected faults found on their wagers.

- Commission: the vectorized `commission_cents` against a plain Decimal statement of
  the rule, over random amounts up to $1,000,000, 4% and 5%, rounding on and off.
- Payout odds and results: random rounds dealt by the rules, with every bet type at
  tables of every ruleset and option, settled by the simulator's scalar code
  (`auditor.simulator.settle`, written independently of the rule packs) and by the engine;
  the two must agree to the cent.
- Faults: `simulate(..., fault_rate=0.1)` datasets; every settlement fault of the key is
  found on its wager, the impacts of that wager's findings add up to the key's impact,
  and no PAY, COM or WAG finding of this stage appears anywhere else.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from decimal import ROUND_CEILING, ROUND_HALF_UP, Decimal

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from auditor.contract import TABLES
from auditor.input.shoe_options import shoe_options
from auditor.packs.model import load_all
from auditor.pipeline import find, run_validation
from auditor.replay.derive import replay
from auditor.settlement.commission import COMMISSION_CHECKS
from auditor.settlement.correct import commission_cents, settle
from auditor.settlement.permit import PERMIT_CHECKS
from auditor.settlement.rollover import ROLLOVER_CHECKS
from auditor.settlement.wagers import WAGER_CHECKS
from auditor.simulator.settle import (
    CARD_CODES,
    CARD_NAMES,
    CHEMIN,
    MA_BACCARAT,
    MA_TABLE2,
    MARYLAND,
    MIDI,
    ROYAL9_STAKE,
    Facts,
    TableOptions,
    Wager,
    deal,
    settle_chemin,
    settle_round,
)
from auditor.simulator.simulate import simulate

MONEY = pl.Decimal(18, 2)
STAGE_CODES = {
    c.code for c, _ in WAGER_CHECKS.checks + COMMISSION_CHECKS.checks + PERMIT_CHECKS.checks
}
STAGE_CODES |= {c.code for c, _ in ROLLOVER_CHECKS.checks}
# Fault kind (simulator) -> the checks that may report it on the keyed wager.
SETTLEMENT_FAULTS = {
    "overpayment": {"PAY002", "PAY003"},
    "underpayment": {"PAY002", "PAY003"},
    "wrong_result": {"PAY001"},
    "wrong_paytable": {"PAY003"},
    "commission_missing": {"COM001"},
    "commission_misrounded": {"COM002"},
    "late_wager": {"WAG004"},
    "impermissible_bet": {"WAG001", "WAG002"},
    "wager_on_free_round": {"WAG005"},
    "seat_out_of_range": {"WAG006"},
    "rollover_excess": {"WAG008"},
}


# ---- commission arithmetic -----------------------------------------------------------


def reference_commission(won: Decimal, percent: int, rounding: bool) -> Decimal:
    """The contract's rule in plain Decimal: `percent` of the amount won, rounded up to
    the next multiple of 25 cents (20 cents at 4%) with rounding, else half up."""
    exact = won * percent / 100
    if rounding:
        step = Decimal("0.20") if percent == 4 else Decimal("0.25")
        return (exact / step).to_integral_value(rounding=ROUND_CEILING) * step
    return exact.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


cents_strategy = st.integers(min_value=0, max_value=100_000_000)  # up to $1,000,000.00


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(cents_strategy, st.sampled_from([4, 5]), st.booleans()),
        min_size=1,
        max_size=200,
    )
)
def test_commission_matches_the_decimal_rule(cases: list[tuple[int, int, bool]]) -> None:
    # The steps come from the packs, as the engine reads them.
    steps = load_all()["ma-chemin-de-fer"].commission.rounding.step_cents
    frame = pl.DataFrame(
        {
            "won": [c for c, _, _ in cases],
            "percent": [p for _, p, _ in cases],
            "rounding": [r for _, _, r in cases],
            "step": [steps[p] for _, p, _ in cases],
        },
        schema={"won": pl.Int64, "percent": pl.Int64, "rounding": pl.Boolean, "step": pl.Int64},
    )
    got = frame.select(
        commission_cents(pl.col("won"), pl.col("percent"), pl.col("rounding"), pl.col("step"))
    ).to_series()
    for (won, percent, rounding), cents in zip(cases, got, strict=True):
        expected = reference_commission(Decimal(won) / 100, percent, rounding)
        assert Decimal(cents) / 100 == expected, (won, percent, rounding)


@pytest.mark.parametrize(
    ("won", "percent", "rounding", "owed"),
    [
        ("1.00", 5, True, "0.25"),  # contract: "$1 pays 25 cents"
        ("37.50", 5, True, "2.00"),
        ("100.00", 5, True, "5.00"),
        ("101.00", 4, True, "4.20"),
        ("10.10", 5, False, "0.51"),  # 0.505 half up
        ("0.01", 5, False, "0.00"),
        ("0.01", 5, True, "0.25"),
        ("0.00", 5, True, "0.00"),
    ],
)
def test_commission_examples(won: str, percent: int, rounding: bool, owed: str) -> None:
    assert reference_commission(Decimal(won), percent, rounding) == Decimal(owed)
    steps = {4: 20, 5: 25}
    cents = pl.select(
        commission_cents(
            pl.lit(int(Decimal(won) * 100)),
            pl.lit(percent),
            pl.lit(rounding),
            pl.lit(steps[percent]),
        )
    ).item()
    assert Decimal(cents) / 100 == Decimal(owed)


# ---- settlement against the scalar simulator --------------------------------------------

T0 = datetime(2026, 11, 24, 18, 0, tzinfo=UTC)
MIDI_COMBOS = {seat: frozenset([(CARD_CODES[f"K{a}"], CARD_CODES[f"9{b}"])]) for seat, (a, b) in
               enumerate(["SH", "DC", "HS", "CD", "SD", "HC", "DS"], start=1)}  # fmt: skip
TABLE_VARIANTS = [
    TableOptions(MA_BACCARAT, 12, 8, dragon_bonus_paytable="A", house_money=True,
                 royal9_paytable="1", royal9_combos=MA_TABLE2),
    TableOptions(MA_BACCARAT, 14, 8, ez_baccarat=True, tie_pays=9, commission_rounding=False,
                 dragon_bonus_paytable="B", house_money=True, house_money_rollover_percent=50,
                 royal9_paytable="2", royal9_combos=MA_TABLE2),
    TableOptions(MIDI, 7, 8, dragon_bonus_paytable="C", house_money=True,
                 house_money_rollover_percent=33, royal9_paytable="midi",
                 royal9_combos=MIDI_COMBOS),
    TableOptions(MIDI, 6, 6, ez_baccarat=True, commission_rounding=False, house_money=True,
                 royal9_paytable="midi", royal9_combos=MIDI_COMBOS),
    TableOptions(MARYLAND, 9, 8, dragon_bonus_paytable="A", tie_pays=10),
    TableOptions(MARYLAND, 7, 6, ez_baccarat=True, commission_rounding=False,
                 dragon_bonus_paytable="C"),
    TableOptions(CHEMIN, 10, 6),
    TableOptions(CHEMIN, 12, 8, commission_percent=4),
    TableOptions(CHEMIN, 9, 6, commission_percent=4, commission_rounding=False),
]  # fmt: skip
AMOUNTS = (100, 500, 1010, 2500, 3750, 10000, 12345, 100_000_00)
FACES = [c for c in range(52) if CARD_NAMES[c][0] in "JQK"]
NINES = [c for c in range(52) if CARD_NAMES[c][0] == "9"]


def _bets(opts: TableOptions) -> list[str]:
    bets = ["banker", "player", "tie"]
    if opts.dragon_bonus_paytable:
        bets += ["dragon_bonus_banker", "dragon_bonus_player"]
    if opts.ez_baccarat:
        bets += ["dragon7"] + ([] if opts.ruleset == MARYLAND else ["panda8"])
    if opts.house_money:
        bets.append("house_money")
    if opts.royal9_paytable:
        bets.append("royal9")
    return bets


def _play(opts: TableOptions, rng: random.Random, n_rounds: int):
    """Rounds dealt by the rules from random cards, with wagers settled by the simulator."""
    rounds, wagers = [], []
    for i in range(n_rounds):
        cards = [rng.randrange(52) for _ in range(6)]
        # Enough Royal 9 hands, and the personal combination King of Spades / 9 of
        # Hearts (ma-baccarat chair 1, midi seat 1 here), to reach every line.
        roll = rng.random()
        if roll < 0.15:
            cards[0], cards[2] = rng.choice(FACES), rng.choice(NINES)
        if roll < 0.05:
            cards[1], cards[3] = CARD_CODES["KS"], CARD_CODES["9H"]
        pc, bc = deal(cards, opts.chemin, rng.random() < 0.5)
        facts = Facts(pc, bc)
        rid = f"R{i:05d}"
        round_wagers: list[Wager] = []
        if opts.chemin:
            bank = rng.choice(AMOUNTS)
            round_wagers.append(Wager(1, None, "banker", bank, None, 0.5))
            for seat in range(2, 2 + rng.randrange(1, 4)):
                amount = max(1, bank * rng.randrange(10, 60) // 100)
                round_wagers.append(Wager(seat, None, "player", amount, None, 0.5, "partial"))
        else:
            for seat in range(1, opts.seats + 1):
                if rng.random() < 0.5:
                    continue
                for bet in rng.sample(_bets(opts), k=rng.randrange(1, 4)):
                    amount = ROYAL9_STAKE if bet == "royal9" else rng.choice(AMOUNTS)
                    round_wagers.append(Wager(seat, None, bet, amount, None, rng.random()))
        if opts.chemin:
            settle_chemin(round_wagers, facts, opts)
        else:
            settle_round(round_wagers, facts, opts)
        rounds.append((rid, pc, bc, facts))
        wagers += [(rid, w) for w in round_wagers]
    return rounds, wagers


def _frames(opts: TableOptions, rounds, wagers) -> dict[str, pl.LazyFrame]:
    def frame(table: str, rows: list[dict]) -> pl.LazyFrame:
        schema = {c: t for c, (t, _) in TABLES[table].items()}
        return pl.DataFrame([{c: r.get(c) for c in schema} for r in rows], schema=schema).lazy()

    def money(cents: int | None) -> Decimal | None:
        return None if cents is None else Decimal(cents) / 100

    table = {
        "table_id": "T1", "property_id": "P1", "ruleset": opts.ruleset,
        "effective_from": T0 - timedelta(days=1), "seats": opts.seats, "decks": opts.decks,
        "automated_shuffler": False, "ez_baccarat": opts.ez_baccarat, "tie_pays": opts.tie_pays,
        "commission_percent": opts.commission_percent,
        "commission_rounding": opts.commission_rounding, "commission_collection": "at_payout",
        "dragon_bonus_paytable": opts.dragon_bonus_paytable, "house_money": opts.house_money,
        "house_money_rollover_percent": opts.house_money_rollover_percent,
        "royal9_paytable": opts.royal9_paytable, "free_hands": False,
    }  # fmt: skip
    shoe = {"shoe_id": "S1", "table_id": "T1", "opened_at": T0, "decks": opts.decks,
            "burn_card": "5S", "burn_count": 5}  # fmt: skip
    round_rows = [
        {
            "round_id": rid, "shoe_id": "S1", "table_id": "T1", "round_no": i + 1,
            "dealt_at": T0 + timedelta(minutes=i + 1),
            "no_more_bets_at": T0 + timedelta(minutes=i + 1, seconds=-5), "kind": "regular",
            "player_cards": [CARD_NAMES[c] for c in pc],
            "banker_cards": [CARD_NAMES[c] for c in bc],
            "player_total": f.pt, "banker_total": f.bt, "outcome": f.outcome,
            "cover_card_drawn": False, "dealer_id": "D1",
            "banker_seat": 1 if opts.chemin else None,
        }
        for i, (rid, pc, bc, f) in enumerate(rounds)
    ]  # fmt: skip
    wager_rows = [
        {
            "wager_id": f"W{i:06d}", "round_id": rid, "seat": w.seat, "bet": w.bet,
            "call": w.call, "amount": money(w.amount), "rollover": money(w.rollover),
            "result": w.result, "payout": money(w.payout), "commission": money(w.commission),
            "award": w.award,
        }
        for i, (rid, w) in enumerate(wagers)
    ]  # fmt: skip
    seats = [
        {"table_id": "T1", "seat": seat, "combo": CARD_NAMES[face] + CARD_NAMES[nine]}
        for seat, combos in sorted(MIDI_COMBOS.items())
        for face, nine in sorted(combos)
    ]
    return {
        "tables": frame("tables", [table]),
        "shoes": frame("shoes", [shoe]),
        "rounds": frame("rounds", round_rows),
        "wagers": frame("wagers", wager_rows),
        "royal9_seats": frame("royal9_seats", seats if opts.ruleset == MIDI else []),
    }


@settings(max_examples=18, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), variant=st.integers(0, len(TABLE_VARIANTS) - 1))
def test_engine_settles_every_wager_as_the_scalar_simulator(seed: int, variant: int) -> None:
    opts = TABLE_VARIANTS[variant]
    rounds, wagers = _play(opts, random.Random(seed), 150)
    frames = _frames(opts, rounds, wagers)
    packs = load_all()
    options = shoe_options(frames["shoes"], frames["tables"])
    replayed = replay(frames["rounds"], options, packs)
    settled = settle(frames["wagers"], replayed, options, packs, frames["royal9_seats"])
    columns = ["wager_id", "_result", "_due", "payout_c", "due_payout_c", "commission_c",
               "due_commission_c", "logged_net_c", "due_net_c", "award", "royal9_line"]  # fmt: skip
    main, side = pl.collect_all([settled["main"].select(columns), settled["side"].select(columns)])
    got = pl.concat([main, side.join(main.select("wager_id"), on="wager_id", how="anti")])
    assert got.height == len(wagers)
    # Progressive Royal 9 amounts are meter readings, not checkable: compare the line.
    progressive = got["due_payout_c"].is_null()
    assert (got.filter(progressive)["award"] == got.filter(progressive)["royal9_line"]).all()
    checked = got.filter(~progressive)
    mismatched = checked.filter(
        (pl.col("_result") != pl.col("_due"))
        | (pl.col("payout_c") != pl.col("due_payout_c"))
        | (pl.col("commission_c") != pl.col("due_commission_c"))
        | (pl.col("logged_net_c") != pl.col("due_net_c"))
        | pl.col("award").ne_missing(pl.col("royal9_line"))
    )
    assert mismatched.height == 0, (opts, mismatched.head(5).to_dicts())


# ---- the simulator's faults ------------------------------------------------------------


@pytest.fixture(scope="module")
def clean_audit(tmp_path_factory) -> pl.DataFrame:
    out = tmp_path_factory.mktemp("clean_settle")
    simulate(out, rounds=20_000, seed=11)
    return find(run_validation(out))


def test_clean_simulation_yields_no_settlement_finding(clean_audit: pl.DataFrame) -> None:
    mine = clean_audit.filter(pl.col("rule").is_in(list(STAGE_CODES)))
    assert mine.height == 0, mine.head(5).to_dicts()


FAULT_SEEDS = (3, 4, 5)


@pytest.fixture(scope="module")
def faulty_audits(tmp_path_factory) -> dict[int, tuple[pl.DataFrame, pl.DataFrame]]:
    """Per seed: the settlement faults of the key, and this stage's findings."""
    audits = {}
    for seed in FAULT_SEEDS:
        out = tmp_path_factory.mktemp(f"faulty{seed}")
        simulate(out, rounds=20_000, seed=seed, fault_rate=0.1)
        key = pl.read_parquet(out / "fault_key.parquet").filter(
            pl.col("fault").is_in(list(SETTLEMENT_FAULTS))
        )
        findings = find(run_validation(out)).filter(pl.col("rule").is_in(list(STAGE_CODES)))
        audits[seed] = (key, findings)
    return audits


@pytest.mark.parametrize("seed", FAULT_SEEDS)
def test_every_settlement_fault_is_found_on_its_wager_with_its_impact(faulty_audits, seed):
    key, findings = faulty_audits[seed]
    assert key.height > 300
    per_wager = findings.group_by("wager_id").agg(
        pl.col("rule"), pl.col("impact").sum().alias("impact_sum"), pl.col("round_id").first()
    )
    joined = key.join(per_wager, on="wager_id", how="left", suffix="_found")
    for row in joined.iter_rows(named=True):
        assert row["rule"], f"not found: {row}"
        assert set(row["rule"]) <= SETTLEMENT_FAULTS[row["fault"]], row
        assert row["round_id_found"] == row["round_id"], row
        if row["impact"] is not None:
            # The impacts of one wager's findings add up to its total error.
            assert row["impact_sum"] == row["impact"], row
        else:
            assert row["impact_sum"] == 0, row  # permissibility: no impact
    unexplained = findings.join(key, on="wager_id", how="anti")
    assert unexplained.height == 0, unexplained.head(5).to_dicts()


def test_the_fault_seeds_exercise_every_settlement_fault(faulty_audits) -> None:
    kinds = {kind for key, _ in faulty_audits.values() for kind in key["fault"]}
    assert kinds == set(SETTLEMENT_FAULTS)


def test_findings_are_the_same_with_the_in_memory_engine(tmp_path) -> None:
    simulate(tmp_path, rounds=3_000, seed=6, fault_rate=0.2)
    validated = run_validation(tmp_path)
    packs = load_all()
    audited = validated.audited
    options = shoe_options(audited["shoes"], audited["tables"])
    replayed = replay(audited["rounds"], options, packs)
    from auditor.findings.table import combine
    from auditor.settlement.wagers import wager_findings

    stages = wager_findings(audited["wagers"], replayed, options, packs, audited["royal9_seats"])
    streaming = combine(pl.collect_all(stages))
    in_memory = combine(pl.collect_all(stages, engine="in-memory"))
    assert streaming.height > 100
    assert streaming.equals(in_memory)


def test_a_wagers_findings_add_up_to_its_error(tmp_path, write_dataset) -> None:
    """A Banker wager paid too much and charged too little: the PAY and COM impacts are
    each part of the error, and together the whole of it."""
    from auditor.casework.build import case_rows

    case = {
        "ruleset": "ma-baccarat",
        "round": {"player_cards": ["KS", "2H"], "banker_cards": ["4C", "4D"]},
        "wagers": [
            {"bet": "banker", "amount": "37.50", "result": "win", "payout": "40.00",
             "commission": "1.00"},
        ],
    }  # fmt: skip
    findings = find(run_validation(write_dataset(case_rows(case)))).filter(
        pl.col("rule").is_in(list(STAGE_CODES))
    )
    by_rule = dict(zip(findings["rule"], findings["impact"], strict=True))
    assert by_rule == {"PAY002": Decimal("2.50"), "COM002": Decimal("1.00")}
    # logged net 40.00 - 1.00 = 39.00; owed 37.50 - 2.00 = 35.50
    assert sum(by_rule.values()) == Decimal("39.00") - Decimal("35.50")


def test_packs_cite_the_no_wager_rounds_and_the_stax_award() -> None:
    """The two pack entries this stage added: simulated rounds take no wagers in every
    ruleset; only midi's Royal 9 paytable allows a random award with no line."""
    packs = load_all()
    cites = {r: p.cite(p.procedure("no_wagers_on_simulated").cite) for r, p in packs.items()}
    assert cites == {
        "ma-baccarat": "ma-baccarat §15(d)",
        "ma-chemin-de-fer": "ma-chemin-de-fer §11(h)(3)",
        "ma-midi-baccarat": "ma-midi-baccarat §13(d)",
        "md-mini-baccarat": "md-mini-baccarat .13D(1)",
    }
    random = {
        (r, name): table.random_award and table.random_award.cite
        for r, p in packs.items()
        if p.payouts.royal9
        for name, table in p.payouts.royal9.paytables.items()
    }
    assert random == {("ma-baccarat", "1"): None, ("ma-baccarat", "2"): None,
                      ("ma-midi-baccarat", "midi"): "§12(j)"}  # fmt: skip
