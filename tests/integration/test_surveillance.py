"""Surveillance: the exact expectations, the p-values' validity, the night's threshold,
and on simulated nights, that a stacked shoe and a patron paid on every Dragon Bonus are
flagged while fair play raises no more alerts than the false-discovery rate allows.

The faults are built here from a clean simulated night (the simulator is not changed):
the alert tests read `alerts.parquet` written by `run_audit`, so they fail if the audit
stops surveying."""

from __future__ import annotations

import os
import shutil
from fractions import Fraction
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal
from scipy import stats

from auditor.cli import main
from auditor.defaults import ALERT_FDR
from auditor.odds.shoe import enumerate_rounds
from auditor.odds.wagers import dragon_bonus_net
from auditor.packs.model import load_pack
from auditor.pipeline import find, run_audit, run_validation, survey_cells
from auditor.report import render
from auditor.report.investigate import render_investigation, subject_of
from auditor.report.nightly import render_nightly
from auditor.simulator.simulate import simulate
from auditor.surveillance import night, store
from auditor.surveillance.expected import WagerKey, pair_chances, round_chances, wager_price
from auditor.surveillance.schema import ALERTS_SCHEMA, LEVELS, SURVEILLANCE_SCHEMA
from auditor.surveillance.stats import (
    _null_distribution,
    benjamini_hochberg,
    bernstein_upper,
    binomial_two_sided,
    chi_square,
)

ROUNDS = 150_000
BUCKETED_ROUNDS = 6_000  # the night the tests are built bucket by bucket on
SUSPECT = "PT-SUSPECT"
STACKED_TABLE = "T-MD-MIN-01"  # no Royal 9, whose personal lines tell the hands apart
DRAGON_TABLE = "T-MA-BAC-01"
SUSPECT_DRAGON_BONUSES = 30


# ---- the exact expectations ----------------------------------------------------------


@pytest.mark.parametrize("decks", [1, 8])
def test_pairs_in_closed_form_match_the_enumeration_by_rank(decks: int) -> None:
    pack = load_pack("ma-baccarat")
    shoe = enumerate_rounds(pack, decks, by_rank=True)
    one, both = pair_chances(pack, decks)
    assert shoe.probability(lambda s: s.player_pair) == one
    assert shoe.probability(lambda s: s.player_pair and s.banker_pair) == both
    assert round_chances(load_pack("ma-baccarat"), decks).pair == pytest.approx(
        float(2 * one - both)
    )


def test_chemin_de_fer_keeps_both_strategies() -> None:
    chances = round_chances(load_pack("ma-chemin-de-fer"), 8)
    assert chances.first["tie"] != chances.last["tie"]  # drawing or standing on 5
    mini = round_chances(load_pack("md-mini-baccarat"), 8)
    assert mini.first == mini.last


def test_wager_prices_follow_the_odds() -> None:
    tie = wager_price(
        load_pack("md-mini-baccarat"), WagerKey("md-mini-baccarat", 8, "tie", tie_pays=8)
    )
    assert tie is not None
    assert tie.win == pytest.approx(round_chances(load_pack("md-mini-baccarat"), 8).first["tie"])
    assert tie.mean == pytest.approx(9 * tie.win - 1)
    dragon = wager_price(
        load_pack("ma-baccarat"),
        WagerKey("ma-baccarat", 8, "dragon_bonus_player", dragon_bonus_paytable="A"),
    )
    assert dragon is not None and 0.25 < dragon.win < 0.35 and dragon.spread > 25
    # A bet the ruleset does not have has no price: nothing to expect of it.
    assert (
        wager_price(
            load_pack("ma-chemin-de-fer"), WagerKey("ma-chemin-de-fer", 8, "tie", tie_pays=8)
        )
        is None
    )


# ---- p-values and the threshold ------------------------------------------------------


