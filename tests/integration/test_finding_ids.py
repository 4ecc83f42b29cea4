"""Stable finding ids: a finding's id is its identity (rule, entity, discriminator), never
its words, so the same discrepancy has the same id whatever the partitioning, the packs'
wording or the auditor's version; two runs are compared on it (`auditor diff`)."""

from __future__ import annotations

import json
import re
import shutil
from decimal import Decimal
from pathlib import Path

import duckdb
import polars as pl
from click.testing import CliRunner

from auditor.cli import main
from auditor.findings.table import FINDING_ID_SCHEME, identity_text, with_finding_ids
from auditor.output.diff import diff_findings, diff_runs
from auditor.packs.loaded import load_packs
from auditor.pipeline import find, run_audit, run_validation
from tests.support.paths import RULES, SAMPLE


def test_ids_are_unique_and_do_not_depend_on_the_partitioning():
    validated = run_validation(SAMPLE)
    whole = find(validated)
    split = find(validated, partition_rounds=200)
    assert whole.columns[0] == "finding_id"
    assert whole["finding_id"].n_unique() == whole.height > 0
    assert set(whole["finding_id"]) == set(split["finding_id"])
    assert whole.sort("finding_id").equals(split.sort("finding_id"))


def test_an_id_is_the_findings_identity_and_not_its_words():
    validated = run_validation(SAMPLE)
    findings = find(validated)
    again = find(validated)
    assert findings["finding_id"].to_list() == again["finding_id"].to_list()
    first = findings.filter(pl.col("impact").is_not_null()).head(1)
    reworded = first.with_columns(
        pl.lit("another wording").alias("message"),
        pl.lit("ma-baccarat §99(z)").alias("citation"),
        pl.lit("$1.00").alias("expected"),
        pl.lit("$2.00").alias("logged"),
        pl.lit(Decimal("1.00")).cast(pl.Decimal(18, 2)).alias("impact"),
        pl.lit("low").alias("severity"),
    )
    assert _id_of(reworded) == first["finding_id"].item()
    # Another entity, rule or discriminator is another finding.
    for column, value in (("wager_id", "W-other"), ("rule", "PAY999"), ("discriminator", "x=1")):
        other = first.with_columns(pl.lit(value).alias(column))
        assert _id_of(other) != first["finding_id"].item(), column


def _id_of(finding: pl.DataFrame) -> str:
    return with_finding_ids(finding.drop("finding_id"))["finding_id"].item()


def test_no_two_findings_share_an_identity_so_no_id_needs_its_rank():
    findings = find(run_validation(SAMPLE))
    assert findings.select(identity_text()).to_series().n_unique() == findings.height
    # The sample's shoe and table findings that need one carry their discriminator.
    assert set(findings.filter(pl.col("discriminator").is_not_null())["rule"]) >= {
        "COM004",
        "TBL001",
        "TBL004",
    }


def test_a_regulator_recomputes_every_id_from_the_catalog(tmp_path):
    run_audit(SAMPLE, tmp_path / "out", report=False)
    with duckdb.connect(str(tmp_path / "out" / "audit.duckdb"), read_only=True) as con:
        (mismatched, total) = con.execute(
            """SELECT count(*) FILTER (WHERE finding_id <> left(sha256(concat_ws(chr(31),
                   rule, coalesce(table_id, ''), coalesce(shoe_id, ''),
                   coalesce(round_id, ''), coalesce(wager_id, ''),
                   coalesce(discriminator, ''))), 20)), count(*)
               FROM findings"""
        ).fetchone()
        (scheme,) = con.execute("SELECT finding_id_scheme FROM runs").fetchone()
    assert total > 0 and mismatched == 0
    assert scheme == FINDING_ID_SCHEME
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["finding_id_scheme"] == FINDING_ID_SCHEME


