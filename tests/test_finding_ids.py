"""Stable finding ids: the same discrepancy has the same id whatever the partitioning, and
two runs are compared on them (`auditor diff`)."""

from __future__ import annotations

import shutil
from decimal import Decimal
from pathlib import Path

import polars as pl
from click.testing import CliRunner

from auditor.audit import find, run_audit, run_validation
from auditor.cli import main
from auditor.findings.table import with_finding_ids
from auditor.output.diff import diff_findings

SAMPLE = Path(__file__).resolve().parents[1] / "sample_data"


def test_ids_are_unique_and_do_not_depend_on_the_partitioning():
    validated = run_validation(SAMPLE)
    whole = find(validated)
    split = find(validated, partition_rounds=200)
    assert whole.columns[0] == "finding_id"
    assert whole["finding_id"].n_unique() == whole.height > 0
    assert set(whole["finding_id"]) == set(split["finding_id"])
    assert whole.sort("finding_id").equals(split.sort("finding_id"))


def test_an_id_follows_what_makes_the_finding_distinct():
    validated = run_validation(SAMPLE)
    findings = find(validated)
    again = find(validated)
    assert findings["finding_id"].to_list() == again["finding_id"].to_list()
    # A different message (another discrepancy of the same rule and entity) is another id.
    first = findings.head(1)
    other = first.with_columns(pl.lit("another discrepancy").alias("message"))
    assert with_finding_ids(other.drop("finding_id"))["finding_id"].item() != (
        first["finding_id"].item()
    )


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


def test_diff_refuses_a_folder_without_findings(tmp_path):
    result = CliRunner().invoke(main, ["diff", str(tmp_path), str(tmp_path)])
    assert result.exit_code == 2
    assert "no manifest.json: not an audit's output set" in result.output