@pytest.mark.parametrize("n", [5, 40, 90])
def test_exact_chi_square_p_values_are_valid(n: int) -> None:
    """Over every split of n rounds: the chance of a p-value at most alpha is at most
    alpha (what BH needs), checked exactly against the multinomial."""
    chances = (0.458597, 0.446247, 0.095156)
    a, b = np.triu_indices(n + 1)
    observed = np.stack([a, b - a, n - b], axis=1)
    expected = np.broadcast_to(n * np.array(chances), observed.shape)
    _, p = chi_square(observed, expected, expected)
    pmf = stats.multinomial.pmf(observed, n, chances)
    for alpha in (1e-6, 1e-4, 1e-3, 1e-2, 0.1):
        assert pmf[p <= alpha].sum() <= alpha * (1 + 1e-9)
    _, tails = _null_distribution(n, chances)
    assert tails[0] == pytest.approx(1.0)


def test_chi_square_uses_the_nearest_mix_of_strategies() -> None:
    low = np.array([[46_000.0, 44_600.0, 9_400.0]])
    high = np.array([[45_800.0, 44_600.0, 9_600.0]])
    inside = np.array([[45_900, 44_600, 9_500]])
    statistic, p = chi_square(inside, low, high)
    assert statistic[0] == pytest.approx(0.0, abs=1e-6) and p[0] == pytest.approx(1.0)


def test_a_rate_inside_the_strategies_interval_is_no_evidence() -> None:
    expected, z, p = binomial_two_sided(
        np.array([50, 90]), np.array([100, 100]), np.array([0.45, 0.45]), np.array([0.5, 0.5])
    )
    assert p[0] == 1.0 and z[0] == 0.0 and expected[0] == 0.5
    assert p[1] < 1e-15 and expected[1] == 0.5 and z[1] == pytest.approx(8.0)


def test_benjamini_hochberg_matches_its_definition() -> None:
    p = np.array([0.01, 0.04, 0.03, 0.20, 0.001])
    q = benjamini_hochberg(p)
    # sorted: 0.001, 0.01, 0.03, 0.04, 0.2 -> x5/1, x5/2, x5/3, x5/4, x5/5, then running min
    assert q.tolist() == pytest.approx([0.025, 0.05, 0.05, 0.2, 0.005])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([0.0, 1e-9, 0.001, 0.01, 0.04, 0.5, 1.0]) | st.floats(0, 1)))
def test_benjamini_hochberg_equals_the_step_written_out(values) -> None:
    """Ties included: scipy's step equals BH's definition, min over j >= i of p_(j) m / j."""
    p = np.array(values, dtype=float)
    m = len(p)
    by_hand = [
        min(1.0, min(sorted(p)[j] * m / (j + 1) for j in range(sorted(p).index(v), m))) for v in p
    ]
    np.testing.assert_allclose(benjamini_hochberg(p), by_hand, rtol=1e-12, atol=0)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([0.0, 1e-9, 0.001, 0.01, 0.04, 0.5, 1.0]) | st.floats(0, 1)))
def test_q_values_looked_up_test_by_test_equal_the_whole_nights(values) -> None:
    """Ties included: a test's q-value is a function of its p-value and the night's."""
    p = np.array(values, dtype=float)
    lookup = night.q_values(p)
    np.testing.assert_array_equal(lookup(p), benjamini_hochberg(p))
    np.testing.assert_array_equal(lookup(p[::-1]), benjamini_hochberg(p)[::-1])


# ---- simulated nights -------------------------------------------------------------------


def _regular_rounds(night_dir: Path) -> pl.DataFrame:
    return pl.read_parquet(night_dir / "rounds.parquet").filter(pl.col("kind") == "regular")


