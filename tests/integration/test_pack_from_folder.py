"""A jurisdiction of its own, as a pack in a folder (`--rules DIR`), and no engine change.

The pack is Massachusetts Baccarat with five rules changed: a Banker draw cell (4 against
a Player third card worth 0: draws), a payout (Panda 8 at 30 to 1), the commission's
rounding (up to 10 cents, not 25), the burn (a ten-valued first card burns 8 cards, not
10) and a side wager no longer offered (House Money, its rollover rule with it). A clean
simulated night has its Massachusetts Baccarat tables relabelled to the new ruleset: the
cards and the money are as Massachusetts would have them, so every finding is one of
those changes, and the test counts, independently of the engine, what each implies.
"""

from __future__ import annotations

import shutil
from decimal import ROUND_CEILING, Decimal
from pathlib import Path

import polars as pl
import pytest

from auditor.errors import RulesetError
from auditor.packs.loaded import load_packs
from auditor.pipeline import run_audit
from auditor.simulator.simulate import simulate
from tests.support.cli import cli
from tests.support.packs import BASE, NEW, new_pack_text
from tests.support.paths import RULES


@pytest.fixture(scope="module")
def night(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("fifth")
    clean = root / "clean"
    simulate(clean, rounds=6000, seed=5)
    relabelled = root / "relabelled"
    shutil.copytree(clean, relabelled)
    tables = pl.read_parquet(relabelled / "tables.parquet")
    tables.with_columns(
        pl.when(pl.col("ruleset") == BASE).then(pl.lit(NEW)).otherwise("ruleset").alias("ruleset")
    ).write_parquet(relabelled / "tables.parquet")
    packs = root / "packs"
    packs.mkdir()
    (packs / f"{NEW}.yaml").write_text(new_pack_text(), encoding="utf-8")
    return {"root": root, "clean": clean, "relabelled": relabelled, "packs": packs}


@pytest.fixture(scope="module")
def findings(night) -> pl.DataFrame:
    out = night["root"] / "out"
    return run_audit(night["relabelled"], out, packs=load_packs(night["packs"])).findings


def _at_new_tables(night, table: str) -> pl.DataFrame:
    frame = pl.read_parquet(night["relabelled"] / f"{table}.parquet")
    tables = pl.read_parquet(night["relabelled"] / "tables.parquet")
    new = tables.filter(pl.col("ruleset") == NEW)["table_id"].unique().to_list()
    if "table_id" in frame.columns:
        return frame.filter(pl.col("table_id").is_in(new))
    rounds = pl.read_parquet(night["relabelled"] / "rounds.parquet")
    ours = rounds.filter(pl.col("table_id").is_in(new))["round_id"].to_list()
    return frame.filter(pl.col("round_id").is_in(ours))


def _point(card: str) -> int:
    rank = card[0]
    return 1 if rank == "A" else 0 if rank in "TJQK" else int(rank)


def _cents(amount: Decimal) -> int:
    return int(amount * 100)


def expected_by_rule(night) -> dict[str, list[tuple[str, Decimal | None]]]:
    """What each change implies, counted from the logs alone: (key, impact) per finding."""
    rounds = _at_new_tables(night, "rounds").filter(pl.col("kind") == "regular")
    stood = [
        (r["round_id"], None)
        for r in rounds.iter_rows(named=True)
        if len(r["player_cards"]) == 3
        and len(r["banker_cards"]) == 2
        and sum(map(_point, r["banker_cards"][:2])) % 10 == 4
        and _point(r["player_cards"][2]) == 0
    ]
    wagers = _at_new_tables(night, "wagers")
    panda = wagers.filter((pl.col("bet") == "panda8") & (pl.col("payout") > 0))
    underpaid = [(w["wager_id"], -5 * w["amount"]) for w in panda.iter_rows(named=True)]
    tables = pl.read_parquet(night["relabelled"] / "tables.parquet").filter(
        pl.col("ruleset") == NEW
    )
    rounding = set(tables.filter(pl.col("commission_rounding"))["table_id"])
    table_of = dict(_at_new_tables(night, "rounds").select("round_id", "table_id").iter_rows())
    commissions = []
    for w in wagers.filter((pl.col("bet") == "banker") & (pl.col("commission") > 0)).iter_rows(
        named=True
    ):
        if table_of[w["round_id"]] not in rounding:
            continue
        owed = (Decimal(_cents(w["payout"]) * 5) / 1000).to_integral_value(ROUND_CEILING) * 10
        logged = _cents(w["commission"])
        if logged != owed:
            commissions.append((w["wager_id"], Decimal(owed - logged) / 100))
    shoes = _at_new_tables(night, "shoes")
    burns = [
        (s, None) for s in shoes.filter(pl.col("burn_card").str.contains("^[TJQK]"))["shoe_id"]
    ]
    house = [(w, None) for w in wagers.filter(pl.col("bet") == "house_money")["wager_id"]]
    rollovers = [(w, None) for w in wagers.filter(pl.col("rollover") > 0)["wager_id"]]
    return {
        "DRW004": stood,
        "PAY002": underpaid,
        "COM002": commissions,
        "SHO005": burns,
        "WAG001": house,
        "WAG010": rollovers,
    }


def test_the_new_pack_finds_exactly_what_its_changes_imply(night, findings):
    expected = expected_by_rule(night)
    assert all(expected.values()), {rule: len(found) for rule, found in expected.items()}
    assert set(findings["rule"]) == set(expected)
    key = {"DRW004": "round_id", "PAY002": "wager_id", "COM002": "wager_id", "SHO005": "shoe_id"}
    for rule, wanted in expected.items():
        got = findings.filter(pl.col("rule") == rule)
        column = key.get(rule, "wager_id")
        assert sorted(got[column]) == sorted(k for k, _ in wanted), rule
        impacts = dict(zip(got[column], got["impact"], strict=True))
        for found_key, impact in wanted:
            if impact is not None:
                assert impacts[found_key] == impact, (rule, found_key)


def test_its_findings_cite_the_new_pack(findings):
    assert findings.height > 0
    assert findings["citation"].str.starts_with(f"{NEW} ").all()
    cited = dict(findings.select("rule", "citation").unique("rule").iter_rows())
    assert cited["DRW004"] == f"{NEW} §11(c)(4)"
    assert cited["PAY002"] == f"{NEW} §13(g-1)"
    assert cited["COM002"] == f"{NEW} §13(c-1)"
    assert cited["SHO005"] == f"{NEW} §5(e-1)"


def test_the_same_night_under_its_own_rules_is_clean(night, tmp_path):
    assert run_audit(night["clean"], tmp_path / "out", report=False).findings.height == 0


def test_the_run_records_the_pack_it_was_given(night, findings):
    import duckdb

    with duckdb.connect(str(night["root"] / "out" / "audit.duckdb"), read_only=True) as con:
        (packs,) = con.execute("SELECT rule_packs FROM runs").fetchone()
    recorded = {p["ruleset"]: p for p in packs}
    pack_file = night["packs"] / f"{NEW}.yaml"
    import hashlib

    assert recorded[NEW]["file"] == str(pack_file)
    assert recorded[NEW]["sha256"] == hashlib.sha256(pack_file.read_bytes()).hexdigest()
    assert recorded[BASE]["file"] == f"rules/{BASE}.yaml"


def test_without_the_pack_the_new_ruleset_is_refused_naming_the_packs(night, tmp_path):
    with pytest.raises(RulesetError, match=f"unknown ruleset '{NEW}'.*ma-baccarat"):
        run_audit(night["relabelled"], tmp_path / "out", report=False)


def test_a_pack_with_a_built_in_id_is_refused_unless_replacing(night, tmp_path):
    folder = tmp_path / "packs"
    folder.mkdir()
    (folder / f"{BASE}.yaml").write_text(new_pack_text(BASE), encoding="utf-8")
    with pytest.raises(RulesetError, match="built-in pack's id"):
        load_packs(folder)
    replaced = load_packs(folder, replace_builtin=True)
    assert replaced[BASE].file == str(folder / f"{BASE}.yaml")
    # Under the replaced rules, the night's own Massachusetts tables show the changes.
    found = run_audit(night["clean"], tmp_path / "out", report=False, packs=replaced).findings
    assert set(found["rule"]) == {"DRW004", "PAY002", "COM002", "SHO005", "WAG001", "WAG010"}


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda d: None, "holds no rule pack"),
        (lambda d: (d / "x.yaml").mkdir(), "not a regular file"),
        (lambda d: (d / "yy-baccarat.yaml").write_text("ruleset: [", "utf-8"), "not valid YAML"),
        (
            lambda d: (d / "yy-baccarat.yaml").write_text(new_pack_text("zz-baccarat"), "utf-8"),
            "does not match the file name",
        ),
    ],
    ids=["empty", "a folder named .yaml", "bad YAML", "id not its file's name"],
)
def test_a_folder_of_packs_that_cannot_be_used_is_refused(tmp_path, make, message):
    folder = tmp_path / "packs"
    folder.mkdir()
    make(folder)
    with pytest.raises(RulesetError, match=message):
        load_packs(folder)