def _reworded_packs(folder: Path) -> Path:
    """Copies of the four built-in packs whose every citation and section text reads
    otherwise: section marks spelled out, every regulation text amended."""
    shutil.copytree(RULES, folder, ignore=shutil.ignore_patterns("__*"))
    for path in [*folder.glob("*.yaml"), *folder.glob("regulations/*")]:
        text = path.read_text(encoding="utf-8").replace("§", "Sec. ")
        # Maryland's decimal references (".12C"): the regulation's number written out.
        text = re.sub(r"(?<![\w.])\.(?=\d\d[A-Z])", "36.05.17.", text)
        path.write_text(text, "utf-8")
    for path in folder.glob("regulations/*.texts.json"):
        texts = json.loads(path.read_text(encoding="utf-8"))
        path.write_text(json.dumps(_amended(texts)), encoding="utf-8")
    return folder


def _amended(value):
    if isinstance(value, str):
        return value + " (as amended)"
    if isinstance(value, dict):
        return {key: _amended(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_amended(item) for item in value]
    return value


def test_the_same_night_under_reworded_packs_has_the_same_ids(tmp_path):
    plain = run_audit(SAMPLE, tmp_path / "plain", report=False).findings
    packs = load_packs(_reworded_packs(tmp_path / "packs"), replace_builtin=True)
    reworded = run_audit(SAMPLE, tmp_path / "reworded", report=False, packs=packs).findings
    assert (plain["citation"] != reworded["citation"]).all()  # every citation reads otherwise
    assert sorted(plain["finding_id"]) == sorted(reworded["finding_id"])


def _overpay_one_wager(dataset: Path) -> str:
    """Pay one losing player wager as a win: a new finding. Returns its wager id."""
    wagers = pl.read_parquet(dataset / "wagers.parquet")
    rounds = pl.read_parquet(dataset / "rounds.parquet").select("round_id", "outcome", "kind")
    target = (
        wagers.join(rounds, on="round_id")
        .filter(
            (pl.col("bet") == "player")
            & (pl.col("result") == "lose")
            & (pl.col("outcome") == "banker")
            & (pl.col("kind") == "regular")
        )
        .sort("wager_id")
        .row(0, named=True)["wager_id"]
    )
    changed = wagers.with_columns(
        pl.when(pl.col("wager_id") == target)
        .then(pl.lit("win"))
        .otherwise("result")
        .alias("result"),
        pl.when(pl.col("wager_id") == target)
        .then(pl.col("amount"))
        .otherwise("payout")
        .alias("payout"),
    )
    changed.write_parquet(dataset / "wagers.parquet")
    return target


def test_diff_names_the_new_finding_and_nothing_else(tmp_path):
    dataset = tmp_path / "night"
    shutil.copytree(SAMPLE, dataset)
    run_audit(dataset, tmp_path / "before")
    wager = _overpay_one_wager(dataset)
    run_audit(dataset, tmp_path / "after")
    result = CliRunner().invoke(main, ["diff", str(tmp_path / "before"), str(tmp_path / "after")])
    assert result.exit_code == 1, result.output
    changes = diff_findings(
        pl.read_parquet(tmp_path / "before" / "findings.parquet"),
        pl.read_parquet(tmp_path / "after" / "findings.parquet"),
    )
    assert changes.select("change", "wager_id").rows() == [("new", wager)]
    assert changes["impact"].item() > Decimal(0)  # paid more than owed
    # And back: the finding is gone.
    back = diff_findings(
        pl.read_parquet(tmp_path / "after" / "findings.parquet"),
        pl.read_parquet(tmp_path / "before" / "findings.parquet"),
    )
    assert back.select("change", "wager_id").rows() == [("gone", wager)]


def test_diff_reports_a_changed_impact_and_exits_zero_on_equal_runs(tmp_path):
    run_audit(SAMPLE, tmp_path / "a")
    same = CliRunner().invoke(main, ["diff", str(tmp_path / "a"), str(tmp_path / "a")])
    assert same.exit_code == 0, same.output
    before = pl.read_parquet(tmp_path / "a" / "findings.parquet")
    money = before.filter(pl.col("impact").is_not_null()).head(1)["finding_id"].item()
    after = before.with_columns(
        pl.when(pl.col("finding_id") == money)
        .then(pl.col("impact") + Decimal("1.00"))
        .otherwise("impact")
        .alias("impact")
    )
    changes = diff_findings(before, after)
    assert changes["change"].to_list() == ["changed"]
    assert changes["what"].item().startswith("impact: ")


def test_a_changed_logged_payout_is_one_changed_finding(tmp_path):
    dataset = tmp_path / "night"
    shutil.copytree(SAMPLE, dataset)
    before = run_audit(dataset, tmp_path / "before", report=False).findings
    target = before.filter(pl.col("rule").str.starts_with("PAY") & pl.col("wager_id").is_not_null())
    wager = target.sort("wager_id")["wager_id"][0]
    wagers = pl.read_parquet(dataset / "wagers.parquet")
    wagers.with_columns(
        pl.when(pl.col("wager_id") == wager)
        .then(pl.col("payout") + Decimal("1.00"))
        .otherwise("payout")
        .alias("payout")
    ).write_parquet(dataset / "wagers.parquet")
    run_audit(dataset, tmp_path / "after", report=False)
    changes = diff_runs(tmp_path / "before", tmp_path / "after")
    assert changes.select("change", "wager_id").rows() == [("changed", wager)]
    assert changes["what"].item().startswith("impact: ")


def test_a_set_of_the_earlier_id_scheme_compares_finding_for_finding():
    findings = find(run_validation(SAMPLE))
    # As scheme 1 wrote them: no discriminator, ids that hashed the message.
    earlier = findings.drop("discriminator").with_columns(
        pl.col("message").hash().cast(pl.String).alias("finding_id")
    )
    blank = pl.lit(None, pl.String).alias("discriminator")
    changes = diff_findings(earlier.with_columns(blank), findings)
    # Only the findings whose identity needs a discriminator, unknown to scheme 1, differ.
    needing = findings.filter(pl.col("discriminator").is_not_null())
    assert changes.filter(pl.col("change") == "new")["finding_id"].sort().to_list() == (
        needing["finding_id"].sort().to_list()
    )
    assert changes.filter(pl.col("change") == "gone").height == needing.height
    assert changes.filter(pl.col("change") == "changed").height == 0


def test_diff_refuses_a_folder_without_findings(tmp_path):
    result = CliRunner().invoke(main, ["diff", str(tmp_path), str(tmp_path)])
    assert result.exit_code == 2
    assert "no manifest.json: not an audit's output set" in result.output


def test_two_collections_at_one_shoe_are_two_findings_told_apart_by_their_ids(tmp_path):
    dataset = tmp_path / "night"
    shutil.copytree(SAMPLE, dataset)
    before = run_audit(dataset, tmp_path / "before", report=False).findings
    flagged = before.filter(pl.col("rule") == "COM004")["discriminator"].item()
    collections = pl.read_parquet(dataset / "commission_collections.parquet")
    first = flagged.removeprefix("collection=")
    second = collections.filter(pl.col("collection_id") == first).with_columns(
        pl.lit("CC-second").alias("collection_id")
    )
    pl.concat([collections, second]).write_parquet(dataset / "commission_collections.parquet")
    after = run_audit(dataset, tmp_path / "after", report=False).findings
    both = after.filter(pl.col("rule") == "COM004")
    assert sorted(both["discriminator"]) == ["collection=CC-second", flagged]
    assert both["finding_id"].n_unique() == 2
    # The first keeps its id: the second collection is one new finding, nothing changed.
    changes = diff_runs(tmp_path / "before", tmp_path / "after")
    assert changes.select("change", "rule", "discriminator").rows() == [
        ("new", "COM004", "collection=CC-second")
    ]