def stack_a_shoe(night_dir: Path) -> tuple[str, list[str]]:
    """Rewrite the longest shoe of `STACKED_TABLE` so that every round the Banker won by
    the cards goes to the Player: the hands swap (cards and totals), the outcome is
    announced for the Player and the wagers are settled for it (Banker loses, Player is
    paid even money, Dragon Bonus follows its hand). Returns the shoe and the rounds
    rewritten."""
    rounds = pl.read_parquet(night_dir / "rounds.parquet")
    regular = rounds.filter((pl.col("kind") == "regular") & (pl.col("table_id") == STACKED_TABLE))
    shoe = regular.group_by("shoe_id").len().sort("len", "shoe_id", descending=True)["shoe_id"][0]
    flipped = regular.filter(
        (pl.col("shoe_id") == shoe) & (pl.col("banker_total") > pl.col("player_total"))
    )["round_id"]
    swap = pl.col("round_id").is_in(flipped.implode())
    rounds = rounds.with_columns(
        pl.when(swap).then(pl.col("banker_cards")).otherwise("player_cards").alias("player_cards"),
        pl.when(swap).then(pl.col("player_cards")).otherwise("banker_cards").alias("banker_cards"),
        pl.when(swap).then(pl.col("banker_total")).otherwise("player_total").alias("player_total"),
        pl.when(swap).then(pl.col("player_total")).otherwise("banker_total").alias("banker_total"),
        pl.when(swap).then(pl.lit("player")).otherwise("outcome").alias("outcome"),
    )
    rounds.write_parquet(night_dir / "rounds.parquet")
    wagers = pl.read_parquet(night_dir / "wagers.parquet")
    on = pl.col("round_id").is_in(flipped.implode())
    bet = pl.col("bet")
    zero = pl.lit(0, dtype=wagers.schema["payout"])
    wagers = wagers.with_columns(
        pl.when(on & (bet == "banker"))
        .then(pl.lit("lose"))
        .when(on & (bet == "player"))
        .then(pl.lit("win"))
        .otherwise("result")
        .alias("result"),
        pl.when(on & (bet == "banker"))
        .then(zero)
        .when(on & (bet == "player"))
        .then(pl.col("amount"))
        .otherwise("payout")
        .alias("payout"),
        pl.when(on & bet.is_in(["banker", "player"]))
        .then(zero)
        .otherwise("commission")
        .alias("commission"),
        pl.when(on & (bet == "dragon_bonus_banker"))
        .then(pl.lit("dragon_bonus_player"))
        .when(on & (bet == "dragon_bonus_player"))
        .then(pl.lit("dragon_bonus_banker"))
        .otherwise("bet")
        .alias("bet"),
    )
    wagers.write_parquet(night_dir / "wagers.parquet")
    return shoe, sorted(flipped)


def pay_every_dragon_bonus(night_dir: Path) -> list[str]:
    """A patron, `SUSPECT`, takes a seat of `DRAGON_TABLE` for as many shoes as it takes to
    place `SUSPECT_DRAGON_BONUSES` Dragon Bonus wagers, and every one is paid as a win at
    the paytable's Natural odds (1 to 1), whatever the cards. Returns those wagers."""
    rounds = pl.read_parquet(night_dir / "rounds.parquet").select("round_id", "shoe_id", "table_id")
    wagers = pl.read_parquet(night_dir / "wagers.parquet")
    placed = wagers.join(rounds, on="round_id").filter(pl.col("table_id") == DRAGON_TABLE)
    dragons = placed.filter(pl.col("bet").str.starts_with("dragon_bonus_"))
    seat = dragons.group_by("seat").len().sort("len", "seat", descending=True)["seat"][0]
    per_shoe = (
        dragons.filter(pl.col("seat") == seat).group_by("shoe_id").len().sort("shoe_id")
    ).with_columns(pl.col("len").cum_sum().alias("running"))
    shoes = per_shoe.filter(pl.col("running").shift(1, fill_value=0) < SUSPECT_DRAGON_BONUSES)[
        "shoe_id"
    ]
    mine = placed.filter((pl.col("seat") == seat) & pl.col("shoe_id").is_in(shoes.implode()))
    is_mine = pl.col("wager_id").is_in(mine["wager_id"].implode())
    dragon = is_mine & pl.col("bet").str.starts_with("dragon_bonus_")
    wagers = wagers.with_columns(
        pl.when(is_mine).then(pl.lit(SUSPECT)).otherwise("patron_id").alias("patron_id"),
        pl.when(dragon).then(pl.lit("win")).otherwise("result").alias("result"),
        pl.when(dragon).then(pl.col("amount")).otherwise("payout").alias("payout"),
    )
    wagers.write_parquet(night_dir / "wagers.parquet")
    return sorted(wagers.filter(dragon)["wager_id"])