def test_a_missing_folder_or_a_file_is_refused(tmp_path):
    with pytest.raises(RulesetError, match="no such folder"):
        load_packs(tmp_path / "missing")
    (tmp_path / "file").write_text("x")
    with pytest.raises(RulesetError, match="not a folder"):
        load_packs(tmp_path / "file")


# ---- the command line ---------------------------------------------------------------


def test_audit_and_validate_take_the_folder_of_packs(night, findings, tmp_path):
    refused = cli("validate", night["relabelled"])
    assert refused.exit_code == 2 and f"unknown ruleset '{NEW}'" in refused.output
    assert "--rules DIR" in refused.output
    assert cli("validate", night["relabelled"], "--rules", night["packs"]).exit_code == 0
    out = tmp_path / "out"
    audited = cli("audit", night["relabelled"], "--out", out, "--rules", night["packs"])
    assert audited.exit_code == 1, audited.output
    written = pl.read_parquet(out / "findings.parquet")
    assert written.select("finding_id", "rule", "impact").equals(
        findings.select("finding_id", "rule", "impact")
    )


def test_replace_builtin_needs_a_folder_and_a_built_in_id_needs_it(night, tmp_path):
    alone = cli("audit", night["clean"], "--out", tmp_path / "a", "--replace-builtin")
    assert alone.exit_code == 2 and "--replace-builtin needs --rules DIR" in alone.output
    folder = tmp_path / "packs"
    folder.mkdir()
    (folder / f"{BASE}.yaml").write_text(new_pack_text(BASE), encoding="utf-8")
    swapped = cli("audit", night["clean"], "--out", tmp_path / "b", "--rules", folder)
    assert swapped.exit_code == 2 and "built-in pack's id" in swapped.output
    assert not (tmp_path / "b").exists()