@pytest.fixture(scope="module")
def faulted(tmp_path_factory) -> dict:
    return faulted_night(tmp_path_factory.mktemp("surveillance"), ROUNDS)


def faulted_night(root: Path, rounds: int) -> dict:
    """A clean simulated night with a stacked shoe and a paid patron, audited."""
    data = root / "night"
    simulate(data, rounds, seed=3)
    shoe, _ = stack_a_shoe(data)
    paid = pay_every_dragon_bonus(data)
    out = root / "out"
    results = run_audit(data, out, report=False)
    return {"data": data, "out": out, "results": results, "shoe": shoe, "paid": paid}


@pytest.mark.e2e
def test_the_stacked_shoe_is_flagged(faulted) -> None:
    alerts = pl.read_parquet(faulted["out"] / "alerts.parquet")
    shoe = alerts.filter((pl.col("level") == "shoe") & (pl.col("key") == faulted["shoe"]))
    assert {"player_rate", "banker_rate", "outcomes_chi2"} <= set(shoe["statistic"])
    player = shoe.filter(pl.col("statistic") == "player_rate").row(0, named=True)
    assert player["observed"] > 0.8 and player["p_value"] < 1e-9
    assert player["table_id"] == STACKED_TABLE
    regular = _regular_rounds(faulted["data"]).filter(pl.col("shoe_id") == faulted["shoe"])
    assert player["round_ids"] == sorted(regular["round_id"])
    assert player["rounds"] == regular.height


@pytest.mark.e2e
def test_the_patron_paid_on_every_dragon_bonus_is_flagged(faulted) -> None:
    alerts = pl.read_parquet(faulted["out"] / "alerts.parquet")
    patron = alerts.filter((pl.col("level") == "patron") & (pl.col("key") == SUSPECT))
    row = patron.filter(pl.col("statistic") == "dragon_bonus_win_rate").row(0, named=True)
    assert row["observed"] == 1.0 and row["wagers"] == len(faulted["paid"])
    assert len(faulted["paid"]) >= SUSPECT_DRAGON_BONUSES
    assert row["wager_ids"] == faulted["paid"]


@pytest.mark.e2e
def test_alerts_name_only_the_faults(faulted) -> None:
    """Fair play elsewhere: every alert is about the stacked shoe, its table or dealer
    (its swapped hands break the drawing rules: findings), or the paid patron."""
    alerts = pl.read_parquet(faulted["out"] / "alerts.parquet")
    rounds = _regular_rounds(faulted["data"]).filter(pl.col("shoe_id") == faulted["shoe"])
    related = {faulted["shoe"], STACKED_TABLE, SUSPECT, *rounds["dealer_id"]}
    assert set(alerts["key"]) <= related


@pytest.mark.e2e
def test_outputs_and_catalog_hold_the_tests_not_the_findings(faulted) -> None:
    import duckdb

    out, results = faulted["out"], faulted["results"]
    tests = pl.read_parquet(out / "surveillance.parquet")
    alerts = pl.read_parquet(out / "alerts.parquet")
    assert tests.schema == pl.Schema(SURVEILLANCE_SCHEMA)
    assert alerts.schema == pl.Schema(ALERTS_SCHEMA)
    assert tests.filter(pl.col("alert")).height == alerts.height > 0
    assert (tests["alert"] == (tests["q_value"] <= ALERT_FDR)).all()
    assert set(tests["level"]) == {"table", "shoe", "dealer", "patron"}
    # The findings are the stages' own, untouched by surveillance.
    validated = run_validation(faulted["data"])
    assert pl.read_parquet(out / "findings.parquet").equals(find(validated))
    assert not set(results.findings["rule"]) & set(tests["statistic"])
    with duckdb.connect(str(out / "audit.duckdb"), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM surveillance").fetchone()[0] == tests.height
        assert con.execute("SELECT count(*) FROM alerts").fetchone()[0] == alerts.height
    assert "Surveillance alerts (not findings)" in (out / "summary.txt").read_text()


@pytest.mark.e2e
def test_the_tests_file_is_in_order_with_the_nights_q_values(faulted) -> None:
    tests = pl.read_parquet(faulted["out"] / "surveillance.parquet")
    order = {level: i for i, level in enumerate(LEVELS)}
    assert tests.equals(
        tests.sort(pl.col("level").replace_strict(order), "key", "statistic", maintain_order=True)
    )
    assert tests.select("level", "key", "statistic").is_unique().all()
    q = benjamini_hochberg(tests["p_value"].to_numpy())
    np.testing.assert_array_equal(tests["q_value"].to_numpy(), q)


def test_tests_built_bucket_by_bucket_equal_the_night_at_once(tmp_path, monkeypatch):
    """A small budget splits every kind of cell into buckets of keys (a partition's
    patrons, shoes and dealers spread over several): the same tests, the same alerts.

    On a night of its own, smaller than the alert tests': each bucket is a pass, and the
    budget that splits the 61 tables' cells in three cut the big night's 47,000 patron
    cells into 2,365 buckets (a minute); this night's stacked shoe and paid patron still
    raise alerts, over more than a thousand tests."""
    small = faulted_night(tmp_path, BUCKETED_ROUNDS)
    validated = run_validation(small["data"])
    findings = small["results"].findings
    cells = survey_cells(
        validated, findings, tmp_path / "cells", partition_rounds=BUCKETED_ROUNDS // 4
    )
    assert cells.parts > 2
    once = night.survey(cells, validated.audited, findings, tmp_path / "once")
    monkeypatch.setattr(store, "MIN_BUCKET_CELLS", 10)
    budget = 20 * store.BYTES_PER_CELL
    assert all(cells.buckets(kind, budget) > 2 for kind in store.KINDS)
    split = night.survey(
        cells, validated.audited, findings, tmp_path / "split", budget_bytes=budget
    )
    expected = once.tests.collect()
    assert expected.height > 1_000 and once.alerts.height > 0
    # Floating sums over the same cells, perhaps added in another order.
    assert_frame_equal(split.tests.collect(), expected, check_exact=False, rel_tol=1e-12)
    assert_frame_equal(split.alerts, once.alerts, check_exact=False, rel_tol=1e-12)
    assert_frame_equal(
        split.tests.collect(), pl.read_parquet(small["out"] / "surveillance.parquet"),
        check_exact=False, rel_tol=1e-12,
    )  # fmt: skip


@pytest.mark.e2e
def test_the_reports_show_the_alerts_and_each_tables_hold(faulted) -> None:
    out = faulted["out"]
    page = render_nightly(out)["report.html"]
    surveillance = page[page.index('id="surveillance"') : page.index('id="hold"')]
    alerts = pl.read_parquet(out / "alerts.parquet")
    assert f"<strong>{alerts.height} alert" in surveillance
    for key in (SUSPECT, faulted["shoe"]):
        assert key in surveillance
    assert "dragon_bonus_win_rate" in surveillance and "player_rate" in surveillance
    tests = pl.read_parquet(out / "surveillance.parquet").filter(pl.col("statistic") == "hold")
    holds = tests.filter(pl.col("level") == "table")
    tables = pl.read_parquet(faulted["data"] / "tables.parquet")["table_id"].unique()
    assert sorted(holds["key"]) == sorted(tables)
    # Each dealer's hold too, over every table they dealt at; not in the tables' section.
    dealers = pl.read_parquet(faulted["data"] / "rounds.parquet")["dealer_id"].drop_nulls()
    assert sorted(tests.filter(pl.col("level") == "dealer")["key"]) == sorted(dealers.unique())
    section = page[page.index('id="hold"') :]
    for row in holds.iter_rows(named=True):
        assert row["key"] in section
        assert render.statistic(row["expected"], "hold") in section

    patron = render_investigation(out, subject_of(patron=SUSPECT))
    watched = patron[patron.index('id="surveillance"') :]
    assert "dragon_bonus_win_rate" in watched and '<span class="bad">alert</span>' in watched
    quiet = pl.read_parquet(out / "surveillance.parquet").filter(
        (pl.col("level") == "patron") & ~pl.col("alert") & (pl.col("key") != SUSPECT)
    )["key"][0]
    page = render_investigation(out, subject_of(patron=quiet))
    assert '<span class="bad">alert</span>' not in page[page.index('id="surveillance"') :]


def test_a_tables_theoretical_hold_is_the_house_edge_of_its_wagers(tmp_path) -> None:
    """Banker wagers alone at 5% on eight decks: the theoretical hold is the published
    Banker edge (1.0579%); the observed hold is what the logs say the house kept."""
    data = tmp_path / "night"
    simulate(data, 20_000, seed=4)
    tables = pl.read_parquet(data / "tables.parquet")
    plain = tables.filter(
        (pl.col("ruleset") == "ma-baccarat")
        & (pl.col("decks") == 8)
        & (pl.col("commission_percent") == 5)
        & ~pl.col("ez_baccarat")
    )["table_id"]
    assert plain.len() > 0, "the simulation has no 8-deck 5% table"
    table = plain[0]
    rounds = pl.read_parquet(data / "rounds.parquet").select("round_id", "table_id", "kind")
    wagers = pl.read_parquet(data / "wagers.parquet")
    at_table = pl.col("round_id").is_in(
        rounds.filter(pl.col("table_id") == table)["round_id"].implode()
    )
    # Leave the table only its Banker wagers (every other table keeps its own).
    wagers = wagers.filter(~at_table | (pl.col("bet") == "banker"))
    wagers.write_parquet(data / "wagers.parquet")
    out = tmp_path / "out"
    run_audit(data, out, report=False)
    tests = pl.read_parquet(out / "surveillance.parquet")
    hold = tests.filter((pl.col("statistic") == "hold") & (pl.col("key") == table)).row(
        0, named=True
    )
    assert hold["expected"] == pytest.approx(0.010579, abs=5e-7)
    mine = wagers.join(rounds, on="round_id").filter(
        (pl.col("table_id") == table) & (pl.col("kind") == "regular")
    )
    # A House Money rollover joins the Banker wager it is added to (CONTRACT).
    mine = mine.with_columns((pl.col("amount") + pl.col("rollover").fill_null(0)).alias("stake"))
    stake = mine["stake"].cast(pl.Float64).sum()
    won = (
        mine.filter(pl.col("result") == "win")
        .select((pl.col("payout") - pl.col("commission")).cast(pl.Float64).sum())
        .item()
    )
    lost = mine.filter(pl.col("result") == "lose")["stake"].cast(pl.Float64).sum()
    assert hold["observed"] == pytest.approx((lost - won) / stake, rel=1e-9)
    assert hold["wagers"] == mine.height


def test_alerts_never_change_the_exit_status(tmp_path, monkeypatch) -> None:
    """A night with no finding exits 0 however many alerts it raises."""
    data = tmp_path / "night"
    simulate(data, 5_000, seed=8)
    # Every test an alert: q-values of zero.
    monkeypatch.setattr(night, "benjamini_hochberg", lambda p: np.zeros(len(p)))
    result = CliRunner().invoke(main, ["audit", str(data), "--out", str(tmp_path / "o"), "--quiet"])
    assert result.exit_code == 0, result.output
    assert pl.read_parquet(tmp_path / "o" / "findings.parquet").height == 0
    assert pl.read_parquet(tmp_path / "o" / "alerts.parquet").height > 0


# ---- fair play ------------------------------------------------------------------------

CLEAN_SEEDS = (11, 12, 13)


def allowed_nights_with_alerts(nights: int, rate: float, chance: float = 1e-3) -> int:
    """On fair play, BH at `rate` raises any alert on a night with chance at most `rate`:
    the fewest nights with alerts that `nights` nights exceed with chance below `chance`."""
    return next(b for b in range(nights + 1) if stats.binom.sf(b, nights, rate) < chance)


def clean_night(root: Path, seed: int, rounds: int) -> night.Surveillance:
    data = root / f"clean{seed}"
    simulate(data, rounds, seed=seed)
    validated = run_validation(data)
    # A simulated night without faults has no finding (tests/integration/test_simulated_audit.py):
    # the dealers' findings rates have nothing to test, and the audit is not rerun here.
    none = pl.DataFrame(schema={"round_id": pl.String()})
    cells = survey_cells(validated, none, root / f"cells{seed}")
    result = night.survey(cells, validated.audited, none, root / f"tests{seed}")
    shutil.rmtree(data)
    return result


def assert_fair(results: dict[int, night.Surveillance]) -> None:
    nights = [seed for seed, r in results.items() if r.alerts.height]
    print({seed: r.alerts.height for seed, r in results.items()})
    assert len(nights) <= allowed_nights_with_alerts(len(results), ALERT_FDR)
    # The p-values are valid well below BH's threshold too: no level has many more small
    # ones than chance gives (generous room: a shoe's tests are correlated).
    for r in results.values():
        small = (
            r.tests.group_by("level")
            .agg(pl.len().alias("tests"), (pl.col("p_value") <= 1e-3).sum().alias("small"))
            .collect()
        )
        for level, tests, count in small.iter_rows():
            assert count <= 2 * 1e-3 * tests + 10, (level, tests, count)


@pytest.mark.e2e
def test_fair_play_raises_no_more_alerts_than_the_rate_allows(tmp_path) -> None:
    assert allowed_nights_with_alerts(len(CLEAN_SEEDS), ALERT_FDR) == 1
    assert_fair({seed: clean_night(tmp_path, seed, ROUNDS) for seed in CLEAN_SEEDS})


@pytest.mark.e2e
@pytest.mark.skipif(
    not os.environ.get("AUDITOR_MILLION_ROUNDS"),
    reason="a million rounds per seed (~1 min each): set AUDITOR_MILLION_ROUNDS=1",
)
def test_fair_play_over_a_million_rounds(tmp_path) -> None:
    seeds = (21, 22, 23)
    assert_fair({seed: clean_night(tmp_path, seed, 1_000_000) for seed in seeds})


def test_money_bound_is_conservative() -> None:
    """Bernstein's bound is never below the exact tail of a heavy-tailed sum: ten Dragon
    Bonus wagers (30 to 1 at the far end), convolved exactly."""
    pack = load_pack("ma-baccarat")
    unit = enumerate_rounds(pack, 8).distribution(
        dragon_bonus_net(pack.payouts.dragon_bonus["A"], "player")
    )
    price = wager_price(
        load_pack("ma-baccarat"),
        WagerKey("ma-baccarat", 8, "dragon_bonus_player", dragon_bonus_paytable="A"),
    )
    assert price is not None
    total: dict[Fraction, Fraction] = {Fraction(0): Fraction(1)}
    for _ in range(10):
        step: dict[Fraction, Fraction] = {}
        for s, ps in total.items():
            for v, pv in unit.items():
                step[s + v] = step.get(s + v, Fraction(0)) + ps * pv
        total = step
    mean = 10 * price.mean
    for threshold in sorted(total):
        excess = float(threshold) - mean
        if excess <= 0:
            continue
        exact = float(sum(p for v, p in total.items() if v >= threshold))
        _, bound = bernstein_upper(
            np.array([excess]), np.array([10 * price.variance]), np.array([price.spread])
        )
        assert bound[0] >= exact * (1 - 1e-9), (threshold, exact, bound[0])