def test_rules_and_odds_show_the_packs_of_the_folder(night):
    listed = cli("rules", "--rules", night["packs"], "--format", "json")
    assert listed.exit_code == 0, listed.output
    import json

    rows = {row["ruleset"]: row for row in json.loads(listed.output)}
    assert rows[NEW]["builtin"] is False and rows[BASE]["builtin"] is True
    priced = cli(
        "odds", "--decks", 8, "--rules", night["packs"], "--ruleset", NEW, "--format", "json"
    )
    assert priced.exit_code == 0, priced.output
    assert '"30 to 1"' in priced.output and "house_money" not in priced.output
    unknown = cli("odds", "--decks", 8, "--ruleset", NEW)
    assert unknown.exit_code == 2 and f"unknown ruleset '{NEW}'" in unknown.output


# ---- dated versions -----------------------------------------------------------------

CUTOFF = "2026-11-24T20:00:00Z"


def _versioned_folder(root: Path) -> Path:
    """The ruleset's first version (Massachusetts Baccarat's rules as they are) and a
    later one, the five changes, in force for shoes opened from 20:00 UTC."""
    folder = root / "versions"
    folder.mkdir()
    first = (RULES / f"{BASE}.yaml").read_text(encoding="utf-8")
    (folder / f"{NEW}.yaml").write_text(first.replace(f"ruleset: {BASE}\n", f"ruleset: {NEW}\n"))
    later = new_pack_text().replace(
        f"ruleset: {NEW}\n", f"ruleset: {NEW}\neffective_from: {CUTOFF}\n"
    )
    (folder / f"{NEW}@{CUTOFF}.yaml").write_text(later, encoding="utf-8")
    return folder


def _opened(night) -> dict[str, str]:
    """Each round's, wager's and shoe's shoe opening, as text comparable with CUTOFF."""
    shoes = pl.read_parquet(night["relabelled"] / "shoes.parquet")
    opened = {
        s: t.strftime("%Y-%m-%dT%H:%M:%SZ") for s, t in shoes.select("shoe_id", "opened_at").rows()
    }
    rounds = pl.read_parquet(night["relabelled"] / "rounds.parquet").select("round_id", "shoe_id")
    by_round = {r: opened[s] for r, s in rounds.rows()}
    wagers = pl.read_parquet(night["relabelled"] / "wagers.parquet").select("wager_id", "round_id")
    return {**opened, **by_round, **{w: by_round[r] for w, r in wagers.rows()}}


def test_each_shoe_is_audited_under_the_version_in_force_when_it_opened(night, tmp_path):
    folder = _versioned_folder(tmp_path)
    found = run_audit(
        night["relabelled"], tmp_path / "out", report=False, packs=load_packs(folder)
    ).findings
    opened = _opened(night)
    expected = {
        rule: sorted(k for k, _ in wanted if opened[k] >= CUTOFF)
        for rule, wanted in expected_by_rule(night).items()
    }
    before = sum(len(w) for w in expected_by_rule(night).values()) - sum(
        map(len, expected.values())
    )
    assert before > 0 and all(expected.values()), "shoes on both sides of the date"
    key = {"DRW004": "round_id", "SHO005": "shoe_id"}
    got = {
        rule: sorted(found.filter(pl.col("rule") == rule)[key.get(rule, "wager_id")])
        for rule in expected
    }
    assert got == expected
    assert set(found["rule"]) == set(expected)
    assert found["citation"].str.starts_with(f"{NEW}@{CUTOFF} ").all()


def test_a_version_is_named_by_its_date_and_needs_the_one_before(tmp_path):
    later = new_pack_text().replace(
        f"ruleset: {NEW}\n", f"ruleset: {NEW}\neffective_from: 2027-01-01\n"
    )
    misnamed = tmp_path / "misnamed"
    misnamed.mkdir()
    (misnamed / f"{NEW}.yaml").write_text(later, encoding="utf-8")
    with pytest.raises(RulesetError, match=f"is named {NEW}@2027-01-01.yaml"):
        load_packs(misnamed)
    alone = tmp_path / "alone"
    alone.mkdir()
    (alone / f"{NEW}@2027-01-01.yaml").write_text(later, encoding="utf-8")
    with pytest.raises(RulesetError, match=f"a later version of {NEW}, which no pack loaded has"):
        load_packs(alone)
    (alone / f"{NEW}.yaml").write_text(new_pack_text(), encoding="utf-8")
    packs = load_packs(alone)
    assert set(packs.added) == {NEW, f"{NEW}@2027-01-01"} and NEW in packs.rulesets()
    assert f"{NEW}@2027-01-01" not in packs.rulesets()
